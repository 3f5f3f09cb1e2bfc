// Take-over by `fabgate recover` (docs/coordination.md "Take-over") through the real fabgate
// binary, a real git repository, a real sshd and the real Debian etcd 3.4: a recover mints a
// strictly newer fencing token in etcd, which the device records before any rollback, so the run
// it recovers can no longer write there; it refuses while that run is alive; and of two recovers
// at once exactly one proceeds.

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/etcd/etcd_client.h"
#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/cmd/fabgate/coordinated_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

const char* kPrefix = "/fabgate/takeover-fabric";

class TakeOverEndToEnd : public CoordinatedEndToEnd {
 protected:
  // Change c on d1: the first step marks d1.conf and takes `seconds`, the second marks it again;
  // the rollback restores the copy taken before and appends a line to the device's own log of
  // rollbacks (rollbacks.log), so a test can count what reached the device.
  void commit_fabric(int seconds, const std::string& lease_ttl) {
    commit_intent(
        "id: c\ntitle: change c on d1\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: "
        "30s, deadline: 1m}\nsteps:\n  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && "
        "echo first-c >> {home}/d1.conf && sleep " +
            std::to_string(seconds) +
            "\n  - device: d1\n    run: echo second-c >> {home}/d1.conf\nrollback:\n  - device: "
            "d1\n    run: cp {home}/d1.bak {home}/d1.conf && echo rollback >> "
            "{home}/rollbacks.log\nacceptance:\n  probes:\n    - name: d1-answers\n      layer: "
            "workload\n      host: d1\n      run: \"true\"\n      timeout: 10s\n",
        "coordination:\n  endpoints: [" + join(etcd_->endpoints(), ", ") +
            "]\n  prefix: " + kPrefix + "\n  lease_ttl: " + lease_ttl + "\n");
  }

  std::optional<etcd::KeyValue> d1_lock() {
    auto client = store();
    auto range = client.get(std::string(kPrefix) + "/locks/d1");
    if (!range || range->kvs.empty()) return std::nullopt;
    return range->kvs.front();
  }
  std::string fence_file() const { return sshd_->home() + "/locks/d1.lock/fence"; }
  // How many rollbacks reached d1 (its own log; none before the first creates it).
  int rollbacks_on_d1() const {
    const std::string path = sshd_->home() + "/rollbacks.log";
    if (!std::filesystem::exists(path)) return 0;
    std::istringstream log(read_file(path));
    int lines = 0;
    for (std::string line; std::getline(log, line);) ++lines;
    return lines;
  }
};

