// Given detail lines that say the same thing about many devices, then each cause is printed
// once with a count and the first names; different causes and lines about other things stay.

#include "gates/pipeline/reporting/folded_details.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

TEST(FoldRepeatedDetails, AMissingKeyFileOn52DevicesIsOneLine) {
  // Given the snapshot gate's details when the read key file is missing: every category of
  // every one of 52 devices, then one line names the cause, the categories and the devices.
  std::vector<std::string> details;
  for (int n = 1; n <= 52; ++n)
    for (const char* category : {"identity", "bgp", "interfaces"})
      details.push_back("leaf" + std::to_string(n) + ": " + category +
                        ": ssh: key file /keys/fabgate-ro not found");
  auto lines = fold_repeated_details(details);
  ASSERT_EQ(lines.size(), 1u) << testing::PrintToString(lines);
  EXPECT_EQ(lines[0],
            "leaf1: identity, bgp, interfaces: ssh: key file /keys/fabgate-ro not found "
            "(same on 51 more devices: leaf2, leaf3, leaf4, …)");
}

TEST(FoldRepeatedDetails, DifferentCausesStayApartInTheirOrder) {
  // Given two devices with one cause and a third with another, then two lines, in the order
  // their first occurrence came, and a lone line comes back unchanged.
  std::vector<std::string> details = {
      "leaf1: bgp: vtysh: command not found (exit 127)",
      "spine1: bgp: connect: connection refused",
      "leaf2: bgp: vtysh: command not found (exit 127)",
  };
  auto lines = fold_repeated_details(details);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "leaf1: bgp: vtysh: command not found (exit 127) (same on 1 more device: leaf2)");
  EXPECT_EQ(lines[1], "spine1: bgp: connect: connection refused");
}

TEST(FoldRepeatedDetails, LinesWithoutADeviceSubjectAreNotFolded) {
  // Given probe lines (their subject has spaces) that share a reason, then each stays: the
  // host is part of what they say.
  std::vector<std::string> details = {
      "[workload] rping on host1: fail: exit 1",
      "[workload] rping on host2: fail: exit 1",
  };
  EXPECT_EQ(fold_repeated_details(details), details);
}

TEST(FoldRepeatedDetails, TheSameLineTwiceIsPrintedOnce) {
  std::vector<std::string> details = {"leaf1: bgp: timed out after 10 s",
                                      "leaf1: bgp: timed out after 10 s"};
  EXPECT_EQ(fold_repeated_details(details),
            std::vector<std::string>{"leaf1: bgp: timed out after 10 s"});
}

}  // namespace
}  // namespace fabgate::pipeline
