// Given the inventories teams already have (a containerlab topology, an Ansible inventory in
// INI or YAML), then the import finds every device with its platform, role and management
// address, skips what is not a device, and refuses bad input naming file:line.

#include <gtest/gtest.h>

#include "gates/inventory/ansible_import.h"
#include "gates/inventory/containerlab_import.h"

namespace fabgate::inventory {
namespace {

// A two-spine, two-leaf lab as containerlab users write it: FRR from the linux kind's image,
// an SR Linux spine, a cEOS leaf, a plain Linux host and a bridge.
constexpr const char* kTopology = R"(# pod1: FRR and vendor NOSes in one lab
name: pod1
prefix: clab
mgmt:
  network: pod1-mgmt
  ipv4-subnet: 172.20.20.0/24
topology:
  defaults:
    kind: linux
  kinds:
    linux:
      image: quay.io/frrouting/frr:9.1.0
    nokia_srlinux:
      image: ghcr.io/nokia/srlinux:23.10.1
  nodes:
    spine1:
      group: spine
      mgmt-ipv4: 172.20.20.11
      binds:
        - spine1/frr.conf:/etc/frr/frr.conf
    spine2:
      kind: nokia_srlinux
      group: spine
      mgmt-ipv4: 172.20.20.12
    leaf1:
      mgmt-ipv4: 172.20.20.21
    leaf2:
      kind: arista_ceos
      image: ceos:4.31.2F
      labels:
        fabgate-role: leaf
    gpu1:
      image: ghcr.io/hellt/network-multitool
      labels: {fabgate-role: gpu-host}
    br-clients:
      kind: bridge
  links:
    - endpoints: ["spine1:eth1", "leaf1:eth1"]
    - endpoints: ["leaf1:eth3", "br-clients:eth1"]
)";

std::string describe(const ImportedDevice& device) {
  return device.name + " " + device.platform + " " + device.role + " " + device.host +
         (device.port ? ":" + std::to_string(*device.port) : "");
}

std::vector<std::string> described(const ImportedInventory& inventory) {
  std::vector<std::string> lines;
  for (const auto& device : inventory.devices) lines.push_back(describe(device));
  return lines;
}

std::string problems(const Error& error) {
  std::string text = error.message;
  for (const auto& detail : error.details) text += "\n" + detail;
  return text;
}

TEST(ContainerlabImport, FindsEveryNodeWithPlatformRoleAndManagementAddress) {
  auto imported = import_containerlab(kTopology, "pod1.clab.yml");
  ASSERT_TRUE(imported) << problems(imported.error());
  EXPECT_EQ(described(*imported),
            (std::vector<std::string>{
                "spine1 frr spine 172.20.20.11", "spine2 srlinux spine 172.20.20.12",
                "leaf1 frr leaf 172.20.20.21", "leaf2 eos leaf clab-pod1-leaf2",
                "gpu1 linux gpu-host clab-pod1-gpu1"}));
  ASSERT_EQ(imported->skipped.size(), 1u);
  EXPECT_EQ(imported->skipped[0], "br-clients: kind 'bridge' is not a device fabgate manages");
  EXPECT_EQ(imported->devices[0].where.to_string(), "pod1.clab.yml:16:5");
}

TEST(ContainerlabImport, AnUnknownKindNamesItsLineAndTheWayOut) {
  std::string topology =
      "name: lab\ntopology:\n  nodes:\n    r1:\n      kind: cisco_xrd\n"
      "    r2:\n      kind: linux\n      mgmt-ipv4: 10.0.0.300\n";
  auto imported = import_containerlab(topology, "lab.clab.yml");
  ASSERT_FALSE(imported);
  EXPECT_EQ(imported.error().exit_code, ExitCode::invalid_input);
  std::string text = problems(imported.error());
  EXPECT_NE(text.find("lab.clab.yml:5:13: error: kind 'cisco_xrd' of node 'r1' has no fabgate "
                      "platform"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabgate-platform"), std::string::npos) << text;
  EXPECT_NE(text.find("lab.clab.yml:8:18: error: mgmt-ipv4 '10.0.0.300' of node 'r2' is not an "
                      "IPv4 address"),
            std::string::npos)
      << text;
}

TEST(ContainerlabImport, NotATopologyIsRefusedWithItsLocation) {
  auto broken = import_containerlab("name: lab\ntopology:\n  nodes: [a, b\n", "lab.clab.yml");
  ASSERT_FALSE(broken);
  EXPECT_NE(problems(broken.error()).find("lab.clab.yml:"), std::string::npos);
  auto no_nodes = import_containerlab("name: lab\ntopology: {}\n", "lab.clab.yml");
  ASSERT_FALSE(no_nodes);
  EXPECT_NE(problems(no_nodes.error()).find("lab.clab.yml:2:"), std::string::npos)
      << problems(no_nodes.error());
}

// An INI inventory as Ansible users write one: ranges, :vars, :children, host:port.
constexpr const char* kIni = R"(# pod1 fabric
[spines]
spine[1:2] ansible_network_os=frr.frr.frr

[leaves]
leaf01 ansible_host=10.10.0.21
leaf02:2222 ansible_host=10.10.0.22

[leaves:vars]
ansible_network_os=arista.eos.eos

[gpu_hosts]
gpu-a1 ansible_host=10.10.1.11 fabgate_role=gpu-host ansible_user="ops team"

[fabric:children]
spines
leaves

[fabric:vars]
ansible_user=netops

[all:vars]
ansible_python_interpreter=/usr/bin/python3
)";

TEST(AnsibleImport, IniInventoryWithRangesGroupVarsAndPorts) {
  auto imported = import_ansible(kIni, "hosts");
  ASSERT_TRUE(imported) << problems(imported.error());
  EXPECT_EQ(
      described(*imported),
      (std::vector<std::string>{"spine1 frr spines spine1", "spine2 frr spines spine2",
                                "leaf01 eos leaves 10.10.0.21", "leaf02 eos leaves 10.10.0.22:2222",
                                "gpu-a1 linux gpu-host 10.10.1.11"}));
  EXPECT_EQ(imported->devices[3].where.to_string(), "hosts:7:1");
}

TEST(AnsibleImport, YamlInventoryWithNestedGroups) {
  constexpr const char* kYaml = R"(all:
  vars:
    ansible_connection: ssh
  children:
    fabric:
      vars:
        ansible_network_os: nokia.srlinux.srlinux
      children:
        spines:
          hosts:
            spine1: {ansible_host: 192.0.2.1}
            spine2: {ansible_host: 192.0.2.2}
        leaves:
          hosts:
            leaf[1:2]:
          vars:
            ansible_network_os: dellemc.enterprise_sonic.sonic
    rail0:
      hosts:
        gpu1:
          ansible_host: 192.0.2.101
          ansible_port: 2201
)";
  auto imported = import_ansible(kYaml, "inventory.yml");
  ASSERT_TRUE(imported) << problems(imported.error());
  EXPECT_EQ(
      described(*imported),
      (std::vector<std::string>{"spine1 srlinux spines 192.0.2.1",
                                "spine2 srlinux spines 192.0.2.2", "leaf1 sonic leaves leaf1",
                                "leaf2 sonic leaves leaf2", "gpu1 linux rail0 192.0.2.101:2201"}));
}

TEST(AnsibleImport, BadLinesAreRefusedWithFileAndLine) {
  // Given a host line without '=' and a network OS fabgate has no platform for, then both are
  // reported, each with its line.
  std::string ini =
      "[leaves]\nleaf1 ansible_host=10.0.0.1\nleaf3 ansible_host\n"
      "[routers]\nedge1 ansible_network_os=cisco.ios.ios\n[odd:weird]\n";
  auto imported = import_ansible(ini, "inventory.ini");
  ASSERT_FALSE(imported);
  std::string text = problems(imported.error());
  EXPECT_NE(text.find("inventory.ini:3:1: error: host leaf3: expected KEY=VALUE, got "
                      "'ansible_host'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inventory.ini:5:1: error: ansible_network_os 'cisco.ios.ios' of host "
                      "edge1 has no fabgate platform"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inventory.ini:6:1: error: section '[odd:weird]'"), std::string::npos)
      << text;
}

TEST(AnsibleImport, MalformedRangesAndPortsAreRefused) {
  auto range = import_ansible("[x]\nleaf[3:1]\n", "hosts");
  ASSERT_FALSE(range);
  EXPECT_NE(problems(range.error()).find("hosts:2:1: error: host pattern 'leaf[3:1]'"),
            std::string::npos)
      << problems(range.error());
  auto port = import_ansible("[x]\nleaf1 ansible_port=70000\n", "hosts");
  ASSERT_FALSE(port);
  EXPECT_NE(problems(port.error()).find("ansible_port '70000' of host leaf1 is not a port"),
            std::string::npos);
}

TEST(RenderInventory, WritesCredentialsToEditAndEveryDevice) {
  auto imported = import_ansible(kIni, "hosts");
  ASSERT_TRUE(imported);
  imported->command = "fabgate inventory import --from ansible hosts";
  std::string yaml = render_inventory_yaml(*imported);
  EXPECT_NE(yaml.find("# Written by `fabgate inventory import --from ansible hosts`."),
            std::string::npos);
  EXPECT_NE(yaml.find("  read: {user: fabgate-ro, agent: true}\n"), std::string::npos);
  EXPECT_NE(yaml.find("  leaf02:\n    platform: eos\n    role: leaves\n"
                      "    ssh: {host: 10.10.0.22, port: 2222}\n"),
            std::string::npos)
      << yaml;
}

}  // namespace
}  // namespace fabgate::inventory
