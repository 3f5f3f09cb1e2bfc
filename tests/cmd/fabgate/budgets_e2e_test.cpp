// Redundancy budgets across controllers (docs/coordination.md) through the real fabgate binary,
// a real git repository, a real sshd and the real Debian etcd 3.4: two "leaves" d1 and d2 of pod
// p1, a budget of one leaf per pod in change at once, and two runs that would together take the
// whole pod out.

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>

#include "adapters/etcd/etcd_client.h"
#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

const char* kPrefix = "/fabgate/test-fabric";
const char* kOneLeafPerPod =
    "budgets:\n  - name: leaves-per-pod\n    role: leaf\n    per: pod\n    max_in_change: 1\n";

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

class BudgetsEndToEnd : public FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!std::filesystem::exists(etcd::testing::kEtcd))
      GTEST_SKIP() << etcd::testing::kEtcd
                   << " is missing: scripts/bootstrap --tests installs etcd-server";
    etcd_ = std::make_unique<etcd::testing::Cluster>(1);
    ASSERT_TRUE(etcd_->ready()) << "etcd did not start: " << etcd_->log(0);
  }

  // A change on `device` whose step takes `seconds` after changing its configuration; its
  // probe holds while no configuration says 'broken'.
  static std::string slow_change(const std::string& id, const std::string& device, int seconds) {
    return "id: " + id + "\ntitle: drain " + device + "\ntargets: [" + device +
           "]\nbounds: {max_targets: 1, step_timeout: 30s, deadline: 1m}\nsteps:\n  - device: " +
           device + "\n    run: cp {home}/" + device + ".conf {home}/" + device +
           ".bak && echo 'shutdown' >> {home}/" + device + ".conf && sleep " +
           std::to_string(seconds) + "\nrollback:\n  - device: " + device + "\n    run: cp {home}/" +
           device + ".bak {home}/" + device +
           ".conf\nacceptance:\n  probes:\n    - name: nothing-broken\n      layer: workload\n"
           "      host: " +
           device + "\n      run: \"! grep -q broken {home}/d1.conf {home}/d2.conf\"\n"
           "      timeout: 10s\n";
  }

  // The intent: d1 and d2 leaves of pod p1, `budgets` as policies/budgets.yaml, change c on d1
  // (taking `seconds`) and change b on d2, the coordination store this test's etcd.
  void commit_fabric(const std::string& budgets, int seconds, const std::string& b_change = "") {
    repo_.write("policies/budgets.yaml", budgets);
    commit_intent(slow_change("c", "d1", seconds),
                  "coordination:\n  endpoints: [" + etcd_->endpoints()[0] + "]\n  prefix: " +
                      kPrefix + "\n  lease_ttl: 3s\n");
    std::string inventory = read_file(repo_.file("inventory.yaml"));
    inventory = std::regex_replace(inventory, std::regex("role: leaf\n"),
                                   "role: leaf\n    labels: {pod: p1}\n");
    repo_.write("inventory.yaml", inventory);
    std::string b = b_change.empty() ? slow_change("b", "d2", 0) : b_change;
    repo_.write("changes/b.yaml", std::regex_replace(b, std::regex("\\{home\\}"), sshd_->home()));
    repo_.commit_all("pod p1 and its budgets");
  }

  etcd::EtcdClient store() { return etcd::testing::open_client(etcd_->endpoints()); }
  std::size_t claims_in_pod() {
    auto client = store();
    auto range = client.get_prefix(std::string(kPrefix) + "/budgets/leaves-per-pod/pod=p1/claims/");
    return range ? range->kvs.size() : 0;
  }

  std::unique_ptr<etcd::testing::Cluster> etcd_;
};

TEST_F(BudgetsEndToEnd, TheSecondLeafOfAPodIsRefusedWhileTheFirstIsInChange) {
  // Given one leaf per pod in change at once, when alice's run drains d1 and, while it runs,
  // bob's run (another process) drains d2 of the same pod, then bob is refused before anything
  // is touched (exit 3) naming alice's run, change and controller; once alice's run ends its
  // claim is released and bob's change runs.
  commit_fabric(kOneLeafPerPod, 6);
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return claims_in_pod() == 1; }, 30s))
      << read_file(repo_.file("alice.log"));

  auto bob = fabgate("apply b --operator bob");
  EXPECT_EQ(bob.exit_code, 3) << bob.output;
  EXPECT_NE(bob.output.find("budget leaves-per-pod (pod=p1) allows 1 of 2 devices in change at "
                            "once; this change needs d2; held by run "),
            std::string::npos)
      << bob.output;
  EXPECT_NE(bob.output.find("(alice, change c, on " + host_name() + ", alive, holds d1)"),
            std::string::npos)
      << bob.output;
  EXPECT_EQ(config("d2"), "mtu 9000\n") << "bob's refused run touched d2";

  ASSERT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
  EXPECT_EQ(claims_in_pod(), 0u) << "alice's run ended without releasing its claim";
  auto alice_bundle = evidence_of(CommandOutput{0, read_file(repo_.file("alice.log"))});
  auto coordination = read_json(alice_bundle / "coordination.json");
  EXPECT_EQ(coordination.value("released", -1), 1) << coordination.dump();
  EXPECT_EQ(coordination["store"].value("prefix", ""), kPrefix) << coordination.dump();

  auto again = fabgate("apply b --operator bob");
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

TEST_F(BudgetsEndToEnd, AChangeThatRaisesItsOwnBudgetIsJudgedByTheBudgetBeforeIt) {
  // Given one leaf per pod on main, when a commit raises the budget to two and, in the same
  // commit, drains both leaves, then apply judges it by the budget of the commit before it: it
  // is refused (exit 3) with both devices untouched, and the budget edit is named as a policy
  // edit.
  commit_fabric(kOneLeafPerPod, 0);
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
  commit_fabric(kOneLeafPerPod, 20);
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(claims_in_pod(), 1u);
  ASSERT_EQ(::kill(alice.pid(), SIGKILL), 0);
  ASSERT_EQ(wait_for(alice, 30s), 128 + SIGKILL);
  // Its alive key goes with its lease (3 s); the claim stays.
  ASSERT_TRUE(eventually(
      [&] {
        auto client = store();
        auto alive = client.get_prefix(std::string(kPrefix) + "/runs/");
        return alive && alive->kvs.empty();
      },
      30s));
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

}  // namespace
}  // namespace fabgate::testing
