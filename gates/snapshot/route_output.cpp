#include "gates/snapshot/route_output.h"

#include <simdjson.h>

#include <optional>
#include <vector>

#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "gates/snapshot/json_lists.h"
#include "gates/snapshot/output_json.h"

namespace fabgate::snapshot {

namespace ondemand = simdjson::ondemand;

namespace {

using json_lists::kind_of;

// Reading one output: the first problem is kept, as Fields does for the tree normalizers.
class RouteReader {
 public:
  RouteReader(compare::RouteTable& table, bool ipv6) : table_(table), ipv6_(ipv6) {}

  std::string problem;

  // Reads one batch's list; `index` is its first element's place in the whole output.
  void read(ondemand::array& list, std::size_t& index) {
    for (auto element : list) {
      ondemand::value value;
      if (auto code = element.get(value)) return fail_json(code);
      read_route(value, element_path(index++));
      if (!problem.empty()) return;
    }
  }

  void fail_json(simdjson::error_code code) {
    if (problem.empty()) problem = std::string("not valid JSON: ") + simdjson::error_message(code);
  }

 private:
  // Names are built only on failure: a million routes read without a string per field.
  void wrong(std::string_view where, std::string_view key, ondemand::value& value,
             std::string_view expected) {
    if (problem.empty())
      problem = "field '" + std::string(where) + (key.empty() ? "" : ".") + std::string(key) +
                "' is " + kind_of(value) + ", not " + std::string(expected);
  }

  // A string member's text (valid while the batch is read), or nullopt with `problem` set.
  std::optional<std::string_view> text(ondemand::value& value, std::string_view where,
                                       std::string_view key) {
    std::string_view out;
    if (value.get_string().get(out)) {
      wrong(where, key, value, "a string");
      return std::nullopt;
    }
    return out;
  }

  // A next hop: the gateway, else `dev:NAME`, else `unknown`.
  static void hop_text(std::optional<std::string_view> gateway,
                       std::optional<std::string_view> dev, std::string& hop) {
    if (gateway && !gateway->empty()) {
      hop.assign(*gateway);
    } else if (dev && !dev->empty()) {
      hop.assign("dev:");
      hop.append(*dev);
    } else {
      hop.assign("unknown");
    }
  }

  // One entry of a route's `nexthops`; the fields other than gateway and dev are skipped.
  void read_hop_fields(ondemand::object& object, const std::string& where, std::string& hop) {
    std::optional<std::string_view> gateway, dev;
    for (auto field : object) {
      std::string_view key;
      if (auto code = field.unescaped_key().get(key)) return fail_json(code);
      ondemand::value value;
      if (auto code = field.value().get(value)) return fail_json(code);
      if (key == "gateway") gateway = text(value, where, key);
      else if (key == "dev") dev = text(value, where, key);
      if (!problem.empty()) return;
    }
    hop_text(gateway, dev, hop);
  }

  void read_route(ondemand::value& entry, const std::string& where) {
    ondemand::object object;
    if (entry.get_object().get(object)) {
      if (problem.empty()) problem = "field '" + where + "' is " + kind_of(entry) + ", not an object";
      return;
    }
    std::optional<std::string_view> dst, gateway, dev;
    std::string_view protocol = "boot", type;
    std::int64_t metric = 0;
    bool listed_hops = false;
    hops_used_ = 0;
    for (auto field : object) {
      std::string_view key;
      if (auto code = field.unescaped_key().get(key)) return fail_json(code);
      ondemand::value value;
      if (auto code = field.value().get(value)) return fail_json(code);
      if (key == "dst") {
        dst = text(value, where, key);
      } else if (key == "protocol") {
        if (auto got = text(value, where, key)) protocol = *got;
      } else if (key == "type") {
        if (auto got = text(value, where, key)) type = *got;
      } else if (key == "metric") {
        if (value.get_int64().get(metric)) wrong(where, key, value, "an integer");
      } else if (key == "gateway") {
        gateway = text(value, where, key);
      } else if (key == "dev") {
        dev = text(value, where, key);
      } else if (key == "nexthops") {
        listed_hops = true;
        read_hops(value, where + ".nexthops");
      }
      if (!problem.empty()) return;
    }
    if (!dst) {
      problem = "field '" + where + ".dst' is missing";
      return;
    }
    if (!listed_hops) hop_text(gateway, dev, next_hop_slot());
    if (metric < 0 || metric > 0xffffffffLL) {
      problem = "field '" + where + ".metric' is " + std::to_string(metric) +
                ", not a route metric (0 to 4294967295)";
      return;
    }
    views_.clear();
    for (std::size_t i = 0; i < hops_used_; ++i) views_.push_back(hops_[i]);
    std::string error;
    if (!table_.add("default", prefix_of(*dst), protocol, static_cast<std::uint32_t>(metric),
                    views_, &error, type))
      problem = "field '" + where + ".dst': " + error;
  }