TEST_F(TakeOverEndToEnd, AStaleRunWokenAfterARecoverElsewhereIsRefusedByTheDevice) {
  // Given alice's run holding d1 with token T1, frozen (FABGATE_FAULT_STOP_BEFORE_STEP) after
  // its lease fence let its second step pass and before that step reached d1, when its 3 s lease
  // lapses and a second controller recovers it (`recover RUN`, exit 4: d1 restored), then the
  // recover's token on d1 is strictly newer than T1, and once alice's run is woken the device
  // refuses her pending step before it runs: d1 stays restored, her commands.jsonl records the
  // step `rejected` naming T1, and her run ends NOT RESTORED (exit 5), never 0.
  commit_fabric(0, "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"),
                             "FABGATE_FAULT_STOP_BEFORE_STEP=2");
  ASSERT_TRUE(eventually([&] { return process_state(alice.pid()) == 'T'; }, 60s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(config("d1"), "mtu 9000\nfirst-c\n") << "alice was not stopped after her first step";
  auto lock = d1_lock();
  ASSERT_TRUE(lock.has_value());
  const std::int64_t t1 = lock->mod_revision;
  auto frozen = bundles();
  ASSERT_EQ(frozen.size(), 1u);
  const std::string run_id = run_id_of(frozen.front());
  ASSERT_TRUE(no_run_alive(kPrefix)) << "alice's lease did not lapse while she was frozen";

  TempDir second("fabgate-controller2");
  const std::string clone = second_controller(second.path());
  ASSERT_FALSE(clone.empty());
  auto recovered = fabgate_in(clone, "recover " + run_id + " --operator bob --controller ctl-b");
  ASSERT_EQ(recovered.exit_code, 4) << recovered.output;
  ASSERT_EQ(config("d1"), "mtu 9000\n") << recovered.output;
  EXPECT_EQ(rollbacks_on_d1(), 1);
  std::istringstream mark(read_file(fence_file()));
  std::int64_t t2 = 0;
  std::string marked_run;
  ASSERT_TRUE(mark >> t2 >> marked_run) << read_file(fence_file());
  EXPECT_GT(t2, t1) << "the recover did not mint a newer token on d1";
  EXPECT_EQ(marked_run, run_id);

  ASSERT_EQ(::kill(alice.pid(), SIGCONT), 0);
  const int alice_exit = wait_for(alice, 120s);
  const std::string log = read_file(repo_.file("alice.log"));
  EXPECT_EQ(alice_exit, 5) << log;
  EXPECT_EQ(config("d1"), "mtu 9000\n") << "alice's stale step reached d1 after the recover";
  EXPECT_EQ(rollbacks_on_d1(), 1) << "alice's stale run rolled d1 back again";

  std::vector<nlohmann::json> steps;
  std::istringstream commands(read_file(frozen.front() / "commands.jsonl"));
  for (std::string line; std::getline(commands, line);) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(record.is_discarded()) << line;
    if (record.value("purpose", "") == "step") steps.push_back(record);
  }
  ASSERT_EQ(steps.size(), 2u) << read_file(frozen.front() / "commands.jsonl");
  EXPECT_EQ(steps[1].value("failure", ""), "rejected") << steps[1].dump();
  EXPECT_NE(steps[1]
                .value("message", "")
                .find("refused by d1 before it ran: stale fencing token " + std::to_string(t1) +
                      ": this device saw " + std::to_string(t2)),
            std::string::npos)
      << steps[1].dump();
}

TEST_F(TakeOverEndToEnd, ARunWhoseLeaseLapsedAfterAcceptanceHandsOffAndReleasesNothing) {
  // Given alice's run, its whole change on d1 and every gate passed, frozen just before it
  // records its end (FABGATE_FAULT_STOP_BEFORE_RELEASE) until its 3 s lease lapsed, and a
  // second controller that recovered it (`recover RUN`, exit 4: d1 restored), when alice's run
  // is woken, then it does not claim success: it exits 5 ("taken over") naming `fabgate
  // recover`, it writes no end marker and deletes nothing in the store, and d1 stays as the
  // recover left it (one rollback, restored). On d9e2c31 it exited 0 "changed as intended".
  commit_fabric(0, "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"),
                             "FABGATE_FAULT_STOP_BEFORE_RELEASE=1");
  ASSERT_TRUE(eventually([&] { return process_state(alice.pid()) == 'T'; }, 90s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(config("d1"), "mtu 9000\nfirst-c\nsecond-c\n") << "alice did not finish her change";
  auto frozen = bundles();
  ASSERT_EQ(frozen.size(), 1u);
  const std::string run_id = run_id_of(frozen.front());
  ASSERT_TRUE(eventually([&] { return no_run_alive(kPrefix); }, 30s))
      << "alice's lease did not lapse while she was frozen";

  TempDir second("fabgate-controller2");
  const std::string clone = second_controller(second.path());
  ASSERT_FALSE(clone.empty());
  auto recovered = fabgate_in(clone, "recover " + run_id + " --operator bob --controller ctl-b");
  ASSERT_EQ(recovered.exit_code, 4) << recovered.output;
  ASSERT_EQ(config("d1"), "mtu 9000\n") << recovered.output;

  ASSERT_EQ(::kill(alice.pid(), SIGCONT), 0);
  const int alice_exit = wait_for(alice, 120s);
  const std::string log = read_file(repo_.file("alice.log"));
  EXPECT_EQ(alice_exit, 5) << log;
  EXPECT_NE(log.find("taken over"), std::string::npos) << log;
  EXPECT_NE(log.find("fabgate recover"), std::string::npos) << log;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(rollbacks_on_d1(), 1);
  auto client = store();
  auto end = client.get(std::string(kPrefix) + "/journal/" + run_id + "/end");
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->kvs.empty()) << "a run that may have been taken over recorded its end";
}

