// Redundancy budgets across controllers (docs/coordination.md) through the real fabgate binary,
// a real git repository, a real sshd and the real Debian etcd 3.4: two "leaves" d1 and d2 of pod
// p1, a budget of one leaf per pod in change at once, and two runs that would together take the
// whole pod out.

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/etcd/etcd_client.h"
#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/cmd/fabgate/coordinated_fixture.h"
#include "tests/support/netns_link.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_port.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

const char* kPrefix = "/fabgate/test-fabric";
const char* kOneLeafPerPod =
    "budgets:\n  - name: leaves-per-pod\n    role: leaf\n    per: pod\n    max_in_change: 1\n";

class BudgetsEndToEnd : public CoordinatedEndToEnd {
 protected:
  // A change on `device` whose step takes `seconds` after changing its configuration; its
  // probe holds while no configuration says 'broken'.
  static std::string slow_change(const std::string& id, const std::string& device, int seconds) {
    return "id: " + id + "\ntitle: drain " + device + "\ntargets: [" + device +
           "]\nbounds: {max_targets: 1, step_timeout: 30s, deadline: 1m}\nsteps:\n  - device: " +
           device + "\n    run: cp {home}/" + device + ".conf {home}/" + device +
           ".bak && echo 'shutdown' >> {home}/" + device + ".conf && sleep " +
           std::to_string(seconds) + "\nrollback:\n  - device: " + device +
           "\n    run: cp {home}/" + device + ".bak {home}/" + device +
           ".conf\nacceptance:\n  probes:\n    - name: nothing-broken\n      layer: workload\n"
           "      host: " +
           device +
           "\n      run: \"! grep -q broken {home}/d1.conf {home}/d2.conf\"\n"
           "      timeout: 10s\n";
  }

  // The intent: d1 and d2 leaves of pod p1, `budgets` as policies/budgets.yaml, change c on d1
  // (taking `seconds`) and change b on d2, the coordination store this test's etcd.
  // `lease_ttl` is the runs' lease: short where a test waits for it to lapse, long enough
  // elsewhere that a loaded machine never makes a run lose it.
  void commit_fabric(const std::string& budgets, int seconds, const std::string& b_change = "",
                     const std::string& c_change = "", const std::string& lease_ttl = "10s") {
    repo_.write("policies/budgets.yaml", budgets);
    commit_intent(c_change.empty() ? slow_change("c", "d1", seconds) : c_change,
                  "coordination:\n  endpoints: [" + join(etcd_->endpoints(), ", ") +
                      "]\n  prefix: " + kPrefix + "\n  lease_ttl: " + lease_ttl + "\n");
    std::string inventory = read_file(repo_.file("inventory.yaml"));
    inventory = std::regex_replace(inventory, std::regex("role: leaf\n"),
                                   "role: leaf\n    labels: {pod: p1}\n");
    repo_.write("inventory.yaml", inventory);
    std::string b = b_change.empty() ? slow_change("b", "d2", 0) : b_change;
    repo_.write("changes/b.yaml", std::regex_replace(b, std::regex("\\{home\\}"), sshd_->home()));
    repo_.commit_all("pod p1 and its budgets");
  }

  std::size_t claims_in_pod() {
    auto client = store();
    auto range = client.get_prefix(std::string(kPrefix) + "/budgets/leaves-per-pod/pod=p1/claims/");
    return range ? range->kvs.size() : 0;
  }

