#!/bin/bash
# Captures real FRR 8.4 vtysh JSON for the normalizer tests: two namespaces (r1, r2) with zebra,
# bgpd and bfdd peering eBGP + BFD over a veth pair. Usage: capture-frr-samples.sh OUTPUT_DIR (root).
# vtysh-evpn-vni.json is written by hand in the same format (no VXLAN device here); this script
# captures the empty {} that FRR prints without VNIs.
set -u
T=$(mktemp -d /tmp/fgfrr-XXXX); chmod 755 $T
cleanup() { for n in r1 r2; do [ -f $T/$n/pids ] && kill $(cat $T/$n/pids) 2>/dev/null; done; sleep 0.5; ip netns del r1 2>/dev/null; ip netns del r2 2>/dev/null; rm -rf $T; }
trap cleanup EXIT
ip netns add r1; ip netns add r2
ip link add veth-r1 netns r1 type veth peer name veth-r2 netns r2
ip -n r1 link set lo up; ip -n r2 link set lo up
ip -n r1 addr add 10.0.1.1/31 dev veth-r1; ip -n r2 addr add 10.0.1.0/31 dev veth-r2
ip -n r1 link set veth-r1 up; ip -n r2 link set veth-r2 up
ip -n r1 addr add 10.10.0.1/32 dev lo; ip -n r2 addr add 10.10.0.2/32 dev lo
i=0
for n in r1 r2; do
  i=$((i+1)); mkdir -p $T/$n; chown frr:frr $T/$n
  peer=$([ $n = r1 ] && echo 10.0.1.0 || echo 10.0.1.1)
  cat > $T/$n/frr.conf <<CONF
hostname $n
bfd
 peer $peer
 !
!
router bgp 6500$i
 bgp router-id 10.10.0.$i
 no bgp ebgp-requires-policy
 neighbor $peer remote-as external
 neighbor $peer bfd
 address-family ipv4 unicast
  network 10.10.0.$i/32
 exit-address-family
 address-family l2vpn evpn
  neighbor $peer activate
  advertise-all-vni
 exit-address-family
!
CONF
  chown frr:frr $T/$n/frr.conf
  for d in zebra bgpd bfdd; do
    ip netns exec $n /usr/lib/frr/$d -d -f $T/$n/frr.conf --vty_socket $T/$n -i $T/$n/$d.pid -z $T/$n/zserv.api -A 127.0.0.1 >>$T/$n/log 2>&1
    sleep 0.3
  done
  cat $T/$n/*.pid > $T/$n/pids 2>/dev/null
done
for k in $(seq 1 30); do
  s=$(ip netns exec r1 vtysh --vty_socket $T/r1 -c 'show bgp summary json' 2>/dev/null | grep -c '"state":"Established"')
  [ "$s" -ge 1 ] && break; sleep 1
done
O=$1
ip netns exec r1 vtysh --vty_socket $T/r1 -c 'show bgp summary json' > $O/vtysh-bgp-summary.json
ip netns exec r1 vtysh --vty_socket $T/r1 -c 'show bfd peers json' > $O/vtysh-bfd-peers.json
ip netns exec r1 vtysh --vty_socket $T/r1 -c 'show evpn vni json' > $O/vtysh-evpn-vni-empty.json
ip netns exec r1 vtysh --vty_socket $T/r1 -c 'show version' > $O/vtysh-show-version.txt
cat $T/r2/log | tail -5; ip netns exec r2 vtysh --vty_socket $T/r2 -c "show bgp summary"
