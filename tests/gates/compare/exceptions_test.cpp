// The exceptions register turns fail and no-evidence into waived, and only while unexpired.

#include <gtest/gtest.h>

#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using namespace testing;

json device(const char* state) {
  return leaf({{"bgp", {{"peers", {{"p1", {{"state", state}}}}}}}});
}

ExceptionRegister register_with(const std::string& scope, const std::string& expiry) {
  auto reg = load_exception_register(
      "exceptions:\n  - id: EXC-7\n    scope: " + scope +
          "\n    reason: known flap\n    owner: netops\n    expiry: " + expiry + "\n",
      "exceptions.yaml");
  EXPECT_TRUE(reg);
  return reg ? std::move(reg).value() : ExceptionRegister{};
}

Report flap(const ExceptionRegister& reg) {
  return run(document({{"leaf1", device("Established")}}), document({{"leaf1", device("Idle")}}),
             rule("    path: devices.*.bgp.peers.*.state\n    operator: no-change\n"), {}, reg);
}

TEST(Exceptions, MatchingUnexpiredExceptionWaivesButKeepsTheItem) {
  // Given a failing peer p1, a healthy peer p2 and an exception for p1, then p1's result is
  // waived with the id, the report is accepted on p2's real check, and the exception is listed
  // as used.
  auto two_peers = [](const char* p1) {
    return leaf(
        {{"bgp", {{"peers", {{"p1", {{"state", p1}}}, {"p2", {{"state", "Established"}}}}}}}});
  };
  auto report =
      run(document({{"leaf1", two_peers("Established")}}), document({{"leaf1", two_peers("Idle")}}),
          rule("    path: devices.*.bgp.peers.*.state\n    operator: no-change\n"), {},
          register_with("{device: leaf1, path: bgp.peers.p1}", "2099-01-01T00:00:00Z"));
  ASSERT_EQ(verdicts(report), "waived pass");
  EXPECT_EQ(report.results[0].exception_id, "EXC-7");
  EXPECT_EQ(report.results[0].waived_verdict, Verdict::fail);
  EXPECT_TRUE(report.accepted());
  EXPECT_EQ(report.exceptions_used, std::vector<std::string>{"EXC-7"});
  EXPECT_EQ(report.waived, 1u);
}

TEST(Exceptions, AComparisonWhoseEveryCheckIsWaivedProvesNothing) {
  // Given a failing peer, the only element compared, and an exception for it, then nothing
  // real passed: the report is no-evidence, not accepted, and its summary says why.
  auto report = flap(register_with("{device: leaf1, path: bgp.peers.p1}", "2099-01-01T00:00:00Z"));
  ASSERT_EQ(verdicts(report), "waived");
  EXPECT_EQ(report.verdict(), Verdict::no_evidence);
  EXPECT_FALSE(report.accepted());
  EXPECT_NE(summary_line(report).find("every check was waived, so no real check passed"),
            std::string::npos)
      << summary_line(report);
}

TEST(Exceptions, NonMatchingExceptionWaivesNothing) {
  // Given an exception for another device, then the failure stands.
  auto report = flap(register_with("{device: leaf2, rule: r}", "2099-01-01T00:00:00Z"));
  EXPECT_EQ(verdicts(report), "fail");
  EXPECT_FALSE(report.accepted());
}

TEST(Exceptions, ExpiredExceptionWaivesNothingAndIsReported) {
  // Given a matching but expired exception, then the failure stands, its reason mentions the
  // expiry, and the report lists the expired entry with how many results it would match.
  auto report = flap(register_with("{device: leaf1, rule: r}", "2020-01-01T00:00:00Z"));
  ASSERT_EQ(verdicts(report), "fail");
  EXPECT_NE(report.results[0].reason.find("exception EXC-7 expired"), std::string::npos);
  ASSERT_EQ(report.expired_exceptions.size(), 1u);
  EXPECT_EQ(report.expired_exceptions[0].id, "EXC-7");
  EXPECT_EQ(report.expired_exceptions[0].would_match, 1u);
  EXPECT_EQ(to_json(report)["expired_exceptions"][0]["id"], "EXC-7");
}

TEST(Exceptions, NoEvidenceCanBeWaivedToo) {
  // Given a stale post snapshot and an exception for the rule, then no-evidence is waived.
  auto reg = register_with("{device: leaf1, rule: r}", "2099-01-01T00:00:00Z");
  auto report =
      run(document({{"leaf1", device("Established")}}),
          document({{"leaf1", device("Established")}}, now_utc() - std::chrono::hours(2)),
          rule("    path: devices.*.bgp.peers.*.state\n    operator: no-change\n"), {}, reg);
  ASSERT_EQ(verdicts(report), "waived");
  EXPECT_EQ(report.results[0].waived_verdict, Verdict::no_evidence);
}

}  // namespace
}  // namespace fabgate::compare
