// `fabgate status` (the fleet view, docs/coordination.md) through the real fabgate binary, a
// real git repository, a real sshd and the real Debian etcd 3.4: a claim taken by a real
// `fabgate apply`, seen alive, then dead once that run is killed, then gone after the recover
// command the view prints; and the view's refusals without settings or without a store.

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>

#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/cmd/fabgate/coordinated_fixture.h"

namespace fabgate::testing {
namespace {

using namespace std::chrono_literals;

const char* kPrefix = "/fabgate/status-fabric";

struct StatusOutput {
  int exit_code = -1;
  nlohmann::json document;  // discarded when stdout was not one JSON document
  std::string errors;       // stderr
};

class StatusEndToEnd : public CoordinatedEndToEnd {
 protected:
  // d1 and d2 leaves of pod p1 under one leaf per pod in change at once; change c on d1 holds
  // its step for `seconds`; the store this test's etcd, with a 3 s run lease.
  void commit_fabric(int seconds) {
    repo_.write("policies/budgets.yaml",
                "budgets:\n  - name: leaves-per-pod\n    role: leaf\n    per: pod\n"
                "    max_in_change: 1\n");
    commit_intent(change("echo shutdown >> {home}/d1.conf && sleep " + std::to_string(seconds),
                         "cp {home}/d1.bak {home}/d1.conf", "! grep -q broken {home}/d1.conf",
                         "max_targets: 1, step_timeout: 2m, deadline: 3m"),
                  "coordination:\n  endpoints: [" + etcd_->endpoints()[0] +
                      "]\n  prefix: " + kPrefix + "\n  lease_ttl: 3s\n");
    std::string inventory = read_file(repo_.file("inventory.yaml"));
    inventory = std::regex_replace(inventory, std::regex("role: leaf\n"),
                                   "role: leaf\n    labels: {pod: p1}\n");
    repo_.write("inventory.yaml", inventory);
    repo_.commit_all("pod p1 and its budget");
  }

  StatusOutput status_json() {
    auto out = repo_.run(shell_quoted(kFabgate) + " status --json 2>" +
                         shell_quoted(repo_.file("status.err")));
    return {out.exit_code, nlohmann::json::parse(out.output, nullptr, false),
            read_file(repo_.file("status.err"))};
  }

