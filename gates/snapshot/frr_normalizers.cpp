// Normalizers for FRR's vtysh JSON, in the shapes of the releases listed in docs/frr-releases.md.

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"
#include "gates/snapshot/json_sequence.h"
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

// A peer's received prefix count: "pfxRcd" since FRR 7.0, "prefixReceivedCount" before it
// (FRR 7.x prints both; 8.x only the first).
std::int64_t prefixes_received(const json& peer, Fields& fields) {
  if (peer.is_object() && !peer.contains("pfxRcd") && peer.contains("prefixReceivedCount"))
    return fields.integer("prefixReceivedCount");
  return fields.integer("pfxRcd");
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
      const std::int64_t received = prefixes_received(peer, fields);
      if (!entry.contains("prefixes_received")) entry["prefixes_received"] = 0;
      if (family != "l2VpnEvpn")
        entry["prefixes_received"] = entry["prefixes_received"].get<std::int64_t>() + received;
      json& counts = entry["address_families"][family_key];
      counts = {{"prefixes_received", received}};
      // FRR before 7.0 prints no sent count, and until late 2020 only for Established sessions.
      if (peer.is_object() && peer.contains("pfxSnt"))
        counts["prefixes_sent"] = fields.integer("pfxSnt");
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

namespace {

// The remote VTEPs of an L2 VNI's detail, sorted, in either release's keys: FRR up to 8.4 lists
// the addresses under the misleading name "numRemoteVteps" and leaves the key out when there
// are none; FRR 8.5 and later count them in "numRemoteVteps" (0 when none) and list
// {"ip", "flood"} objects under "remoteVteps".
Expected<json, std::string> remote_vteps_of(const json& detail) {
  const json* count = detail.contains("numRemoteVteps") ? &detail.at("numRemoteVteps") : nullptr;
  const json* list = detail.contains("remoteVteps") ? &detail.at("remoteVteps") : nullptr;
  if (count && count->is_array()) list = count;
  if (!list) {
    if (!count || (count->is_number_integer() && count->get<std::int64_t>() == 0))
      return json::array();
    return "'numRemoteVteps' is " + json_kind(*count) + " and there is no 'remoteVteps' list";
  }
  if (!list->is_array()) return "'remoteVteps' is " + json_kind(*list) + ", not a list";
  std::vector<std::string> addresses;
  for (const auto& vtep : *list) {
    if (vtep.is_string()) {
      addresses.push_back(vtep.get<std::string>());
    } else if (auto ip = string_member(vtep, "ip")) {
      addresses.push_back(*ip);
    } else {
      return "a remote VTEP is " + json_kind(vtep) + ", neither an address nor an {\"ip\"} object";
    }
  }
  if (count && count->is_number_integer() &&
      count->get<std::int64_t>() != static_cast<std::int64_t>(addresses.size()))
    return "'numRemoteVteps' is " + std::to_string(count->get<std::int64_t>()) + " but " +
           std::to_string(addresses.size()) + " remote VTEPs are listed";
  std::sort(addresses.begin(), addresses.end());
  return json(addresses);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The VRF of a VNI's detail: "tenantVrf" from FRR 8.5 on, "vrf" before (and still, for L3 VNIs).
void read_tenant_vrf(const json& detail, Fields& fields, json& entry) {
  if (detail.contains("tenantVrf"))
    entry["tenant_vrf"] = fields.text("tenantVrf");
  else if (detail.contains("vrf"))
    entry["tenant_vrf"] = fields.text("vrf");
}

// An L2 VNI: "vxlanInterface", "vtepIp", "sviInterface" (FRR 8.x on; FRR 7 prints no SVI).
std::string read_l2_vni_detail(const json& detail, Fields& fields, json& entry) {
  if (!detail.contains("vtepIp")) {
    // zebra prints only the VNI, its type and VRF when it has no VXLAN device for it.
    if (fields.text("vxlanInterface") == "unknown") {
      entry["vxlan_if"] = "unknown";
      return {};
    }
    return "an L2 VNI without 'vtepIp'";
  }
  entry["local_vtep"] = fields.text("vtepIp");
  if (detail.contains("vxlanInterface")) entry["vxlan_if"] = fields.text("vxlanInterface");
  if (detail.contains("sviInterface")) entry["bridge"] = fields.text("sviInterface");
  read_tenant_vrf(detail, fields, entry);
  auto remote = remote_vteps_of(detail);
  if (!remote) return remote.error();
  entry["vtep_count"] = remote->size();
  entry["remote_vteps"] = std::move(*remote);
  return {};
}

// An L3 VNI, in the keys every release since FRR 4.0 prints for it: "localVtepIp",
// "vxlanIntf", "sviIntf", "state" (zebra's Up/Down) and the L2 VNIs routed through it.
std::string read_l3_vni_detail(const json& detail, Fields& fields, json& entry) {
  if (!detail.contains("localVtepIp")) return "an L3 VNI without 'localVtepIp'";
  entry["local_vtep"] = fields.text("localVtepIp");
  if (detail.contains("vxlanIntf")) entry["vxlan_if"] = fields.text("vxlanIntf");
  if (detail.contains("sviIntf")) entry["bridge"] = fields.text("sviIntf");
  if (detail.contains("state")) entry["zebra_state"] = lower(fields.text("state"));
  read_tenant_vrf(detail, fields, entry);
  if (detail.contains("l2Vnis")) {
    std::vector<std::int64_t> l2_vnis;
    for (const auto& vni : fields.array("l2Vnis")) {
      if (!vni.is_number_integer()) return "'l2Vnis' holds " + json_kind(vni) + ", not a VNI";
      l2_vnis.push_back(vni.get<std::int64_t>());
    }
    std::sort(l2_vnis.begin(), l2_vnis.end());
    entry["l2_vnis"] = l2_vnis;
  }
  return {};
}

// One VNI of `show evpn vni detail json` into `vnis`. `place` names it in the output ("entry
// [2]" in a list, "the object at byte 812 (line 40, column 1)" back to back) and `path` is its
// field path ("[2]"; empty for an object back to back, which has none: its failures are
// prefixed with `place`). Returns why it cannot be read, if so.
std::string read_vni_detail(const json& detail, const std::string& place, const std::string& path,
                            json& vnis) {
  if (!detail.is_object()) return place + " is " + json_kind(detail) + ", not a VNI object";
  const auto vni = integer_member(detail, "vni");
  if (!vni) return place + " without a numeric 'vni'";
  const std::string name = place + " (VNI " + std::to_string(*vni) + ")";
  std::string problem;
  Fields fields(detail, path, problem);
  const std::string type = fields.required_text("type");
  json& entry = vnis[std::to_string(*vni)];
  entry["type"] = type;
  std::string shape;
  if (problem.empty()) {
    if (type == "L2")
      shape = read_l2_vni_detail(detail, fields, entry);
    else if (type == "L3")
      shape = read_l3_vni_detail(detail, fields, entry);
    else
      shape = "type '" + type + "' is neither L2 nor L3";
  }
  if (!problem.empty()) return path.empty() ? place + ": " + problem : problem;
  if (!shape.empty()) return name + ": unexpected shape: " + shape;
  return {};
}

}  // namespace

// `show evpn vni detail json`: per VNI the local VTEP address, the VXLAN device, the bridge
// (FRR's "SVI"), the VRF and, for L2 VNIs, the remote VTEPs; for L3 VNIs zebra's state and the
// L2 VNIs it routes. Three output shapes, one result (docs/frr-releases.md):
//  - FRR 7.3 and later: a JSON list of VNI objects (`[]` with none);
//  - FRR 7.0 - 7.2 and Cumulus Linux 3.7: one object per VNI, back to back, closed by `{}`;
//  - nothing (up to 8.4) or `{}` (9.0 on) where EVPN is off: no VNIs.
Expected<Ok, std::string> parse_evpn_vni_detail(std::string_view output, json& evpn) {
  json& vnis = vnis_of(evpn);
  if (is_empty_output(output)) return Ok{};
  if (trim(output).front() == '{') {
    auto objects = parse_json_object_sequence(output);
    if (!objects)
      return "neither a JSON list of VNIs (FRR 7.3 on) nor one object per VNI closed by {} (FRR "
             "7.0 - 7.2): " +
             objects.error();
    for (const auto& object : *objects) {
      auto problem = read_vni_detail(
          object.value, "the object at " + text_position(output, object.byte - 1), "", vnis);
      if (!problem.empty()) return problem;
    }
    return Ok{};
  }
  auto document = parse_output_json(output);
  if (!document) return document.error();
  if (!document->is_array())
    return "expected a JSON list of VNIs or VNI objects closed by {}, found " +
           json_kind(*document);
  for (std::size_t i = 0; i < document->size(); ++i) {
    auto problem =
        read_vni_detail((*document)[i], "entry " + element_path(i), element_path(i), vnis);
    if (!problem.empty()) return problem;
  }
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
    json per_vtep = json::object(), per_es = json::object();
    for (const auto& [mac, detail] : fields.object("macs").items()) {
      Fields mac_fields(detail, vni + ".macs." + mac, problem);
      std::string type = mac_fields.text("type");
      if (type == "local") ++local;
      if (type == "remote") {
        ++remote;
        // Behind a remote VTEP, or (EVPN multihoming, "remoteEs" from FRR 8.5 on) behind an
        // Ethernet segment.
        if (detail.contains("remoteVtep")) {
          std::string vtep = mac_fields.text("remoteVtep");
          per_vtep[vtep] = per_vtep.value(vtep, 0) + 1;
        } else if (detail.contains("remoteEs")) {
          std::string es = mac_fields.text("remoteEs");
          per_es[es] = per_es.value(es, 0) + 1;
        } else if (problem.empty()) {
          problem =
              "VNI " + vni + ": remote MAC " + mac + " has neither 'remoteVtep' nor 'remoteEs'";
        }
      }
    }
    if (!problem.empty()) return problem;
    json& entry = vnis[vni];
    entry["macs"] = fields.integer("numMacs", local + remote);
    entry["macs_local"] = local;
    entry["macs_remote"] = remote;
    entry["macs_per_remote_vtep"] = std::move(per_vtep);
    if (!per_es.empty()) entry["macs_per_remote_es"] = std::move(per_es);
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
      json& entry = peers[address];
      entry = {{"state", fields.required_text("state")},
               {"remote_as", fields.integer("remoteAs")},
               {"uptime_ms", fields.integer("peerUptimeMsec")},
               {"prefixes_received", prefixes_received(peer, fields)}};
      if (peer.contains("pfxSnt")) entry["prefixes_sent"] = fields.integer("pfxSnt");
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
