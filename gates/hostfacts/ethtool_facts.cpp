#include "gates/hostfacts/ethtool_facts.h"

#include <array>
#include <regex>

#include "adapters/core/text.h"

namespace fabgate::hostfacts {

using nlohmann::json;

namespace {

// Port-level counters that matter for lossless RoCE: drops for lack of buffer, pause frames
// outside PFC, ECN marks seen by the Ethernet side, and physical errors.
constexpr std::array<std::string_view, 11> kPortCounters = {
    "rx_discards_phy",   "tx_discards_phy",      "rx_out_of_buffer",           "rx_pause_ctrl_phy",
    "tx_pause_ctrl_phy", "rx_ecn_mark",          "rx_buffer_passed_thres_phy", "rx_crc_errors_phy",
    "rx_symbol_err_phy", "link_down_events_phy", "rx_corrected_bits_phy"};

}  // namespace

Facts parse_ethtool_congestion(std::string_view text) {
  static const std::regex per_priority(R"((rx|tx)_prio([0-7])_(\w+))");
  static const std::regex global(R"((rx|tx)_global_(\w+))");
  bool header = false;
  json priorities = json::object();
  json global_pause = json::object();
  json pause_storm = json::object();
  json port = json::object();
  bool has_pfc_pause = false;
  for (const auto& raw_line : split_lines(text)) {
    auto line = trim(raw_line);
    if (line.empty()) continue;
    if (starts_with(line, "NIC statistics:")) {
      header = true;
      continue;
    }
    auto colon = line.rfind(':');
    if (!header || colon == std::string_view::npos) continue;
    std::string name(trim(line.substr(0, colon)));
    auto value = parse_counter(line.substr(colon + 1));
    if (!value) continue;  // ethtool only prints integers; anything else is not a counter
    std::smatch match;
    if (std::regex_match(name, match, per_priority)) {
      priorities[match[2].str()][match[1].str() + "_" + match[3].str()] = *value;
      if (match[3].str() == "pause") has_pfc_pause = true;
    } else if (std::regex_match(name, match, global)) {
      global_pause[match[1].str() + "_" + match[2].str()] = *value;
    } else if (name == "tx_pause_storm_warning_events") {
      pause_storm["warning_events"] = *value;
    } else if (name == "tx_pause_storm_error_events") {
      pause_storm["error_events"] = *value;
    } else {
      for (auto wanted : kPortCounters) {
        if (name == wanted) port[name] = *value;
      }
    }
  }
  if (!header) return unparsable("ethtool -S: no 'NIC statistics:' header");
  if (!has_pfc_pause) {
    return unsupported(
        "ethtool -S: no per-priority pause counters (rx_prio<N>_pause); not mlx5 naming");
  }
  json facts = {{"priorities", std::move(priorities)}, {"port", std::move(port)}};
  if (!global_pause.empty()) facts["global_pause"] = std::move(global_pause);
  if (!pause_storm.empty()) facts["pause_storm"] = std::move(pause_storm);
  return facts;
}

Facts parse_ethtool_driver_info(std::string_view text) {
  json nic = json::object();
  for (const auto& raw_line : split_lines(text)) {
    auto line = trim(raw_line);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = trim(line.substr(0, colon));
    std::string value(trim(line.substr(colon + 1)));
    if (key == "driver")
      nic["driver"] = value;
    else if (key == "version")
      nic["driver_version"] = value;
    else if (key == "firmware-version")
      nic["firmware"] = value;
    else if (key == "bus-info")
      nic["bus_info"] = value;
  }
  if (!nic.contains("driver")) return unparsable("ethtool -i: no 'driver:' line");
  return nic;
}

}  // namespace fabgate::hostfacts