  // Alice's change on d1 (12 s confirm timer, 10 s settle, 3 s lease): `cut` cuts the
  // controller off from the store at the start of the settle, `heal` lets it answer again once
  // the run has ended. Then the run stopped within the bound, exited 5 naming d1 and its timer,
  // sent no rollback and kept its claim; the device-side timer reverted d1; bob is refused until
  // `fabgate recover` of alice's run (exit 4) releases the claim, then passes.
  void cut_off_during_settle(const std::function<void()>& cut, const std::function<void()>& heal) {
    std::string c = slow_change("c", "d1", 0);
    c = std::regex_replace(c, std::regex("step_timeout: 30s, deadline: 1m\\}"),
                           "step_timeout: 5s, deadline: 12s}\nconfirm_timeout: 12s");
    c = std::regex_replace(c, std::regex("acceptance:\n"), "acceptance:\n  settle: 10s\n");
    commit_fabric(kOneLeafPerPod, 0, "", c, "3s");
    auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
    auto journal_says = [&](const std::string& text) {
      for (const auto& bundle : bundles()) {
        std::ifstream in(bundle / "journal.jsonl");  // absent a moment after the folder exists
        std::string journal((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (journal.find(text) != std::string::npos) return true;
      }
      return false;
    };
    ASSERT_TRUE(eventually(
        [&] { return journal_says("\"gate\":\"settle\"") || !process_alive(alice.pid()); }, 60s));
    ASSERT_TRUE(journal_says("\"gate\":\"settle\"")) << read_file(repo_.file("alice.log"));
    cut();
    if (HasFatalFailure()) return;
    const auto cut_at = std::chrono::steady_clock::now();
    int alice_exit = wait_for(alice, 60s);
    const auto stopped_after = std::chrono::steady_clock::now() - cut_at;
    heal();
    if (HasFatalFailure()) return;
    std::string alice_log = read_file(repo_.file("alice.log"));
    ASSERT_EQ(alice_exit, 5) << alice_log;
    EXPECT_LT(stopped_after, 15s) << "the run went on long after its lease could have expired";
    EXPECT_NE(alice_log.find("lost its coordination lease and sent nothing after that"),
              std::string::npos)
        << alice_log;
    EXPECT_NE(alice_log.find("their confirm timers (armed for 12s) revert them on the devices"),
              std::string::npos)
        << alice_log;
    EXPECT_NE(alice_log.find("may still be changed: d1"), std::string::npos) << alice_log;

    auto crashed = bundles();
    ASSERT_EQ(crashed.size(), 1u);
    // The controller sent no rollback; every command after the fence closed was refused.
    std::istringstream commands(read_file(crashed.front() / "commands.jsonl"));
    for (std::string line; std::getline(commands, line);) {
      auto record = nlohmann::json::parse(line, nullptr, false);
      ASSERT_FALSE(record.is_discarded()) << line;
      EXPECT_NE(record.value("purpose", ""), "rollback") << line;
    }
    auto coordination = read_json(crashed.front() / "coordination.json");
    EXPECT_EQ(coordination["fence"].value("closed", false), true) << coordination.dump();
    // The store answers again (a link that came back up may take a moment to pass packets):
    // only then does a count of the claims mean something.
    ASSERT_TRUE(eventually([&] { return store().get("fabgate-ready").ok(); }, 30s));
    EXPECT_EQ(claims_in_pod(), 1u) << "the claim of a run that may not be restored was released";

    // The device-side timer reverts d1 (12 s after it was armed).
    EXPECT_TRUE(eventually([&] { return config("d1") == "mtu 9000\n"; }, 30s)) << config("d1");

    auto bob = fabgate("apply b --operator bob");
    EXPECT_EQ(bob.exit_code, 3) << bob.output;
    EXPECT_NE(bob.output.find("held by run "), std::string::npos) << bob.output;
    auto recovered = fabgate("recover " + shell_quoted(crashed.front().string()));
    EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
    EXPECT_EQ(claims_in_pod(), 0u) << recovered.output;
    auto again = fabgate("apply b --operator bob");
    EXPECT_EQ(again.exit_code, 0) << again.output;
  }
};

TEST_F(BudgetsEndToEnd, TheSecondLeafOfAPodIsRefusedWhileTheFirstIsInChange) {
  // Given one leaf per pod in change at once, when alice's run drains d1 and, while it runs,
  // bob's run (another process) drains d2 of the same pod, then bob is refused before anything
  // is touched (exit 3) naming alice's run, change and controller (the name her run was given
  // with --controller); once alice's run ends its claim is released and bob's change runs. A
  // controller name with a control character is invalid input before anything is read.
  commit_fabric(kOneLeafPerPod, 6);
  auto bad_name = fabgate("apply b --operator bob --controller \"$(printf 'ci\\nrunner')\"");
  EXPECT_EQ(bad_name.exit_code, 2) << bad_name.output;
  EXPECT_NE(bad_name.output.find("--controller: not a controller name"), std::string::npos)
      << bad_name.output;
  auto alice =
      start_fabgate("apply c --operator alice --controller ci-runner-7", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return claims_in_pod() == 1; }, 30s))
      << read_file(repo_.file("alice.log"));

  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;
  EXPECT_NE(bob.output.find("budget leaves-per-pod (pod=p1) allows 1 of 2 devices in change or "
                            "out of service at once; this change needs d2; held by run "),
            std::string::npos)
      << bob.output;
  EXPECT_NE(bob.output.find("(alice, change c, on ci-runner-7, alive, holds d1)"),
            std::string::npos)
      << bob.output;
  EXPECT_EQ(config("d2"), "mtu 9000\n") << "bob's refused run touched d2";

  ASSERT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
  EXPECT_EQ(claims_in_pod(), 0u) << "alice's run ended without releasing its claim";
  auto alice_bundle = evidence_of(CommandOutput{0, read_file(repo_.file("alice.log"))});
  auto coordination = read_json(alice_bundle / "coordination.json");
  EXPECT_EQ(coordination.value("released", -1), 1) << coordination.dump();
  EXPECT_EQ(coordination["store"].value("prefix", ""), kPrefix) << coordination.dump();
  // The manifest says what coordination cost the run: at least the lease, the claim's read and
  // write, the release and the revoke, each waited for on the run's own thread, within the run.
  auto manifest = read_json(alice_bundle / "manifest.json");
  ASSERT_TRUE(manifest.contains("etcd")) << manifest.dump();
  const auto& etcd = manifest["etcd"];
  EXPECT_GE(etcd.value("calls", 0), 5) << etcd.dump();
  EXPECT_EQ(etcd.value("failed_calls", -1), 0) << etcd.dump();
  EXPECT_GE(etcd["on_the_run_thread"].value("calls", 0), 5) << etcd.dump();
  EXPECT_LE(etcd["on_the_run_thread"].value("calls", 0), etcd.value("calls", 0)) << etcd.dump();
  EXPECT_GT(etcd["on_the_run_thread"].value("waited_ms", 0.0), 0.0) << etcd.dump();
  EXPECT_LT(etcd["on_the_run_thread"].value("waited_ms", 0.0), etcd.value("run_ms", 0) * 1.0)
      << etcd.dump();

