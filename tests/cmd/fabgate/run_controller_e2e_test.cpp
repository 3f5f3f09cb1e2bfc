// The run controller's one way out (docs/reliability.md), end to end: the real fabgate binary,
// a real git repository and a real sshd whose "device" d1 is a file. Every way a run can end
// early: an exception in any gate (the test-only fault hook FABGATE_FAULT_THROW_IN_GATE), a
// SIGTERM, SIGINT or SIGHUP during execute, settle and acceptance, a second signal during the
// rollback, evidence on a file system that fills up, and a confirm timer that cannot be
// disarmed. Each must end with the device back at its baseline (exit 4) or a loud NOT RESTORED
// naming `fabgate recover` (exit 5), the bundle sealed, and the locks free unless the devices
// are NOT RESTORED.

#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBaseline = "mtu 9000\n";
constexpr const char* kChanged = "mtu 9000\nmtu 9100\n";

class RunControllerEndToEnd : public FabgateEndToEnd {
 protected:
  // A change on d1 with a device-side confirm timer (long enough never to fire here), whose
  // acceptance probe on d2 proves d1's configuration is healthy. `settle`, `extra_step` (run
  // after the change, e.g. a slow one) and `rollback` let the signal tests time their signal.
  void commit_change(const std::string& settle = "0s", const std::string& extra_step = "",
                     const std::string& probe = "! grep -q broken {home}/d1.conf",
                     const std::vector<std::string>& rollback = {
                         "cp {home}/d1.bak {home}/d1.conf"}) {
    std::string yaml =
        "id: c\ntitle: controller test change\ntargets: [d1]\n"
        "bounds: {max_targets: 1, step_timeout: 20s, deadline: 2m}\n"
        "confirm_timeout: 10m\n"
        "steps:\n"
        "  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && echo 'mtu 9100' >> "
        "{home}/d1.conf\n";
    if (!extra_step.empty()) yaml += "  - device: d1\n    run: " + extra_step + "\n";
    yaml += "rollback:\n";
    for (const auto& step : rollback) yaml += "  - device: d1\n    run: " + step + "\n";
    yaml += "acceptance:\n  settle: " + settle +
            "\n  probes:\n    - name: config-healthy\n      layer: workload\n      host: d2\n"
            "      run: \"" +
            probe + "\"\n      timeout: 20s\n";
    commit_intent(yaml);
  }

  // The device's lock is held when its newest generation (gen-N) has no gen-N.released.
  bool lock_held(const std::string& device) const {
    const std::filesystem::path dir = sshd_->home() + "/locks/" + device + ".lock";
    std::error_code ec;
    long newest = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("gen-", 0) == 0 && name.find('.') == std::string::npos)
        newest = std::max(newest, std::stol(name.substr(4)));
    }
    return newest > 0 &&
           !std::filesystem::exists(dir / ("gen-" + std::to_string(newest) + ".released"));
  }

  // The bundle seals and `fabgate evidence verify` accepts it.
  void expect_sealed(const std::filesystem::path& dir) {
    ASSERT_FALSE(dir.empty());
    EXPECT_TRUE(std::filesystem::exists(dir / "manifest.json")) << dir;
    auto verified = fabgate("evidence verify " + shell_quoted(dir.string()));
    EXPECT_EQ(verified.exit_code, 0) << verified.output;
  }

  // The journal of `dir` holds a record whose JSON text contains `fragment`.
  // The bundle's folder exists a moment before its journal does: an absent journal has nothing
  // yet (read_file would throw).
  static bool journal_has(const std::filesystem::path& dir, const std::string& fragment) {
    std::ifstream in(dir / "journal.jsonl");
    std::ostringstream text;
    text << in.rdbuf();
    return in && text.str().find(fragment) != std::string::npos;
  }

  // The one bundle of this test, once its folder exists.
  std::filesystem::path wait_for_bundle() {
    std::filesystem::path found;
    eventually(
        [&] {
          auto all = bundles();
          if (all.empty()) return false;
          found = all.front();
          return true;
        },
        20s);
    return found;
  }

  // Starts apply, waits until the journal shows `fragment`, sends `signal_number`, and
  // returns the exit status (or -1 when the run did not end within 60 s).
  int apply_and_signal_at(const std::string& fragment, int signal_number,
                          std::chrono::milliseconds after = 0ms) {
    auto run = start_fabgate("apply c", log_);
    auto dir = wait_for_bundle();
    EXPECT_TRUE(eventually([&] { return journal_has(dir, fragment); }, 40s))
        << "never reached " << fragment << ": " << read_file(log_);
    std::this_thread::sleep_for(after);
    ::kill(run.pid(), signal_number);
    return wait_for(run, 60s);
  }

  std::string log_ = repo_.file("apply.log");
};

