// Normalizers for FRR's vtysh JSON (FRR 8.x field names).

#include <cctype>

#include "adapters/core/text.h"
#include "gates/snapshot/normalizers.h"

namespace fabgate::snapshot {

using nlohmann::json;

namespace {

Expected<json, std::string> parse_json_object(std::string_view output) {
  json document = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    std::string start(trim(output).substr(0, 60));
    return "not JSON" + (start.empty() ? std::string(" (empty output)") : ": '" + start + "'");
  }
  if (!document.is_object()) return std::string("expected a JSON object");
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
// once with its session state; prefixes are summed over families and kept per family.
// `{}` (BGP configured with no address family active) is a real, empty answer.
Expected<Ok, std::string> parse_bgp_summary(std::string_view output, json& bgp) {
  auto document = parse_json_object(output);
  if (!document) return document.error();
  json peers = json::object();
  for (const auto& [family, summary] : document->items()) {
    if (!summary.is_object() || !summary.contains("peers")) continue;
    const std::string family_key = address_family_key(family);
    for (const auto& [address, peer] : summary.at("peers").items()) {
      json& entry = peers[address];
      entry["state"] = peer.at("state");
      entry["remote_as"] = peer.value("remoteAs", 0);
      entry["uptime_ms"] = peer.value("peerUptimeMsec", 0);
      int received = peer.value("pfxRcd", 0);
      entry["prefixes_received"] = entry.value("prefixes_received", 0) + received;
      entry["address_families"][family_key] = {{"prefixes_received", received},
                                               {"prefixes_sent", peer.value("pfxSnt", 0)}};
    }
  }
  bgp["peers"] = std::move(peers);
  return Ok{};
}

Expected<Ok, std::string> parse_running_config(std::string_view output, json& config) {
  if (trim(output).empty()) return std::string("empty running configuration");
  config = {{"format", "text"}, {"text", std::string(output)}};
  return Ok{};
}

// `show bfd peers json`: a list of sessions keyed here by peer address (and VRF when not default).
Expected<Ok, std::string> parse_bfd_peers(std::string_view output, json& bfd) {
  json document = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_array()) {
    return std::string("expected a JSON list of BFD peers");
  }
  json peers = json::object();
  for (const auto& session : document) {
    std::string key = session.at("peer").get<std::string>();
    std::string vrf = session.value("vrf", "default");
    if (vrf != "default") key += "%" + vrf;
    json entry = {{"status", session.at("status")}, {"multihop", session.value("multihop", false)}};
    if (session.contains("interface")) entry["interface"] = session.at("interface");
    peers[key] = std::move(entry);
  }
  bfd["peers"] = std::move(peers);
  return Ok{};
}

// `show evpn vni json`: an object keyed by VNI. L3 VNIs report "n/a" remote VTEPs.
Expected<Ok, std::string> parse_evpn_vni(std::string_view output, json& evpn) {
  auto document = parse_json_object(output);
  if (!document) return document.error();
  json vnis = json::object();
  for (const auto& [vni, detail] : document->items()) {
    json entry = {{"type", detail.at("type")},
                  {"vxlan_if", detail.value("vxlanIf", "")},
                  {"tenant_vrf", detail.value("tenantVrf", "")}};
    const auto& vteps = detail.value("numRemoteVteps", json());
    if (vteps.is_number_integer()) entry["vtep_count"] = vteps;
    if (detail.contains("remoteVteps")) entry["remote_vteps"] = detail.at("remoteVteps");
    if (detail.contains("numMacs")) entry["macs"] = detail.at("numMacs");
    vnis[vni] = std::move(entry);
  }
  evpn["vnis"] = std::move(vnis);
  return Ok{};
}

}  // namespace fabgate::snapshot