  static const nlohmann::json* group(const nlohmann::json& view, const std::string& budget,
                                     const std::string& name) {
    if (!view.is_object() || !view.contains("budgets")) return nullptr;
    for (const auto& candidate : view["budgets"])
      if (candidate.value("budget", "") == budget && candidate.value("group", "") == name)
        return &candidate;
    return nullptr;
  }
};

TEST_F(StatusEndToEnd, ShowsARealRunsClaimAliveThenDeadAndTheRecoverThatReleasesIt) {
  // Given alice's `fabgate apply` holding d1 of pod p1 while its step runs, then `fabgate status
  // --json` (exit 0) shows her run in flight on this controller with its lease, and the pod's
  // group (1 of 2 devices at once) held by her run, alive, with no headroom. When her run is
  // killed, then once its lease lapses the view shows her claim held by a dead run and names
  // the recover command; that command, run as printed, restores d1 and releases the claim, and
  // the view then shows the group free again.
  commit_fabric(30);
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  StatusOutput seen;
  ASSERT_TRUE(eventually(
      [&] {
        seen = status_json();
        return seen.exit_code == 0 && !seen.document.is_discarded() &&
               !seen.document["runs"].empty() && group(seen.document, "leaves-per-pod", "pod=p1") &&
               !(*group(seen.document, "leaves-per-pod", "pod=p1"))["holders"].empty();
      },
      60s))
      << seen.exit_code << " " << seen.errors << read_file(repo_.file("alice.log"));
  const auto& run = seen.document["runs"][0];
  EXPECT_EQ(run.value("controller", ""), host_name()) << run.dump();
  EXPECT_EQ(run.value("granted_ttl_s", 0), 3) << run.dump();
  const auto& pod = *group(seen.document, "leaves-per-pod", "pod=p1");
  EXPECT_EQ(pod.value("size", 0), 2) << pod.dump();
  EXPECT_EQ(pod.value("capacity", 0), 1) << pod.dump();
  EXPECT_EQ(pod.value("headroom", -1), 0) << pod.dump();
  const auto& holder = pod["holders"][0];
  EXPECT_EQ(holder.value("operator", ""), "alice") << holder.dump();
  EXPECT_EQ(holder.value("change", ""), "c") << holder.dump();
  EXPECT_TRUE(holder.value("alive", false)) << holder.dump();
  EXPECT_EQ(holder["devices"], nlohmann::json::array({"d1"})) << holder.dump();
  EXPECT_EQ(holder.value("run", ""), run.value("run", "")) << holder.dump();
  EXPECT_TRUE(seen.document["dead_runs"].empty()) << seen.document.dump();

  // Killed: only its lease lapses (3 s); its claim stays, now held by a dead run.
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));
  ASSERT_EQ(::kill(alice.pid(), SIGKILL), 0);
  ASSERT_EQ(wait_for(alice, 30s), 128 + SIGKILL);
  ASSERT_TRUE(eventually(
      [&] {
        seen = status_json();
        return seen.exit_code == 0 && !seen.document.is_discarded() &&
               seen.document["runs"].empty();
      },
      30s))
      << seen.errors;
  ASSERT_EQ(seen.document["dead_runs"].size(), 1u) << seen.document.dump();
  const auto& dead = seen.document["dead_runs"][0];
  EXPECT_EQ(dead.value("operator", ""), "alice") << dead.dump();
  EXPECT_EQ(dead["devices"], nlohmann::json::array({"d1"})) << dead.dump();
  EXPECT_FALSE(
      (*group(seen.document, "leaves-per-pod", "pod=p1"))["holders"][0].value("alive", true));
  const std::string recover = dead.value("recover", "");
  ASSERT_TRUE(recover.starts_with("fabgate recover evidence-out/c/*-")) << recover;
  // Its journal is shared in etcd: any controller can recover it by its run id.
  EXPECT_EQ(dead.value("recover_anywhere", ""), "fabgate recover " + dead.value("run", "?"))
      << dead.dump();

  // The human view says the same in words.
  auto text = fabgate("status");
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("dead runs awaiting recovery: 1"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(recover), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("from any controller with the intent repository: fabgate recover " +
                             dead.value("run", "?")),
            std::string::npos)
      << text.output;

  auto recovered =
      repo_.run(shell_quoted(kFabgate) + recover.substr(std::string("fabgate").size()) + " 2>&1");
  EXPECT_EQ(recovered.exit_code, 4) << recovered.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto after = status_json();
  ASSERT_EQ(after.exit_code, 0) << after.errors;
  EXPECT_TRUE(after.document["dead_runs"].empty()) << after.document.dump();
  const auto* freed = group(after.document, "leaves-per-pod", "pod=p1");
  ASSERT_TRUE(freed) << after.document.dump();
  EXPECT_TRUE((*freed)["holders"].empty()) << freed->dump();
  EXPECT_EQ(freed->value("headroom", -1), 1) << freed->dump();
}

TEST_F(StatusEndToEnd, WithoutCoordinationSettingsItIsInvalidInput) {
  // Given a fabgate.yaml without a coordination: block, then status exits 2 saying there is no
  // fleet to show and how to configure one.
  commit_intent(change("true"));
  auto out = fabgate("status");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("has no coordination: block, so there is no fleet to show"),
            std::string::npos)
      << out.output;
}