TEST_F(TakeOverEndToEnd, ARecoverOfARunThatRecordedItsEndOnlyReleasesWhatItLeft) {
  // Given alice's run that finished its change on d1, recorded its end in the store and was
  // then killed before its release (its lock, claim and journal left in etcd, its lease
  // lapsed), when `fabgate status` and then `recover RUN` run on a second controller, then
  // status says the run ended and its devices need nothing (not "unknown state"), and recover
  // rolls nothing back (d1 keeps the change, no rollback in its log) and releases d1's lock.
  commit_fabric(0, "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"),
                             "FABGATE_FAULT_STOP_AFTER_END_RECORDED=1");
  ASSERT_TRUE(eventually([&] { return process_state(alice.pid()) == 'T'; }, 90s))
      << read_file(repo_.file("alice.log"));
  auto frozen = bundles();
  ASSERT_EQ(frozen.size(), 1u);
  const std::string run_id = run_id_of(frozen.front());
  ASSERT_TRUE(kill_and_outlive_its_lease(alice, kPrefix));
  ASSERT_TRUE(d1_lock().has_value()) << "the killed run left no lock to release";

  TempDir second("fabgate-controller2");
  const std::string clone = second_controller(second.path());
  ASSERT_FALSE(clone.empty());
  auto status = fabgate_in(clone, "status");
  EXPECT_NE(status.output.find("it ended (exit 0"), std::string::npos) << status.output;
  EXPECT_EQ(status.output.find("unknown state"), std::string::npos) << status.output;
  auto recovered = fabgate_in(clone, "recover " + run_id + " --operator bob --controller ctl-b");
  EXPECT_NE(recovered.output.find("recorded its end"), std::string::npos) << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nfirst-c\nsecond-c\n") << recovered.output;
  EXPECT_EQ(rollbacks_on_d1(), 0) << recovered.output;
  EXPECT_FALSE(d1_lock().has_value()) << recovered.output;
}

TEST_F(TakeOverEndToEnd, TheRecoverAnExitFiveRunNamesRestoresItAtOnce) {
  // Given alice's run on d1 whose acceptance fails and whose rollback fails too (the device
  // refuses it until the test allows it), ending NOT RESTORED (exit 5) with a 10 s lease and
  // naming `fabgate recover BUNDLE`, when that command runs at once, then it does not mistake
  // the bundle sealed NOT RESTORED for a run that "ended while recover waited" (it was refused,
  // exit 3, with d1 left changed: the fault-schedule checker's seeds 1028, 1073, ...): the run
  // ended its lease at its hand-off, so recover proceeds without waiting, restores d1 (exit 4),
  // and the device's rollback log shows it.
  commit_intent(
      "id: c\ntitle: change c on d1\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: "
      "30s, deadline: 1m}\nsteps:\n  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && "
      "echo first-c >> {home}/d1.conf\nrollback:\n  - device: d1\n    run: test -f "
      "{home}/rollback-allowed && cp {home}/d1.bak {home}/d1.conf && echo rollback >> "
      "{home}/rollbacks.log\nacceptance:\n  probes:\n    - name: d1-unchanged\n      layer: "
      "workload\n      host: d1\n      run: \"! grep -q first-c {home}/d1.conf\"\n      "
      "timeout: 10s\n",
      "coordination:\n  endpoints: [" + join(etcd_->endpoints(), ", ") +
          "]\n  prefix: " + kPrefix + "\n  lease_ttl: 10s\n");
  auto alice = fabgate("apply c --operator alice");
  ASSERT_EQ(alice.exit_code, 5) << alice.output;
  auto sealed = bundles();
  ASSERT_EQ(sealed.size(), 1u);
  ASSERT_TRUE(std::filesystem::exists(sealed.front() / "manifest.json"));
  ASSERT_EQ(config("d1"), "mtu 9000\nfirst-c\n");
  std::ofstream(sshd_->home() + "/rollback-allowed") << "yes\n";

  auto recovered =
      fabgate("recover " + shell_quoted(sealed.front().string()) + " --operator bob");
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(recovered.output.find("ended while recover waited"), std::string::npos)
      << recovered.output;
  EXPECT_EQ(recovered.output.find("waiting for it to lapse"), std::string::npos)
      << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n") << recovered.output;
  EXPECT_EQ(rollbacks_on_d1(), 1);
  EXPECT_FALSE(d1_lock().has_value()) << recovered.output;
}

