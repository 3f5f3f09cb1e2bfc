// bench_redact [MB]   builds a snapshot document of about MB megabytes (default 130) as
//                     `fabgate snapshot` would hold it (about half a million routes for 130 MB,
//                     and device output with a few secrets in it) and prints how long redaction
//                     takes: the value-by- value Redactor::dump that evidence files go through,
//                     against a plain dump; Redactor::redact over the whole serialised text; and,
//                     for comparison, the std::regex patterns the hand-written scanner replaced.
// Floors in the same run (issue 33), and every figure printed as a ratio to its floor:
//   the plain nlohmann dump(2) of the same document, measured before and after
//   Redactor::dump (the faster of the two is the floor: the first also pays for first-touch
//   allocations; both are printed);
//   for the text scanner, a copy of the text (memcpy) and one pass that reads every byte (a
//   vectorised count): what any redaction of the whole text must at least do, since
//   Redactor::redact reads all of it and returns a copy.

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"

namespace {

using fabgate::Redactor;
using Clock = std::chrono::steady_clock;

double seconds_of(const std::function<void()>& work) {
  auto start = Clock::now();
  work();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// A running configuration as a leaf prints it: mostly ordinary lines, a handful of secrets.
std::string running_config(int interfaces) {
  std::string text =
      "hostname leaf1\nusername admin secret 5 $1$abcd$CanaryHash\n"
      "snmp-server community CanaryCommunity RO\n"
      "tacacs-server host 10.0.0.9 key 7 CanaryTacacs\n";
  for (int i = 0; i < interfaces; ++i)
    text += "interface swp" + std::to_string(i) + "\n mtu 9216\n description uplink " +
            std::to_string(i) + " to spine\n ip address 10.1." + std::to_string(i / 250) + "." +
            std::to_string(i % 250) + "/31\n!\n";
  text += "router bgp 65001\n neighbor 10.255.0.1 password CanaryBgp\n";
  return text;
}

nlohmann::json snapshot(std::size_t routes) {
  static const char* kHops[] = {"10.255.0.1", "10.255.0.3", "10.255.0.5", "10.255.0.7"};
  nlohmann::json table = nlohmann::json::array();
  for (std::size_t i = 0; i < routes; ++i) {
    std::uint32_t address = 0x01000000u + static_cast<std::uint32_t>(i) * 256u;
    std::string prefix = std::to_string(address >> 24) + "." +
                         std::to_string((address >> 16) & 255) + "." +
                         std::to_string((address >> 8) & 255) + ".0/24";
    table.push_back({{"prefix", prefix},
                     {"protocol", "bgp"},
                     {"metric", 20 + i % 3},
                     {"nexthops", {kHops[i % 4], kHops[(i + 1) % 4]}}});
  }
  nlohmann::json commands = nlohmann::json::array();
  for (int i = 0; i < 40; ++i)
    commands.push_back({{"command", "vtysh -c 'show running-config'"},
                        {"exit_status", 0},
                        {"stdout", running_config(400)}});
  return {{"format", "fabgate.snapshot/1"},
          {"devices",
           {{"leaf1",
             {{"identity", {{"hostname", "leaf1"}, {"os", "SONiC 202305"}}},
              {"facts", {{"routes", {{"ipv4", std::move(table)}}}}},
              {"sources", {{"running-config", {{"status", "ok"}, {"commands", commands}}}}}}}}}};
}

// The patterns of the std::regex redactor this project used before the scanner, run the way
// it ran them (one regex_replace per pattern over the whole text), for comparison only.
std::string regex_redact(const std::string& text) {
  auto icase = std::regex::ECMAScript | std::regex::icase;
  static const std::vector<std::pair<std::regex, std::string>> patterns = {
      {std::regex("-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----",
                  icase),
       "<redacted private key>"},
      {std::regex("\\b(password|secret|key-string|passphrase)(\\s+[0-9]\\b)?(\\s+)\\S+", icase),
       "$1$2$3<redacted>"},
      {std::regex(
           "\\b(password|passwd|secret|token|api[_-]?key|private[_-]?key)(\"?\\s*[:=]\\s*\"?)"
           "[^\\s\",}]+",
           icase),
       "$1$2<redacted>"},
      {std::regex("\\b(snmp-server community|community)(\\s+)\\S+", icase), "$1$2<redacted>"},
      {std::regex("\\b(Bearer)(\\s+)[A-Za-z0-9._~+/=-]+", icase), "$1$2<redacted>"},
  };
  std::string out = text;
  for (const auto& [regex, replacement] : patterns)
    out = std::regex_replace(out, regex, replacement);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const double target_mb = argc > 1 ? std::stod(argv[1]) : 130.0;
  Redactor redactor({"CanaryHash", "Zq8kTokenValue", "Cn&ry\"Va\\l<ue"});

  // About 235 bytes per route once dumped with indent 2; the device output adds ~1.4 MB.
  const auto routes = static_cast<std::size_t>((target_mb - 1.4) * 1e6 / 235.0);
  nlohmann::json document;
  double build = seconds_of([&] { document = snapshot(routes); });
  std::string plain;
  double plain_dump = seconds_of([&] { plain = document.dump(2); });
  std::printf("document: %zu routes, %.1f MB as dumped with indent 2 (built in %.2f s)\n", routes,
              plain.size() / 1e6, build);
  std::printf("nlohmann dump(2), no redaction          %7.2f s\n", plain_dump);

  std::string redacted;
  double value_dump = seconds_of([&] { redacted = redactor.dump(document, 2); });
  bool leaked = redacted.find("Canary") != std::string::npos;
  redacted.clear();
  redacted.shrink_to_fit();
  std::string again;
  double plain_again = seconds_of([&] { again = document.dump(2); });
  again.clear();
  again.shrink_to_fit();
  const double dump_floor = std::min(plain_dump, plain_again);
  std::printf("nlohmann dump(2) again                  %7.2f s  (floor: the faster, %.2f s)\n",
              plain_again, dump_floor);
  std::printf("Redactor::dump(2), value by value       %7.2f s  (%+.2f s over the floor, %.2fx)\n",
              value_dump, value_dump - dump_floor, value_dump / dump_floor);

  // The routes alone: nothing to redact, so Redactor::dump scans and dumps without a copy.
  auto& clean = document;
  clean["devices"]["leaf1"].erase("sources");
  double clean_dump = seconds_of([&] { (void)clean.dump(2); });
  double clean_value_dump = seconds_of([&] { (void)redactor.dump(clean, 2); });
  std::printf(
      "  same without the device output:  plain %.2f s (the floor), Redactor::dump %.2f s, "
      "%.2fx (nothing to redact, no copy)\n",
      clean_dump, clean_value_dump, clean_value_dump / clean_dump);

  // The text scanner's floor: a copy of the text and one read of every byte.
  std::string copy;
  std::ptrdiff_t lines = 0;
  double read_copy = seconds_of([&] {
    copy = plain;
    lines = std::count(plain.begin(), plain.end(), '\n');
  });
  copy.clear();
  copy.shrink_to_fit();
  std::printf("floor for the text: copy + count '\\n'   %7.2f s  (%.0f MB/s; %td lines)\n",
              read_copy, plain.size() / 1e6 / read_copy, lines);
  std::string whole;
  double whole_text = seconds_of([&] { whole = redactor.redact(plain); });
  std::printf("Redactor::redact over the dumped text   %7.2f s  (%.0f MB/s, %.1fx the floor)\n",
              whole_text, plain.size() / 1e6 / whole_text, whole_text / read_copy);

  // std::regex is measured on a slice and scaled: over the whole text it runs for minutes.
  const std::size_t slice = std::min<std::size_t>(plain.size(), 8'000'000);
  std::string head = plain.substr(0, slice);
  double regex_slice = seconds_of([&] { (void)regex_redact(head); });
  double scanner_slice = seconds_of([&] { (void)redactor.redact(head); });
  std::printf(
      "std::regex (old patterns) on %.0f MB    %7.2f s  (%.1f MB/s; %.0f s for the whole "
      "text)\n",
      slice / 1e6, regex_slice, slice / 1e6 / regex_slice, regex_slice * plain.size() / slice);
  std::printf("scanner on the same %.0f MB             %7.2f s  (%.0fx faster)\n", slice / 1e6,
              scanner_slice, regex_slice / scanner_slice);

  std::printf("secrets left in Redactor::dump output: %s\n", leaked ? "YES (bug)" : "none");
  std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
  return leaked ? 1 : 0;
}
