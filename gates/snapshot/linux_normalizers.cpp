// Normalizers for Linux hosts and switches: iproute2 JSON, ethtool -i, /etc/os-release, uname.

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "gates/snapshot/normalizers.h"
#include "gates/snapshot/output_json.h"
#include "gates/snapshot/route_output.h"

namespace fabgate::snapshot {

using nlohmann::json;

namespace {

Expected<json, std::string> parse_json_array(std::string_view output) {
  auto document = parse_output_json(output);
  if (document && !document->is_array()) return std::string("expected a JSON list");
  return document;
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

Expected<Ok, std::string> single_word(std::string_view output, std::string_view what,
                                      std::string& word) {
  std::string_view text = trim(output);
  if (text.empty()) return "empty " + std::string(what);
  if (text.find_first_of(" \t\n") != std::string_view::npos) {
    return "expected one word for " + std::string(what) + ", got '" + shorten(text, 60) + "'";
  }
  word = std::string(text);
  return Ok{};
}

// The kernel lists one prefix once per route: fe80::/64 once per interface with IPv6, a default
// route once per metric. The snapshot keys routes by prefix, so they become one route whose next
// hops are all of theirs; the one with the lowest metric (the one the kernel uses) gives the
// protocol, metric and type. A next hop that appears or goes away still shows as a difference.
Expected<Ok, std::string> read_ip_route_table(const std::string& output, RouteTables& tables,
                                              bool ipv6) {
  const char* family = ipv6 ? "ipv6" : "ipv4";
  compare::RouteTable table(ipv6 ? compare::Family::ipv6 : compare::Family::ipv4);
  if (auto read = read_ip_routes(output, table); !read) return read;
  std::string problem;
  if (!table.finalize(&problem, compare::RouteTable::Duplicates::merge)) return problem;
  tables.insert_or_assign(family, std::move(table));
  return Ok{};
}

Expected<Ok, std::string> parse_ip_route(std::string_view output, json& routes, bool ipv6) {
  RouteTables tables;
  if (auto read = read_ip_route_table(std::string(output), tables, ipv6); !read) return read;
  const char* family = ipv6 ? "ipv6" : "ipv4";
  routes[family] = route_list_json(tables.at(family));
  return Ok{};
}

}  // namespace

Expected<Ok, std::string> parse_hostname(std::string_view output, json& identity) {
  std::string name;
  if (auto word = single_word(output, "hostname", name); !word) return word;
  identity["hostname"] = name;
  return Ok{};
}

Expected<Ok, std::string> parse_kernel_release(std::string_view output, json& identity) {
  std::string release;
  if (auto word = single_word(output, "kernel release", release); !word) return word;
  identity["kernel"] = release;
  return Ok{};
}

Expected<Ok, std::string> parse_system_identity(std::string_view output, json& identity) {
  bool saw_serial = false;
  struct Candidate {
    long index = 0;
    std::string name, mac;
    bool permanent = false;
  };
  std::optional<Candidate> chosen;
  for (const auto& line : split_lines(output)) {
    if (line == "serial" || starts_with(line, "serial ")) {
      saw_serial = true;
      std::string serial(trim(std::string_view(line).substr(6)));
      // Firmware placeholders are not serials.
      static const char* kPlaceholders[] = {"to be filled by o.e.m.",
                                            "not specified",
                                            "default string",
                                            "system serial number",
                                            "none",
                                            "0",
                                            "0123456789"};
      bool placeholder = std::any_of(std::begin(kPlaceholders), std::end(kPlaceholders),
                                     [&](const char* p) { return lower(serial) == p; });
      if (!serial.empty() && !placeholder) {
        identity["serial"] = serial;
        identity["serial_source"] = "/sys/class/dmi/id/product_serial";
      } else {
        identity["serial_unavailable"] =
            serial.empty()
                ? "/sys/class/dmi/id/product_serial is absent, empty or unreadable "
                  "(a VM, a container or no root)"
                : "/sys/class/dmi/id/product_serial holds the placeholder '" + serial + "'";
      }
      continue;
    }
    if (!starts_with(line, "iface ")) continue;
    auto words = split_words(line);
    if (words.size() < 4) return "malformed interface line '" + line + "'";
    Candidate candidate;
    try {
      candidate.index = std::stol(words[1]);
    } catch (const std::exception&) {
      return "malformed ifindex in '" + line + "'";
    }
    candidate.name = words[2];
    candidate.mac = lower(words[3]);
    candidate.permanent = words.size() > 4 && words[4] == "0";
    if (candidate.mac == "00:00:00:00:00:00") continue;
    if (!chosen || (candidate.permanent && !chosen->permanent) ||
        (candidate.permanent == chosen->permanent && candidate.index < chosen->index))
      chosen = candidate;
  }
  if (!saw_serial) return std::string("no 'serial' line");
  if (chosen) {
    identity["system_mac"] = chosen->mac;
    identity["system_mac_source"] =
        chosen->name + (chosen->permanent ? " (its permanent address)"
                                          : " (lowest ifindex; no interface has a permanent "
                                            "address, so this one may change)");
  } else {
    identity["system_mac_unavailable"] = "no Ethernet interface with an address";
  }
  return Ok{};
}

Expected<Ok, std::string> parse_os_release(std::string_view output, json& identity) {
  for (const auto& line : split_lines(output)) {
    if (!starts_with(line, "PRETTY_NAME=")) continue;
    std::string value(trim(std::string_view(line).substr(12)));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    if (value.empty()) break;
    identity["os"] = value;
    return Ok{};
  }
  return std::string("no PRETTY_NAME in os-release");
}

// Input: per interface a "== NAME" line followed by `ethtool -i NAME` output. Interfaces
// without driver information (lo) are left out.
Expected<Ok, std::string> parse_ethtool_drivers(std::string_view output, json& identity) {
  json nics = json::object();
  std::string current;
  bool saw_section = false;
  for (const auto& line : split_lines(output)) {
    if (starts_with(line, "== ")) {
      current = std::string(trim(std::string_view(line).substr(3)));
      saw_section = true;
      continue;
    }
    auto colon = line.find(':');
    if (current.empty() || colon == std::string::npos) continue;
    std::string key(trim(std::string_view(line).substr(0, colon)));
    std::string value(trim(std::string_view(line).substr(colon + 1)));
    if (key == "driver")
      nics[current]["driver"] = value;
    else if (key == "version")
      nics[current]["driver_version"] = value;
    else if (key == "firmware-version")
      nics[current]["firmware"] = value;
    else if (key == "bus-info")
      nics[current]["bus"] = value;
  }
  if (!saw_section) return std::string("no '== INTERFACE' sections in ethtool output");
  identity["nics"] = std::move(nics);
  return Ok{};
}

Expected<Ok, std::string> parse_ip_link(std::string_view output, json& interfaces) {
  auto document = parse_json_array(output);
  if (!document) return document.error();
  if (!interfaces.is_object()) interfaces = json::object();
  std::string problem;
  for (std::size_t i = 0; i < document->size(); ++i) {
    const json& link = (*document)[i];
    const std::string where = element_path(i);
    Fields fields(link, where, problem);
    const std::string name = fields.required_text("ifname");
    const json& flags = fields.array("flags");
    if (!problem.empty()) return problem;
    json& entry = interfaces[name];
    bool admin_up = std::find(flags.begin(), flags.end(), "UP") != flags.end();
    entry["admin"] = admin_up ? "up" : "down";
    entry["oper"] = lower(fields.text("operstate", "unknown"));
    entry["mtu"] = fields.required("mtu");
    // The bridge (or bond) it is a port of: what a twin needs to wire it as production is.
    if (auto master = link.find("master"); master != link.end() && master->is_string())
      entry["master"] = *master;
    if (link.contains("stats64")) {
      Fields stats(fields.object("stats64"), where + ".stats64", problem);
      Fields rx(stats.object("rx"), where + ".stats64.rx", problem);
      Fields tx(stats.object("tx"), where + ".stats64.tx", problem);
      entry["counters"] = {
          {"rx_packets", rx.required("packets")}, {"tx_packets", tx.required("packets")},
          {"rx_bytes", rx.required("bytes")},     {"tx_bytes", tx.required("bytes")},
          {"rx_errors", rx.required("errors")},   {"tx_errors", tx.required("errors")},
          {"rx_dropped", rx.required("dropped")}, {"tx_dropped", tx.required("dropped")},
      };
    }
    if (!problem.empty()) return problem;
    if (!entry.contains("addresses")) entry["addresses"] = json::array();
  }
  return Ok{};
}

// IPv6 link-local addresses are left out: every interface has one and they carry no intent.
Expected<Ok, std::string> parse_ip_addr(std::string_view output, json& interfaces) {
  auto document = parse_json_array(output);
  if (!document) return document.error();
  if (!interfaces.is_object()) interfaces = json::object();
  std::string problem;
  for (std::size_t i = 0; i < document->size(); ++i) {
    const std::string where = element_path(i);
    Fields link((*document)[i], where, problem);
    const std::string name = link.required_text("ifname");
    const json& addr_info = link.array("addr_info");
    std::vector<std::string> addresses;
    for (std::size_t a = 0; a < addr_info.size(); ++a) {
      if (!addr_info[a].contains("local")) continue;
      Fields address(addr_info[a], where + ".addr_info" + element_path(a), problem);
      if (address.text("family") == "inet6" && address.text("scope") == "link") continue;
      addresses.push_back(address.required_text("local") + "/" +
                          std::to_string(address.required_integer("prefixlen")));
    }
    if (!problem.empty()) return problem;
    std::sort(addresses.begin(), addresses.end());
    interfaces[name]["addresses"] = addresses;
  }
  return Ok{};
}

Expected<Ok, std::string> parse_ip_route_v4(std::string_view output, json& routes) {
  return parse_ip_route(output, routes, false);
}

Expected<Ok, std::string> parse_ip_route_v6(std::string_view output, json& routes) {
  return parse_ip_route(output, routes, true);
}

Expected<Ok, std::string> read_ip_route_v4(const std::string& output, RouteTables& tables) {
  return read_ip_route_table(output, tables, false);
}

Expected<Ok, std::string> read_ip_route_v6(const std::string& output, RouteTables& tables) {
  return read_ip_route_table(output, tables, true);
}

}  // namespace fabgate::snapshot