TEST_F(TakeOverEndToEnd, RecoverOfTheFolderWhileItsRunIsAliveIsRefusedAndTouchesNoDevice) {
  // Given alice's run alive and inside its 6 s first step on d1, when `fabgate recover` of her
  // evidence folder runs, then it is refused (exit 3) naming her run and its controller, no
  // rollback reaches d1 (its change stays, its rollback log stays empty), and alice's run ends
  // accepted (exit 0) with her whole change on d1.
  commit_fabric(6, "10s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1").find("first-c") != std::string::npos; }, 60s))
      << read_file(repo_.file("alice.log"));
  auto live = bundles();
  ASSERT_EQ(live.size(), 1u);
  const std::string run_id = run_id_of(live.front());

  auto refused = fabgate("recover " + shell_quoted(live.front().string()) + " --operator bob");
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_NE(refused.output.find("recover: run " + run_id + " is alive: its controller (" +
                                host_name() + ") still keeps its lease"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(config("d1").find("first-c"), std::string::npos) << "recover rolled d1 back";
  EXPECT_EQ(rollbacks_on_d1(), 0);

  ASSERT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
  EXPECT_EQ(config("d1"), "mtu 9000\nfirst-c\nsecond-c\n");
  EXPECT_EQ(rollbacks_on_d1(), 0);
}

TEST_F(TakeOverEndToEnd, OfTwoRecoversAtOnceExactlyOneProceeds) {
  // Given alice's run SIGKILLed inside its first step on d1 and its 3 s lease lapsed, when two
  // controllers (two clones, ctl-a and ctl-b) run `fabgate recover RUN` at the same instant, then
  // exactly one rolls d1 back (exit 4) and the other is refused (exit 3) naming the winner's
  // controller; d1's own log shows one rollback, and d1 is restored.
  commit_fabric(2, "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1").find("first-c") != std::string::npos; }, 60s))
      << read_file(repo_.file("alice.log"));
  auto crashed = bundles();
  ASSERT_EQ(crashed.size(), 1u);
  const std::string run_id = run_id_of(crashed.front());
  ASSERT_TRUE(kill_and_outlive_its_lease(alice, kPrefix));

  TempDir first("fabgate-controller-a");
  TempDir second("fabgate-controller-b");
  const std::string clone_a = second_controller(first.path());
  const std::string clone_b = second_controller(second.path());
  ASSERT_FALSE(clone_a.empty() || clone_b.empty());
  auto recover_in = [&](const std::string& clone, const std::string& name) {
    return ChildProcess(std::vector<std::string>{
        "/bin/sh", "-c",
        "cd " + shell_quoted(clone) + " && exec " + shell_quoted(kFabgate) + " recover " + run_id +
            " --operator " + name + " --controller ctl-" + name + " > " +
            shell_quoted(clone + "/recover.log") + " 2>&1"});
  };
  auto a = recover_in(clone_a, "a");
  auto b = recover_in(clone_b, "b");
  const int a_exit = wait_for(a, 180s);
  const int b_exit = wait_for(b, 180s);
  const std::string a_log = read_file(clone_a + "/recover.log");
  const std::string b_log = read_file(clone_b + "/recover.log");
  ASSERT_TRUE((a_exit == 4 && b_exit == 3) || (a_exit == 3 && b_exit == 4))
      << "a: " << a_exit << "\n"
      << a_log << "\nb: " << b_exit << "\n"
      << b_log;
  const std::string& loser = a_exit == 3 ? a_log : b_log;
  const std::string winner = a_exit == 4 ? "ctl-a" : "ctl-b";
  EXPECT_NE(loser.find(winner), std::string::npos) << loser;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(rollbacks_on_d1(), 1) << "a: " << a_log << "\nb: " << b_log;
  EXPECT_FALSE(d1_lock().has_value()) << "the winner did not release d1";
}

}  // namespace
}  // namespace fabgate::testing
