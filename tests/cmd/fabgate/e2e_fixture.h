#pragma once

// Shared harness for end-to-end runs of the fabgate binary against real SSH targets on
// loopback, without the lab. Each "device" is a name for the same real sshd; its configuration
// is a file in the server's home, a change edits the file, and a probe command checks it.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/git_repo.h"
#include "tests/support/process.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/test_port.h"

namespace fabgate::testing {

inline const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
inline const std::string kFabgateProbe = FABGATE_BINARY_DIR "/cmd/fabgate-probe/fabgate-probe";

// A port free on 127.0.0.1 for both TCP and UDP (the flows responder binds both), outside the
// kernel's ephemeral range and claimed for this test process (tests/support/test_port.h); 0 when
// none was found.
inline int free_probe_port() { return reserve_test_port(); }

class FabgateEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = SshdFixture::unavailable()) GTEST_SKIP() << *why;
    sshd_ = SshdFixture::start();
    ASSERT_TRUE(sshd_) << SshdFixture::last_error();
    evidence_ = repo_.file("evidence-out");
    for (const char* device : {"d1", "d2"}) write_config(device, "mtu 9000\n");
  }

  std::string config_path(const std::string& device) const {
    return sshd_->home() + "/" + device + ".conf";
  }
  void write_config(const std::string& device, const std::string& content) {
    write_file(config_path(device), content);
  }
  std::string config(const std::string& device) const { return read_file(config_path(device)); }

  // Commits an intent repository whose devices (d1 and d2 unless inventory_devices_ says
  // otherwise) are this sshd, with `change_yaml` as
  // changes/c.yaml. `{home}` in the change text is the server's home folder.
  void commit_intent(std::string change_yaml, const std::string& settings_extra = "") {
    change_yaml = std::regex_replace(change_yaml, std::regex("\\{home\\}"), sshd_->home());
    repo_.write(".gitignore", "evidence-out/\n");
    repo_.write("fabgate.yaml",
                "version: 1\nevidence: evidence-out\nssh:\n  known_hosts: " + sshd_->known_hosts() +
                    "\n  config: none\n  connect_timeout: 5s\n" +
                    // Locks and timers of these "devices" stay inside this test's server home,
                    // so suites running at once never see each other's d1.
                    "safeguards:\n  lock_dir: " + sshd_->home() +
                    "/locks\n  timer_dir: " + sshd_->home() + "/timers\n" + settings_extra);
    std::string device_block;
    for (const auto& [name, labels] : inventory_devices_)
      device_block += "  " + name + ":\n    platform: linux\n    role: leaf\n" +
                      (labels.empty() ? "" : "    labels: " + labels + "\n") +
                      "    ssh: {host: 127.0.0.1, port: " + std::to_string(sshd_->port()) + "}\n";
    repo_.write("inventory.yaml", "credentials:\n  read: {user: " + sshd_->user() +
                                      ", identity_file: " + sshd_->user_key() +
                                      ", agent: false}\n  change: {user: " + sshd_->user() +
                                      ", identity_file: " + change_key() +
                                      ", agent: false}\ndevices:\n" + device_block);
    repo_.write("changes/c.yaml", change_yaml);
    // The compat gate needs a matrix to make a real check (one the test wrote stays): any
    // kernel the collector reads from these Linux "devices".
    if (!std::filesystem::exists(repo_.file("policies/compat.yaml")))
      repo_.write("policies/compat.yaml", "version: 1\nplatforms:\n  linux:\n    kernel: \"*\"\n");
    repo_.commit_all("intent");
  }

  // A second authorized key for the change credential: reads and changes use different keys.
  std::string change_key() {
    std::string key = sshd_->dir() + "/change_ed25519";
    if (!std::filesystem::exists(key)) {
      run_shell("ssh-keygen -q -t ed25519 -N '' -f " + shell_quoted(key) + " && cat " +
                shell_quoted(key + ".pub") + " >> " + shell_quoted(sshd_->file("authorized_keys")));
    }
    return key;
  }

  CommandOutput fabgate(const std::string& arguments) {
    return repo_.run(shell_quoted(kFabgate) + " " + arguments + " 2>&1");
  }
  // `fabgate ARGS` with `environment` ("NAME=value ...") set for it.
  CommandOutput fabgate_with(const std::string& environment, const std::string& arguments) {
    return repo_.run(environment + " " + shell_quoted(kFabgate) + " " + arguments + " 2>&1");
  }

  // Every evidence bundle written for change `c`, oldest first (run folders sort by time).
  std::vector<std::filesystem::path> bundles() {
    std::vector<std::filesystem::path> found;
    std::filesystem::path root = evidence_ + "/c";
    if (std::filesystem::exists(root))
      for (const auto& entry : std::filesystem::directory_iterator(root))
        found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    return found;
  }
  // The bundle a run reported on its "evidence:" line. Runs in the same second are not ordered
  // by their folder names (the run id follows the time), so tests that run several take the
  // folder each run names rather than the last one by name.
  static std::filesystem::path evidence_of(const CommandOutput& out) {
    std::smatch match;
    static const std::regex line("(^|\n)evidence: +(\\S+)");
    if (std::regex_search(out.output, match, line)) return match[2].str();
    ADD_FAILURE() << "no evidence: line in\n" << out.output;
    return {};
  }
  // The one evidence bundle written for change `c`.
  std::filesystem::path bundle() {
    auto found = bundles();
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? std::filesystem::path() : found.front();
  }
  static nlohmann::json read_json(const std::filesystem::path& file) {
    std::ifstream in(file);
    return nlohmann::json::parse(in, nullptr, false);
  }
  nlohmann::json manifest() { return read_json(bundle() / "manifest.json"); }
  // Commands of one purpose ("step", "rollback", "probe") sent to `device`, from commands.jsonl.
  std::vector<std::string> commands(const std::string& purpose, const std::string& device) {
    return commands_in(bundle(), purpose, device);
  }
  static std::vector<std::string> commands_in(const std::filesystem::path& dir,
                                              const std::string& purpose,
                                              const std::string& device) {
    std::vector<std::string> out;
    std::ifstream in(dir / "commands.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      auto record = nlohmann::json::parse(line, nullptr, false);
      if (record.value("purpose", "") == purpose && record.value("device", "") == device)
        out.push_back(record.value("command", ""));
    }
    return out;
  }

  // Starts `fabgate ARGS` in the repository as a background process; output goes to `log`;
  // `environment` ("NAME=value ...") is set for it. The process is fabgate itself (`exec`,
  // `env` execs too), so signals sent to pid() reach it.
  ChildProcess start_fabgate(const std::string& arguments, const std::string& log,
                             const std::string& environment = "") {
    return start_fabgate_in(repo_.path(), arguments, log, environment);
  }
  // The same in `folder` (a second controller's clone of the intent repository).
  static ChildProcess start_fabgate_in(const std::string& folder, const std::string& arguments,
                                       const std::string& log, const std::string& environment = "") {
    return ChildProcess(std::vector<std::string>{
        "/bin/sh", "-c",
        "cd " + shell_quoted(folder) + " && exec " +
            (environment.empty() ? "" : "env " + environment + " ") + shell_quoted(kFabgate) +
            " " + arguments + " > " + shell_quoted(log) + " 2>&1"});
  }

  // Waits for a background fabgate; its exit status, or -1 if it did not end in `limit`.
  static int wait_for(ChildProcess& child, std::chrono::seconds limit) {
    auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      pid_t pid = child.pid();
      if (pid <= 0) return -1;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        child = ChildProcess();  // reaped: nothing left to stop
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

  // True once `predicate` holds, polling for at most `limit`.
  template <class Predicate>
  static bool eventually(Predicate predicate, std::chrono::milliseconds limit) {
    auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
      if (predicate()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return predicate();
  }

  std::unique_ptr<SshdFixture> sshd_;
  GitRepo repo_;
  std::string evidence_;
  // The devices commit_intent puts in the inventory (every one is this sshd), each with its
  // inventory labels as a YAML flow map ("{pod: p1}"), or none.
  std::vector<std::pair<std::string, std::string>> inventory_devices_{{"d1", ""}, {"d2", ""}};
};

// A change that appends to d1's configuration and can be undone from a backup; the probe
// proves the "service" works as long as the configuration holds no 'broken' line.
inline std::string change(
    const std::string& step, const std::string& rollback = "cp {home}/d1.bak {home}/d1.conf",
    const std::string& probe = "! grep -q broken {home}/d1.conf",
    const std::string& bounds = "max_targets: 1, step_timeout: 10s, deadline: 1m") {
  return "id: c\ntitle: test change\ntargets: [d1]\nbounds: {" + bounds +
         "}\nsteps:\n  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && " + step +
         "\nrollback:\n  - device: d1\n    run: " + rollback +
         "\nacceptance:\n  probes:\n    - name: config-healthy\n      layer: workload\n      host: "
         "d2\n"
         "      run: \"" +
         probe + "\"\n      timeout: 10s\n";
}

}  // namespace fabgate::testing
