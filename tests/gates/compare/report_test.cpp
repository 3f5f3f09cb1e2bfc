// What the report tells people: first disproven hypothesis, every result in JSON, and human
// output grouped by layer and device with failures first.

#include <gtest/gtest.h>

#include "adapters/core/text.h"
#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using namespace testing;

json device(const char* oper, const char* state) {
  return leaf({{"interfaces", {{"eth1", {{"oper", oper}}}, {"eth2", {{"oper", "up"}}}}},
               {"bgp", {{"peers", {{"p1", {{"state", state}}}}}}}});
}

RuleSet layered() {
  return rules(R"(name: t
rules:
  - {name: oper, layer: link, path: devices.*.interfaces.*.oper, operator: no-change}
  - {name: bgp, layer: control-plane, path: devices.*.bgp.peers.*.state, operator: no-change}
)");
}

TEST(Report, FirstDisprovenHypothesisIsTheFirstFailureInCollectionOrder) {
  // Given eth1 down on leaf2 and the BGP session over it gone, then the first disproven
  // hypothesis is the link rule on leaf2, not the BGP failure collected after it.
  auto pre =
      document({{"leaf1", device("up", "Established")}, {"leaf2", device("up", "Established")}});
  auto post = document({{"leaf1", device("up", "Established")}, {"leaf2", device("down", "Idle")}});
  auto report = run(pre, post, layered());
  ASSERT_TRUE(report.first_disproven);
  const auto& first = report.results[*report.first_disproven];
  EXPECT_EQ(first.rule, "oper");
  EXPECT_EQ(first.device, "leaf2");
  EXPECT_EQ(first.path, "devices.leaf2.interfaces.eth1.oper");
  json doc = to_json(report);
  EXPECT_EQ(doc["first_disproven"]["rule"], "oper");
  EXPECT_EQ(doc["results"].size(), report.results.size());
  EXPECT_EQ(doc["counts"]["fail"], 2);
  EXPECT_EQ(doc["verdict"], "fail");
}

TEST(Report, HumanOutputGroupsByLayerAndDeviceFailuresFirst) {
  // Given leaf1 with one failing and one passing interface, then under "link" / "leaf1" the
  // failure comes before the pass count, and the last line is the summary.
  auto pre = document({{"leaf1", device("up", "Established")}});
  auto post = document({{"leaf1", device("down", "Established")}});
  auto lines = render_human(run(pre, post, layered()));
  std::string text = join(lines, "\n");
  auto link = text.find(
      "\nlink\n  leaf1\n    fail  oper  devices.leaf1.interfaces.eth1.oper  \"up\" -> \"down\"");
  EXPECT_NE(link, std::string::npos) << text;
  EXPECT_LT(link, text.find("    pass  1 check"));
  EXPECT_LT(text.find("\nlink\n"), text.find("\ncontrol-plane\n"));
  EXPECT_EQ(lines.back().substr(0, 39), "FAIL: 3 checks: 2 pass, 1 fail, 0 no-ev");
  EXPECT_NE(lines.back().find("first disproven hypothesis: oper on leaf1"), std::string::npos);
}

TEST(Report, ZeroEvaluatedChecksIsNoEvidenceNotPass) {
  // Given rules that reach no element (leaf1 has neither interfaces nor BGP), then nothing was
  // checked: the report is no-evidence and not accepted, its JSON verdict says so, and the
  // summary says that nothing was compared instead of "PASS: 0 checks".
  auto pre = document({{"leaf1", leaf(json::object())}});
  auto post = document({{"leaf1", leaf(json::object())}});
  auto report = run(pre, post, layered());
  EXPECT_TRUE(report.results.empty());
  EXPECT_EQ(report.verdict(), Verdict::no_evidence);
  EXPECT_FALSE(report.accepted());
  EXPECT_EQ(to_json(report)["verdict"], "no-evidence");
  EXPECT_EQ(summary_line(report),
            "NO-EVIDENCE: 0 checks: 0 pass, 0 fail, 0 no-evidence, 0 waived; no rule reached any "
            "element, so nothing was compared");
}

TEST(Report, NoEvidenceWithoutFailuresStaysDistinctFromFail) {
  // Given BGP collected before but not after (its source no-evidence), and the link unchanged,
  // then the report's verdict is no-evidence, in the report and its JSON, not fail.
  auto pre = document({{"leaf1", device("up", "Established")}});
  json after = device("up", "Established");
  after.erase("bgp");
  after["sources"]["bgp"] = {{"status", "no-evidence"}, {"reason", "timed out after 10 s"}};
  auto report = run(pre, document({{"leaf1", after}}), layered());
  EXPECT_EQ(report.failed, 0u);
  EXPECT_GT(report.no_evidence, 0u);
  EXPECT_EQ(report.verdict(), Verdict::no_evidence);
  EXPECT_EQ(to_json(report)["verdict"], "no-evidence");
  EXPECT_EQ(summary_line(report).rfind("NO-EVIDENCE: ", 0), 0u) << summary_line(report);
}

}  // namespace
}  // namespace fabgate::compare
