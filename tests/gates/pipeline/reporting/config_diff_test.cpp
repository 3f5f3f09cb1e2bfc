// Given running configurations in pre, post and restored snapshots, then the configuration
// deltas reviewers read are exact unified diffs, redacted, and a configuration a later snapshot
// lacks is said to be missing, never shown as unchanged.

#include "gates/pipeline/reporting/config_diff.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

json snapshot_with(const std::string& device, const std::string& text) {
  return {{"devices", {{device, {{"config", {{"format", "text"}, {"text", text}}}}}}}};
}

TEST(ConfigDiff, UnifiedDiffHasHunksWithContextAndLineRanges) {
  // Given a ten-line text with line 2 changed and line 9 removed, then the diff has two hunks
  // with one context line each and 1-based ranges, as `diff -U1` writes them.
  std::string before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
  std::string after = "a\nB\nc\nd\ne\nf\ng\nh\nj\n";
  EXPECT_EQ(unified_diff(before, after, "x (pre)", "x (post)", 1),
            "--- x (pre)\n+++ x (post)\n"
            "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
            "@@ -8,3 +8,2 @@\n h\n-i\n j\n");
  EXPECT_EQ(unified_diff(before, before, "a", "b"), "");
  EXPECT_EQ(unified_diff("", "x\n", "a", "b"), "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
}

TEST(ConfigDiff, DeltasAreRedactedAndMissingConfigurationIsSaid) {
  // Given a BGP password in the configuration and a post snapshot without leaf2's
  // configuration, then the post vs pre diff of leaf1 shows the added neighbor with its
  // password redacted, and leaf2's delta says its configuration is missing.
  json pre = snapshot_with("leaf1", "router bgp 65101\n neighbor 10.0.1.0 remote-as 65000\n");
  pre["devices"]["leaf2"] = {{"config", {{"format", "text"}, {"text", "hostname leaf2\n"}}}};
  json post = snapshot_with("leaf1",
                            "router bgp 65101\n neighbor 10.0.1.0 remote-as 65000\n"
                            " neighbor 10.0.1.0 password s3cretpw\n");
  post["devices"]["leaf2"] = {
      {"sources", {{"config", {{"status", "no-evidence"}, {"reason", "vtysh: exit 1"}}}}}};

  auto deltas = config_deltas(pre, post, "post", Redactor());

  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0].device, "leaf1");
  EXPECT_EQ(deltas[0].compared, "post vs pre");
  EXPECT_NE(deltas[0].diff.find("+ neighbor 10.0.1.0 password <redacted>"), std::string::npos)
      << deltas[0].diff;
  EXPECT_EQ(deltas[0].diff.find("s3cretpw"), std::string::npos);
  EXPECT_EQ(deltas[1].device, "leaf2");
  EXPECT_TRUE(deltas[1].diff.empty());
  EXPECT_EQ(deltas[1].missing, "the post snapshot has no configuration of leaf2: vtysh: exit 1");

  std::string md = config_diff_markdown(deltas);
  EXPECT_NE(md.find("## Configuration changes"), std::string::npos);
  EXPECT_NE(md.find("### leaf1: post vs pre\n\n```diff\n--- leaf1 (pre)\n+++ leaf1 (post)\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("No diff: the post snapshot has no configuration of leaf2"), std::string::npos);
  EXPECT_EQ(config_diff_markdown({}), "");
}

TEST(ConfigDiff, UnchangedConfigurationIsOneLine) {
  // Given the same configuration before and after, then the section says "Unchanged".
  json pre = snapshot_with("spine1", "hostname spine1\n");
  auto deltas = config_deltas(pre, pre, "restored", Redactor());
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(config_diff_markdown(deltas).find("### spine1: restored vs pre\n\nUnchanged.\n") !=
                std::string::npos,
            true);
  EXPECT_EQ(captured_configs(pre), (std::vector<std::string>{"spine1 (1 lines)"}));
}

}  // namespace
}  // namespace fabgate::pipeline
