#include "gates/snapshot/collector_profile.h"

#include <gtest/gtest.h>

namespace fabgate::snapshot {
namespace {

TEST(CollectorProfile, ShippedProfilesAreEmbeddedAndValid) {
  // Given the profiles compiled into the binary, then linux and frr load and frr collects
  // identity, interfaces, routes, bgp, bfd and evpn.
  auto profiles = load_profiles();
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->count("linux"), 1u);
  ASSERT_EQ(profiles->count("frr"), 1u);
  std::vector<std::string> categories;
  for (const auto& source : profiles->at("frr").sources) categories.push_back(source.category);
  EXPECT_EQ(categories,
            (std::vector<std::string>{"identity", "interfaces", "routes", "bgp", "bfd", "evpn"}));
}

TEST(CollectorProfile, AnOverrideReplacesTheShippedProfileOfItsPlatform) {
  // Given an intent repository's own linux profile, then it replaces the shipped one.
  auto profiles =
      load_profiles({{"linux",
                      "platform: linux\nsources:\n  - category: interfaces\n"
                      "    commands:\n      - {run: ip -j -s link, parse: ip-link}\n"}});
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->at("linux").sources.size(), 1u);
  EXPECT_EQ(profiles->at("linux").sources[0].timeout, Duration{10'000});
  EXPECT_EQ(profiles->count("frr"), 1u);
}

TEST(CollectorProfile, ListsEveryProblemWithFileLineAndColumn) {
  // Given a profile with a misspelt normalizer, a normalizer under the wrong category and a
  // source without commands, then all three are reported with their positions.
  const char* text =
      "platform: linux\n"
      "sources:\n"
      "  - category: interfaces\n"
      "    commands:\n"
      "      - {run: ip -j link, parse: ip-lnk}\n"
      "      - {run: ip -j route, parse: ip-route-v4}\n"
      "  - category: bgp\n"
      "    commands: []\n";
  auto profile = parse_collector_profile(text, "policies/collectors/linux.yaml");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().exit_code, ExitCode::invalid_input);
  const auto& details = profile.error().details;
  ASSERT_EQ(details.size(), 3u);
  EXPECT_NE(details[0].find("linux.yaml:5:"), std::string::npos);
  EXPECT_NE(details[0].find("did you mean 'ip-link'"), std::string::npos);
  EXPECT_NE(details[1].find("linux.yaml:6:"), std::string::npos);
  EXPECT_NE(details[1].find("fills 'routes'"), std::string::npos);
  EXPECT_NE(details[2].find("no commands"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::snapshot