// ---- an exception in any gate -------------------------------------------------------------

struct ThrowCase {
  const char* gates;          // the gates that throw (FABGATE_FAULT_THROW_IN_GATE)
  int exit_code;              // what the run must exit with
  bool step_sent;             // the change step reached d1
  bool rollback_sent;         // the rollback step reached d1
  bool restored_by_recover;   // exit 5: `fabgate recover` then restores d1
};

void PrintTo(const ThrowCase& given, std::ostream* out) { *out << given.gates; }

std::string case_name(const ::testing::TestParamInfo<ThrowCase>& info) {
  std::string name = info.param.gates;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class ThrowInGate : public RunControllerEndToEnd,
                    public ::testing::WithParamInterface<ThrowCase> {};

TEST_P(ThrowInGate, EndsInARollbackOrALoudHandOffWithTheBundleSealed) {
  // Given a change on d1 and an exception in the gate(s) named, then the steps and rollback
  // sent, the exit code and the device's state are what the run controller promises: refused
  // before the first step, rolled back after it, NOT RESTORED (naming `fabgate recover`, which
  // then restores d1) when the rollback path itself threw. The bundle is sealed either way,
  // and the lock is free unless d1 is NOT RESTORED.
  const ThrowCase& given = GetParam();
  commit_change();
  auto out = fabgate_with(std::string("FABGATE_FAULT_THROW_IN_GATE=") + given.gates, "apply c");
  EXPECT_EQ(out.exit_code, given.exit_code) << out.output;
  EXPECT_NE(out.output.find("fault injected by FABGATE_FAULT_THROW_IN_GATE"), std::string::npos)
      << "the cause is reported: " << out.output;
  auto dir = bundle();
  expect_sealed(dir);
  EXPECT_EQ(commands_in(dir, "step", "d1").size(), given.step_sent ? 1u : 0u);
  EXPECT_EQ(commands_in(dir, "rollback", "d1").size(), given.rollback_sent ? 1u : 0u);
  auto manifest = read_json(dir / "manifest.json");
  EXPECT_NE(manifest.dump().find("fault injected"), std::string::npos)
      << "the manifest names the cause";

  if (given.exit_code == 5) {
    EXPECT_NE(out.output.find("fabgate recover"), std::string::npos) << out.output;
    EXPECT_TRUE(lock_held("d1")) << "a NOT RESTORED device stays locked";
    if (given.restored_by_recover) {
      EXPECT_EQ(config("d1"), kChanged) << "the rollback never ran";
      auto recovered = fabgate("recover " + shell_quoted(dir.string()));
      EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
    }
    EXPECT_EQ(config("d1"), kBaseline);
    return;
  }
  EXPECT_EQ(config("d1"), kBaseline);
  EXPECT_FALSE(lock_held("d1")) << "the lock is released";
}

INSTANTIATE_TEST_SUITE_P(
    EveryGate, ThrowInGate,
    ::testing::Values(
        // Before the first step: refused, nothing sent.
        ThrowCase{"window", 3, false, false, false},
        ThrowCase{"device-locks", 3, false, false, false},
        ThrowCase{"snapshot-pre", 3, false, false, false},
        ThrowCase{"compat", 3, false, false, false},
        ThrowCase{"rollback-plan", 3, false, false, false},
        ThrowCase{"approval", 3, false, false, false},
        ThrowCase{"baseline-probes", 3, false, false, false},
        ThrowCase{"confirm-arm", 3, false, false, false},
        // execute throws before its first step: nothing to undo, the baseline is verified.
        ThrowCase{"execute", 4, false, false, false},
        // After the first step: rolled back, baseline verified.
        ThrowCase{"settle", 4, true, true, false},
        ThrowCase{"acceptance", 4, true, true, false},
        ThrowCase{"snapshot-post", 4, true, true, false},
        ThrowCase{"compare", 4, true, true, false},
        ThrowCase{"confirm", 4, true, true, false},
        ThrowCase{"acceptance,confirm-disarm", 4, true, true, false},
        // The rollback path itself: NOT RESTORED, `fabgate recover` finishes.
        ThrowCase{"acceptance,rollback", 5, true, false, true},
        ThrowCase{"acceptance,settle-restored", 5, true, true, false},
        ThrowCase{"acceptance,snapshot-restored", 5, true, true, false},
        ThrowCase{"acceptance,compare-restored", 5, true, true, false},
        ThrowCase{"acceptance,restored-probes", 5, true, true, false}),
    case_name);

// ---- signals -------------------------------------------------------------------------------

// Each signal test runs with SIGTERM (a CI job cancelled), SIGINT (Ctrl-C) and SIGHUP (the
// terminal closed).
class Signalled : public RunControllerEndToEnd, public ::testing::WithParamInterface<int> {
 protected:
  int signal_number() const { return GetParam(); }
  std::string signal_text() const { return sigabbrev_np(GetParam()); }
};

TEST_P(Signalled, DuringExecuteNoFurtherStepIsSentAndTheChangeIsRolledBack) {
  // Given a change whose second step is slow and the signal once the first step was sent, then the slow step ends, no later step is sent, d1 is rolled back and the
  // baseline verified (exit 4), the bundle sealed and the lock free.
  commit_change("0s", "sleep 2");
  std::string yaml = read_file(repo_.file("changes/c.yaml"));
  yaml = std::regex_replace(yaml, std::regex("rollback:\n"),
                            "  - device: d1\n    run: echo 'mtu 9200' >> " + sshd_->home() +
                                "/d1.conf\nrollback:\n");
  repo_.write("changes/c.yaml", yaml);
  repo_.commit_all("a third step");
  int status = apply_and_signal_at("\"index\":2", signal_number(), 300ms);
  EXPECT_EQ(status, 4) << read_file(log_);
  EXPECT_EQ(config("d1"), kBaseline);
  auto dir = bundle();
  expect_sealed(dir);
  EXPECT_EQ(commands_in(dir, "step", "d1").size(), 2u) << "the third step was never sent";
  EXPECT_NE(read_file(log_).find("SIG" + signal_text() + " received"), std::string::npos)
      << read_file(log_);
  EXPECT_FALSE(lock_held("d1"));
}

TEST_P(Signalled, DuringSettleTheChangeIsRolledBackWithoutWaitingForTheSettleToEnd) {
  // Given a 60 s settle and the signal once it began, then the run does not wait out
  // the settle: d1 is rolled back and the baseline verified (exit 4) well within it.
  commit_change("60s");
  auto started = std::chrono::steady_clock::now();
  int status = apply_and_signal_at("\"gate\":\"settle\"", signal_number());
  EXPECT_EQ(status, 4) << read_file(log_);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 50s)
      << "the run waited for the settle it was interrupted in";
  EXPECT_EQ(config("d1"), kBaseline);
  expect_sealed(bundle());
  EXPECT_NE(read_file(log_).find("interrupted"), std::string::npos) << read_file(log_);
  EXPECT_FALSE(lock_held("d1"));
}

