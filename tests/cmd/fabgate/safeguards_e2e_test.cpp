// Device locks and the device-side confirm timer through the real fabgate binary, a real git
// repository and a real sshd: two engineers at once, a controller that dies, a controller that
// loses SSH.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "tests/cmd/fabgate/e2e_fixture.h"
#include "tests/support/process.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

class SafeguardsEndToEnd : public FabgateEndToEnd {
 protected:
  // A change on d1 whose first step changes the configuration and whose second step takes a
  // while, so the run can be interrupted between them. The device-side timer reverts d1 after
  // `confirm` unless the run confirms (no timer when `confirm` is empty).
  static std::string slow_change(const std::string& confirm, const std::string& deadline = "6s") {
    return "id: c\ntitle: slow change\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: 4s, "
           "deadline: " +
           deadline + "}\n" + (confirm.empty() ? "" : "confirm_timeout: " + confirm + "\n") +
           "steps:\n"
           "  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && echo 'mtu 9100' >> "
           "{home}/d1.conf\n"
           "  - device: d1\n    run: sleep 2\n"
           "rollback:\n  - device: d1\n    run: cp {home}/d1.bak {home}/d1.conf\n"
           "acceptance:\n  probes:\n    - name: config-healthy\n      layer: workload\n"
           "      host: d2\n      run: \"! grep -q broken {home}/d1.conf\"\n      timeout: 10s\n";
  }
};

TEST_F(SafeguardsEndToEnd, TwoAppliesOnTheSameDeviceStartedTogetherExactlyOneRuns) {
  // Given two engineers applying changes that both touch d1 at the same moment, then exactly
  // one runs; the other is refused (exit 3) before touching anything and names the holder.
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf && sleep 2"));
  auto first = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  auto second = start_fabgate("apply c --operator bob", repo_.file("bob.log"));
  int alice = wait_for(first, 120s);
  int bob = wait_for(second, 120s);
  std::string alice_log = read_file(repo_.file("alice.log"));
  std::string bob_log = read_file(repo_.file("bob.log"));

  ASSERT_TRUE((alice == 0 && bob == 3) || (alice == 3 && bob == 0))
      << "alice " << alice << ":\n"
      << alice_log << "\nbob " << bob << ":\n"
      << bob_log;
  const std::string& refused = alice == 3 ? alice_log : bob_log;
  const std::string winner = alice == 0 ? "alice" : "bob";
  EXPECT_NE(refused.find("d1: locked by run"), std::string::npos) << refused;
  EXPECT_NE(refused.find("(" + winner + ", change c"), std::string::npos) << refused;
  // The change was made once, not twice.
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
  // The winner released its lock: a third run gets it.
  write_config("d1", "mtu 9000\n");
  auto third = fabgate("apply c");
  EXPECT_EQ(third.exit_code, 0) << third.output;
}

TEST_F(SafeguardsEndToEnd, TwoAppliesOverlappingInTwoDevicesStartedTogetherExactlyOneRuns) {
  // Given two changes that both target d1 and d2, listed in opposite orders, applied at the
  // same moment, then in every round exactly one runs (exit 0) and the other is refused (exit
  // 3) naming the holder: neither ends up holding one lock the other needs.
  auto targets_both = [&](const std::string& id, const std::string& order) {
    std::string text = "id: " + id + "\ntitle: both devices\ntargets: [" + order +
                       "]\nbounds: {max_targets: 2, step_timeout: 10s, deadline: 1m}\nsteps:\n";
    for (const char* device : {"d1", "d2"})
      text += std::string("  - device: ") + device + "\n    run: echo " + id + " >> {home}/" +
              device + ".conf && sleep 1\n";
    text += "rollback:\n";
    for (const char* device : {"d1", "d2"})
      text += std::string("  - device: ") + device + "\n    run: printf 'mtu 9000\\n' > {home}/" +
              device + ".conf\n";
    text +=
        "acceptance:\n  probes:\n    - name: config-healthy\n      layer: workload\n"
        "      host: d2\n      run: \"! grep -q broken {home}/d1.conf\"\n      timeout: 10s\n";
    return std::regex_replace(text, std::regex("\\{home\\}"), sshd_->home());
  };
  repo_.write("changes/c2.yaml", targets_both("c2", "d2, d1"));
  commit_intent(targets_both("c", "d1, d2"));
  for (int round = 1; round <= 4; ++round) {
    for (const char* device : {"d1", "d2"}) write_config(device, "mtu 9000\n");
    std::string alice_log = repo_.file("alice-" + std::to_string(round) + ".log");
    std::string bob_log = repo_.file("bob-" + std::to_string(round) + ".log");
    auto first = start_fabgate("apply c --operator alice", alice_log);
    auto second = start_fabgate("apply c2 --operator bob", bob_log);
    int alice = wait_for(first, 120s);
    int bob = wait_for(second, 120s);
    std::string alice_out = read_file(alice_log);
    std::string bob_out = read_file(bob_log);
    ASSERT_TRUE((alice == 0 && bob == 3) || (alice == 3 && bob == 0))
        << "round " << round << ": alice " << alice << ":\n"
        << alice_out << "\nbob " << bob << ":\n"
        << bob_out;
    const std::string& refused = alice == 3 ? alice_out : bob_out;
    EXPECT_NE(refused.find("locked by run"), std::string::npos) << refused;
    // Only the winner's steps reached the devices, once each.
    std::string winner = alice == 0 ? "c" : "c2";
    for (const char* device : {"d1", "d2"})
      EXPECT_EQ(config(device), "mtu 9000\n" + winner + "\n") << "round " << round;
  }
}

