// The bfd, evpn and overlay layers inside a real Pipeline, with a scripted Remote and
// Snapshotter: EVPN state that holds is reported as its own control-plane layer, and is never
// read as an overlay that forwards.

#include <gtest/gtest.h>

#include "tests/gates/pipeline/scripted_pipeline.h"

namespace fabgate::pipeline {
namespace {

using nlohmann::json;

TEST(OverlayLayers, EvpnAndBfdHeldButNoOverlayProbeIsNeverAnOverlayPass) {
  // Given leaf1's snapshots with a BFD session up and VNI 10100 up with its remote VTEP, and a
  // change whose only probe is a plain command, then the compare phases report bfd and evpn as
  // passing layers, no phase reports an overlay layer, and the diagnosis says the overlay was
  // not probed: EVPN routes present are not frames crossing VXLAN.
  ScriptedRun run({"leaf1"});
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}, {"kernel", "6.1.0-28-amd64"}};
  run.snapshotter.categories["leaf1"] = {
      {"bfd", {{"peers", {{"10.0.1.0", {{"status", "up"}, {"receive_interval_ms", 300}}}}}}},
      {"evpn",
       {{"vnis",
         {{"10100",
           {{"type", "L2"}, {"state", "up"}, {"remote_vteps", json::array({"10.0.255.12"})}}}}},
        {"peers", {{"10.0.1.0", {{"state", "Established"}, {"prefixes_received", 2}}}}}}}};
  auto outcome = run.run();
  EXPECT_EQ(outcome.exit_code, ExitCode::accepted) << outcome.first_disproven;
  ASSERT_TRUE(outcome.layers.contains("post-compare")) << outcome.layers.dump();
  EXPECT_EQ(outcome.layers["post-compare"].value("bfd", ""), "pass") << outcome.layers.dump();
  EXPECT_EQ(outcome.layers["post-compare"].value("evpn", ""), "pass");
  EXPECT_EQ(outcome.layers["post-compare"].value("control-plane", ""), "pass");
  for (const auto& [phase, layers] : outcome.layers.items())
    EXPECT_FALSE(layers.contains("overlay")) << phase;
  bool said = false;
  for (const auto& line : outcome.diagnosis)
    said = said || line.rfind("the overlay was not probed", 0) == 0;
  EXPECT_TRUE(said) << json(outcome.diagnosis).dump();
}

TEST(OverlayLayers, AWithdrawnRemoteVtepFailsTheEvpnLayerAndNamesTheVni) {
  // Given leaf1's VNI 10100 losing its remote VTEP between the snapshots, then the evpn layer
  // fails, the compare names the VNI's remote_vteps, and the change is rolled back.
  ScriptedRun run({"leaf1"});
  run.snapshotter.identities["leaf1"] = {{"hostname", "leaf1"}, {"kernel", "6.1.0-28-amd64"}};
  json vni = {{"type", "L2"}, {"state", "up"}, {"remote_vteps", json::array({"10.0.255.12"})}};
  run.snapshotter.categories["leaf1"] = {{"evpn", {{"vnis", {{"10100", vni}}}}}};
  int taken = 0;
  run.snapshotter.before_returning = [&] {
    // Sets what the next snapshot holds: after pre, a post without the remote VTEP; after
    // post, a restored one equal to pre.
    ++taken;
    json now = vni;
    if (taken == 1) now["remote_vteps"] = json::array();
    run.snapshotter.categories["leaf1"]["evpn"]["vnis"]["10100"] = now;
  };
  auto outcome = run.run();
  EXPECT_EQ(outcome.layers["post-compare"].value("evpn", ""), "fail") << outcome.layers.dump();
  const auto* compare = gate_named(outcome, "compare");
  ASSERT_NE(compare, nullptr);
  EXPECT_NE(all_details(*compare).find("evpn.vnis.10100.remote_vteps"), std::string::npos)
      << all_details(*compare);
  EXPECT_EQ(run.remote.sent("rollback"), 1u);
}

}  // namespace
}  // namespace fabgate::pipeline