TEST_P(Signalled, DuringAcceptanceTheChangeIsRolledBackAndTheWatchStoppedOnItsHost) {
  // Given a change with a continuous watch from d1 to d2 during the change and a slow
  // acceptance probe, and the signal while that probe runs, then d1 is rolled back (exit 4), and
  // no fabgate-probe process of this run is left on the hosts.
  const int port = free_probe_port();
  ASSERT_NE(port, 0);
  commit_change("0s", "", "sleep 2; ! grep -q broken {home}/d1.conf");
  std::string yaml = read_file(repo_.file("changes/c.yaml"));
  yaml += "  during: {host: d1, target: d2, flows: 2, max_disruption: 2s}\n";
  repo_.write("changes/c.yaml", yaml);
  std::string inventory = read_file(repo_.file("inventory.yaml"));
  inventory = std::regex_replace(inventory, std::regex("(  d1:\\n)"),
                                 "$1    data_addresses: [127.0.0.1]\n");
  inventory = std::regex_replace(inventory, std::regex("(  d2:\\n)"),
                                 "$1    data_addresses: [127.0.0.2]\n");
  repo_.write("inventory.yaml", inventory);
  repo_.write("fabgate.yaml", read_file(repo_.file("fabgate.yaml")) +
                                  "probes: {binary: " + kFabgateProbe +
                                  ", port: " + std::to_string(port) + "}\n");
  repo_.commit_all("a watch during the change");

  int status = apply_and_signal_at("\"gate\":\"acceptance\"", signal_number(), 500ms);
  EXPECT_EQ(status, 4) << read_file(log_);
  EXPECT_EQ(config("d1"), kBaseline);
  expect_sealed(bundle());
  // The watch and responders of this run are the processes naming its port.
  auto left = run_shell("pgrep -af '[f]abgate-probe' | grep -c -- ' " + std::to_string(port) +
                        "\\b' || true");
  EXPECT_EQ(left.output, "0\n") << run_shell("pgrep -af '[f]abgate-probe'").output;
}

