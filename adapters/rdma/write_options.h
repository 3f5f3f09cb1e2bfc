#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/result.h"

namespace fabgate::rdma {

// Bounds on what a probe may ask for. They keep a typo ("--size 1000000000000") from pinning
// gigabytes of memory on a production host.
inline constexpr std::uint64_t kMaxMessageSize = 1ull << 30;  // 1 GiB per write
inline constexpr int kMaxOutstanding = 4096;
inline constexpr int kMaxQueuePairs = 64;
inline constexpr std::uint64_t kMaxIterations = 1'000'000'000;
inline constexpr std::uint64_t kDefaultIterations = 1000;

// The flags of `fabgate-probe rdma-write` as the user typed them. cmd/ binds CLI11 to these
// fields; validate_write_options() turns them into a WritePlan or lists every problem.
struct RdmaWriteOptions {
  bool listen = false;
  std::string connect_host;       // empty unless --connect HOST
  std::string service = "18515";  // rdma_cm port (TCP-like port space RDMA_PS_TCP)
  std::string bind_address;       // local address; selects device, port and GID
  std::string device;             // expected RDMA device name, e.g. mlx5_0
  int port = 0;                   // expected device port (1-based); 0 = any
  int gid_index = -1;             // expected source GID index; -1 = any
  std::uint64_t message_size = 65536;
  int outstanding = 16;          // work requests in flight per QP
  int signal_every = 1;          // completion moderation: signal every Nth WR
  std::uint64_t iterations = 0;  // writes per QP; 0 = not given
  std::string duration;          // e.g. "10s"; empty = not given
  int qps = 1;
  std::string resolve_timeout = "2s";
  std::string connect_timeout = "5s";
  std::string completion_timeout = "5s";
  std::string listen_timeout = "60s";  // listener: how long to wait for clients
  bool reconnect = false;
};

enum class Role { listen, connect };

// A validated run: one role, durations parsed, exactly one of iterations or duration.
struct WritePlan {
  Role role = Role::connect;
  std::string host;
  std::string service;
  std::string bind_address;
  std::string device;
  int port = 0;
  int gid_index = -1;
  std::uint64_t message_size = 0;
  int outstanding = 0;
  int signal_every = 0;
  std::optional<std::uint64_t> iterations;
  std::optional<std::chrono::milliseconds> duration;
  int qps = 1;
  std::chrono::milliseconds resolve_timeout{0};
  std::chrono::milliseconds connect_timeout{0};
  std::chrono::milliseconds completion_timeout{0};
  std::chrono::milliseconds listen_timeout{0};
  bool reconnect = false;
};

// Every problem, one line each ("--signal-every 32 exceeds --outstanding 16"), so the user
// fixes them all at once. Neither --iterations nor --duration -> kDefaultIterations.
Expected<WritePlan, std::vector<std::string>> validate_write_options(
    const RdmaWriteOptions& options);

}  // namespace fabgate::rdma
