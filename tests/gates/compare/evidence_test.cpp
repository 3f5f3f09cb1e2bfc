// Every cause of no-evidence: absent evidence is never a pass.

#include <gtest/gtest.h>

#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using namespace testing;

json two_peers(bool second = true) {
  json peers = {{"p1", {{"state", "Established"}}}};
  if (second) peers["p2"] = {{"state", "Established"}};
  return {{"bgp", {{"peers", peers}}}};
}

RuleSet state_rule() {
  return rule("    path: devices.*.bgp.peers.*.state\n    operator: no-change\n");
}

TEST(NoEvidence, ElementMissingInPostOrPre) {
  // Given peer p2 only in pre, then it is no-evidence (missing in post); given it only in
  // post, then no-evidence (missing in pre). p1 passes both times.
  auto both = document({{"leaf1", leaf(two_peers(true))}});
  auto one = document({{"leaf1", leaf(two_peers(false))}});
  auto gone = run(both, one, state_rule());
  ASSERT_EQ(verdicts(gone), "pass no-evidence");
  EXPECT_EQ(gone.results[1].reason, "missing in the post snapshot");
  EXPECT_FALSE(gone.results[1].post.has_value());
  auto appeared = run(one, both, state_rule());
  ASSERT_EQ(verdicts(appeared), "pass no-evidence");
  EXPECT_EQ(appeared.results[1].reason, "missing in the pre snapshot");
}

TEST(NoEvidence, SourceMarkedNoEvidenceCarriesItsReason) {
  // Given the post bgp source failed (category absent), then every pre element is no-evidence
  // with the collector's reason; given it failed on both sides, then one no-evidence result.
  json failed = leaf(json::object());
  failed["sources"] = {
      {"bgp", {{"status", "no-evidence"}, {"reason", "vtysh: timed out after 10 s"}}}};
  auto report =
      run(document({{"leaf1", leaf(two_peers())}}), document({{"leaf1", failed}}), state_rule());
  ASSERT_EQ(verdicts(report), "no-evidence no-evidence");
  EXPECT_EQ(report.results[0].reason,
            "post: source bgp has no evidence: vtysh: timed out after 10 s");
  auto neither = run(document({{"leaf1", failed}}), document({{"leaf1", failed}}), state_rule());
  ASSERT_EQ(verdicts(neither), "no-evidence");
  EXPECT_EQ(neither.results[0].path, "devices.leaf1.bgp.peers.*.state");
}

TEST(NoEvidence, StaleSnapshotMakesEverythingNoEvidence) {
  // Given a pre snapshot taken 11 minutes ago and max age 10m, then its elements have no
  // evidence and the reason names the time and the limit; with the check off they pass.
  auto old = now_utc() - std::chrono::minutes(11);
  auto pre = document({{"leaf1", leaf(two_peers())}}, old);
  auto post = document({{"leaf1", leaf(two_peers())}});
  auto report = run(pre, post, state_rule());
  ASSERT_EQ(verdicts(report), "no-evidence no-evidence");
  EXPECT_EQ(report.results[0].reason,
            "pre snapshot taken at " + format_utc(old) + " is older than max age 10m");
  CompareOptions no_age;
  no_age.max_age = Duration{0};
  EXPECT_EQ(verdicts(run(pre, post, state_rule(), {}, {}, no_age)), "pass pass");
}

TEST(NoEvidence, IdentityChangeBetweenPreAndPost) {
  // Given leaf1's serial differs (the box was swapped), then nothing about it can be compared.
  auto report = run(document({{"leaf1", leaf(two_peers(), "SN1")}}),
                    document({{"leaf1", leaf(two_peers(), "SN2")}}), state_rule());
  ASSERT_EQ(verdicts(report), "no-evidence no-evidence");
  EXPECT_EQ(report.results[0].reason, "device identity changed: serial \"SN1\" -> \"SN2\"");
}

TEST(NoEvidence, DeviceMissingFromOneSnapshot) {
  // Given leaf2 only in pre, then its elements are no-evidence naming the missing device.
  auto report = run(document({{"leaf1", leaf(two_peers())}, {"leaf2", leaf(two_peers())}}),
                    document({{"leaf1", leaf(two_peers())}}), state_rule());
  ASSERT_EQ(verdicts(report), "pass pass no-evidence no-evidence");
  EXPECT_EQ(report.results[2].reason, "device leaf2 is not in the post snapshot");
}

TEST(NoEvidence, UncollectedCategoryIsSkippedUnlessTheRuleNamesTheDevice) {
  // Given a host with no bgp at all, then a wildcard rule does not apply to it, but a rule
  // naming that host's bgp has no evidence.
  auto host = leaf({{"interfaces", json::object()}});
  auto pre = document({{"host1", host}, {"leaf1", leaf(two_peers())}});
  EXPECT_EQ(verdicts(run(pre, pre, state_rule())), "pass pass");
  auto named =
      run(pre, pre, rule("    path: devices.host1.bgp.peers.*.state\n    operator: no-change\n"));
  ASSERT_EQ(verdicts(named), "no-evidence");
}

}  // namespace
}  // namespace fabgate::compare

namespace fabgate::compare {
namespace {

using nlohmann::json;
using namespace testing;

TEST(NoEvidence, FieldAbsentOnBothSidesIsNotApplicableUnderWildcardsOnly) {
  // Given a switch without gpu_driver in either snapshot, then a wildcard-device rule skips
  // it, while a rule naming leaf1's gpu_driver literally reports no-evidence.
  auto doc = document({{"leaf1", leaf({{"interfaces", json::object()}})}});
  EXPECT_EQ(
      verdicts(run(doc, doc,
                   rule("    path: devices.*.identity.gpu_driver\n    operator: no-change\n"))),
      "");
  auto named =
      run(doc, doc, rule("    path: devices.leaf1.identity.gpu_driver\n    operator: no-change\n"));
  ASSERT_EQ(verdicts(named), "no-evidence");
  EXPECT_EQ(named.results[0].reason, "missing in the pre and post snapshots");
}

}  // namespace
}  // namespace fabgate::compare
