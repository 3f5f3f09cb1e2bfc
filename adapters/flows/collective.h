#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/flows/socket.h"

namespace fabgate::flows {

// One rank of a collective-shaped exchange over TCP: N ranks on N hosts run iterations of a
// ring all-reduce shape (each rank sends a chunk of size/N to its successor and receives one
// from its predecessor, 2(N-1) dependent steps) or an all-to-all (a chunk of size/N to and from
// every other rank at once), with a barrier before every iteration. Training waits for its
// slowest rank at every barrier, so each rank records how long each iteration took it; fabgate
// judges all ranks together (gates/pipeline/families/collective_verdict.h, docs/probes.md).
enum class CollectivePattern { ring, all_to_all };

std::string_view to_string(CollectivePattern pattern);

struct RankEndpoint {
  std::string address;  // IPv4; this rank listens here, the others connect to it
  std::uint16_t port = 0;
};

struct CollectiveOptions {
  int rank = 0;
  std::vector<RankEndpoint> ranks;  // the rank table, the same on every rank
  CollectivePattern pattern = CollectivePattern::ring;
  std::size_t size = 1 << 20;  // bytes each rank contributes per iteration
  int iterations = 100;
  // TCP connections per pair of ranks, each chunk striped over them (as NCCL's socket transport
  // does): with L4 ECMP hashing they spread over the fabric's paths instead of betting the
  // whole exchange on the one path a single connection hashed onto.
  int channels = 4;
  // Every socket operation (a step's sends and receives, a barrier) finishes within this.
  std::chrono::milliseconds op_timeout{2000};
  // Connecting the mesh: peers start within this of each other (fabgate starts them over SSH).
  std::chrono::milliseconds setup_timeout{15000};
};

std::vector<std::string> validate(const CollectiveOptions& options);

// The chunk one transfer carries: size / N rounded up, at least one header per channel.
std::size_t chunk_size(const CollectiveOptions& options);

struct CollectiveReport {
  CollectiveOptions options;
  TimePoint started_at;              // when the mesh was up and iteration 1 was released
  std::vector<double> iteration_ms;  // one per completed iteration, in order
  std::vector<std::string> errors;   // the first error ends the run (peers cannot go on)
  bool stopped = false;              // by the stop flag
};

// Runs this rank: listens, connects the mesh, then iterates. A failure to set up this rank's own
// socket is a SocketError (no evidence); anything a peer or the path does wrong (refused,
// timed out, reset, a corrupt or out-of-order chunk) is an error in the report.
// `on_listening` (optional) is called once this rank listens, before it connects the mesh:
// whoever starts the ranks knows then that the others can reach this one.
Expected<CollectiveReport, SocketError> run_collective(
    const CollectiveOptions& options, const std::atomic<bool>& stop,
    const std::function<void()>& on_listening = {});

}  // namespace fabgate::flows