TEST_P(Signalled, ASecondOneLetsTheRollbackFinishAndSkipsOnlyTheVerification) {
  // Given a rollback of two steps, the first slow, and the signal during the settle then a
  // second one while the first rollback step runs, then the second rollback step is still sent
  // (d1 is back at its baseline), the restore is not verified: the run exits 5 printing the
  // `fabgate recover` command and sealing the bundle, and that recover verifies d1 (exit 4).
  commit_change("60s", "", "! grep -q broken {home}/d1.conf",
                {"sleep 2", "cp {home}/d1.bak {home}/d1.conf"});
  auto run = start_fabgate("apply c", log_);
  auto dir = wait_for_bundle();
  ASSERT_TRUE(eventually([&] { return journal_has(dir, "\"gate\":\"settle\""); }, 40s))
      << read_file(log_);
  ::kill(run.pid(), signal_number());
  ASSERT_TRUE(eventually([&] { return journal_has(dir, "\"event\":\"rollback-start\""); }, 40s))
      << read_file(log_);
  ::kill(run.pid(), signal_number());
  int status = wait_for(run, 60s);
  EXPECT_EQ(status, 5) << read_file(log_);
  EXPECT_EQ(config("d1"), kBaseline) << "the second rollback step was not sent";
  EXPECT_EQ(commands_in(dir, "rollback", "d1").size(), 2u);
  EXPECT_NE(read_file(log_).find("fabgate recover " + shell_quoted(dir.string())),
            std::string::npos)
      << read_file(log_);
  expect_sealed(dir);
  EXPECT_TRUE(lock_held("d1"));

  // The command the run printed finishes the job in the same bundle, and seals it again with
  // the first seal kept beside the new one.
  auto recovered = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), kBaseline);
  expect_sealed(dir);
  EXPECT_TRUE(std::filesystem::exists(dir / "manifest.not-restored.json"));
  EXPECT_FALSE(lock_held("d1"));
}

INSTANTIATE_TEST_SUITE_P(EachStopSignal, Signalled, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string("SIG") + sigabbrev_np(info.param);
                         });

// ---- a CI runner's cancel: SIGINT, SIGTERM 3 s later, SIGKILL 10 s after that ------------

