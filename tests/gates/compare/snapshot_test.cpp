#include "gates/compare/snapshot.h"

#include <gtest/gtest.h>

#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using testing::document;
using testing::leaf;

TEST(Snapshot, RoutesBecomeTypedTablesAndOtherFactsStayATree) {
  // Given a device with interfaces, a no-evidence bgp source and two route families, then
  // routes land in RouteTables, facts keep the rest and the source reason is kept.
  json device = leaf({{"interfaces", {{"eth1", {{"oper", "up"}}}}},
                      {"routes",
                       {{"ipv4", json::array({{{"prefix", "10.0.0.0/24"},
                                               {"protocol", "bgp"},
                                               {"metric", 20},
                                               {"nexthops", {"10.0.1.0"}},
                                               {"extra", {{"ignored", true}}}}})},
                        {"ipv6", json::array()}}}});
  device["sources"]["bgp"] = {{"status", "no-evidence"}, {"reason", "vtysh: exit 127"}};
  auto parsed = parse_snapshot(document({{"leaf1", device}}).dump(), "s.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const DeviceSnapshot& leaf1 = parsed->devices.at("leaf1");
  EXPECT_TRUE(leaf1.has_routes);
  EXPECT_EQ(leaf1.routes.at("ipv4").size(), 1u);
  EXPECT_EQ(leaf1.routes.at("ipv6").size(), 0u);
  EXPECT_FALSE(leaf1.facts.contains("routes"));
  EXPECT_EQ(leaf1.facts["interfaces"]["eth1"]["oper"], "up");
  ASSERT_NE(leaf1.source("bgp"), nullptr);
  EXPECT_FALSE(leaf1.source("bgp")->ok);
  EXPECT_EQ(leaf1.source("bgp")->reason, "vtysh: exit 127");
}

TEST(Snapshot, MalformedDocumentsAreInvalidInputNamingFileAndElement) {
  // Given broken JSON, a wrong format tag, and a route with a bad prefix, then each is
  // invalid input that names the file and, for the route, its position.
  auto broken = parse_snapshot("{\"format\": ", "broken.json");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(broken.error().message.find("broken.json"), std::string::npos);

  json wrong = document(json::object());
  wrong["format"] = "something/2";
  auto tag = parse_snapshot(wrong.dump(), "tag.json");
  ASSERT_FALSE(tag);
  EXPECT_NE(tag.error().message.find("format"), std::string::npos);

  json bad_route =
      document({{"leaf1", leaf({{"routes",
                                 {{"ipv4", json::array({{{"prefix", "10.0.0.0/24"}},
                                                        {{"prefix", "300.0.0.0/24"}}})}}}})}});
  auto route = parse_snapshot(bad_route.dump(), "routes.json");
  ASSERT_FALSE(route);
  EXPECT_NE(route.error().message.find("devices.leaf1.routes.ipv4[1]"), std::string::npos)
      << route.error().message;
}

TEST(Snapshot, MissingFileIsInvalidInput) {
  // Given a path that does not exist, then loading is invalid input naming it.
  auto loaded = load_snapshot_file("/nonexistent/pre.json");
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(loaded.error().message.find("/nonexistent/pre.json"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::compare
