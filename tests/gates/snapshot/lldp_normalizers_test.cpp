// Given real lldpd 1.0.16 `lldpcli -f json` output captured from the Clos lab (every node runs
// lldpd: system name = node name, port id = interface name; testdata/clos-lab/*-lldp-*.json,
// captured with `lab exec NODE lldpcli -f json show interfaces` and `... show neighbors
// details`), then the LLDP normalizers fill lldp.neighbors.<interface> in the shape the gNMI
// collector writes: a sorted list of {system_name, port_id, chassis_id, port_description}, and
// an empty list for a port where nobody is heard.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gates/snapshot/normalizers.h"
#include "tests/support/temp_dir.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

std::string captured(const std::string& name) {
  return testing::read_file(std::string(FABGATE_SOURCE_DIR) +
                            "/tests/gates/snapshot/testdata/clos-lab/" + name);
}

// The lldp category as the shipped FRR profile fills it: its two commands in profile order.
json lldp_of(const std::string& node, const std::string& neighbors_file = "") {
  json lldp;
  auto ports = parse_lldp_interfaces(captured(node + "-lldp-interfaces.json"), lldp);
  EXPECT_TRUE(ports) << ports.error();
  auto heard = parse_lldp_neighbors(
      captured(neighbors_file.empty() ? node + "-lldp-neighbors.json" : neighbors_file), lldp);
  EXPECT_TRUE(heard) << heard.error();
  return lldp;
}

json neighbor(const std::string& system, const std::string& port) {
  return {{"system_name", system},
          {"port_id", port},
          {"chassis_id", system},  // the lab's lldpd uses the system name as chassis id
          {"port_description", port}};
}

TEST(LldpNormalizers, SeveralInterfacesAreAListAndEveryOneHasItsNeighbour) {
  // Given leaf1's real output (four ports: lldpcli writes a list of one-key objects), then each
  // port holds exactly the node and port at its other end.
  json lldp = lldp_of("leaf1");
  EXPECT_EQ(lldp, json({{"neighbors",
                         {{"to-host1", {neighbor("host1", "eth0")}},
                          {"to-host2", {neighbor("host2", "eth0")}},
                          {"to-spine1", {neighbor("spine1", "to-leaf1")}},
                          {"to-spine2", {neighbor("spine2", "to-leaf1")}}}}}));
}

TEST(LldpNormalizers, OneInterfaceIsAnObjectNotAList) {
  // Given host1's real output (one port: lldpcli writes the interface as an object, not a
  // list of one), then eth0 has leaf1's to-host1 as its neighbour all the same.
  ASSERT_TRUE(json::parse(captured("host1-lldp-neighbors.json"))["lldp"]["interface"].is_object());
  json lldp = lldp_of("host1");
  EXPECT_EQ(lldp, json({{"neighbors", {{"eth0", {neighbor("leaf1", "to-host1")}}}}}));
}

TEST(LldpNormalizers, APortWhereNobodyIsHeardIsAnEmptyListNotAMissingOne) {
  // Given spine1's ports and lldpcli's empty answer (`"lldp": {}`: nothing heard anywhere), then
  // both ports are there with no neighbour: evidence of silence, which a compare rule can hold
  // against a pre snapshot that had neighbours.
  json lldp = lldp_of("spine1", "spine1-lldp-neighbors-none.json");
  EXPECT_EQ(lldp,
            json({{"neighbors", {{"to-leaf1", json::array()}, {"to-leaf2", json::array()}}}}));

  json heard_only;  // without `show interfaces`, silence is an empty map, still not absent
  ASSERT_TRUE(parse_lldp_neighbors(captured("spine1-lldp-neighbors-none.json"), heard_only));
  EXPECT_EQ(heard_only, json({{"neighbors", json::object()}}));
}

TEST(LldpNormalizers, TwoNeighboursOnOnePortAreBothKeptSorted) {
  // Given leaf1's real answer with its to-host1 entry repeated under another system name (how
  // lldpcli lists a second neighbour on a port: the same interface key once more in the list),
  // then to-host1 holds both, sorted, and the other ports are unchanged.
  json document = json::parse(captured("leaf1-lldp-neighbors.json"));
  json second;
  for (const auto& entry : document["lldp"]["interface"])
    if (entry.contains("to-host1")) second = entry;
  ASSERT_FALSE(second.is_null());
  json chassis = second["to-host1"]["chassis"]["host1"];
  chassis["id"]["value"] = "aaa-first-by-chassis";
  second["to-host1"]["chassis"] = {{"host9", chassis}};
  document["lldp"]["interface"].push_back(second);
  json lldp;
  ASSERT_TRUE(parse_lldp_neighbors(document.dump(), lldp));
  json host9 = neighbor("host9", "eth0");
  host9["chassis_id"] = "aaa-first-by-chassis";
  EXPECT_EQ(lldp["neighbors"]["to-host1"], json::array({host9, neighbor("host1", "eth0")}));
  EXPECT_EQ(lldp["neighbors"]["to-spine1"], json::array({neighbor("spine1", "to-leaf1")}));
}

TEST(LldpNormalizers, AChassisWithoutASystemNameKeepsItsIdAndLeavesTheNameOut) {
  // Given a neighbour that advertises no system name (lldpcli then puts the chassis members
  // directly under "chassis"), then its entry has chassis and port but no system_name.
  json document = json::parse(captured("host1-lldp-neighbors.json"));
  json& entry = document["lldp"]["interface"]["eth0"];
  entry["chassis"] = entry["chassis"]["leaf1"];
  json lldp;
  ASSERT_TRUE(parse_lldp_neighbors(document.dump(), lldp));
  EXPECT_EQ(
      lldp["neighbors"]["eth0"],
      json::array(
          {{{"chassis_id", "leaf1"}, {"port_id", "to-host1"}, {"port_description", "to-host1"}}}));
}

TEST(LldpNormalizers, WhatIsNotLldpcliJsonIsAnErrorNeverNoNeighbours) {
  // Given an lldpcli that printed its plain-text error or a JSON document of another shape,
  // then the normalizer fails (the source becomes no-evidence) instead of reporting silence.
  json lldp;
  EXPECT_FALSE(parse_lldp_neighbors("unable to connect to socket /run/lldpd.socket\n", lldp));
  EXPECT_FALSE(parse_lldp_neighbors(R"({"interfaces": []})", lldp));
  EXPECT_FALSE(parse_lldp_interfaces(R"({"lldp": {"interface": ["eth0"]}})", lldp));
  EXPECT_FALSE(lldp.contains("neighbors"));
}

}  // namespace
}  // namespace fabgate::snapshot
