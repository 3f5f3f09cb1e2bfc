// Normalizers for FRR's vtysh JSON (FRR 8.x field names).

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "adapters/core/text.h"
#include "gates/snapshot/normalizers.h"
#include "gates/snapshot/output_json.h"

namespace fabgate::snapshot {

using nlohmann::json;

namespace {

Expected<json, std::string> parse_json_object(std::string_view output) {
  auto document = parse_output_json(output);
  if (document && !document->is_object()) return std::string("expected a JSON object");
  return document;
}

// `what`: "BFD peers", for "expected a JSON list of BFD peers".
Expected<json, std::string> parse_json_list(std::string_view output, std::string_view what) {
  auto document = parse_output_json(output);
  if (!document) return document.error();
  if (!document->is_array()) return "expected a JSON list of " + std::string(what);
  return document;
}

// vtysh's address-family keys ("ipv4Unicast", "l2VpnEvpn") as snapshot keys.
std::string address_family_key(const std::string& vtysh_key) {
  std::string key;
  for (char c : vtysh_key) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      key += '_';
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      key += c;
    }
  }
  return key;  // ipv4_unicast, l2_vpn_evpn
}

}  // namespace

Expected<Ok, std::string> parse_frr_version(std::string_view output, json& identity) {
  constexpr std::string_view kMarker = "FRRouting ";
  auto at = output.find(kMarker);
  if (at == std::string_view::npos) return std::string("no 'FRRouting VERSION' in show version");
  auto rest = output.substr(at + kMarker.size());
  auto end = rest.find_first_of(" \n");
  std::string version(rest.substr(0, end));
  if (version.empty()) return std::string("empty FRR version");
  identity["frr_version"] = version;
  return Ok{};
}

// `show bgp summary json`: one object per address family, each with "peers". A peer appears
// once with its session state; prefixes are kept per family and summed over the underlay
// families. EVPN prefixes (one per MAC, so they move as hosts talk) are left out of the sum:
// the evpn category compares them with their own tolerance (bgp-evpn-summary).
// `{}` (BGP configured with no address family active) is a real, empty answer.
Expected<Ok, std::string> parse_bgp_summary(std::string_view output, json& bgp) {
  auto document = parse_json_object(output);
  if (!document) return document.error();
  std::string problem;
  json peers = json::object();
  for (const auto& [family, summary] : document->items()) {
    if (!summary.is_object() || !summary.contains("peers")) continue;
    const std::string family_key = address_family_key(family);
    for (const auto& [address, peer] : Fields(summary, family, problem).object("peers").items()) {
      Fields fields(peer, family + ".peers." + address, problem);
      json& entry = peers[address];
      entry["state"] = fields.required_text("state");
      entry["remote_as"] = fields.integer("remoteAs");
      entry["uptime_ms"] = fields.integer("peerUptimeMsec");
      const std::int64_t received = fields.integer("pfxRcd");
      if (!entry.contains("prefixes_received")) entry["prefixes_received"] = 0;
      if (family != "l2VpnEvpn")
        entry["prefixes_received"] = entry["prefixes_received"].get<std::int64_t>() + received;
      entry["address_families"][family_key] = {{"prefixes_received", received},
                                               {"prefixes_sent", fields.integer("pfxSnt")}};
    }
  }
  if (!problem.empty()) return problem;
  bgp["peers"] = std::move(peers);
  return Ok{};
}

Expected<Ok, std::string> parse_running_config(std::string_view output, json& config) {
  if (trim(output).empty()) return std::string("empty running configuration");
  config = {{"format", "text"}, {"text", std::string(output)}};
  return Ok{};
}

// `show bfd peers json`: a list of sessions keyed here by peer address (and VRF when not
// default), with the timers each side asked for: a timer change shows up even while the
// session stays up. Uptime is kept (ignored by the default compare rules: it moves).
Expected<Ok, std::string> parse_bfd_peers(std::string_view output, json& bfd) {
  auto document = parse_json_list(output, "BFD peers");
  if (!document) return document.error();
  std::string problem;
  json peers = json::object();
  for (std::size_t i = 0; i < document->size(); ++i) {
    const json& session = (*document)[i];
    if (!session.is_object() || !session.contains("peer") || !session.contains("status"))
      return std::string("a BFD peer without 'peer' or 'status'");
    Fields fields(session, element_path(i), problem);
    std::string key = fields.required_text("peer");
    std::string vrf = fields.text("vrf", "default");
    if (vrf != "default") key += "%" + vrf;
    json entry = {{"status", session.at("status")}, {"multihop", fields.flag("multihop")}};
    if (session.contains("interface")) entry["interface"] = session.at("interface");
    if (session.contains("uptime")) entry["uptime_ms"] = fields.integer("uptime") * 1000;
    for (const auto& [from, to] : {std::pair{"receive-interval", "receive_interval_ms"},
                                   {"transmit-interval", "transmit_interval_ms"},
                                   {"detect-multiplier", "detect_multiplier"},
                                   {"remote-receive-interval", "remote_receive_interval_ms"},
                                   {"remote-transmit-interval", "remote_transmit_interval_ms"},
                                   {"remote-detect-multiplier", "remote_detect_multiplier"}}) {
      if (session.contains(from) && session.at(from).is_number()) entry[to] = session.at(from);
    }
    peers[key] = std::move(entry);
  }
  if (!problem.empty()) return problem;
  bfd["peers"] = std::move(peers);
  return Ok{};
}

