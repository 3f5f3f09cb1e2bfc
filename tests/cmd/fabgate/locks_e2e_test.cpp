// Fenced device locks (docs/coordination.md "Device locks and fencing tokens") through the real
// fabgate binary, a real git repository, a real sshd and the real Debian etcd 3.4: runs of
// several operators on one device d1, without a budgets file (the locks alone coordinate them).

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
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

const char* kPrefix = "/fabgate/lock-fabric";

class LocksEndToEnd : public CoordinatedEndToEnd {
 protected:
  // A change `id` on d1: the first step marks d1.conf and takes `seconds`, the second step
  // marks it again; the rollback restores the copy taken before.
  static std::string change_on_d1(const std::string& id, int seconds) {
    return "id: " + id + "\ntitle: change " + id +
           " on d1\ntargets: [d1]\nbounds: {max_targets: 1, step_timeout: 30s, deadline: 1m}\n"
           "steps:\n  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && echo first-" +
           id + " >> {home}/d1.conf && sleep " + std::to_string(seconds) +
           "\n  - device: d1\n    run: echo second-" + id +
           " >> {home}/d1.conf\nrollback:\n  - device: d1\n    run: cp {home}/d1.bak "
           "{home}/d1.conf\nacceptance:\n  probes:\n    - name: d1-answers\n      layer: "
           "workload\n      host: d1\n      run: \"true\"\n      timeout: 10s\n";
  }

  // Changes c (alice's, `seconds` long) and b (bob's, quick), both on d1; no budgets file;
  // the runs' lease `lease_ttl` (short where a test waits for it to lapse).
  void commit_fabric(int seconds, const std::string& lease_ttl = "10s") {
    commit_intent(change_on_d1("c", seconds),
                  "coordination:\n  endpoints: [" + join(etcd_->endpoints(), ", ") +
                      "]\n  prefix: " + kPrefix + "\n  lease_ttl: " + lease_ttl + "\n");
    repo_.write("changes/b.yaml",
                std::regex_replace(change_on_d1("b", 0), std::regex("\\{home\\}"), sshd_->home()));
    repo_.commit_all("change b on d1 too");
  }

  // d1's lock key in the store, if any.
  std::optional<etcd::KeyValue> d1_lock() {
    auto client = store();
    auto range = client.get(std::string(kPrefix) + "/locks/d1");
    if (!range || range->kvs.empty()) return std::nullopt;
    return range->kvs.front();
  }
  std::string fence_file() const { return sshd_->home() + "/locks/d1.lock/fence"; }
};

TEST_F(LocksEndToEnd, ASecondRunOnTheSameDeviceIsRefusedNamingTheHolderAndStatusListsTheLock) {
  // Given alice's run changing d1 with coordination and no budgets file, when bob's run (another
  // process) asks for d1, then bob is refused (exit 3) naming alice's run, operator, change and
  // controller, alive, with d1 untouched by him; `fabgate status --json` lists d1's lock with its
  // holder, liveness, age and token; the device recorded that token; once alice's run ends the
  // lock is gone and bob's run passes.
  commit_fabric(6);
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return d1_lock().has_value(); }, 30s))
      << read_file(repo_.file("alice.log"));
  const auto lock = *d1_lock();

  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;
  EXPECT_NE(bob.output.find("d1: locked by run "), std::string::npos) << bob.output;
  EXPECT_NE(bob.output.find("(alice, change c, on " + host_name() + ", alive, since "),
            std::string::npos)
      << bob.output;
  EXPECT_NE(bob.output.find(", token " + std::to_string(lock.create_revision) + ")"),
            std::string::npos)
      << bob.output;
  EXPECT_EQ(config("d1").find("first-b"), std::string::npos) << "bob's refused run touched d1";

  auto status = fabgate("status --json");
  ASSERT_EQ(status.exit_code, 0) << status.output;
  auto view = nlohmann::json::parse(status.output, nullptr, false);
  ASSERT_TRUE(view.is_object()) << status.output;
  ASSERT_EQ(view["locks"].size(), 1u) << view.dump(2);
  const auto& held = view["locks"][0];
  EXPECT_EQ(held.value("device", ""), "d1");
  EXPECT_EQ(held.value("operator", ""), "alice");
  EXPECT_EQ(held.value("change", ""), "c");
  EXPECT_EQ(held.value("controller", ""), host_name());
  EXPECT_TRUE(held.value("alive", false));
  EXPECT_EQ(held.value("fence_revision", std::int64_t{0}), lock.create_revision);
  EXPECT_GE(held.value("age_s", std::int64_t{-1}), 0);
  auto text = fabgate("status");
  EXPECT_NE(text.output.find("device locks: 1"), std::string::npos) << text.output;

  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(fence_file()); }, 30s));
  EXPECT_EQ(read_file(fence_file()),
            std::to_string(lock.create_revision) + " " + held.value("run", "") + " 1\n");

  ASSERT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
  EXPECT_FALSE(d1_lock().has_value()) << "alice's run ended without releasing its lock";
  auto again = fabgate("apply b --operator bob");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  auto after = fabgate("status --json");
  EXPECT_EQ(nlohmann::json::parse(after.output, nullptr, false)["locks"].size(), 0u)
      << after.output;
}

