// Normalizers for the Linux kernel's own settings and counters, read from /proc: the multipath
// (ECMP) hash policy and the IP stack's receive errors (/proc/net/snmp).

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <sstream>

#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "gates/snapshot/normalizers.h"

namespace fabgate::snapshot {

using nlohmann::json;

namespace {

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<std::string> words_of(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

// Lines as `grep -H . /proc/sys/net/ipv4/fib_multipath_hash_policy ...` prints them
// (`/proc/sys/net/ipv4/fib_multipath_hash_policy:1`) or as `sysctl` does
// (`net.ipv4.fib_multipath_hash_policy = 1`).
Expected<Ok, std::string> parse_multipath_hash(std::string_view output, json& multipath) {
  struct Known {
    std::string_view name, group, family;
    bool required;
  };
  static constexpr Known kKnown[] = {
      {"net.ipv4.fib_multipath_hash_policy", "hash_policy", "ipv4", true},
      // Absent where the kernel runs without IPv6 (ipv6.disable=1).
      {"net.ipv6.fib_multipath_hash_policy", "hash_policy", "ipv6", false},
      // Kernels from 5.12 on: the fields hashed under policy 3; absent before.
      {"net.ipv4.fib_multipath_hash_fields", "hash_fields", "ipv4", false},
      {"net.ipv6.fib_multipath_hash_fields", "hash_fields", "ipv6", false},
  };
  json read = json::object();
  for (const auto& raw : split_lines(output)) {
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    std::string name;
    std::string_view value;
    if (starts_with(line, "/proc/sys/")) {
      auto colon = line.find(':');
      if (colon == std::string_view::npos) return "malformed line '" + shorten(line, 80) + "'";
      name = std::string(line.substr(10, colon - 10));
      for (auto& c : name)
        if (c == '/') c = '.';
      value = trim(line.substr(colon + 1));
    } else {
      auto equals = line.find('=');
      if (equals == std::string_view::npos) return "malformed line '" + shorten(line, 80) + "'";
      name = std::string(trim(line.substr(0, equals)));
      value = trim(line.substr(equals + 1));
    }
    for (const auto& known : kKnown) {
      if (name != known.name) continue;
      auto number = whole_number(value);
      if (!number)
        return name + " is '" + shorten(value, 40) + "', not an integer";
      read[std::string(known.group)][std::string(known.family)] = *number;
    }
  }
  for (const auto& known : kKnown) {
    if (!known.required) continue;
    const std::string group(known.group), family(known.family);
    if (!read.contains(group) || !read[group].contains(family))
      return "no " + std::string(known.name) + " in the output";
  }
  for (auto& [group, values] : read.items()) multipath[group] = values;
  return Ok{};
}

// /proc/net/snmp: per protocol a line of names (`Udp: InDatagrams NoPorts InErrors ...`)
// followed by a line of values (`Udp: 21476162 28 8863 ...`).
Expected<Ok, std::string> parse_proc_net_snmp(std::string_view output, json& ip_stack) {
  struct Counter {
    std::string_view protocol, kernel_name, name;
  };
  static constexpr Counter kCounters[] = {
      {"Ip", "InHdrErrors", "in_hdr_errors"},
      {"Ip", "InAddrErrors", "in_addr_errors"},
      {"Icmp", "InCsumErrors", "in_csum_errors"},
      {"Udp", "InCsumErrors", "in_csum_errors"},
      {"Udp", "InErrors", "in_errors"},
      {"Udp", "RcvbufErrors", "rcvbuf_errors"},
  };
  std::map<std::string, std::vector<std::string>> names;
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& line : split_lines(output)) {
    auto words = words_of(line);
    if (words.empty()) continue;
    const std::string& label = words.front();
    if (label.size() < 2 || label.back() != ':') return "malformed line '" + shorten(line, 80) + "'";
    std::string protocol = label.substr(0, label.size() - 1);
    words.erase(words.begin());
    if (!names.count(protocol))
      names[protocol] = std::move(words);
    else if (!values.count(protocol))
      values[protocol] = std::move(words);
    else
      return "more than two '" + label + "' lines";
  }
  json facts = json::object();
  for (const auto& counter : kCounters) {
    const std::string protocol(counter.protocol);
    const std::string what = protocol + " " + std::string(counter.kernel_name);
    if (!names.count(protocol)) return "no '" + protocol + ":' lines";
    if (!values.count(protocol)) return "no values after the '" + protocol + ":' names";
    const auto& row = names[protocol];
    const auto& numbers = values[protocol];
    if (row.size() != numbers.size())
      return "the '" + protocol + ":' lines hold " + std::to_string(row.size()) + " names but " +
             std::to_string(numbers.size()) + " values";
    auto at = std::find(row.begin(), row.end(), counter.kernel_name);
    if (at == row.end()) return "no " + what + " (a kernel older than 3.10?)";
    const std::string& text = numbers[static_cast<std::size_t>(at - row.begin())];
    auto number = whole_number(text);
    if (!number || *number < 0) return what + " is '" + shorten(text, 40) + "', not a counter";
    std::string group = protocol;
    for (auto& c : group) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    facts[group][std::string(counter.name)] = *number;
  }
  for (auto& [group, counters] : facts.items()) ip_stack[group] = counters;
  return Ok{};
}

}  // namespace fabgate::snapshot