class CiCancel : public RunControllerEndToEnd {
 protected:
  // Starts apply, waits until the journal shows `fragment`, then cancels it the way a CI
  // runner does: SIGINT, SIGTERM 3 s later, SIGKILL 10 s after that unless the run ended
  // first. The exit status (128 + 9 when the SIGKILL ended it).
  int apply_and_cancel_at(const std::string& fragment) {
    auto run = start_fabgate("apply c", log_);
    dir_ = wait_for_bundle();
    EXPECT_TRUE(eventually([&] { return journal_has(dir_, fragment); }, 40s))
        << "never reached " << fragment << ": " << read_file(log_);
    ::kill(run.pid(), SIGINT);
    int status = wait_for(run, 3s);
    if (status >= 0) return status;
    ::kill(run.pid(), SIGTERM);
    status = wait_for(run, 10s);
    if (status >= 0) return status;
    ::kill(run.pid(), SIGKILL);
    return wait_for(run, 10s);
  }
  // The `fabgate recover ...` command the run's output told the operator to run, with the
  // binary's path in place of `fabgate`; empty when none was printed.
  std::string printed_recover_command() const {
    static const std::regex line("finish it with: fabgate (recover [^\n]+)\n");
    std::smatch match;
    const std::string log = read_file(log_);
    if (!std::regex_search(log, match, line)) return "";
    return shell_quoted(kFabgate) + " " + match[1].str();
  }
  std::filesystem::path dir_;
};

TEST_F(CiCancel, AKillInTheMiddleOfAStepLeavesTheRecoverCommandItPrintedAtTheFirstSignal) {
  // Given a change whose second step runs for 40 s and the cancel once it was sent, then the
  // step in flight outlives the SIGKILL: no rollback could run, but the output already names
  // the exact `fabgate recover` of the bundle (printed by the first signal's handler), and
  // that command restores d1 (exit 4).
  commit_change("0s", "sleep 40");
  std::string yaml = read_file(repo_.file("changes/c.yaml"));
  yaml = std::regex_replace(yaml, std::regex("step_timeout: 20s"), "step_timeout: 60s");
  repo_.write("changes/c.yaml", yaml);
  repo_.commit_all("a step that outlives the cancel");
  int status = apply_and_cancel_at("\"index\":2");
  EXPECT_EQ(status, 128 + SIGKILL) << read_file(log_);
  EXPECT_EQ(config("d1"), kChanged) << "the run was expected to die before its rollback";
  const std::string recover = printed_recover_command();
  ASSERT_FALSE(recover.empty()) << "no recover command printed:\n" << read_file(log_);
  EXPECT_NE(recover.find(shell_quoted(dir_.string())), std::string::npos) << recover;
  auto recovered = repo_.run(recover + " 2>&1");
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), kBaseline);
  expect_sealed(dir_);
}

TEST_F(CiCancel, ACancelDuringTheSettleRollsBackBeforeTheKill) {
  // Given a 60 s settle, a rollback whose first step takes 4 s (the SIGTERM comes while it
  // runs) and the cancel once the settle began, then the second signal does not stop the
  // rollback: d1 is back at its baseline and the run ends by itself before the SIGKILL (exit 5:
  // the restore was not verified), naming the recover command, which verifies it (exit 4).
  commit_change("60s", "", "! grep -q broken {home}/d1.conf",
                {"sleep 4", "cp {home}/d1.bak {home}/d1.conf"});
  int status = apply_and_cancel_at("\"gate\":\"settle\"");
  EXPECT_EQ(status, 5) << read_file(log_);
  EXPECT_EQ(config("d1"), kBaseline) << read_file(log_);
  const std::string recover = printed_recover_command();
  ASSERT_FALSE(recover.empty()) << read_file(log_);
  EXPECT_TRUE(journal_has(dir_, "\"event\":\"interrupted\"")) << "the journal names it too";
  expect_sealed(dir_);
  auto recovered = repo_.run(recover + " 2>&1");
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), kBaseline);
}

// ---- a reader that goes away -------------------------------------------------------------

TEST_F(RunControllerEndToEnd, AnOutputPipeClosedByItsReaderDoesNotEndTheRun) {
  // Given `fabgate apply c | head -c 1` (with SIGPIPE at its default action, as a shell gives
  // it) and a change whose acceptance fails, then the writes after head left fail quietly
  // instead of killing fabgate: the change is rolled back and verified (exit 4), sealed.
  commit_change("0s", "", "! grep -q 9100 {home}/d1.conf");
  const std::string status_file = repo_.file("apply.status");
  repo_.run("( env --default-signal=PIPE " + shell_quoted(kFabgate) + " apply c 2>&1; echo $? > " +
            shell_quoted(status_file) + " ) | head -c 1 > /dev/null");
  ASSERT_TRUE(std::filesystem::exists(status_file));
  EXPECT_EQ(read_file(status_file), "4\n") << "141 is death by SIGPIPE";
  EXPECT_EQ(config("d1"), kBaseline);
  expect_sealed(bundle());
}

