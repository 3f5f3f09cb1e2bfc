#include "gates/compare/expected_differences.h"

#include <gtest/gtest.h>

#include "adapters/core/text.h"

namespace fabgate::compare {
namespace {

TEST(ExpectedDifferences, ReadsTheChangesCompareExpectedList) {
  // Given a change with two expected differences, then both are read with their locations and
  // the rest of the change is left to the intent loader.
  auto list = load_expected_differences(R"(id: drain-spine1
steps: []
compare:
  expected:
    - device: spine1
      path: bgp.peers.*.state
      values: [Idle, Active]
    - device: "*"
      path: bgp.peers."10.0.1.0"
      absent: true
)",
                                        "changes/drain.yaml");
  ASSERT_TRUE(list) << join(list.error().details, "\n");
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].values, (std::vector<std::string>{"Idle", "Active"}));
  EXPECT_TRUE((*list)[1].absent);
  EXPECT_EQ((*list)[1].where.to_string(), "changes/drain.yaml:8:7");
}

TEST(ExpectedDifferences, ProblemsCarryFileLineColumn) {
  // Given a misspelt key and a path written from devices., then both are reported.
  auto list = load_expected_differences(R"(compare:
  expected:
    - device: spine1
      paht: bgp.peers.*.state
    - device: spine1
      path: devices.spine1.bgp
)",
                                        "c.yaml");
  ASSERT_FALSE(list);
  std::string text = join(list.error().details, "\n");
  EXPECT_NE(text.find("c.yaml:4:7: error: unknown key 'paht'"), std::string::npos) << text;
  EXPECT_NE(text.find("c.yaml:6:13: error: the path is relative to the device"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace fabgate::compare
