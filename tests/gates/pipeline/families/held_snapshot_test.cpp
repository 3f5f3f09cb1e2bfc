// A gated run's snapshots with their route tables kept apart from the document: the evidence
// written from them, the comparison reading them, and a snapshot made of another's parts.

#include "gates/pipeline/families/held_snapshot.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "adapters/core/time.h"
#include "gates/snapshot/route_output.h"
#include "tests/support/temp_dir.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

// leaf1's ipv4 table with these routes (prefix -> next hops), finalized.
std::shared_ptr<const snapshot::RouteTables> ipv4_table(
    const std::vector<std::pair<std::string, std::vector<std::string_view>>>& routes) {
  compare::RouteTable table(compare::Family::ipv4);
  std::string error;
  for (const auto& [prefix, hops] : routes)
    EXPECT_TRUE(table.add("default", prefix, "bgp", 20, hops, &error)) << error;
  EXPECT_TRUE(table.finalize(&error)) << error;
  auto tables = std::make_shared<snapshot::RouteTables>();
  tables->emplace("ipv4", std::move(table));
  return tables;
}

// A snapshot document shaped like the collector's: leaf1 with identity, bgp and an ok routes
// source whose lists are not in the document.
json leaf1_document() {
  json ok = {{"status", "ok"}, {"commands", json::array()}};
  json leaf1 = json::object();
  leaf1["identity"] = {{"hostname", "leaf1"}};
  leaf1["sources"] = {{"identity", ok}, {"bgp", ok}, {"routes", ok}};
  leaf1["bgp"]["peers"]["10.0.1.0"]["state"] = "Established";
  json document = {{"format", "fabgate.snapshot/1"},
                   {"taken_at", format_utc(now_utc())},
                   {"intent_commit", "c0ffee"}};
  document["devices"]["leaf1"] = std::move(leaf1);
  return document;
}

TEST(HeldSnapshot, TheEvidenceWrittenFromTablesIsTheSnapshotWithItsListsRedacted) {
  // Given leaf1's table apart (one route over an interface whose name holds a configured
  // secret), then snapshots/pre.json is the document with routes.ipv4 listed as the table's
  // own list would be, nothing else changed, the secret nowhere in the file, and the file
  // loads as a snapshot with both routes.
  testing::TempDir root("fabgate-held");
  auto bundle = EvidenceBundle::create(root.path(), "held-test", now_utc(), "run1",
                                       Redactor({"s3cret"}));
  ASSERT_TRUE(bundle.ok());
  auto tables = ipv4_table({{"10.1.1.0/24", {"10.0.1.0", "10.0.2.0"}},
                            {"10.1.2.0/24", {"dev:s3cret-uplink"}}});
  const json document = leaf1_document();

  auto written = write_snapshot_evidence(*bundle.value(), "snapshots/pre.json", document,
                                         {{"leaf1", tables}});

  ASSERT_TRUE(written.ok()) << written.error().message;
  const auto path = bundle.value()->dir() / "snapshots/pre.json";
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  json read = json::parse(text, nullptr, false);
  ASSERT_TRUE(read.is_object()) << text;
  json expected_routes = snapshot::route_list_json(tables->at("ipv4"));
  expected_routes[1]["nexthops"][0] = "dev:<redacted>-uplink";
  EXPECT_EQ(read["devices"]["leaf1"]["routes"]["ipv4"], expected_routes);
  read["devices"]["leaf1"].erase("routes");
  EXPECT_EQ(read, document);
  auto loaded = compare::load_snapshot_file(path.string());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->devices.at("leaf1").routes.at("ipv4").size(), 2u);
}

TEST(HeldSnapshot, TheComparisonReadsTheTablesAsIfTheyWereListed) {
  // Given the same snapshot once with its table apart and once with the lists in the document,
  // then the compare engine's snapshots have the same routes; tables for a device the document
  // does not have, or a device with both, are invalid input naming the file.
  auto tables = ipv4_table({{"10.1.1.0/24", {"10.0.1.0", "10.0.2.0"}},
                            {"10.1.2.0/24", {"10.0.1.0"}}});
  json listed = leaf1_document();
  listed["devices"]["leaf1"]["routes"]["ipv4"] = snapshot::route_list_json(tables->at("ipv4"));

  auto apart = comparable_snapshot(leaf1_document(), {{"leaf1", tables}}, "snapshots/pre.json");
  auto from_lists = comparable_snapshot(listed, {}, "snapshots/pre.json");

  ASSERT_TRUE(apart.ok()) << apart.error().message;
  ASSERT_TRUE(from_lists.ok()) << from_lists.error().message;
  const auto& a = apart->devices.at("leaf1");
  const auto& b = from_lists->devices.at("leaf1");
  EXPECT_TRUE(a.has_routes);
  EXPECT_TRUE(a.collects("routes"));
  EXPECT_TRUE(compare::diff_routes(a.routes.at("ipv4"), b.routes.at("ipv4")).empty());
  EXPECT_EQ(a.routes.at("ipv4").size(), 2u);
  EXPECT_EQ(tables->at("ipv4").size(), 2u) << "the held table is copied, not moved";

  auto ghost = comparable_snapshot(leaf1_document(), {{"ghost", tables}}, "snapshots/post.json");
  ASSERT_FALSE(ghost.ok());
  EXPECT_EQ(ghost.error().message, "snapshot snapshots/post.json: routes for unknown device ghost");
  auto both = comparable_snapshot(listed, {{"leaf1", tables}}, "snapshots/post.json");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("devices.leaf1.routes is both in the document and kept apart"),
            std::string::npos)
      << both.error().message;
}

