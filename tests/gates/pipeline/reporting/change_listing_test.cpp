// Given comparison documents as the compare engine writes them, then the change listing names
// what changed per category, leaves out elements that rules let move, and its text holds every
// entry.

#include "gates/pipeline/reporting/change_listing.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

nlohmann::json result(const std::string& device, const std::string& relative, nlohmann::json pre,
                      nlohmann::json post, const std::string& verdict) {
  return {{"device", device},
          {"path", "devices." + device + "." + relative},
          {"pre", std::move(pre)},
          {"post", std::move(post)},
          {"verdict", verdict}};
}

TEST(ChangeListing, NamesRoutesAndChangedElementsButNotCountersThatMayMove) {
  // Given a route table with one route removed, one added and one changed, a BGP session that
  // went down (fail), an expected difference, and an interface counter that grew under an
  // increase rule (pass), then routes and bgp are listed with their entries and counts, and
  // the counter is not.
  auto routes = result("leaf1", "routes.ipv4", "3 routes", "3 routes", "fail");
  routes["details"] = {"- 10.1.2.0/24 via 10.0.1.0", "+ 10.9.0.0/24 via 10.0.1.0",
                       "~ 10.1.3.0/24: via 10.0.1.0 -> via 10.0.2.0"};
  auto expected =
      result("spine1", "bgp.peers.\"10.0.1.1\".state", "\"Established\"", "\"Idle\"", "pass");
  expected["expected_difference"] = true;
  nlohmann::json comparison = {
      {"results",
       {routes,
        result("leaf1", "bgp.peers.\"10.0.1.0\".state", "\"Established\"", "\"Active\"", "fail"),
        expected, result("leaf1", "interfaces.eth1.counters.rx_packets", "100", "250", "pass"),
        result("leaf2", "bgp.peers.\"10.0.3.0\".state", "\"Established\"", "\"Established\"",
               "pass")}}};
  auto categories = changes_of(comparison);
  ASSERT_EQ(categories.size(), 2u);
  EXPECT_EQ(categories[0].name, "routes");
  EXPECT_EQ(change_counts(categories[0]), "1 added, 1 removed, 1 changed");
  EXPECT_EQ(categories[0].entries[0], "- leaf1 routes.ipv4: 10.1.2.0/24 via 10.0.1.0");
  EXPECT_EQ(categories[1].name, "bgp");
  EXPECT_EQ(change_counts(categories[1]), "2 changed");
  EXPECT_EQ(categories[1].entries[0],
            "~ leaf1 bgp.peers.\"10.0.1.0\".state: \"Established\" -> \"Active\" (fail)");
  EXPECT_EQ(categories[1].entries[1],
            "~ spine1 bgp.peers.\"10.0.1.1\".state: \"Established\" -> \"Idle\" (expected)");

  ChangeListing listing{"post vs pre", "diffs/post-vs-pre-changes.txt", categories};
  std::string text = change_listing_text(listing);
  EXPECT_NE(text.find("## routes: 1 added, 1 removed, 1 changed"), std::string::npos) << text;
  EXPECT_NE(text.find("+ leaf1 routes.ipv4: 10.9.0.0/24 via 10.0.1.0"), std::string::npos) << text;
  EXPECT_EQ(text.find("rx_packets"), std::string::npos) << text;
}

TEST(ChangeListing, ExactRouteCountsWinOverTheNamedExamples) {
  // Given a route table of which 500 routes were withdrawn but only the first 2 are named (as
  // `fabgate diff` keeps 5 per table), then the category counts 500 removed, names the 2, and
  // says 498 more.
  auto routes = result("leaf1", "routes.ipv4", "600 routes", "100 routes", "fail");
  routes["details"] = {"- 10.1.0.0/24 via x", "- 10.1.1.0/24 via x"};
  routes["route_counts"] = {{"added", 0}, {"removed", 500}, {"changed", 0}};
  auto categories = changes_of({{"results", {routes}}});
  ASSERT_EQ(categories.size(), 1u);
  EXPECT_EQ(change_counts(categories[0]), "500 removed");
  EXPECT_EQ(categories[0].entries.size(), 2u);
  EXPECT_EQ(categories[0].total(), 500u);
  std::string md = change_listing_markdown({{"post vs pre", "diffs/x.txt", categories}}, {});
  EXPECT_NE(md.find("and 498 more, full list in `diffs/x.txt`"), std::string::npos) << md;
  EXPECT_NE(change_listing_text({"post vs pre", "diffs/x.txt", categories})
                .find("… 498 more counted by the comparison but not named"),
            std::string::npos);
}

TEST(ChangeListing, ElementsThatAppearOrDisappearAreAddedOrRemoved) {
  // Given an element missing after the change (no evidence) and one new (fail), then one is
  // removed and the other added.
  nlohmann::json comparison = {
      {"results",
       {result("leaf1", "bfd.peers.\"10.0.1.0\".status", "\"up\"", nullptr, "no-evidence"),
        result("leaf1", "evpn.vnis.\"100\".type", nullptr, "\"L2\"", "fail")}}};
  auto categories = changes_of(comparison);
  ASSERT_EQ(categories.size(), 2u);
  EXPECT_EQ(change_counts(categories[0]), "1 removed");
  EXPECT_EQ(change_counts(categories[1]), "1 added");
}

TEST(ChangeListing, MarkdownShowsTenPerCategoryThenPointsToTheFile) {
  // Given 12 withdrawn routes, then the Markdown shows the first 10 and "and 2 more, full list
  // in diffs/...", redacting each entry and keeping each on one code span.
  ChangeCategory routes{"routes", 0, 12, 0, {}};
  for (int i = 0; i < 12; ++i)
    routes.entries.push_back("- leaf1 routes.ipv4: 10.1." + std::to_string(i) + ".0/24");
  routes.entries[0] += " tag `Canary9`";
  std::string md = change_listing_markdown(
      {{"post vs pre", "diffs/post-vs-pre-changes.txt", {routes}}}, Redactor({"Canary9"}));
  EXPECT_NE(md.find("10.1.9.0/24"), std::string::npos) << md;
  EXPECT_EQ(md.find("10.1.10.0/24"), std::string::npos) << md;
  EXPECT_NE(md.find("and 2 more, full list in `diffs/post-vs-pre-changes.txt`"), std::string::npos)
      << md;
  EXPECT_EQ(md.find("Canary9"), std::string::npos) << md;
  EXPECT_NE(md.find("tag '<redacted>'`"), std::string::npos) << md;
}

}  // namespace
}  // namespace fabgate::pipeline
