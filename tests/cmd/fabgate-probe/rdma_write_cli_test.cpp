// `fabgate-probe rdma-write` through the built binary: option validation and the no-device
// path end to end (stdout JSON + exit code), as fabgate sees them over SSH.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/rdma/device_scan.h"

namespace fabgate {
namespace {

const std::string kProbe = FABGATE_BINARY_DIR "/cmd/fabgate-probe/fabgate-probe";

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the probe with `arguments`, stdout and stderr captured apart (JSON must be alone on
// stdout). The stderr file is removed afterwards.
Outcome probe(const std::vector<std::string>& arguments) {
  char err_path[] = "/tmp/fabgate-rdma-cli-XXXXXX";
  int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  std::string command = shell_quote(kProbe);
  for (const auto& argument : arguments) command += " " + shell_quote(argument);
  command += " 2>" + shell_quote(err_path);
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char chunk[4096];
  while (std::size_t n = fread(chunk, 1, sizeof chunk, pipe)) outcome.out.append(chunk, n);
  int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  outcome.err = text.str();
  std::remove(err_path);
  return outcome;
}

bool host_has_active_rdma_port() {
  return !rdma::no_usable_port_reason(rdma::scan_devices(), "", 0).has_value();
}

TEST(RdmaWriteCli, InvalidOptionsExitTwoAndNameEveryProblem) {
  // Given contradictory and out-of-range flags, then the probe exits 2, prints nothing on
  // stdout and lists each problem on stderr.
  auto outcome =
      probe({"rdma-write", "--listen", "--connect", "10.0.0.2", "--size", "0", "--outstanding", "4",
             "--signal-every", "8", "--iterations", "5", "--duration", "2s"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_TRUE(outcome.out.empty());
  EXPECT_NE(outcome.err.find("exactly one of --listen or --connect"), std::string::npos)
      << outcome.err;
  EXPECT_NE(outcome.err.find("--size 0"), std::string::npos);
  EXPECT_NE(outcome.err.find("--signal-every 8 exceeds --outstanding 4"), std::string::npos);
  EXPECT_NE(outcome.err.find("not both"), std::string::npos);
}

TEST(RdmaWriteCli, UnknownFlagAndBadNumberAreUsageErrors) {
  // Given a flag that does not exist or a non-numeric size, then CLI11 refuses with exit 2.
  EXPECT_EQ(probe({"rdma-write", "--connect", "h", "--bogus"}).exit_code, 2);
  EXPECT_EQ(probe({"rdma-write", "--connect", "h", "--size", "big"}).exit_code, 2);
  EXPECT_EQ(probe({"rdma-write", "--connect", "h", "--duration", "fast"}).exit_code, 2);
}

TEST(RdmaWriteCli, HelpListsTheOptions) {
  // Given --help, then the probe exits 0 and documents the flags fabgate relies on.
  auto outcome = probe({"rdma-write", "--help"});
  EXPECT_EQ(outcome.exit_code, 0);
  for (const char* flag :
       {"--listen", "--connect", "--size", "--outstanding", "--signal-every", "--iterations",
        "--duration", "--qps", "--device", "--gid-index", "--reconnect", "--completion-timeout"}) {
    EXPECT_NE(outcome.out.find(flag), std::string::npos) << flag;
  }
}

TEST(RdmaWriteCli, NoRdmaDeviceIsNoEvidenceWithExitFour) {
  // Given a host without an active RDMA port, then both roles print one JSON document with
  // verdict no-evidence and the reason, and exit 4 (distinct from fail, 3).
  if (host_has_active_rdma_port())
    GTEST_SKIP() << "this host has an active RDMA port; the no-device path cannot run";
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"rdma-write", "--connect", "127.0.0.1", "--iterations", "10",
                                 "--reconnect"},
        std::vector<std::string>{"rdma-write", "--listen", "--listen-timeout", "1s"}}) {
    auto outcome = probe(arguments);
    EXPECT_EQ(outcome.exit_code, 4) << outcome.out << outcome.err;
    auto json = nlohmann::json::parse(outcome.out);
    EXPECT_EQ(json["probe"], "rdma-write");
    EXPECT_EQ(json["verdict"], "no-evidence");
    EXPECT_NE(json["reason"].get<std::string>().find("RDMA"), std::string::npos) << json["reason"];
    EXPECT_TRUE(json["bandwidth_gbps"].is_null());
    EXPECT_TRUE(json["latency_us"].is_null());
    EXPECT_TRUE(json["errors"].is_array());
  }
}

TEST(RdmaWriteCli, NoDeviceJsonHasTheDocumentedShape) {
  // Given the no-device run, then every documented top-level key is present, so fabgate can
  // read the document without guessing.
  if (host_has_active_rdma_port()) GTEST_SKIP() << "this host has an active RDMA port";
  auto json =
      nlohmann::json::parse(probe({"rdma-write", "--connect", "127.0.0.1", "--qps", "2"}).out);
  for (const char* key : {"probe",
                          "role",
                          "verdict",
                          "reason",
                          "peer",
                          "device",
                          "port",
                          "gid_index",
                          "gid",
                          "qps",
                          "message_size",
                          "outstanding",
                          "signal_every",
                          "iterations",
                          "duration_ms",
                          "writes_completed",
                          "bytes_written",
                          "bandwidth_gbps",
                          "latency_us",
                          "errors",
                          "errors_not_listed",
                          "flushed",
                          "drained",
                          "timings"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["role"], "connect");
  EXPECT_EQ(json["qps"], 2);
  EXPECT_EQ(json["iterations"], 1000);
  EXPECT_FALSE(json.contains("reconnect"));  // only with --reconnect
}

}  // namespace
}  // namespace fabgate
