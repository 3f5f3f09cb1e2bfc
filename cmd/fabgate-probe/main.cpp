// fabgate-probe: acceptance probes that fabgate runs on hosts over SSH. Each subcommand prints
// one JSON document on stdout and exits with a ProbeExit code. Parse and dispatch only.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <map>
#include <vector>

#include "adapters/core/build_info.h"
#include "cmd/fabgate-probe/subcommand.h"

namespace fabgate::probe {

Runner define_rdma_write(CLI::App& command);  // rdma_write.cpp
Runner define_flows(CLI::App& command);       // flows.cpp
Runner define_watch(CLI::App& command);       // watch.cpp
Runner define_collective(CLI::App& command);  // collective.cpp

// The subcommand table. Only probes that work are listed.
const std::vector<Subcommand> kSubcommands = {
    {"rdma-write", "RDMA WRITE bandwidth/latency over RC QPs (rdma-core)", define_rdma_write},
    {"flows",
     "UDP/TCP/ICMP flows over distinct 5-tuples (ECMP), every byte of every echo verified, or "
     "--respond",
     define_flows},
    {"watch", "Continuous probe: longest interruption per flow", define_watch},
    {"collective", "One rank of a ring or all-to-all exchange over TCP, timed per iteration",
     define_collective},
};

namespace {

int run(int argc, char** argv) {
  CLI::App app{"fabgate-probe: forwarding and transport acceptance probes"};
  app.require_subcommand(0, 1);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print version and build commit");
  std::map<const CLI::App*, Runner> runners;
  for (const auto& row : kSubcommands) {
    CLI::App* command = app.add_subcommand(row.name, row.help);
    runners[command] = row.define(*command);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ProbeExit::invalid_usage);
  }
  if (show_version) {
    std::printf("fabgate-probe %s (commit %s)\n", tool_version(), build_commit());
    return 0;
  }
  for (const auto* command : app.get_subcommands()) return static_cast<int>(runners.at(command)());
  std::fputs(app.help().c_str(), stdout);
  return static_cast<int>(ProbeExit::invalid_usage);
}

}  // namespace
}  // namespace fabgate::probe

int main(int argc, char** argv) {
  try {
    return fabgate::probe::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabgate-probe: error: internal: %s\n", e.what());
    return static_cast<int>(fabgate::probe::ProbeExit::internal_error);
  }
}
