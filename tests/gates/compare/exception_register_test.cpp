#include "gates/compare/exception_register.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "adapters/core/text.h"

namespace fabgate::compare {
namespace {

TEST(ExceptionRegister, ParsesScopeAndMatchesByGlobAndPath) {
  // Given an entry for leaf2's peer state, then it covers that element and nothing else.
  auto reg = load_exception_register(R"(exceptions:
  - id: EXC-1
    scope: {device: "leaf*", rule: bgp-peer-state, path: bgp.peers."10.0.3.0"}
    reason: peer decommissioned next week
    owner: netops
    expiry: 2099-01-01T00:00:00Z
)",
                                     "exceptions.yaml");
  ASSERT_TRUE(reg) << join(reg.error().details, "\n");
  ASSERT_EQ(reg->entries.size(), 1u);
  const auto& entry = reg->entries[0];
  EXPECT_TRUE(entry.covers("leaf2", "bgp-peer-state", {"bgp", "peers", "10.0.3.0", "state"}));
  EXPECT_FALSE(entry.covers("spine1", "bgp-peer-state", {"bgp", "peers", "10.0.3.0", "state"}));
  EXPECT_FALSE(entry.covers("leaf2", "bgp-peer-state", {"bgp", "peers", "10.0.1.0", "state"}));
  EXPECT_FALSE(entry.covers("leaf2", "interface-mtu", {"bgp", "peers", "10.0.3.0", "state"}));
}

TEST(ExceptionRegister, MalformedEntriesAreAllReportedWithLocations) {
  // Given a missing owner, a bad expiry, a duplicate id and a blanket scope, then all four
  // problems are reported with file:line.
  auto reg = load_exception_register(R"(exceptions:
  - id: A
    scope: {rule: x}
    reason: r
    expiry: 2099-01-01T00:00:00Z
  - id: A
    scope: {device: leaf1}
    reason: r
    owner: o
    expiry: next tuesday
)",
                                     "exc.yaml");
  ASSERT_FALSE(reg);
  std::string text = join(reg.error().details, "\n");
  EXPECT_NE(text.find("exc.yaml:2:5:"), std::string::npos) << text;  // owner missing
  EXPECT_NE(text.find("missing required key 'owner'"), std::string::npos) << text;
  EXPECT_NE(text.find("exc.yaml:6:9: error: exception id 'A' is used twice"), std::string::npos)
      << text;
  EXPECT_NE(text.find("must name a rule or a path"), std::string::npos) << text;
  EXPECT_NE(text.find("exc.yaml:10:13:"), std::string::npos) << text;
}

TEST(ExceptionRegister, ShippedExampleParses) {
  // Given policies/exceptions.example.yaml, then it is a valid register.
  std::ifstream in(FABGATE_SOURCE_DIR "/policies/exceptions.example.yaml");
  std::stringstream text;
  text << in.rdbuf();
  auto reg = load_exception_register(text.str(), "policies/exceptions.example.yaml");
  ASSERT_TRUE(reg) << join(reg.error().details, "\n");
  EXPECT_FALSE(reg->entries.empty());
}

}  // namespace
}  // namespace fabgate::compare
