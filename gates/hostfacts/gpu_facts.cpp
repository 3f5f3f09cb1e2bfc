#include "gates/hostfacts/gpu_facts.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "adapters/core/text.h"

namespace fabgate::hostfacts {

using nlohmann::json;

namespace {

enum class FieldType { integer, text, yes_no, hex_mask };

struct Field {
  std::string_view query;  // nvidia-smi field name
  std::string_view fact;   // key in the snapshot
  FieldType type;
};

constexpr std::array<Field, 19> kFields = {{
    {"index", "index", FieldType::integer},
    {"pci.bus_id", "pci_bus_id", FieldType::text},
    {"uuid", "uuid", FieldType::text},
    {"name", "name", FieldType::text},
    {"driver_version", "driver_version", FieldType::text},
    {"temperature.gpu", "temperature_c", FieldType::integer},
    {"ecc.errors.corrected.volatile.total", "ecc_corrected_volatile", FieldType::integer},
    {"ecc.errors.uncorrected.volatile.total", "ecc_uncorrected_volatile", FieldType::integer},
    {"ecc.errors.uncorrected.aggregate.total", "ecc_uncorrected_aggregate", FieldType::integer},
    {"retired_pages.single_bit_ecc.count", "retired_pages_single_bit", FieldType::integer},
    {"retired_pages.sbe", "retired_pages_single_bit", FieldType::integer},
    {"retired_pages.double_bit.count", "retired_pages_double_bit", FieldType::integer},
    {"retired_pages.dbe", "retired_pages_double_bit", FieldType::integer},
    {"retired_pages.pending", "retired_pages_pending", FieldType::yes_no},
    {"remapped_rows.correctable", "remapped_rows_correctable", FieldType::integer},
    {"remapped_rows.uncorrectable", "remapped_rows_uncorrectable", FieldType::integer},
    {"remapped_rows.pending", "remapped_rows_pending", FieldType::yes_no},
    {"remapped_rows.failure", "remapped_rows_failure", FieldType::yes_no},
    {"clocks_throttle_reasons.active", "throttle_reasons", FieldType::hex_mask},
}};

const Field* find_field(std::string_view query) {
  if (query == "clocks_event_reasons.active")
    query = "clocks_throttle_reasons.active";  // r535+ spelling
  for (const auto& field : kFields) {
    if (field.query == query) return &field;
  }
  return nullptr;
}

// "memory.used [MiB]" -> "memory.used": units in the header even with nounits on some drivers.
std::string header_name(std::string_view cell) {
  cell = trim(cell);
  if (auto bracket = cell.find(" ["); bracket != std::string_view::npos)
    cell = cell.substr(0, bracket);
  return std::string(cell);
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    auto comma = line.find(',', start);
    cells.emplace_back(
        trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

bool is_not_available(std::string_view cell) {
  std::string lower(cell);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower == "[n/a]" || lower == "n/a" || lower == "[not supported]" ||
         lower == "not supported" || lower == "[unknown error]";
}

std::optional<json> convert(const Field& field, const std::string& cell) {
  if (is_not_available(cell)) return json(nullptr);
  switch (field.type) {
    case FieldType::text:
      return json(cell);
    case FieldType::integer:
      if (auto value = parse_counter(cell)) return json(*value);
      return std::nullopt;
    case FieldType::yes_no: {
      std::string lower(cell);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (lower == "yes") return json(true);
      if (lower == "no") return json(false);
      return std::nullopt;
    }
    case FieldType::hex_mask: {
      if (!starts_with(cell, "0x") && !starts_with(cell, "0X")) return std::nullopt;
      try {
        std::size_t used = 0;
        auto mask = std::stoull(cell.substr(2), &used, 16);
        if (used != cell.size() - 2) return std::nullopt;
        return json{{"mask", mask}, {"active", throttle_reason_names(mask)}};
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

json throttle_reason_names(std::uint64_t mask) {
  static constexpr std::array<std::pair<std::uint64_t, std::string_view>, 9> kReasons = {{
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
  }};
  json names = json::array();
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kReasons) {
    known |= bit;
    if (mask & bit) names.push_back(name);
  }
  if (mask & ~known) names.push_back("unknown");
  return names;
}

Facts parse_nvidia_smi_csv(std::string_view text) {
  std::vector<std::string> lines;
  for (auto& line : split_lines(text)) {
    if (!trim(line).empty()) lines.push_back(line);
  }
  if (lines.empty()) return unavailable("nvidia-smi printed nothing");
  if (lines.front().find("NVIDIA-SMI has failed") != std::string::npos ||
      lines.front().find("No devices were found") != std::string::npos) {
    return unavailable("nvidia-smi: " + std::string(trim(lines.front())));
  }
  auto headers = split_csv(lines.front());
  std::vector<const Field*> fields;
  int key_column = -1;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    auto name = header_name(headers[i]);
    fields.push_back(find_field(name));
    if (name == "pci.bus_id" || (name == "index" && key_column < 0))
      key_column = static_cast<int>(i);
  }
  if (key_column < 0)
    return unparsable(
        "nvidia-smi CSV: header has neither pci.bus_id nor index (add the header line)");
  if (lines.size() < 2) return unavailable("nvidia-smi listed no GPUs");

  json gpus = json::object();
  std::string driver_version;
  for (std::size_t row = 1; row < lines.size(); ++row) {
    auto cells = split_csv(lines[row]);
    if (cells.size() != headers.size()) {
      return unparsable("nvidia-smi CSV line " + std::to_string(row + 1) + ": " +
                        std::to_string(cells.size()) + " fields, header has " +
                        std::to_string(headers.size()));
    }
    json gpu = json::object();
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (fields[i] == nullptr) continue;  // a field this parser does not interpret
      auto value = convert(*fields[i], cells[i]);
      if (!value) {
        return unparsable("nvidia-smi CSV line " + std::to_string(row + 1) + ": " +
                          std::string(fields[i]->query) + " = '" + cells[i] + "' is not a " +
                          (fields[i]->type == FieldType::integer ? "number" : "valid value"));
      }
      gpu[std::string(fields[i]->fact)] = std::move(*value);
    }
    if (gpu.contains("driver_version") && gpu["driver_version"].is_string()) {
      auto version = gpu["driver_version"].get<std::string>();
      if (!driver_version.empty() && version != driver_version) {
        return unparsable("nvidia-smi: GPUs report different driver versions (" + driver_version +
                          ", " + version + ")");
      }
      driver_version = version;
      gpu.erase("driver_version");  // one driver per host; kept at category level
    }
    gpus[cells[static_cast<std::size_t>(key_column)]] = std::move(gpu);
  }
  json category = {{"gpus", std::move(gpus)}};
  if (!driver_version.empty()) category["driver_version"] = driver_version;
  return category;
}

Facts parse_xid_events(std::string_view kernel_log) {
  constexpr std::size_t kMaxEvents = 100;
  constexpr std::string_view kMarker = "NVRM: Xid (";
  json by_code = json::object();
  json events = json::array();
  std::uint64_t total = 0;
  for (const auto& raw_line : split_lines(kernel_log)) {
    std::string_view line = raw_line;
    if (line.find("read kernel buffer failed") != std::string_view::npos) {
      return unavailable("kernel log not readable: " + std::string(trim(line)));
    }
    auto marker = line.find(kMarker);
    if (marker == std::string_view::npos) continue;
    auto rest = line.substr(marker + kMarker.size());
    auto close = rest.find("): ");
    if (close == std::string_view::npos) continue;
    std::string pci(rest.substr(0, close));
    if (starts_with(pci, "PCI:")) pci = pci.substr(4);
    rest = rest.substr(close + 3);
    auto comma = rest.find(',');
    auto code = parse_counter(rest.substr(0, comma));
    if (!code) continue;
    ++total;
    auto key = std::to_string(*code);
    by_code[key] = by_code.value(key, 0) + 1;
    if (events.size() < kMaxEvents) {
      std::string detail =
          comma == std::string_view::npos ? "" : std::string(trim(rest.substr(comma + 1)));
      events.push_back({{"pci", pci}, {"xid", *code}, {"detail", detail}});
    }
  }
  return json{{"total", total}, {"by_code", std::move(by_code)}, {"events", std::move(events)}};
}

}  // namespace fabgate::hostfacts
