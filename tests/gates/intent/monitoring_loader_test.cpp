// The monitoring parts of an intent repository (docs/monitoring.md): the identity a device
// declares in the inventory.

#include <gtest/gtest.h>

#include "gates/intent/loader.h"
#include "tests/support/memory_tree.h"

namespace fabgate::intent {
namespace {

using testing::MemoryTree;

MemoryTree tree_with_devices(const std::string& devices) {
  MemoryTree tree;
  tree.files["fabgate.yaml"] = "version: 1\n";
  tree.files["inventory.yaml"] =
      "credentials:\n"
      "  read:   {user: ro, identity_file: ~/.ssh/ro}\n"
      "  change: {user: rw, identity_file: ~/.ssh/rw}\n"
      "devices:\n" +
      devices;
  return tree;
}

LoadOutcome load(const MemoryTree& tree) {
  CommitInfo commit;
  commit.id = "0123456789abcdef0123456789abcdef01234567";
  return load_intent_repository(tree, commit, "");
}

std::string all_lines(const LoadOutcome& outcome) {
  std::string all;
  for (const auto& line : outcome.diagnostics.lines()) all += line + "\n";
  return all;
}

TEST(InventoryIdentity, AScalarIsTheHostnameAndAMapNamesEachField) {
  // Given leaf1 declaring `identity: leaf1` and leaf2 a hostname, serial and upper-case MAC,
  // then both load: leaf1 expects hostname leaf1, leaf2 all three (the MAC in lower case), and a
  // device without identity expects nothing.
  auto outcome = load(tree_with_devices(
      "  leaf1: {platform: frr, role: leaf, ssh: {host: 192.0.2.11}, identity: leaf1}\n"
      "  leaf2:\n"
      "    platform: frr\n"
      "    role: leaf\n"
      "    ssh: {host: 192.0.2.12}\n"
      "    identity: {hostname: leaf2, serial: SN123, system_mac: '02:AB:00:00:00:02'}\n"
      "  host1: {platform: linux, role: host, ssh: {host: 192.0.2.21}}\n"));
  ASSERT_TRUE(outcome.repository) << all_lines(outcome);
  const auto& inventory = outcome.repository->inventory;
  ASSERT_TRUE(inventory.find("leaf1")->identity);
  EXPECT_EQ(inventory.find("leaf1")->identity->hostname, "leaf1");
  EXPECT_TRUE(inventory.find("leaf1")->identity->serial.empty());
  const auto& leaf2 = *inventory.find("leaf2")->identity;
  EXPECT_EQ(leaf2.hostname, "leaf2");
  EXPECT_EQ(leaf2.serial, "SN123");
  EXPECT_EQ(leaf2.system_mac, "02:ab:00:00:00:02");
  EXPECT_EQ(leaf2.where.line, 10);
  EXPECT_FALSE(inventory.find("host1")->identity);
}

TEST(InventoryIdentity, ABadMacAnUnknownFieldAndAnEmptyIdentityAreEachReportedWithTheirPlace) {
  // Given three mistakes in three devices, then all three are reported with their line.
  auto outcome = load(tree_with_devices(
      "  leaf1: {platform: frr, role: leaf, ssh: {host: a}, identity: {system_mac: 02-00}}\n"
      "  leaf2: {platform: frr, role: leaf, ssh: {host: b}, identity: {hostnme: leaf2}}\n"
      "  leaf3: {platform: frr, role: leaf, ssh: {host: c}, identity: {}}\n"));
  ASSERT_FALSE(outcome.repository);
  std::string all = all_lines(outcome);
  EXPECT_NE(all.find("inventory.yaml:5:"), std::string::npos) << all;
  EXPECT_NE(all.find("'02-00' is not a MAC address"), std::string::npos) << all;
  EXPECT_NE(all.find("inventory.yaml:6:"), std::string::npos) << all;
  EXPECT_NE(all.find("hostnme"), std::string::npos) << all;
  EXPECT_NE(all.find("inventory.yaml:7:"), std::string::npos) << all;
  EXPECT_NE(all.find("declares nothing to check"), std::string::npos) << all;
}

}  // namespace
}  // namespace fabgate::intent
