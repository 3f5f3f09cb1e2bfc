#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
  // The ring keeps up to this many bytes of an iteration's received chunks (2(N-1) chunks of
  // size/N: about twice `size`) to check after the iteration's last byte, outside its time;
  // beyond it, a chunk is checked before its buffer is reused, within the time.
  std::size_t deferred_check_bytes = 64u << 20;
};

std::vector<std::string> validate(const CollectiveOptions& options);

// The chunk one transfer carries: size / N rounded up, at least one header per channel.
std::size_t chunk_size(const CollectiveOptions& options);

// The first chunk this rank received with a byte that is not what its sender wrote there.
struct CorruptChunk {
  int sender = 0;
  std::uint32_t iteration = 0;
  std::uint32_t step = 0;  // ring step; 0 in all-to-all
  std::size_t offset = 0;  // the first differing byte, from the start of the chunk
  std::byte expected{};    // what the sender wrote there
  std::byte received{};    // what arrived
};

// Every byte of every chunk is checked on receipt (adapters/flows/pattern.h): a chunk with a
// wrong byte is counted, and the run goes on, since TCP kept the stream in step.
struct ChunkIntegrity {
  std::uint64_t run_id = 0;            // what every chunk's pattern is derived from
  std::uint64_t chunks_received = 0;   // complete chunks checked
  std::uint64_t corrupted_chunks = 0;  // of those, with at least one wrong byte
  std::optional<CorruptChunk> first;
  std::map<int, std::uint64_t> corrupted_by_sender;  // sending rank -> corrupted chunks
};

struct CollectiveReport {
  CollectiveOptions options;
  TimePoint started_at;              // when the mesh was up and iteration 1 was released
  std::vector<double> iteration_ms;  // one per completed iteration, in order
  // The corruption summary first when any chunk was corrupted (corruption_summary), then the
  // error that ended the run, if one did (peers cannot go on after it).
  std::vector<std::string> errors;
  bool stopped = false;  // by the stop flag
  ChunkIntegrity integrity;
};

// `rank 2 received 3 of 200 chunks corrupted from rank 1, first at byte 812 (iteration 4 step
// 1: 0x5b where 0x5a was sent)`, or none when every chunk was intact.
std::optional<std::string> corruption_summary(int rank, const ChunkIntegrity& integrity);

// Runs this rank: listens, connects the mesh, then iterates. A failure to set up this rank's own
// socket is a SocketError (no evidence); anything a peer or the path does wrong (refused,
// timed out, reset, a corrupt or out-of-order barrier message) is an error in the report, and
// a chunk with any wrong byte is counted in `integrity` and summarized first in `errors`.
// `on_listening` (optional) is called once this rank listens, before it connects the mesh:
// whoever starts the ranks knows then that the others can reach this one.
Expected<CollectiveReport, SocketError> run_collective(
    const CollectiveOptions& options, const std::atomic<bool>& stop,
    const std::function<void()>& on_listening = {});

}  // namespace fabgate::flows
