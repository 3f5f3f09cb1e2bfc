// The shipped rdma-default rule set against snapshots laid out by the rdma-host normalizers:
// the facts are built from the hand-written samples in tests/gates/hostfacts/data with the
// same functions `fabgate snapshot` uses, so a rule path that drifts from the layout shows up
// here as a rule that checks nothing.

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "gates/compare/default_rules.h"
#include "gates/hostfacts/rdma_facts.h"
#include "gates/snapshot/normalizers.h"
#include "tests/gates/compare/fixtures.h"
#include "tests/gates/hostfacts/test_data.h"

namespace fabgate::compare {
namespace {

using hostfacts::testing::data_path;
using hostfacts::testing::read_sample;
using nlohmann::json;
using testing::document;
using testing::leaf;

RuleSet rdma_default() {
  auto set = load_rule_set(rdma_rule_set_text(), kRdmaRuleSetName);
  if (!set) {
    ADD_FAILURE() << set.error().message;
    return RuleSet{};
  }
  return std::move(set).value();
}

// One RoCE/GPU host "leaf1" with rdma, congestion, gpu and xid facts from the samples.
json host_facts() {
  json facts;
  facts["rdma"] = hostfacts::read_rdma_sysfs(data_path("sysfs_infiniband")).value();
  EXPECT_TRUE(snapshot::parse_ibv_devinfo(read_sample("ibv_devinfo.txt"), facts["rdma"]));
  EXPECT_TRUE(snapshot::parse_ethtool_stats("== ens1f0np0\n" + read_sample("ethtool_S_mlx5.txt"),
                                            facts["congestion"]));
  EXPECT_TRUE(snapshot::parse_nvidia_smi(read_sample("nvidia_smi.csv"), facts["gpu"]));
  EXPECT_TRUE(snapshot::parse_xid(read_sample("dmesg_xid.txt"), facts["xid"]));
  return facts;
}

Report compare(const json& pre_facts, const json& post_facts) {
  return testing::run(document({{"leaf1", leaf(pre_facts)}}),
                      document({{"leaf1", leaf(post_facts)}}), rdma_default());
}

std::set<std::string> failed_rules(const Report& report) {
  std::set<std::string> names;
  for (const auto& result : report.results)
    if (result.verdict == Verdict::fail) names.insert(result.rule);
  return names;
}

std::set<std::string> checked_rules(const Report& report) {
  std::set<std::string> names;
  for (const auto& result : report.results) names.insert(result.rule);
  return names;
}

TEST(RdmaRules, ShippedSetLoadsAndMatchesTheEmbeddedCopy) {
  // Given policies/compare/rdma-default.yaml, then it loads, the compiled-in copy is the same
  // text, and its rules sit at the transport, workload, link and telemetry layers.
  std::ifstream in(FABGATE_SOURCE_DIR "/policies/compare/rdma-default.yaml");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), rdma_rule_set_text());
  auto set = rdma_default();
  EXPECT_EQ(set.name, "rdma-default");
  std::set<Layer> layers;
  for (const auto& rule : set.rules) layers.insert(rule.layer);
  EXPECT_EQ(layers,
            (std::set<Layer>{Layer::link, Layer::transport, Layer::workload, Layer::telemetry}));
}

TEST(RdmaRules, StillCountersPassAndEveryRuleFindsItsFacts) {
  // Given the same host facts before and after, then nothing fails or lacks evidence, and
  // every rule reached an element (each path matches the normalizers' layout) except the
  // retired-pages rules: the sample H100s report [N/A] there, as GPUs with row remapping do.
  auto facts = host_facts();
  auto report = compare(facts, facts);
  EXPECT_TRUE(failed_rules(report).empty());
  for (const auto& result : report.results)
    EXPECT_EQ(result.verdict, Verdict::pass)
        << result.rule << " " << result.path << ": " << result.reason;
  std::set<std::string> all;
  for (const auto& rule : rdma_default().rules) all.insert(rule.name);
  all.erase("gpu-retired-pages-double-bit");
  all.erase("gpu-retired-pages-pending");
  EXPECT_EQ(checked_rules(report), all);
}

TEST(RdmaRules, PfcStormAndEccErrorFail) {
  // Given one more pause-storm warning on the mlx5 netdev and one more uncorrected ECC error
  // on a GPU, then exactly those two rules fail.
  auto pre = host_facts();
  auto post = pre;
  post["congestion"]["interfaces"]["ens1f0np0"]["pause_storm"]["warning_events"] = 3;
  post["gpu"]["gpus"]["00000000:2A:00.0"]["ecc_uncorrected_volatile"] = 2;
  EXPECT_EQ(failed_rules(compare(pre, post)),
            (std::set<std::string>{"pfc-pause-storm-warnings", "gpu-ecc-uncorrected-volatile"}));
}

TEST(RdmaRules, CounterBoundsXidAndPortStateAreEnforced) {
  // Given out_of_sequence growing within its bound, then it passes; growing past it, a new
  // Xid and a port gone DOWN, then those three rules fail.
  auto pre = host_facts();
  auto& pre_port = pre["rdma"]["devices"]["mlx5_0"]["ports"]["1"];
  auto within = pre;
  within["rdma"]["devices"]["mlx5_0"]["ports"]["1"]["hw_counters"]["out_of_sequence"] =
      pre_port["hw_counters"]["out_of_sequence"].get<long long>() + 50;
  EXPECT_TRUE(failed_rules(compare(pre, within)).empty());

  auto post = pre;
  auto& port = post["rdma"]["devices"]["mlx5_0"]["ports"]["1"];
  port["hw_counters"]["out_of_sequence"] =
      pre_port["hw_counters"]["out_of_sequence"].get<long long>() + 500;
  port["state"] = "DOWN";
  post["xid"]["total"] = pre["xid"]["total"].get<long long>() + 1;
  EXPECT_EQ(failed_rules(compare(pre, post)),
            (std::set<std::string>{"rdma-out-of-sequence", "rdma-port-state", "gpu-xid-events"}));
}

}  // namespace
}  // namespace fabgate::compare
