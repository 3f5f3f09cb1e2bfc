// `fabgate-probe rdma-write`: declares the flags and calls adapters/rdma. No logic here.

#include <cstdio>
#include <string>

#include "adapters/rdma/write_probe.h"
#include "cmd/fabgate-probe/subcommand.h"

namespace fabgate::probe {

namespace {

ProbeExit exit_for(rdma::Verdict verdict) {
  switch (verdict) {
    case rdma::Verdict::pass:
      return ProbeExit::pass;
    case rdma::Verdict::fail:
      return ProbeExit::fail;
    case rdma::Verdict::no_evidence:
      return ProbeExit::no_evidence;
  }
  return ProbeExit::internal_error;
}

}  // namespace

Runner define_rdma_write(CLI::App& command) {
  auto options = std::make_shared<rdma::RdmaWriteOptions>();
  command.add_flag("--listen", options->listen, "Serve a buffer for clients to write into");
  command.add_option("--connect", options->connect_host, "Connect to the listener at HOST");
  command.add_option("--cm-port", options->service, "rdma_cm port of the listener")
      ->capture_default_str();
  command.add_option("--bind", options->bind_address, "Local address; picks device, port and GID");
  command.add_option("--device", options->device, "Expected RDMA device (e.g. mlx5_0)");
  command.add_option("--port", options->port, "Expected device port, 1-based (0 = any)")
      ->capture_default_str();
  command.add_option("--gid-index", options->gid_index, "Expected source GID index (-1 = any)")
      ->capture_default_str();
  command
      .add_option("--size", options->message_size, "Bytes per RDMA WRITE (listener: buffer size)")
      ->capture_default_str();
  command.add_option("--outstanding", options->outstanding, "Work requests in flight per QP")
      ->capture_default_str();
  command
      .add_option("--signal-every", options->signal_every, "Request a completion every Nth write")
      ->capture_default_str();
  command.add_option("--iterations", options->iterations, "Writes per QP (default 1000)");
  command.add_option("--duration", options->duration, "Write for this long instead, e.g. 10s");
  command.add_option("--qps", options->qps, "Number of RC queue pairs")->capture_default_str();
  command
      .add_option("--resolve-timeout", options->resolve_timeout,
                  "Address and route resolution deadline")
      ->capture_default_str();
  command.add_option("--connect-timeout", options->connect_timeout, "Connection deadline")
      ->capture_default_str();
  command
      .add_option("--completion-timeout", options->completion_timeout,
                  "Longest wait for a completion while writes are in flight")
      ->capture_default_str();
  command
      .add_option("--listen-timeout", options->listen_timeout,
                  "Listener: how long to wait for clients")
      ->capture_default_str();
  command.add_flag("--reconnect", options->reconnect,
                   "After a failure, test the failed QP again and a fresh QP pair, separately");

  return [options]() {
    auto plan = rdma::validate_write_options(*options);
    if (!plan) {
      std::fputs("fabgate-probe: error: rdma-write: invalid options\n", stderr);
      for (const auto& problem : plan.error()) std::fprintf(stderr, "  %s\n", problem.c_str());
      return ProbeExit::invalid_usage;
    }
    // The listener's readiness line: fabgate waits for it before starting the client and
    // reports the listener's own reason when it does not come (docs/rdma.md).
    auto announce = [](const std::string& endpoint) {
      std::fprintf(stderr, "fabgate-probe: rdma-write listening on %s\n", endpoint.c_str());
      std::fflush(stderr);
    };
    rdma::RdmaWriteResult result = rdma::run_rdma_write(plan.value(), rdma::scan_devices, announce);
    std::printf("%s\n", rdma::to_json(result).dump(2).c_str());
    return exit_for(result.verdict);
  };
}

}  // namespace fabgate::probe