// `show bfd peers counters json`: how often each session went up and down since bfdd started.
// A flap between two snapshots shows as a session_down_events increase even when the session
// is up again by the second one, so a rule can prove there was no flap during a change.
// Merges into the peers `bfd-peers` found (run it after that command).
Expected<Ok, std::string> parse_bfd_counters(std::string_view output, json& bfd) {
  auto document = parse_json_list(output, "BFD peer counters");
  if (!document) return document.error();
  if (!bfd.contains("peers") || !bfd.at("peers").is_object()) bfd["peers"] = json::object();
  std::string problem;
  for (std::size_t i = 0; i < document->size(); ++i) {
    const json& session = (*document)[i];
    if (!session.is_object() || !session.contains("peer") || !session.contains("session-down") ||
        !session.at("session-down").is_number_integer())
      return std::string("a BFD counter entry without 'peer' or 'session-down'");
    Fields fields(session, element_path(i), problem);
    std::string key = fields.required_text("peer");
    std::string vrf = fields.text("vrf", "default");
    if (!problem.empty()) return problem;
    if (vrf != "default") key += "%" + vrf;
    json& entry = bfd["peers"][key];
    entry["session_up_events"] = fields.integer("session-up");
    entry["session_down_events"] = session.at("session-down");
  }
  if (!problem.empty()) return problem;
  return Ok{};
}

namespace {

// FRR 8.4's zebra prints nothing at all for `show evpn vni [detail] json` when EVPN is not
// enabled on the switch (a spine that only carries the family): a real answer, no VNIs.
bool is_empty_output(std::string_view output) {
  return trim(output).empty();
}

json& vnis_of(json& evpn) {
  if (!evpn.contains("vnis") || !evpn.at("vnis").is_object()) evpn["vnis"] = json::object();
  return evpn["vnis"];
}

json sorted_strings(const json& list) {
  std::vector<std::string> items;
  if (list.is_array())
    for (const auto& item : list)
      if (item.is_string()) items.push_back(item.get<std::string>());
  std::sort(items.begin(), items.end());
  return json(items);
}

}  // namespace

// `show evpn vni json`: an object keyed by VNI. L3 VNIs report "n/a" remote VTEPs; an L2 VNI
// without remote VTEPs has no "remoteVteps" key at all, recorded as an empty set.
Expected<Ok, std::string> parse_evpn_vni(std::string_view output, json& evpn) {
  json& vnis = vnis_of(evpn);
  if (is_empty_output(output)) return Ok{};
  auto document = parse_json_object(output);
  if (!document) return document.error();
  std::string problem;
  for (const auto& [vni, detail] : document->items()) {
    if (!detail.is_object() || !detail.contains("type")) return "VNI " + vni + " without a 'type'";
    Fields fields(detail, vni, problem);
    json& entry = vnis[vni];
    entry["type"] = detail.at("type");
    entry["vxlan_if"] = fields.text("vxlanIf");
    entry["tenant_vrf"] = fields.text("tenantVrf");
    const auto& vteps = detail.value("numRemoteVteps", json());
    if (vteps.is_number_integer()) entry["vtep_count"] = vteps;
    if (detail.contains("remoteVteps")) {
      entry["remote_vteps"] = sorted_strings(detail.at("remoteVteps"));
    } else if (detail.at("type") == "L2") {
      entry["remote_vteps"] = json::array();
    }
    if (detail.contains("numMacs")) entry["macs"] = detail.at("numMacs");
  }
  if (!problem.empty()) return problem;
  return Ok{};
}

// `show evpn vni detail json`: a list, one object per VNI, with the local VTEP address, the
// bridge (FRR's "SVI") and, under the misleading name "numRemoteVteps", the remote VTEP list.
Expected<Ok, std::string> parse_evpn_vni_detail(std::string_view output, json& evpn) {
  json& vnis = vnis_of(evpn);
  if (is_empty_output(output)) return Ok{};
  auto document = parse_json_list(output, "VNIs");
  if (!document) return document.error();
  std::string problem;
  for (std::size_t i = 0; i < document->size(); ++i) {
    const json& detail = (*document)[i];
    if (!detail.is_object() || !detail.contains("vni") || !detail.at("vni").is_number_integer())
      return std::string("a VNI entry without a numeric 'vni'");
    Fields fields(detail, element_path(i), problem);
    json& entry = vnis[std::to_string(detail.at("vni").get<long long>())];
    if (detail.contains("type")) entry["type"] = detail.at("type");
    if (detail.contains("vtepIp")) entry["local_vtep"] = detail.at("vtepIp");
    if (detail.contains("sviInterface")) entry["bridge"] = detail.at("sviInterface");
    const auto& remote = detail.value("numRemoteVteps", json());
    if (remote.is_array()) {
      entry["remote_vteps"] = sorted_strings(remote);
      entry["vtep_count"] = remote.size();
    } else if (fields.text("type") == "L2") {
      entry["remote_vteps"] = json::array();
      entry["vtep_count"] = 0;
    }
  }
  if (!problem.empty()) return problem;
  return Ok{};
}