  void read_hops(ondemand::value& value, const std::string& where) {
    ondemand::array list;
    if (value.get_array().get(list)) return wrong(where, "", value, "an array");
    std::size_t index = 0;
    for (auto element : list) {
      ondemand::value hop_value;
      if (auto code = element.get(hop_value)) return fail_json(code);
      const std::string at = where + element_path(index++);
      ondemand::object hop;
      if (hop_value.get_object().get(hop)) {
        if (problem.empty())
          problem = "field '" + at + "' is " + kind_of(hop_value) + ", not an object";
        return;
      }
      read_hop_fields(hop, at, next_hop_slot());
      if (!problem.empty()) return;
    }
  }

  // A reused string for the route's next hop: a million routes allocate no hop strings.
  std::string& next_hop_slot() {
    if (hops_used_ == hops_.size()) hops_.emplace_back();
    return hops_[hops_used_++];
  }

  // "default" is 0.0.0.0/0 (::/0); an address alone is its host route.
  std::string_view prefix_of(std::string_view dst) {
    if (dst == "default") return ipv6_ ? "::/0" : "0.0.0.0/0";
    if (dst.find('/') != std::string_view::npos) return dst;
    prefix_.assign(dst);
    prefix_ += ipv6_ ? "/128" : "/32";
    return prefix_;
  }

  compare::RouteTable& table_;
  bool ipv6_;
  std::vector<std::string> hops_;
  std::size_t hops_used_ = 0;
  std::vector<std::string_view> views_;
  std::string prefix_;
};

}  // namespace

Expected<Ok, std::string> read_ip_routes(const std::string& output, compare::RouteTable& table) {
  std::string_view text = trim(output);
  if (text.empty()) return std::string("not JSON (empty output)");
  const json_lists::Scan scan = json_lists::scan(text, {{}});
  if (scan.too_deep)
    return "nested deeper than " + std::to_string(json_lists::kMaxDepth) + " levels";
  if (text.front() != '[') {
    // Not a list: the tree reader says whether it is JSON at all, in the words it always used.
    auto parsed = parse_output_json(output);
    if (!parsed) return parsed.error();
    return std::string("expected a JSON list");
  }
  const std::string not_json = "not JSON: '" + shorten(text, 60) + "'";
  if (!scan.closed || scan.trailing || scan.mismatched) return not_json;
  ondemand::parser parser;
  RouteReader reader(table, table.family() == compare::Family::ipv6);
  std::size_t index = 0;  // of the route in the whole list, for failures
  auto code = json_lists::read_batches(text, scan.lists.at(0), parser,
                                       [&reader, &index](ondemand::array& list) {
                                         reader.read(list, index);
                                         return reader.problem.empty();
                                       });
  if (code) return not_json;
  if (!reader.problem.empty()) return reader.problem;
  return Ok{};
}

void append_route_json(const compare::RouteTable& table, const std::string& vrf,
                       const compare::Route& route, std::string& out) {
  // The texts are simdjson's (valid UTF-8) or the table's own: only quotes, backslashes and
  // control characters need escaping.
  auto string = [&out](std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (byte < 0x20) {
        out += "\\u00";
        out += kHex[byte >> 4];
        out += kHex[byte & 15];
      } else {
        out += c;
      }
    }
    out += '"';
  };
  out += "{\"prefix\": ";
  string(table.prefix_of(route));
  // An AFT entry without an origin protocol has none in the snapshot either.
  if (const auto& protocol = table.strings().text(route.protocol); !protocol.empty()) {
    out += ", \"protocol\": ";
    string(protocol);
  }
  if (route.has_metric) out += ", \"metric\": " + std::to_string(route.metric);
  if (auto type = table.type_of(route); !type.empty()) {
    out += ", \"type\": ";
    string(type);
  }
  if (vrf != "default") {
    out += ", \"vrf\": ";
    string(vrf);
  }
  out += ", \"nexthops\": [";
  bool first = true;
  for (const auto& hop : table.nexthops_of(route)) {
    if (!first) out += ", ";
    first = false;
    string(hop);
  }
  out += "]}";
}

nlohmann::json route_list_json(const compare::RouteTable& table) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [vrf, routes] : table.vrfs()) {
    for (const auto& route : routes) {
      nlohmann::json entry = {{"prefix", table.prefix_of(route)},
                              {"nexthops", table.nexthops_of(route)}};
      if (const auto& protocol = table.strings().text(route.protocol); !protocol.empty())
        entry["protocol"] = protocol;
      if (route.has_metric) entry["metric"] = route.metric;
      if (auto type = table.type_of(route); !type.empty()) entry["type"] = type;
      if (vrf != "default") entry["vrf"] = vrf;
      list.push_back(std::move(entry));
    }
  }
  return list;
}

}  // namespace fabgate::snapshot
