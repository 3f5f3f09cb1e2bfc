#pragma once

// The harness the Clos-lab scenario tests share: one lab under the test's own namespace prefix
// and state directory, driven through examples/clos-lab/lab; the lab intent committed to a
// scratch repository and pointed at that lab; fabgate run from the lab's management namespace;
// a flows responder on a lab node that is stopped by its pid; and the evidence readers the
// tests assert on. Each test suite keeps its own prefix (sweep-test-labs lists them all).

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tests/support/git_repo.h"

namespace fabgate::testing::clos_lab {

// This build's binaries and the files under test.
extern const std::string kLabScript;  // examples/clos-lab/lab
extern const std::string kIntent;     // examples/clos-lab/intent
extern const std::string kFabgate;
extern const std::string kProbe;
extern const std::string kGnmid;

// The lab intent's coordination store (examples/clos-lab/intent/fabgate.yaml): its key prefix
// and the client URLs of the lab's three etcd members (examples/clos-lab/lab), comma-separated.
extern const std::string kCoordinationPrefix;
extern const std::string kCoordinationEndpoints;

// Why a lab cannot be built here (not root, a tool `lab up` needs is missing), or nullopt.
std::optional<std::string> lab_unavailable();

// One lab: its namespaces are "<prefix><node>", its files lie under `dir`, its switches run
// this build's fabgate-gnmid.
class Lab {
 public:
  Lab(std::string prefix, std::string dir);
  const std::string& prefix() const { return prefix_; }
  const std::string& dir() const { return dir_; }
  // "FABGATE_LAB_DIR=… FABGATE_LAB_PREFIX=… FABGATE_GNMID=… ", to start a shell command line.
  std::string env() const;
  // `lab ARGUMENTS`, stdout and stderr together.
  CommandOutput run(const std::string& arguments) const;
  // `lab ARGUMENTS` whose stdout is JSON (its stderr dropped); null when it is not JSON.
  nlohmann::json json(const std::string& arguments) const;
  // "ip netns exec <prefix><node> ": what a command line starts with to run in a node.
  std::string in_ns(const std::string& node) const;
  // Copies this build's fabgate-probe to <dir>/bin, where the intent's probes run it from.
  void install_probe() const;
  // Copies the lab intent into `repo` (not committed), pointed at this lab's state directory,
  // with evidence written to the repository's own evidence/ (ignored by git). Without the twin
  // gate unless asked: these tests exercise the production gates (a change the twin refuses
  // never reaches them), and each twin costs ~20 s; `fabgate twin` runs one regardless.
  enum class TwinGate { off, on };
  void copy_intent_into(GitRepo& repo, TwinGate twin = TwinGate::off) const;
  // fabgate ARGUMENTS in `repo`, from the lab's management namespace; stdout and stderr.
  CommandOutput fabgate(GitRepo& repo, const std::string& arguments) const;
  // The redundancy-budget claim keys and out-of-service keys in this lab's etcd (under
  // kCoordinationPrefix), one per line, read with etcdctl from the management namespace;
  // nullopt when etcd did not answer.
  std::optional<std::string> budget_claims() const;

 private:
  std::string prefix_;
  std::string dir_;
};

// A `fabgate-probe flows --respond` on a lab node, stopped (SIGTERM to its pid) when this goes
// out of scope, so a failed assertion never leaves it running. Construction waits (≤ 5 s) for
// its pid file; ready() says whether it came.
class FlowsResponder {
 public:
  FlowsResponder(const Lab& lab, const std::string& node, const std::string& listen, int port,
                 std::chrono::seconds lifetime);
  ~FlowsResponder();
  FlowsResponder(const FlowsResponder&) = delete;
  FlowsResponder& operator=(const FlowsResponder&) = delete;
  bool ready() const { return pid_ > 0; }

 private:
  std::string pid_file_;
  long pid_ = -1;
};

// A JSON file of an evidence bundle; null (discarded) when missing or not JSON.
nlohmann::json read_json(const std::filesystem::path& path);
// The bundle folder a fabgate run printed ("evidence: <folder>"); empty when none.
std::filesystem::path evidence_of(const std::string& output);
inline std::filesystem::path evidence_of(const CommandOutput& out) {
  return evidence_of(out.output);
}
// Fails the current test when budget claims, or devices out of service, are left in `lab`'s
// etcd. Runs that end with exit 0, 3 or 4 release their claims; exit 5 (NOT RESTORED) and a
// killed run keep them until `fabgate recover` releases them, which a test that causes either
// must run itself; an accepted drain leaves its spine out of service until its undrain change
// is accepted, which the test must apply. Either left behind would refuse the next run that
// needs the same budget group. Does nothing when the lab is down (a test that took it down
// itself has no store left to ask).
void expect_no_budget_claims(const Lab& lab);

// Routes and BGP session states of every switch in a snapshot.
nlohmann::json control_plane(const nlohmann::json& snapshot);

// A fixture that brings one lab up for its whole suite (bringing it up costs seconds, and each
// scenario leaves the fabric as it found it). The suite's SetUpTestSuite() calls bring_up();
// every test then starts only when the lab came up and has converged again.
class SharedLabSuite : public ::testing::Test {
 protected:
  // Brings `lab` (an object that outlives the suite) up, installs fabgate-probe in it and
  // commits the lab intent, pointed at it, to a scratch repository. Does nothing when the lab
  // cannot run here (each test then skips with the reason).
  static void bring_up(const Lab& lab, const std::string& commit_message);
  static void TearDownTestSuite();
  void SetUp() override;
  // Every test leaves no budget claim behind (expect_no_budget_claims).
  void TearDown() override;

  // Whether bring_up() brought the lab up (false when it cannot run here or `up` failed).
  static bool lab_is_up() { return lab_up_; }
  // The scratch repository holding the committed lab intent.
  static GitRepo& repo() { return *repo_; }
  static CommandOutput fabgate(const std::string& arguments) {
    return lab_->fabgate(*repo_, arguments);
  }

 private:
  static inline const Lab* lab_ = nullptr;
  static inline bool lab_up_ = false;
  static inline std::string lab_log_;
  static inline GitRepo* repo_ = nullptr;
};

}  // namespace fabgate::testing::clos_lab