// `show evpn mac vni all json`: per VNI, the MACs zebra knows. Only counts are kept (MACs age
// and move; the addresses themselves would make every snapshot differ): local, remote, and
// remote MACs per remote VTEP.
Expected<Ok, std::string> parse_evpn_mac(std::string_view output, json& evpn) {
  json& vnis = vnis_of(evpn);
  if (is_empty_output(output)) return Ok{};
  auto document = parse_json_object(output);
  if (!document) return document.error();
  std::string problem;
  for (const auto& [vni, table] : document->items()) {
    if (!table.is_object()) return "VNI " + vni + ": expected an object of MACs";
    Fields fields(table, vni, problem);
    int local = 0, remote = 0;
    json per_vtep = json::object();
    for (const auto& [mac, detail] : fields.object("macs").items()) {
      Fields mac_fields(detail, vni + ".macs." + mac, problem);
      std::string type = mac_fields.text("type");
      if (type == "local") ++local;
      if (type == "remote") {
        ++remote;
        std::string vtep = mac_fields.text("remoteVtep");
        per_vtep[vtep] = per_vtep.value(vtep, 0) + 1;
      }
    }
    if (!problem.empty()) return problem;
    json& entry = vnis[vni];
    entry["macs"] = fields.integer("numMacs", local + remote);
    entry["macs_local"] = local;
    entry["macs_remote"] = remote;
    entry["macs_per_remote_vtep"] = std::move(per_vtep);
  }
  if (!problem.empty()) return problem;
  return Ok{};
}

// `show bgp l2vpn evpn summary json`: the EVPN sessions (the same eBGP sessions as the
// underlay's, with the l2vpn evpn family active) and their EVPN prefix counts.
Expected<Ok, std::string> parse_bgp_evpn_summary(std::string_view output, json& evpn) {
  auto document = parse_json_object(output);
  if (!document) return document.error();
  std::string problem;
  json peers = json::object();
  if (document->contains("peers")) {
    if (!document->at("peers").is_object()) return std::string("'peers' is not an object");
    for (const auto& [address, peer] : document->at("peers").items()) {
      if (!peer.is_object() || !peer.contains("state"))
        return "EVPN peer " + address + " without a 'state'";
      Fields fields(peer, "peers." + address, problem);
      peers[address] = {{"state", fields.required_text("state")},
                        {"remote_as", fields.integer("remoteAs")},
                        {"uptime_ms", fields.integer("peerUptimeMsec")},
                        {"prefixes_received", fields.integer("pfxRcd")},
                        {"prefixes_sent", fields.integer("pfxSnt")}};
    }
  }
  if (!problem.empty()) return problem;
  evpn["peers"] = std::move(peers);
  return Ok{};
}

// `ip -j -d link show type vxlan`: the kernel's VXLAN devices, keyed by VNI. This is the VNI's
// state on the switch (device administratively up or down), which FRR's JSON does not carry.
Expected<Ok, std::string> parse_vxlan_links(std::string_view output, json& evpn) {
  json& vnis = vnis_of(evpn);
  auto document = parse_json_list(output, "links");
  if (!document) return document.error();
  std::string problem;
  for (std::size_t i = 0; i < document->size(); ++i) {
    const json& link = (*document)[i];
    Fields fields(link, element_path(i), problem);
    const json& linkinfo = fields.object("linkinfo");
    const json& data = Fields(linkinfo, element_path(i) + ".linkinfo", problem).object("info_data");
    const std::string ifname = fields.text("ifname");
    if (!problem.empty()) return problem;
    if (!data.contains("id") || !data.at("id").is_number_integer())
      return "link '" + (ifname.empty() ? std::string("?") : ifname) + "' has no VXLAN id";
    json& entry = vnis[std::to_string(data.at("id").get<long long>())];
    bool up = false;
    for (const auto& flag : fields.array("flags")) up = up || flag == "UP";
    entry["state"] = up ? "up" : "down";
    entry["vxlan_if"] = ifname;
    if (data.contains("local")) entry["local_vtep"] = data.at("local");
    if (data.contains("port")) entry["udp_port"] = data.at("port");
    if (data.contains("learning")) entry["learning"] = data.at("learning");
    if (link.contains("mtu")) entry["mtu"] = link.at("mtu");
  }
  if (!problem.empty()) return problem;
  return Ok{};
}

}  // namespace fabgate::snapshot