TEST_F(StatusEndToEnd, WithTheStoreStoppedThereIsNoEvidence) {
  // Given the coordination store stopped, then status exits 3 naming the endpoint it could not
  // reach and what it was reading, and shows no fleet (an empty one would read as all clear).
  commit_fabric(0);
  const std::string endpoint = etcd_->endpoints()[0];
  etcd_.reset();
  auto out = status_json();
  EXPECT_EQ(out.exit_code, 3) << out.errors;
  EXPECT_TRUE(out.document.is_discarded()) << out.document.dump();
  EXPECT_NE(out.errors.find("etcd unreachable: POST " + endpoint), std::string::npos) << out.errors;
  EXPECT_NE(out.errors.find("no evidence of what the fleet is changing"), std::string::npos)
      << out.errors;
}

TEST_F(StatusEndToEnd, ShowsARunWaitingInTheQueueUntilItGetsItsBudget) {
  // Given alice's apply holding d1 of pod p1, when bob's apply of d2 (same pod) is started
  // with --wait, then status shows bob's run first in the queue, waiting for
  // leaves-per-pod/pod=p1 until a deadline; once alice's run ends bob's proceeds (exit 0), and
  // the queue and the group are empty again.
  commit_fabric(8);
  repo_.write("changes/b.yaml",
              std::regex_replace(
                  "id: b\ntitle: mtu on d2\ntargets: [d2]\nbounds: {max_targets: 1, "
                  "step_timeout: 30s, deadline: 1m}\nsteps:\n  - device: d2\n    run: echo 'mtu "
                  "9100' >> {home}/d2.conf\nrollback:\n  - device: d2\n    run: sed -i '/^mtu "
                  "9100$/d' {home}/d2.conf\nacceptance:\n  probes:\n    - name: fine\n      "
                  "layer: workload\n      host: d2\n      run: \"true\"\n      timeout: 10s\n",
                  std::regex("\\{home\\}"), sshd_->home()));
  repo_.commit_all("a change on d2");
  auto alice = start_fabgate("apply c --operator alice", repo_.file("alice.log"));
  ASSERT_TRUE(eventually([&] { return config("d1") == "mtu 9000\nshutdown\n"; }, 60s))
      << read_file(repo_.file("alice.log"));
  auto bob = start_fabgate("apply b --operator bob --wait 2m", repo_.file("bob.log"));
  StatusOutput seen;
  ASSERT_TRUE(eventually(
      [&] {
        seen = status_json();
        return seen.exit_code == 0 && !seen.document.is_discarded() &&
               !seen.document["queue"].empty();
      },
      60s))
      << seen.errors << read_file(repo_.file("bob.log"));
  const auto& waiting = seen.document["queue"][0];
  EXPECT_EQ(waiting.value("position", 0), 1) << waiting.dump();
  EXPECT_EQ(waiting.value("operator", ""), "bob") << waiting.dump();
  EXPECT_EQ(waiting.value("change", ""), "b") << waiting.dump();
  EXPECT_EQ(waiting["groups"], nlohmann::json::array({"leaves-per-pod/pod=p1"})) << waiting.dump();
  EXPECT_FALSE(waiting.value("until", "").empty()) << waiting.dump();
  EXPECT_EQ(config("d2"), "mtu 9000\n") << "bob's run touched d2 while it waited";

  ASSERT_EQ(wait_for(alice, 120s), 0) << read_file(repo_.file("alice.log"));
  ASSERT_EQ(wait_for(bob, 120s), 0) << read_file(repo_.file("bob.log"));
  EXPECT_NE(read_file(repo_.file("bob.log")).find("in the queue"), std::string::npos)
      << read_file(repo_.file("bob.log"));
  auto after = status_json();
  ASSERT_EQ(after.exit_code, 0) << after.errors;
  EXPECT_TRUE(after.document["queue"].empty()) << after.document.dump();
  const auto* pod = group(after.document, "leaves-per-pod", "pod=p1");
  ASSERT_TRUE(pod) << after.document.dump();
  EXPECT_TRUE((*pod)["holders"].empty()) << pod->dump();
}

}  // namespace
}  // namespace fabgate::testing