TEST_F(LocksEndToEnd, AWriteAfterTheDeviceSawANewerTokenIsRefusedByTheDevice) {
  // Given alice's run holds d1 with token T and is inside its first step, when d1 records a
  // newer token (T + 1000 of run newer-run: what a run that locked d1 after alice's lock was
  // released, e.g. by `fabgate recover` while alice was frozen, leaves there), then alice's
  // second step is refused by the device before it runs, naming d1 and both tokens; her rollback
  // is refused too (the device is someone else's now), so the run ends NOT RESTORED (exit 5);
  // commands.jsonl records the steps as written, without the device-side guard.
  commit_fabric(4);
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1").find("first-c") != std::string::npos; }, 60s))
      << read_file(repo_.file("alice.log"));
  auto lock = d1_lock();
  ASSERT_TRUE(lock.has_value());
  const std::int64_t newer = lock->create_revision + 1000;
  write_file(fence_file(), std::to_string(newer) + " newer-run\n");

  ASSERT_EQ(wait_for(alice, 120s), 5) << read_file(repo_.file("alice.log"));
  const std::string log = read_file(repo_.file("alice.log"));
  EXPECT_EQ(config("d1").find("second-c"), std::string::npos) << "the stale write ran";
  const std::string refusal = "refused by d1 before it ran: stale fencing token " +
                              std::to_string(lock->create_revision) + ": this device saw " +
                              std::to_string(newer) + " (run newer-run)";
  EXPECT_NE(log.find(refusal), std::string::npos) << log;
  auto steps = commands("step", "d1");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1], "echo second-c >> " + sshd_->home() + "/d1.conf");
  for (const auto& step : steps) EXPECT_EQ(step.find("fabgate_fence"), std::string::npos);
}

