// End-to-end RDMA WRITE through the real binary, listener and client as two processes. Runs
// only where an RDMA port is active (a NIC, or Soft-RoCE: `rdma link add rxe0 type rxe netdev
// lo`); elsewhere it skips with the reason. FABGATE_RDMA_TEST_ADDRESS picks the address the
// listener binds to (default 127.0.0.1, which needs rxe on lo).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "adapters/core/text.h"
#include "adapters/rdma/device_scan.h"

namespace fabgate::rdma {
namespace {

const std::string kProbe = FABGATE_BINARY_DIR "/cmd/fabgate-probe/fabgate-probe";

// The listener runs in the background and is killed and reaped when the guard dies.
class BackgroundListener {
 public:
  explicit BackgroundListener(const std::string& address) {
    pid_ = fork();
    if (pid_ == 0) {
      execl(kProbe.c_str(), kProbe.c_str(), "rdma-write", "--listen", "--bind", address.c_str(),
            "--cm-port", "18599", "--listen-timeout", "20s", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~BackgroundListener() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

 private:
  pid_t pid_ = -1;
};

TEST(SoftRoceWrite, ClientWritesToListenerAndReportsBandwidthAndLatency) {
  // Given an active RDMA port and a listener on it, then a 200-write client run passes with a
  // bandwidth figure and latency percentiles.
  auto scan = scan_devices();
  if (auto reason = no_usable_port_reason(scan, "", 0))
    GTEST_SKIP() << "needs an active RDMA port: " << *reason;
  const char* configured = std::getenv("FABGATE_RDMA_TEST_ADDRESS");
  std::string address = configured != nullptr ? configured : "127.0.0.1";
  BackgroundListener listener(address);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  std::string command =
      shell_quote(kProbe) + " rdma-write --connect " + shell_quote(address) +
      " --cm-port 18599 --iterations 200 --outstanding 8 --signal-every 4 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char chunk[4096];
  while (std::size_t n = fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
  int status = pclose(pipe);
  auto json = nlohmann::json::parse(output);
  EXPECT_EQ(json["verdict"], "pass") << output;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(json["writes_completed"], 200);
  EXPECT_GT(json["bandwidth_gbps"].get<double>(), 0.0);
  EXPECT_GT(json["latency_us"]["samples"].get<int>(), 0);
}

}  // namespace
}  // namespace fabgate::rdma