TEST_F(SafeguardsEndToEnd, ALockWhoseHolderDiedIsReportedAndTakenOverOnlyWhenAsked) {
  // Given a run killed while it held d1's lock (and had changed d1), then the next apply is
  // refused naming the dead holder; with --take-over-locks it runs, and the evidence records
  // whose lock it took.
  commit_intent(slow_change("", "10s"));
  auto crashed = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nmtu 9100\n"; }, 30s))
      << read_file(repo_.file("alice.log"));
  ::kill(crashed.pid(), SIGKILL);
  wait_for(crashed, 10s);
  write_config("d1", "mtu 9000\n");  // a human repaired d1; the lock is still there

  auto refused = fabgate("apply c --operator bob");
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_NE(refused.output.find("(alice, change c"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("its holder is dead"), std::string::npos) << refused.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n") << "a refused run touched the device";

  auto taken = fabgate("apply c --operator bob --take-over-locks");
  EXPECT_EQ(taken.exit_code, 0) << taken.output;
  // The bundle this run names: runs started in the same second do not sort by folder name.
  auto bundle = evidence_of(taken);
  ASSERT_FALSE(bundle.empty()) << taken.output;
  auto safeguards = read_json(bundle / "safeguards.json");
  bool recorded = false;
  for (const auto& event : safeguards["events"])
    if (event.contains("taken_over_from") &&
        event["taken_over_from"].value("operator", "") == "alice")
      recorded = true;
  EXPECT_TRUE(recorded) << safeguards.dump(2);
}

TEST_F(SafeguardsEndToEnd, DeviceRevertsByItselfWhenTheControllerDiesAndRecoverSeesIt) {
  // Given a change with a 12 s confirm timer and a controller killed right after its first step,
  // then d1 reverts by itself within the timeout, and a later recover finds it already
  // restored, does not roll it back twice, and verifies the baseline (exit 4).
  // The deadline counts from the run's start and the pre-change snapshot alone took over 4 s on
  // a busy 2-core machine, so the timer and deadline leave the steps room to start; the device's
  // own revert is then awaited for longer than the whole timer.
  commit_intent(slow_change("12s", "12s"));
  auto run = start_fabgate("apply c", repo_.file("apply.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nmtu 9100\n"; }, 30s))
      << read_file(repo_.file("apply.log"));
  ::kill(run.pid(), SIGKILL);
  wait_for(run, 10s);

  EXPECT_TRUE(eventually([&] { return config("d1") == "mtu 9000\n"; }, 30s))
      << "d1 did not revert by itself: " << config("d1");

  auto found = bundles();
  ASSERT_EQ(found.size(), 1u);
  auto recovered = fabgate("recover " + shell_quoted(found.front().string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_NE(recovered.output.find("already reverted by its confirm timer"), std::string::npos)
      << recovered.output;
  EXPECT_TRUE(commands_in(found.front(), "rollback", "d1").empty())
      << "recover rolled d1 back a second time";
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto journal = read_file((found.front() / "journal.jsonl").string());
  EXPECT_NE(journal.find("\"confirm-armed\""), std::string::npos);
  EXPECT_NE(journal.find("\"confirm-already-fired\""), std::string::npos) << journal;
}

TEST_F(SafeguardsEndToEnd, DeviceRevertsByItselfWhenTheControllerLosesSsh) {
  // Given a change with a 12 s confirm timer and the SSH server gone (with every session) right
  // after the first step, then the controller cannot roll back and says so (exit 5), and d1
  // reverts by itself within the timeout (room for a slow snapshot, as above).
  commit_intent(slow_change("12s", "12s"));
  auto run = start_fabgate("apply c", repo_.file("apply.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nmtu 9100\n"; }, 30s))
      << read_file(repo_.file("apply.log"));
  // Every session process first (children of the listener), then the listener.
  std::string pid_file = shell_quoted(sshd_->file("sshd.pid"));
  run_shell("p=$(cat " + pid_file + ") && pkill -KILL -P \"$p\"; kill -KILL \"$(cat " + pid_file +
            ")\"");
  sshd_->stop();

  int status = wait_for(run, 90s);
  EXPECT_EQ(status, 5) << read_file(repo_.file("apply.log"));
  EXPECT_TRUE(eventually([&] { return config("d1") == "mtu 9000\n"; }, 30s))
      << "d1 did not revert by itself: " << config("d1");
}

}  // namespace
}  // namespace fabgate::testing