// ---- evidence that cannot be written ------------------------------------------------------

// The evidence folder on a 16 MiB tmpfs, mounted before the sshd starts: the sshd runs in a
// mount namespace of its own, copied when it starts, so this is the same file system for the
// "device" d1 and for fabgate.
class FullEvidenceDisk : public RunControllerEndToEnd {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    mount_point_ = repo_.file("evidence-out");
    std::filesystem::create_directories(mount_point_);
    ASSERT_EQ(::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=16m"), 0)
        << std::strerror(errno);
    mounted_ = true;
    RunControllerEndToEnd::SetUp();
  }
  void TearDown() override {
    RunControllerEndToEnd::TearDown();
    if (mounted_) ::umount2(mount_point_.c_str(), MNT_DETACH);
  }
  std::string mount_point_;
  bool mounted_ = false;
};

TEST_F(FullEvidenceDisk, AGateWhoseEvidenceCannotBeWrittenHasNoEvidenceAndTheRunIsNeverAccepted) {
  // Given the evidence on a tmpfs that the change's step fills up, then the gate whose
  // evidence could not be written has no evidence, the change is rolled back (the rollback
  // frees the space) and the baseline verified: exit 4, never 0, and the bundle is sealed once
  // there is room again.
  const std::string& mount_point = mount_point_;
  const std::string filler = mount_point + "/filler";
  commit_change("0s", "head -c 64M /dev/zero > " + filler + " 2>/dev/null; true",
                "! grep -q broken {home}/d1.conf",
                {"rm -f " + filler, "cp {home}/d1.bak {home}/d1.conf"});
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), kBaseline);
  EXPECT_NE(out.output.find("No space left on device"), std::string::npos) << out.output;
  auto dir = bundle();
  expect_sealed(dir);
  auto manifest = read_json(dir / "manifest.json");
  bool no_evidence = false;
  std::string gates;
  for (const auto& gate : manifest.value("gates", nlohmann::json::array())) {
    gates += gate.dump() + "\n";
    if (gate.value("verdict", "") == "no-evidence" &&
        gate.value("summary", "").find("could not be written") != std::string::npos)
      no_evidence = true;
  }
  EXPECT_TRUE(no_evidence) << gates;
  // The report names the file that was lost and why.
  auto report = read_file((dir / "report.md").string());
  EXPECT_NE(report.find("evidence not kept: "), std::string::npos) << report.substr(0, 3000);
  EXPECT_NE(report.find("No space left on device"), std::string::npos);
}

// ---- a confirm timer that cannot be disarmed ----------------------------------------------

TEST_F(RunControllerEndToEnd, AConfirmTimerThatCannotBeDisarmedKeepsTheLockAndExits5) {
  // Given a change whose step makes d1's timer folder read-only (a bind mount: even root
  // cannot rename the timer's claim there), then the timer cannot be disarmed: the run does
  // not release d1's lock (the timer could later revert a device another run changed) and
  // exits 5 naming the timer, never 0 or 4.
  if (::geteuid() != 0) GTEST_SKIP() << "a read-only bind mount needs root";
  const std::string timers = sshd_->home() + "/timers";
  struct Unmount {
    std::string at;
    ~Unmount() {
      ::umount2(at.c_str(), MNT_DETACH);
      // The timer job still sleeping on the device side: its folder names it.
      run_shell("pkill -f " + shell_quoted(at + "/") + " || true");
    }
  } unmount{timers};
  commit_change("0s",
                "mount --bind " + timers + " " + timers + " && mount -o remount,bind,ro " + timers);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 5) << out.output;
  EXPECT_NE(out.output.find("could not be disarmed"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("fabgate recover"), std::string::npos) << out.output;
  EXPECT_TRUE(lock_held("d1")) << "the lock was released while the timer is armed";
  expect_sealed(bundle());
}

}  // namespace
}  // namespace fabgate::testing