TEST(HeldSnapshot, APartTakenFromAnotherSnapshotReplacesTablesAndFacts) {
  // Given a post snapshot holding leaf1's table and a partial re-read with another table and
  // changed bgp, then replacing routes points at the re-read's table (no copy), replacing bgp
  // with its source takes both; a re-read without routes removes them.
  HeldSnapshot post{leaf1_document(), {{"leaf1", ipv4_table({{"10.1.1.0/24", {"10.0.1.0"}}})}}};
  json part_document = leaf1_document();
  part_document["devices"]["leaf1"]["bgp"]["peers"]["10.0.1.0"]["state"] = "Idle";
  part_document["devices"]["leaf1"]["sources"]["bgp"]["took"] = "re-read";
  DeviceRouteTables part_routes{{"leaf1", ipv4_table({{"10.1.9.0/24", {"10.0.1.0"}}})}};

  HeldSnapshot merged = post;
  replace_category(merged, "leaf1", "routes", part_document, part_routes, true);
  replace_category(merged, "leaf1", "bgp", part_document, part_routes, true);

  EXPECT_EQ(merged.routes.at("leaf1").get(), part_routes.at("leaf1").get());
  EXPECT_EQ(post.routes.at("leaf1")->at("ipv4").size(), 1u) << "post keeps its own";
  EXPECT_EQ(merged.document["devices"]["leaf1"]["bgp"]["peers"]["10.0.1.0"]["state"], "Idle");
  EXPECT_EQ(merged.document["devices"]["leaf1"]["sources"]["bgp"]["took"], "re-read");
  EXPECT_TRUE(holds_category(merged.document, merged.routes, "leaf1", "routes"));
  EXPECT_FALSE(merged.document["devices"]["leaf1"].contains("routes"));

  replace_category(merged, "leaf1", "routes", part_document, {}, false);
  EXPECT_FALSE(merged.routes.contains("leaf1"));
  EXPECT_FALSE(holds_category(merged.document, merged.routes, "leaf1", "routes"));
  EXPECT_TRUE(holds_category(merged.document, merged.routes, "leaf1", "bgp"));
  EXPECT_FALSE(holds_category(merged.document, merged.routes, "ghost", "bgp"));
}

TEST(HeldSnapshot, ABaselineReadBackHasItsTablesApartAndAnUnreadableOneStaysPlainJson) {
  // Given a pre.json written from tables, then reading it back (recover) gives the same
  // document and tables kept apart; given one with a prefix the route reader refuses, it is
  // read as plain JSON (the comparison names the problem later); a missing file is no baseline.
  testing::TempDir root("fabgate-held");
  auto bundle = EvidenceBundle::create(root.path(), "held-test", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok());
  auto tables = ipv4_table({{"10.1.1.0/24", {"10.0.1.0", "10.0.2.0"}},
                            {"10.1.2.0/24", {"10.0.1.0"}}});
  const json document = leaf1_document();
  ASSERT_TRUE(write_snapshot_evidence(*bundle.value(), "snapshots/pre.json", document,
                                      {{"leaf1", tables}})
                  .ok());

  auto held = read_baseline(bundle.value()->dir() / "snapshots/pre.json");

  EXPECT_EQ(held.document, document);
  ASSERT_TRUE(held.routes.contains("leaf1"));
  EXPECT_TRUE(compare::diff_routes(held.routes.at("leaf1")->at("ipv4"), tables->at("ipv4")).empty());
  EXPECT_EQ(held.routes.at("leaf1")->at("ipv4").size(), 2u);

  json odd = document;
  odd["devices"]["leaf1"]["routes"]["ipv4"] =
      json::array({{{"prefix", "10.256.0.0/24"}, {"nexthops", {"10.0.1.0"}}}});
  ASSERT_TRUE(bundle.value()->write_json("snapshots/odd.json", odd).ok());
  auto plain = read_baseline(bundle.value()->dir() / "snapshots/odd.json");
  EXPECT_EQ(plain.document, odd);
  EXPECT_TRUE(plain.routes.empty());
  auto problem = comparable_snapshot(plain.document, plain.routes, "snapshots/pre.json");
  EXPECT_FALSE(problem.ok());

  EXPECT_TRUE(read_baseline(bundle.value()->dir() / "snapshots/none.json").document.is_null());
}

}  // namespace
}  // namespace fabgate::pipeline
