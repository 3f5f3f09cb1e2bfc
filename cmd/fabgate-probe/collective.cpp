// fabgate-probe collective: parse flags, run one rank of the collective-shaped exchange from
// adapters/flows, print one JSON document. See docs/probes.md.

#include "cmd/fabgate-probe/subcommand.h"

#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "adapters/core/duration.h"
#include "adapters/flows/collective.h"
#include "adapters/flows/report_json.h"
#include "adapters/rdma/device_scan.h"
#include "cmd/fabgate-probe/stop_signal.h"

namespace fabgate::probe {

namespace {

struct CollectiveFlags {
  int rank = -1;
  std::string ranks;  // addr:port,addr:port,... (rank 0 first)
  std::string pattern = "ring";
  std::string size = "1048576";
  int iterations = 100;
  int channels = 4;
  std::string op_timeout = "2s";
  std::string setup_timeout = "15s";
  std::string transport = "tcp";
};

std::vector<flows::RankEndpoint> parse_rank_table(const std::string& text,
                                                  std::vector<std::string>& problems) {
  std::vector<flows::RankEndpoint> table;
  std::vector<std::string> entries;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    entries.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  for (const auto& entry : entries) {
    const auto colon = entry.rfind(':');
    int port = 0;
    if (colon != std::string::npos) {
      try {
        port = std::stoi(entry.substr(colon + 1));
      } catch (const std::exception&) {
        port = 0;
      }
    }
    if (colon == std::string::npos || port < 1 || port > 65535) {
      problems.push_back("--ranks entry '" + entry + "' is not ADDRESS:PORT");
      continue;
    }
    table.push_back({entry.substr(0, colon), static_cast<std::uint16_t>(port)});
  }
  return table;
}

ProbeExit run_collective(const CollectiveFlags& flags) {
  std::vector<std::string> problems;
  flows::CollectiveOptions options;
  options.rank = flags.rank;
  options.ranks = parse_rank_table(flags.ranks, problems);
  if (flags.pattern == "ring") {
    options.pattern = flows::CollectivePattern::ring;
  } else if (flags.pattern == "all-to-all") {
    options.pattern = flows::CollectivePattern::all_to_all;
  } else {
    problems.push_back("--pattern must be ring or all-to-all");
  }
  try {
    std::size_t used = 0;
    options.size = std::stoull(flags.size, &used);
    if (used != flags.size.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    problems.push_back("--size '" + flags.size + "' is not a byte count");
  }
  options.iterations = flags.iterations;
  options.channels = flags.channels;
  for (auto [text, name, into] :
       {std::tuple{&flags.op_timeout, "--op-timeout", &options.op_timeout},
        std::tuple{&flags.setup_timeout, "--setup-timeout", &options.setup_timeout}}) {
    if (auto parsed = parse_duration(*text)) {
      *into = *parsed;
    } else {
      problems.push_back(std::string(name) + " '" + *text + "' is not a duration (500ms, 5s)");
    }
  }
  if (flags.transport != "tcp" && flags.transport != "rdma")
    problems.push_back("--transport must be tcp or rdma");
  if (problems.empty()) problems = flows::validate(options);
  if (!problems.empty()) {
    for (const auto& problem : problems)
      std::fprintf(stderr, "fabgate-probe: collective: %s\n", problem.c_str());
    return ProbeExit::invalid_usage;
  }
  if (flags.transport == "rdma") {
    // The RDMA WRITE exchange is not built yet: without a device that is the reason, with one
    // it is that; either way no evidence, never a TCP result presented as RDMA.
    auto reason = rdma::no_usable_port_reason(rdma::scan_devices(), "", 0);
    std::string why = reason ? "rdma variant: " + *reason
                             : "rdma variant: the RDMA WRITE exchange is not implemented yet "
                               "(an RDMA device is present; use --transport tcp)";
    std::printf("%s\n", flows::no_evidence_json("collective", why).dump(2).c_str());
    return ProbeExit::no_evidence;
  }
  install_stop_handlers();
  // The readiness line fabgate waits for before it starts the next rank's clock (docs/probes.md).
  auto announce = [&] {
    const auto& self = options.ranks[static_cast<std::size_t>(options.rank)];
    std::fprintf(stderr, "fabgate-probe: collective rank %d listening on %s:%u\n", options.rank,
                 self.address.c_str(), static_cast<unsigned>(self.port));
    std::fflush(stderr);
  };
  auto report = flows::run_collective(options, stop_requested, announce);
  if (!report) {
    std::printf("%s\n",
                flows::no_evidence_json("collective", report.error().message).dump(2).c_str());
    return ProbeExit::no_evidence;
  }
  std::printf("%s\n", flows::to_json(*report).dump(2).c_str());
  return report->errors.empty() ? ProbeExit::pass : ProbeExit::fail;
}

}  // namespace

Runner define_collective(CLI::App& command) {
  auto flags = std::make_shared<CollectiveFlags>();
  command.add_option("--rank", flags->rank, "This host's rank (index into --ranks)")->required();
  command
      .add_option("--ranks", flags->ranks, "The rank table: ADDR:PORT,ADDR:PORT,... rank 0 first")
      ->required();
  command.add_option("--pattern", flags->pattern, "ring (all-reduce shape) or all-to-all")
      ->capture_default_str();
  command.add_option("--size", flags->size, "Bytes each rank contributes per iteration")
      ->capture_default_str();
  command.add_option("--iterations", flags->iterations, "Iterations, each after a barrier")
      ->capture_default_str();
  command.add_option("--channels", flags->channels, "TCP connections per pair of ranks, 1-16")
      ->capture_default_str();
  command.add_option("--op-timeout", flags->op_timeout, "Deadline of every step and barrier")
      ->capture_default_str();
  command
      .add_option("--setup-timeout", flags->setup_timeout,
                  "How long to wait for every rank to connect")
      ->capture_default_str();
  command.add_option("--transport", flags->transport, "tcp, or rdma (no evidence: not built yet)")
      ->capture_default_str();
  return [flags] { return run_collective(*flags); };
}

}  // namespace fabgate::probe