TEST_F(LocksEndToEnd, AKilledHoldersLockRefusesUntilRecoverWhichTakesItOverWithANewerToken) {
  // Given alice's run SIGKILLed inside its first step on d1 (3 s lease), then its etcd lock
  // outlives its lease: bob is refused naming alice's run as dead with `fabgate recover`; the
  // recover (same run id) takes the lock over with a newer token, which d1 records before the
  // rollback it then accepts (exit 4, once alice's step still running there ended), and releases
  // it; bob's run then passes with a newer token still.
  commit_fabric(20, "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1").find("first-c") != std::string::npos; }, 60s))
      << read_file(repo_.file("alice.log"));
  auto lock = d1_lock();
  ASSERT_TRUE(lock.has_value());
  ASSERT_TRUE(kill_and_outlive_its_lease(alice, kPrefix));

  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;
  EXPECT_NE(bob.output.find("dead: its lease is gone and the device is in an unknown state until "
                            "`fabgate recover "),
            std::string::npos)
      << bob.output;

  auto crashed = bundles();
  ASSERT_FALSE(crashed.empty());
  auto recovered = fabgate("recover " + shell_quoted(crashed.front().string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto coordination = read_json(crashed.front() / "coordination.json");
  const std::int64_t recovers = coordination["locks"].value("d1", std::int64_t{0});
  EXPECT_GT(recovers, lock->create_revision) << coordination.dump();
  EXPECT_FALSE(d1_lock().has_value()) << recovered.output;

  auto again = fabgate("apply b --operator bob");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_GT(std::stoll(read_file(fence_file())), recovers);
}

TEST_F(LocksEndToEnd, AStaleRunWokenAfterRecoverAndANewerRunIsRefusedByTheDevice) {
  // Given alice's run holding d1 with token T1, frozen (SIGSTOP, the test-only fault hook
  // FABGATE_FAULT_STOP_BEFORE_STEP) after its lease fence let its second step pass and before
  // that step reached d1, when its 3 s lease lapses, a second controller (another clone, its own
  // evidence folder) recovers the run from the shared journal and frees d1 (exit 4), carol's run
  // then locks d1 with a newer token T2 and changes it (exit 0), and alice's run is woken, then
  // her pending step reaches d1 carrying T1 and the device refuses it before it runs: her
  // commands.jsonl records it `rejected` naming d1, T1, T2 and carol's run; the run ends NOT
  // RESTORED (exit 5); d1's configuration is carol's change, with nothing of alice's.
  commit_fabric(0, "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"),
                             "FABGATE_FAULT_STOP_BEFORE_STEP=2");
  ASSERT_TRUE(eventually([&] { return process_state(alice.pid()) == 'T'; }, 60s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(config("d1"), "mtu 9000\nfirst-c\n") << "alice was not stopped after her first step";
  auto lock = d1_lock();
  ASSERT_TRUE(lock.has_value());
  const std::int64_t t1 = lock->create_revision;
  auto frozen = bundles();
  ASSERT_EQ(frozen.size(), 1u);
  const std::string run_id = run_id_of(frozen.front());
  ASSERT_TRUE(no_run_alive(kPrefix)) << "alice's lease did not lapse while she was frozen";

  TempDir second("fabgate-controller2");
  const std::string clone = second_controller(second.path());
  ASSERT_FALSE(clone.empty());
  auto recovered = fabgate_in(clone, "recover " + run_id + " --operator bob");
  ASSERT_EQ(recovered.exit_code, 4) << recovered.output;
  ASSERT_EQ(config("d1"), "mtu 9000\n") << recovered.output;
  ASSERT_FALSE(d1_lock().has_value()) << "recover did not free d1: " << recovered.output;

  auto carol = fabgate("apply b --operator carol");
  ASSERT_EQ(carol.exit_code, 0) << carol.output;
  const std::string carols_change = "mtu 9000\nfirst-b\nsecond-b\n";
  ASSERT_EQ(config("d1"), carols_change);
  std::istringstream mark(read_file(fence_file()));
  std::int64_t t2 = 0;
  std::string carols_run;
  ASSERT_TRUE(mark >> t2 >> carols_run) << read_file(fence_file());
  ASSERT_GT(t2, t1) << "carol's lock did not raise d1's mark";

  ASSERT_EQ(::kill(alice.pid(), SIGCONT), 0);
  const int alice_exit = wait_for(alice, 120s);
  const std::string log = read_file(repo_.file("alice.log"));
  EXPECT_EQ(alice_exit, 5) << log;
  EXPECT_EQ(config("d1"), carols_change) << "alice's stale run changed d1";

  const std::string refusal = "refused by d1 before it ran: stale fencing token " +
                              std::to_string(t1) + ": this device saw " + std::to_string(t2) +
                              " (run " + carols_run + ")";
  std::vector<nlohmann::json> steps;
  std::istringstream commands(read_file(frozen.front() / "commands.jsonl"));
  for (std::string line; std::getline(commands, line);) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(record.is_discarded()) << line;
    if (record.value("purpose", "") == "step") steps.push_back(record);
  }
  ASSERT_EQ(steps.size(), 2u) << read_file(frozen.front() / "commands.jsonl");
  EXPECT_EQ(steps[0].value("exit_status", -1), 0) << steps[0].dump();
  EXPECT_EQ(steps[1].value("command", ""), "echo second-c >> " + sshd_->home() + "/d1.conf");
  EXPECT_EQ(steps[1].value("failure", ""), "rejected") << steps[1].dump();
  EXPECT_NE(steps[1].value("message", "").find(refusal), std::string::npos) << steps[1].dump();

  // The woken run wrote nothing back into the shared journal that recover erased.
  auto left = store().get_prefix(std::string(kPrefix) + "/journal/" + run_id + "/");
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->kvs.empty()) << left->kvs.size() << " keys under the erased journal";
  // Its exit 5 does not claim to hold what the recover elsewhere released.
  EXPECT_NE(log.find("unless another controller recovered this run after its lease lapsed"),
            std::string::npos)
      << log;
  // Recover from alice's own folder, following her exit 5's advice, must not roll d1 back over
  // carol's change: the run was finished elsewhere (its shared journal is gone).
  auto again = fabgate("recover " + shell_quoted(frozen.front().string()) + " --operator alice");
  EXPECT_EQ(again.exit_code, 5) << again.output;
  EXPECT_NE(again.output.find("recover did not touch the devices: shared-journal: run " + run_id +
                              " shared its journal in "),
            std::string::npos)
      << again.output;
  EXPECT_EQ(config("d1"), carols_change) << "recover from the stale folder changed d1";
  EXPECT_FALSE(d1_lock().has_value()) << "recover from the stale folder took d1's lock";
}

}  // namespace
}  // namespace fabgate::testing