  auto again = fabgate("apply b --operator bob");
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

TEST_F(BudgetsEndToEnd, ADrainedLeafCountsAfterItsRunUntilItsUndrainIsAccepted) {
  // Given one leaf per pod in change or out of service, when alice's drain of d1 (declaring
  // out_of_service: [d1]) is accepted, then after her run has ended bob's drain of d2 is refused
  // (exit 3, nothing touched) naming d1 as out of service and alice's change, and `fabgate
  // status --json` lists d1 out of service; once carol's undrain of d1 (back_in_service: [d1])
  // is accepted, bob's drain runs. A rehearsal of the drain changes nothing in service. Alice's
  // controller is named by $FABGATE_CONTROLLER.
  std::string drain = slow_change("c", "d1", 0) + "out_of_service: [d1]\n";
  commit_fabric(kOneLeafPerPod, 0, "", drain);
  std::string undrain =
      "id: u\ntitle: undrain d1\ntargets: [d1]\n"
      "bounds: {max_targets: 1, step_timeout: 30s, deadline: 1m}\n"
      "steps:\n  - device: d1\n    run: cp {home}/d1.bak {home}/d1.conf\n"
      "rollback:\n  - device: d1\n    run: echo shutdown >> {home}/d1.conf\n"
      "acceptance:\n  probes:\n    - name: nothing-broken\n"
      "      layer: workload\n      host: d1\n"
      "      run: \"! grep -q broken {home}/d1.conf {home}/d2.conf\"\n"
      "      timeout: 10s\n"
      "back_in_service: [d1]\n";
  repo_.write("changes/u.yaml",
              std::regex_replace(undrain, std::regex("\\{home\\}"), sshd_->home()));
  repo_.commit_all("undrain d1");

  auto status_json = [&] {  // stdout alone: the JSON document
    auto status = repo_.run(shell_quoted(kFabgate) + " status --json 2>/dev/null");
    EXPECT_EQ(status.exit_code, 0) << status.output;
    return nlohmann::json::parse(status.output, nullptr, false);
  };
  auto rehearsed = fabgate("rehearse c --operator alice");
  ASSERT_EQ(rehearsed.exit_code, 0) << rehearsed.output;
  EXPECT_EQ(status_json()["out_of_service"], nlohmann::json::array()) << rehearsed.output;

  auto alice = fabgate_with("FABGATE_CONTROLLER=ci-runner-9", "apply c --operator alice");
  ASSERT_EQ(alice.exit_code, 0) << alice.output;
  EXPECT_NE(alice.output.find("d1 out of service in /fabgate/test-fabric: counted by the budgets "
                              "until a change with back_in_service lists it is accepted"),
            std::string::npos)
      << alice.output;
  EXPECT_EQ(claims_in_pod(), 0u) << "the accepted run kept its claim";

  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;
  EXPECT_NE(bob.output.find("budget leaves-per-pod (pod=p1) allows 1 of 2 devices in change or "
                            "out of service at once; this change needs d2; d1 (out of service "
                            "since "),
            std::string::npos)
      << bob.output;
  EXPECT_NE(bob.output.find(", left out by run "), std::string::npos) << bob.output;
  EXPECT_NE(bob.output.find(": alice, change c, on ci-runner-9)"), std::string::npos) << bob.output;
  EXPECT_EQ(config("d2"), "mtu 9000\n") << "bob's refused run touched d2";

  auto fleet = status_json();
  ASSERT_TRUE(fleet.is_object());
  ASSERT_EQ(fleet["out_of_service"].size(), 1u) << fleet.dump();
  EXPECT_EQ(fleet["out_of_service"][0].value("device", ""), "d1");
  EXPECT_EQ(fleet["out_of_service"][0].value("change", ""), "c");
  EXPECT_EQ(fleet["out_of_service"][0].value("operator", ""), "alice");
  EXPECT_EQ(fleet["out_of_service"][0].value("controller", ""), "ci-runner-9");
  ASSERT_EQ(fleet["budgets"].size(), 1u) << fleet.dump();
  EXPECT_EQ(fleet["budgets"][0]["out_of_service"], nlohmann::json::array({"d1"}));
  EXPECT_EQ(fleet["budgets"][0].value("headroom", -1), 0) << fleet.dump();

  auto carol = fabgate("apply u --operator carol");
  ASSERT_EQ(carol.exit_code, 0) << carol.output;
  EXPECT_NE(carol.output.find("d1 back in service in /fabgate/test-fabric"), std::string::npos)
      << carol.output;
  auto again = fabgate("apply b --operator bob");
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

TEST_F(BudgetsEndToEnd, AChangeThatRaisesItsOwnBudgetIsJudgedByTheBudgetBeforeIt) {
  // Given one leaf per pod on main, when a pull request raises the budget to two and, in the
  // same commit, drains both leaves, then apply judges it by main's budget: it is refused
  // (exit 3) with both devices untouched, and the budget edit is named as a policy edit.
  commit_fabric(kOneLeafPerPod, 0);
  repo_.run("git checkout -q -b proposal");
  repo_.write("policies/budgets.yaml",
              "budgets:\n  - name: leaves-per-pod\n    role: leaf\n    per: pod\n"
              "    max_in_change: 2\n");
  std::string both = std::regex_replace(slow_change("c", "d1", 0), std::regex("targets: \\[d1\\]"),
                                        "targets: [d1, d2]");
  both = std::regex_replace(both, std::regex("max_targets: 1"), "max_targets: 2");
  repo_.write("changes/c.yaml", std::regex_replace(both, std::regex("\\{home\\}"), sshd_->home()));
  repo_.commit_all("drain both leaves of p1, and raise the budget to allow it");

  auto out = fabgate("apply c --operator mallory");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("the change's own targets exceed budget leaves-per-pod (pod=p1): it "
                            "changes 2 of 2 devices, at most 1 may be in change at once"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(config("d2"), "mtu 9000\n");
  auto validated = fabgate("validate");
  EXPECT_NE(validated.output.find("policies/budgets.yaml: edited"), std::string::npos)
      << validated.output;
}

TEST_F(BudgetsEndToEnd, ARunKilledMidChangeKeepsItsClaimUntilRecover) {
  // Given alice's run killed (SIGKILL) while its step runs on d1, then its claim outlives its
  // lease: bob's run on d2 is refused naming alice's run as dead with `fabgate recover`; after
  // recover rolls d1 back and releases the claim, bob's change runs.
  commit_fabric(kOneLeafPerPod, 20, "", "", "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(claims_in_pod(), 1u);
  // Its alive key goes with its lease (3 s); the claim stays.
  ASSERT_TRUE(kill_and_outlive_its_lease(alice, kPrefix));
  EXPECT_EQ(claims_in_pod(), 1u) << "a dead run's claim lapsed with its lease";

  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;
  EXPECT_NE(bob.output.find("holder dead or without a lease: devices in unknown state until "
                            "`fabgate recover "),
            std::string::npos)
      << bob.output;

  auto crashed = bundles();
  ASSERT_FALSE(crashed.empty());
  auto recovered = fabgate("recover " + shell_quoted(crashed.front().string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(claims_in_pod(), 0u) << recovered.output;

  auto again = fabgate("apply b --operator bob");
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

TEST_F(BudgetsEndToEnd,
       ARunKilledMidChangeIsRecoveredFromAnotherControllerThroughTheSharedJournal) {
  // Given alice's run SIGKILLed while its step runs on d1, and her controller's disk (its
  // evidence folder) gone, when a second controller (another clone of the intent repository,
  // its own evidence folder) runs `fabgate recover RUN`, then the journal and the baseline come
  // from etcd: d1 is rolled back and the baseline verified (exit 4), the claim is released and
  // the journal erased from etcd. While alice's run was alive the same command was refused.
  commit_fabric(kOneLeafPerPod, 20, "", "", "3s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));
  auto crashed = bundles();
  ASSERT_EQ(crashed.size(), 1u);
  const std::string folder = crashed.front().filename().string();
  const std::string run_id = run_id_of(crashed.front());
  auto journal_keys = [&] {
    auto client = store();
    auto range = client.get_prefix(std::string(kPrefix) + "/journal/" + run_id + "/");
    return range ? range->kvs.size() : 0;
  };
  EXPECT_GT(journal_keys(), 3u) << "the run's journal is not in etcd";

  TempDir second("fabgate-controller2");
  const std::string clone = second_controller(second.path());
  ASSERT_FALSE(clone.empty());
  auto recover_there = [&] { return fabgate_in(clone, "recover " + run_id + " --operator carol"); };
  auto too_early = recover_there();
  EXPECT_EQ(too_early.exit_code, 3) << too_early.output;
  EXPECT_NE(too_early.output.find("run " + run_id + " is alive"), std::string::npos)
      << too_early.output;

  ASSERT_TRUE(kill_and_outlive_its_lease(alice, kPrefix));
  // The dead controller's disk is gone with it.
  std::filesystem::rename(evidence_, evidence_ + "-lost");

  auto recovered = recover_there();
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_NE(recovered.output.find("journal ("), std::string::npos) << recovered.output;
  EXPECT_NE(recovered.output.find("copied from etcd " + std::string(kPrefix) + "/journal/" +
                                  run_id + "/"),
            std::string::npos)
      << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n") << "d1 was not rolled back";
  EXPECT_EQ(claims_in_pod(), 0u) << recovered.output;
  EXPECT_EQ(journal_keys(), 0u) << "a recovered run's journal stayed in etcd";
  const std::filesystem::path there = clone + "/evidence-out/c/" + folder;
  EXPECT_TRUE(std::filesystem::exists(there / "manifest.json")) << recovered.output;
  EXPECT_TRUE(std::filesystem::exists(there / "snapshots/pre.json"));
  auto source = read_json(there / "shared-journal.json");
  EXPECT_EQ(source.value("key_prefix", ""), std::string(kPrefix) + "/journal/" + run_id + "/")
      << source.dump();
  auto manifest = read_json(there / "manifest.json");
  EXPECT_EQ(manifest.value("exit_code", -1), 4) << manifest.dump();
}

// A change that takes `device` out of service for 2 s within its step, writing when it went
// out and came back into the pod's shared log (nanoseconds since the epoch).
std::string drain_change(const std::string& id, const std::string& device) {
  return "id: " + id + "\ntitle: drain " + device + "\ntargets: [" + device +
         "]\nbounds: {max_targets: 1, step_timeout: 30s, deadline: 1m}\nsteps:\n  - device: " +
         device + "\n    run: echo \"out " + device +
         " $(date +%s%N)\" >> {home}/pod.log && sleep 2 "
         "&& echo \"in " +
         device + " $(date +%s%N)\" >> {home}/pod.log\nrollback:\n  - device: " + device +
         "\n    run: echo \"rollback " + device +
         "\" >> {home}/pod.log\n"
         "acceptance:\n  probes:\n    - name: reachable\n      layer: workload\n      host: " +
         device + "\n      run: \"true\"\n      timeout: 10s\n";
}

TEST_F(BudgetsEndToEnd, TwoDrainsStartedTogetherWithWaitNeverTakeThePodOutTogether) {
  // Given one leaf per pod in change at once, when alice's drain of d1 and bob's drain of d2 are
  // started at the same instant with --wait, over three rounds, then both succeed every round,
  // one of them after waiting in the queue, and the pod's log (written by the devices) never
  // shows both leaves out at once.
  commit_fabric(
      kOneLeafPerPod, 0,
      std::regex_replace(drain_change("b", "d2"), std::regex("\\{home\\}"), sshd_->home()),
      drain_change("c", "d1"));
  int waited = 0;
  for (int round = 0; round < 3; ++round) {
    auto alice = start_fabgate("apply c --operator alice --wait 2m", repo_.file("alice.log"));
    auto bob = start_fabgate("apply b --operator bob --wait 2m", repo_.file("bob.log"));
    int alice_exit = wait_for(alice, 180s);
    int bob_exit = wait_for(bob, 180s);
    std::string alice_log = read_file(repo_.file("alice.log"));
    std::string bob_log = read_file(repo_.file("bob.log"));
    ASSERT_EQ(alice_exit, 0) << alice_log;
    ASSERT_EQ(bob_exit, 0) << bob_log;
    waited += alice_log.find("in the queue") != std::string::npos;
    waited += bob_log.find("in the queue") != std::string::npos;
  }
  EXPECT_GE(waited, 1) << "no run ever waited: the test did not make them meet";
  EXPECT_EQ(claims_in_pod(), 0u);

  // The devices' own log: at most one leaf out of service at any moment.
  std::istringstream log(read_file(sshd_->home() + "/pod.log"));
  std::string word, device;
  long long at = 0;
  std::set<std::string> out;
  int drains = 0;
  while (log >> word >> device) {
    if (word == "rollback") continue;
    ASSERT_TRUE(log >> at);
    if (word == "out") {
      out.insert(device);
      ++drains;
      EXPECT_EQ(out.size(), 1u) << "both leaves of the pod out of service at " << at << ":\n"
                                << read_file(sshd_->home() + "/pod.log");
    } else {
      out.erase(device);
    }
  }
  EXPECT_EQ(drains, 6);
}

// Runs that wait in the queue (--wait) and do not get through: alice's change on d1 holds the
// pod's one unit until the test lets it go, and bob's change on d2 waits behind it.
class BudgetsQueueEndToEnd : public BudgetsEndToEnd {
 protected:
  // Alice's change c on d1: its step changes d1 and then holds until the test creates
  // {home}/let-go (at most 90 s, so a test that dies leaves nothing running for long).
  static std::string held_change() {
    return "id: c\ntitle: drain d1\ntargets: [d1]\n"
           "bounds: {max_targets: 1, step_timeout: 2m, deadline: 3m}\nsteps:\n  - device: d1\n"
           "    run: cp {home}/d1.conf {home}/d1.bak && echo 'shutdown' >> {home}/d1.conf && "
           "i=0; while [ ! -f {home}/let-go ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i+1)); done\n"
           "rollback:\n  - device: d1\n    run: cp {home}/d1.bak {home}/d1.conf\n"
           "acceptance:\n  probes:\n    - name: nothing-broken\n      layer: workload\n"
           "      host: d1\n      run: \"! grep -q broken {home}/d1.conf {home}/d2.conf\"\n"
           "      timeout: 10s\n";
  }

  // Commits the fabric and starts alice's run; returns once it holds the pod's claim.
  ChildProcess start_alice_holding_the_pod() {
    commit_fabric(kOneLeafPerPod, 0, "", held_change());
    auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
    EXPECT_TRUE(eventually([&] { return claims_in_pod() == 1; }, 60s))
        << read_file(repo_.file("alice.log"));
    return alice;
  }

  // Lets alice's step end; her run is then accepted and releases the pod.
  void let_alice_finish(ChildProcess& alice) {
    write_file(sshd_->home() + "/let-go", "");
    EXPECT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
    EXPECT_EQ(claims_in_pod(), 0u) << read_file(repo_.file("alice.log"));
  }

  // Keys under the fabric's prefix + `what` ("/queue/"), or a failure naming the read.
  std::vector<std::string> keys_under(const std::string& what) {
    auto client = store();
    auto range = client.get_prefix(kPrefix + what);
    EXPECT_TRUE(range) << what << ": " << range.error().message;
    std::vector<std::string> keys;
    if (range)
      for (const auto& kv : range->kvs) keys.push_back(kv.key);
    return keys;
  }

  // Bob's run while queued: its queue entry once it exists (60 s at most), else nullopt.
  std::optional<etcd::KeyValue> queued_entry() {
    std::optional<etcd::KeyValue> entry;
    eventually(
        [&] {
          auto client = store();
          auto range = client.get_prefix(std::string(kPrefix) + "/queue/");
          if (range && !range->kvs.empty()) entry = range->kvs.front();
          return entry.has_value();
        },
        60s);
    return entry;
  }

  // Bob's run (bundle `bob_bundle`) left nothing: d2 as it was, no step or rollback sent to it,
  // no queue entry, no claim, no fleet lock and no alive key of his; alice's claim untouched.
  void expect_bob_left_nothing(const std::filesystem::path& bob_bundle) {
    const std::string run = run_id_of(bob_bundle);
    EXPECT_EQ(config("d2"), "mtu 9000\n") << "bob's queued run touched d2";
    for (const char* purpose : {"step", "rollback"})
      EXPECT_TRUE(commands_in(bob_bundle, purpose, "d2").empty()) << purpose << " sent to d2";
    EXPECT_TRUE(keys_under("/queue/").empty()) << "bob's queue entry stayed";
    for (const auto& key : keys_under("/")) {
      EXPECT_EQ(key.find(run), std::string::npos)
          << "bob's run " << run << " left " << key << " in the store";
    }
    EXPECT_TRUE(keys_under("/locks/d2").empty()) << "bob's fleet lock on d2 stayed";
    EXPECT_EQ(claims_in_pod(), 1u) << "alice's claim went with bob's run";
  }
};

TEST_F(BudgetsQueueEndToEnd, ARunWhoseWaitRunsOutInTheQueueIsRefusedAndLeavesTheQueue) {
  // Given alice's run holding pod p1's one unit, when bob's run on d2 waits with --wait 3s and
  // alice still holds it after that, then bob's run is refused (exit 3) saying how long it
  // waited and what it still waits for, nothing is sent to d2, and his queue entry, fleet lock
  // and every other key of his run are gone from the store while alice's run goes on.
  auto alice = start_alice_holding_the_pod();
  ASSERT_FALSE(HasFailure());
  auto bob = start_fabgate("apply b --operator bob --wait 3s", repo_.file("bob.log"));
  const int bob_exit = wait_for(bob, 120s);
  const std::string bob_log = read_file(repo_.file("bob.log"));
  ASSERT_EQ(bob_exit, 3) << bob_log;
  EXPECT_NE(bob_log.find("waited 3s (--wait) and still: budget leaves-per-pod (pod=p1) allows 1 "
                         "of 2 devices in change or out of service at once; this change needs "
                         "d2; held by run "),
            std::string::npos)
      << bob_log;
  EXPECT_NE(bob_log.find("(alice, change c, on " + host_name() + ", alive, holds d1)"),
            std::string::npos)
      << bob_log;
  const auto bob_bundle = evidence_of(CommandOutput{bob_exit, bob_log});
  auto coordination = read_json(bob_bundle / "coordination.json");
  EXPECT_TRUE(coordination.contains("queued_at"))
      << "bob never joined the queue: " << coordination.dump();
  EXPECT_TRUE(process_alive(alice.pid())) << "alice's run ended: the store shows nothing of hers";
  expect_bob_left_nothing(bob_bundle);
  let_alice_finish(alice);
}

TEST_F(BudgetsQueueEndToEnd, ARunInterruptedWhileQueuedStopsAtOnceAndLeavesTheQueue) {
  // Given bob's run waiting in the queue (--wait 2m) behind alice's, when it gets SIGINT
  // (Ctrl-C), then it stops waiting at once and is refused (exit 3) naming the signal and what
  // it waited for, long before its 2 minutes; nothing is sent to d2, and its queue entry, fleet
  // lock and alive key are gone; alice's run goes on and is accepted.
  auto alice = start_alice_holding_the_pod();
  ASSERT_FALSE(HasFailure());
  auto bob = start_fabgate("apply b --operator bob --wait 2m", repo_.file("bob.log"));
  ASSERT_TRUE(queued_entry()) << read_file(repo_.file("bob.log"));
  ASSERT_EQ(::kill(bob.pid(), SIGINT), 0);
  const auto signalled = std::chrono::steady_clock::now();
  const int bob_exit = wait_for(bob, 90s);
  const auto stopped_after = std::chrono::steady_clock::now() - signalled;
  const std::string bob_log = read_file(repo_.file("bob.log"));
  ASSERT_EQ(bob_exit, 3) << bob_log;
  // Its end (releasing the device-side and fleet locks, sealing the bundle) takes a few
  // seconds on a loaded machine; a run that went on waiting would take 2 minutes.
  EXPECT_LT(stopped_after, 30s) << bob_log;
  EXPECT_NE(bob_log.find("stopped waiting in the queue: SIGINT received; still: budget "
                         "leaves-per-pod (pod=p1) allows 1 of 2 devices"),
            std::string::npos)
      << bob_log;
  expect_bob_left_nothing(evidence_of(CommandOutput{bob_exit, bob_log}));
  let_alice_finish(alice);
}

TEST_F(BudgetsQueueEndToEnd, ARunWhoseLeaseIsRevokedWhileQueuedStopsWithoutTouchingAnything) {
  // Given bob's run waiting in the queue (--wait 2m) behind alice's, when its lease is revoked
  // in the store (what other controllers then see as a dead run), then its next renewal finds
  // the lease gone and the run stops waiting: refused (exit 3) naming the expired lease, the
  // coordination-lease gate failed, its fence closed in coordination.json, nothing sent to d2,
  // and nothing of its run left in the store; alice's run goes on and is accepted. Its
  // device-side lock on d2 stays (a run past its lease sends nothing, not even a release), and
  // the run says so, naming --take-over-locks, with which the next run on d2 then passes.
  auto alice = start_alice_holding_the_pod();
  ASSERT_FALSE(HasFailure());
  auto bob = start_fabgate("apply b --operator bob --wait 2m", repo_.file("bob.log"));
  auto entry = queued_entry();
  ASSERT_TRUE(entry) << read_file(repo_.file("bob.log"));
  ASSERT_NE(entry->lease, 0) << "the queue entry is not on the run's lease";
  {
    auto client = store();
    auto revoked = client.revoke(entry->lease);
    ASSERT_TRUE(revoked) << revoked.error().message;
  }
  // The 10 s lease is renewed every 3.3 s: the first renewal after the revoke finds it gone.
  const int bob_exit = wait_for(bob, 90s);
  const std::string bob_log = read_file(repo_.file("bob.log"));
  ASSERT_EQ(bob_exit, 3) << bob_log;
  EXPECT_NE(bob_log.find("stopped waiting in the queue: the coordination store says lease " +
                         std::to_string(entry->lease) + " of this run has expired"),
            std::string::npos)
      << bob_log;
  EXPECT_NE(bob_log.find("coordination-lease"), std::string::npos) << bob_log;
  const auto bob_bundle = evidence_of(CommandOutput{bob_exit, bob_log});
  auto coordination = read_json(bob_bundle / "coordination.json");
  EXPECT_EQ(coordination["fence"].value("closed", false), true) << coordination.dump();
  EXPECT_NE(bob_log.find("the targets' device-side locks stay held by this run: it lost its "
                         "coordination lease"),
            std::string::npos)
      << bob_log;
  EXPECT_NE(bob_log.find("the next run there may take them over with --take-over-locks"),
            std::string::npos)
      << bob_log;
  expect_bob_left_nothing(bob_bundle);
  let_alice_finish(alice);
  auto next = fabgate("apply b --operator bob --take-over-locks");
  EXPECT_EQ(next.exit_code, 0) << next.output;
}

TEST_F(BudgetsEndToEnd, AWaitThatIsNotADurationIsInvalidInputBeforeAnythingIsRead) {
  // Given a fabric with a coordination store, when apply is given --wait 0s, abc or 25h (the
  // wait is 1ms-24h), then it exits 2 naming the value and the accepted form, before anything
  // is read: even a change that does not exist is not looked up, no evidence folder is
  // written, and nothing is written to the store.
  commit_fabric(kOneLeafPerPod, 0);
  for (const char* wait : {"0s", "abc", "25h"}) {
    auto run = fabgate("apply no-such-change --operator bob --wait " + std::string(wait));
    EXPECT_EQ(run.exit_code, 2) << wait << ": " << run.output;
    EXPECT_NE(run.output.find("--wait " + std::string(wait) + ": not a duration"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("at most 24h"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("no-such-change"), std::string::npos)
        << "the intent was read: " << run.output;
  }
  EXPECT_FALSE(std::filesystem::exists(evidence_)) << "a run was started";
  auto client = store();
  auto written = client.get_prefix(std::string(kPrefix) + "/");
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_TRUE(written->kvs.empty()) << written->kvs.front().key;
}

TEST_F(BudgetsEndToEnd, ARunCutOffFromEtcdStopsSendingAndLeavesTheRevertToItsTimer) {
  // Given alice's change on d1 with a 12 s confirm timer and a 10 s settle, and a 3 s lease,
  // when the coordination store stops answering during the settle (the member is frozen:
  // SIGSTOP), then within the TTL the run stops, sends nothing more (no rollback from the
  // controller), exits 5 naming d1 and its timer; the device-side timer reverts d1. Once the
  // store answers again, bob's run on d2 is refused (alice's claim stays, her run shown dead)
  // until `fabgate recover` of alice's run releases it.
  const pid_t member = etcd_->member(0).process.pid();
  cut_off_during_settle([&] { ASSERT_EQ(::kill(member, SIGSTOP), 0); },
                        [&] { ::kill(member, SIGCONT); });
}

TEST_F(BudgetsEndToEnd, ARunWhoseEndCannotReachEtcdHandsOffAndItsRecoverRestoresTheBaseline) {
  // Given alice's change on d1, verified while the store is frozen (SIGSTOP) from her
  // acceptance probe on (30 s lease), then her run cannot record its end under its lease: from
  // where it stands it cannot tell a frozen store from being cut off while other controllers
  // see its lease lapse and take it over, so it does not claim success: it ends NOT RESTORED
  // (exit 5), "may have been taken over: its end could not be recorded", naming `fabgate
  // recover`, and releases nothing (her lock and claim still refuse bob, exit 3, once the
  // store answers).
  // `fabgate recover BUNDLE` then takes the run over and restores d1's baseline (exit 4), the
  // store is left clean, and bob's change runs. (On d9e2c31 the run exited 0 here, which the
  // fault-schedule checker counts as a violation when the controller was in fact cut off.)
  std::string c = slow_change("c", "d1", 0);
  // The probe marks (and lingers) only after the step: d1.bak exists from the step on.
  c = std::regex_replace(c, std::regex("      run: \"! grep"),
                         "      run: \"if [ -f {home}/d1.bak ]; then touch {home}/probing; "
                         "sleep 3; fi; ! grep");
  commit_fabric(kOneLeafPerPod, 0, "", c, "30s");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  const std::filesystem::path probing = sshd_->home() + "/probing";
  ASSERT_TRUE(eventually(
      [&] { return std::filesystem::exists(probing) || !process_alive(alice.pid()); }, 60s));
  ASSERT_TRUE(std::filesystem::exists(probing)) << read_file(repo_.file("alice.log"));
  const pid_t member = etcd_->member(0).process.pid();
  ASSERT_EQ(::kill(member, SIGSTOP), 0);
  int alice_exit = wait_for(alice, 120s);
  ::kill(member, SIGCONT);
  std::string alice_log = read_file(repo_.file("alice.log"));
  ASSERT_EQ(alice_exit, 5) << alice_log;
  auto ended = bundles();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_NE(alice_log.find("may have been taken over: its end could not be recorded in the "
                           "coordination store"),
            std::string::npos)
      << alice_log;
  EXPECT_NE(alice_log.find("fabgate recover " + shell_quoted(ended.front().string())),
            std::string::npos)
      << alice_log;

  ASSERT_TRUE(eventually([&] { return store().get("fabgate-ready").ok(); }, 30s));
  EXPECT_EQ(claims_in_pod(), 1u) << "a run that may have been taken over released its claim";
  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;

  auto recovered = fabgate("recover " + shell_quoted(ended.front().string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1").find("shutdown"), std::string::npos)
      << "recover left the change on d1: " << config("d1");
  auto client = store();
  for (const char* what : {"/locks/", "/budgets/leaves-per-pod/pod=p1/claims/", "/journal/"}) {
    auto left = client.get_prefix(kPrefix + std::string(what));
    ASSERT_TRUE(left) << left.error().message;
    EXPECT_TRUE(left->kvs.empty()) << what << " still holds " << left->kvs.front().key;
  }
  auto bob_again = fabgate("apply b --operator bob");
  EXPECT_EQ(bob_again.exit_code, 0) << bob_again.output;
}

// The budgets fixture in a network namespace of the test's own (the links it adds never show in
// the host's namespace, whose routes the "devices" of other tests running at once snapshot),
// with the store's member in another namespace, behind a veth link the test can cut.
class BudgetsBehindALink : public BudgetsEndToEnd {
 protected:
  void SetUp() override {
    if (auto why = NetnsLink::unavailable()) GTEST_SKIP() << *why;
    network_ = std::make_unique<PrivateNetwork>();
    ASSERT_EQ(network_->failure(), "");
    BudgetsEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    etcd_ =
        std::make_unique<etcd::testing::Cluster>(1, nullptr, etcd::testing::Network::behind_link);
    ASSERT_TRUE(etcd_->ready()) << "etcd did not start behind its link: " << etcd_->log(0);
  }

  // Dies first (members of the derived class go before the base's), so the sshd and etcd the
  // base then stops were started in it and the thread is back in its own namespace.
  std::unique_ptr<PrivateNetwork> network_;
};

TEST_F(BudgetsBehindALink, ARunWhoseLinkToEtcdGoesDownStopsSendingAndLeavesTheRevertToItsTimer) {
  // Given the store's member in a network namespace of its own, reached only through a veth
  // link, and alice's change on d1 (12 s confirm timer, 10 s settle, 3 s lease), when the link
  // goes down during the settle (the member runs on; the controller's connections to it time
  // out), then the run stops within the bound, sends nothing more (no rollback from the
  // controller), exits 5 naming d1 and its timer, keeps its claim; the device-side timer
  // reverts d1. Once the link is up again, bob's run on d2 is refused while alice's claim
  // stays, `fabgate recover` of alice's run ends 4 and releases it, and bob's run passes.
  const NetnsLink& link = *etcd_->link();
  cut_off_during_settle([&] { ASSERT_EQ(link.set_down(), ""); },
                        [&] { ASSERT_EQ(link.set_up(), ""); });
}

TEST_F(BudgetsEndToEnd, ARunGoesOnWhenTheEtcdLeaderIsKilledDuringItsChange) {
  // Given a three-member etcd cluster, when its leader is killed (SIGKILL) while alice's step
  // runs on d1, then her run goes on through the two other members: accepted (exit 0), its
  // fence never closed, its claim released at the end.
  if (!std::filesystem::exists("/usr/bin/etcdctl"))
    GTEST_SKIP() << "/usr/bin/etcdctl is missing: scripts/bootstrap --tests installs etcd-client";
  etcd_ = std::make_unique<etcd::testing::Cluster>(3);
  ASSERT_TRUE(etcd_->ready()) << "etcd did not start: " << etcd_->log(0);
  commit_fabric(kOneLeafPerPod, 8);
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));

  const int leader = etcd_->leader();
  ASSERT_GE(leader, 0) << "no member of the cluster says it leads";
  ASSERT_EQ(::kill(etcd_->member(leader).process.pid(), SIGKILL), 0);

  ASSERT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
  auto bundle = evidence_of(CommandOutput{0, read_file(repo_.file("alice.log"))});
  auto coordination = read_json(bundle / "coordination.json");
  EXPECT_EQ(coordination["fence"].value("closed", true), false) << coordination.dump();
  EXPECT_EQ(coordination.value("released", -1), 1) << coordination.dump();
  EXPECT_EQ(claims_in_pod(), 0u);
}

TEST_F(BudgetsEndToEnd, RecoverReleasesTheClaimInTheStoreTheRunClaimedIn) {
  // Given a pull request that points its own `coordination:` at a store nobody runs (a closed
  // port), then apply claims in the trusted ref's store, not the commit's; when the run is
  // SIGKILLed mid-change, recover too reads the trusted ref's store and releases the claim
  // there.
  commit_fabric(kOneLeafPerPod, 20, "", "", "3s");
  repo_.run("git checkout -q -b proposal");
  std::string settings = read_file(repo_.file("fabgate.yaml"));
  settings = std::regex_replace(
      settings, std::regex("endpoints: \\[[^\\]]*\\]"),
      "endpoints: [http://127.0.0.1:" + std::to_string(reserve_test_port()) + "]");
  repo_.write("fabgate.yaml", settings);
  repo_.commit_all("point the coordination store elsewhere");

  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(claims_in_pod(), 1u) << "apply did not claim in the trusted ref's store";
  ASSERT_EQ(::kill(alice.pid(), SIGKILL), 0);
  ASSERT_EQ(wait_for(alice, 30s), 128 + SIGKILL);

  auto crashed = bundles();
  ASSERT_EQ(crashed.size(), 1u);
  auto recovered = fabgate("recover " + shell_quoted(crashed.front().string()));
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(claims_in_pod(), 0u) << "recover released in the commit's store: " << recovered.output;
}

}  // namespace
}  // namespace fabgate::testing
