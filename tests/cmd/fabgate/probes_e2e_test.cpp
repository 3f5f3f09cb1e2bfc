// Probe orchestration end to end without the lab and without root: the real fabgate binary
// gates a change on two "devices" that are one loopback sshd, with a many-flow `flows` probe
// and an `acceptance.during` watch run by the real fabgate-probe on them over SSH.

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate::testing {
namespace {

class ProbesEndToEnd : public FabgateEndToEnd {
 protected:
  // d1 owns 127.0.0.1 and d2 owns 127.0.0.2 as data addresses; fabgate-probe is the build's.
  void commit_probe_intent(const std::string& probes_yaml,
                           const std::string& binary = kFabgateProbe) {
    const int port = free_probe_port();
    ASSERT_NE(port, 0);
    commit_intent(
        "id: c\ntitle: test change with flow probes\ntargets: [d1]\n"
        "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\n"
        "steps:\n  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && echo 'mtu 1500' >> "
        "{home}/d1.conf\n"
        "rollback:\n  - device: d1\n    run: cp {home}/d1.bak {home}/d1.conf\n"
        "acceptance:\n  settle: 0s\n" +
            probes_yaml,
        "probes: {binary: " + binary + ", port: " + std::to_string(port) + "}\n");
    std::string inventory = read_file(repo_.file("inventory.yaml"));
    inventory = std::regex_replace(inventory, std::regex("(  d1:\\n)"),
                                   "$1    data_addresses: [127.0.0.1]\n");
    inventory = std::regex_replace(inventory, std::regex("(  d2:\\n)"),
                                   "$1    data_addresses: [127.0.0.2]\n");
    repo_.write("inventory.yaml", inventory);
    repo_.commit_all("data addresses for the probes");
  }
};

TEST_F(ProbesEndToEnd, AManyFlowProbeAndAWatchRunOnTheDevicesAndTheirResultsAreTheEvidence) {
  // Given a harmless change whose acceptance is 8 flows from d2 to d1 and a 4-flow watch from d1
  // to d2 during the change, then apply is accepted and the evidence holds the probes' own
  // documents (a pass at baseline and acceptance, a watch that passed) and the probe commands
  // sent to each device: responders on the targets' owners, the flows on d2, the watch on d1.
  commit_probe_intent(
      "  probes:\n    - {name: d2-to-d1, layer: forwarding, host: d2, kind: flows, target: d1, "
      "flows: 8, timeout: 10s}\n"
      "  during: {host: d1, target: d2, flows: 4, max_disruption: 2s}\n");
  auto out = fabgate("apply c");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 1500\n");

  for (const char* phase : {"baseline", "acceptance"}) {
    SCOPED_TRACE(phase);
    auto probes = read_json(bundle() / "probes" / (std::string(phase) + ".json"));
    ASSERT_FALSE(probes.is_discarded());
    const std::string text = probes.dump();
    EXPECT_NE(text.find("d2-to-d1"), std::string::npos) << text.substr(0, 2000);
    EXPECT_NE(text.find("\"pass\""), std::string::npos) << text.substr(0, 2000);
  }
  auto during = read_json(bundle() / "probes" / "during.json");
  ASSERT_FALSE(during.is_discarded()) << "the watch's document is in the bundle";
  EXPECT_NE(during.dump().find("\"pass\""), std::string::npos) << during.dump().substr(0, 2000);

  auto on_d2 = commands("probe", "d2");
  auto on_d1 = commands("probe", "d1");
  auto contains = [](const std::vector<std::string>& commands, const std::string& what) {
    return std::any_of(commands.begin(), commands.end(),
                       [&](const std::string& c) { return c.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(contains(on_d1, "flows --respond")) << "the responder ran on the target's owner";
  EXPECT_TRUE(contains(on_d2, " flows ")) << "the flows ran on the probe's host";
  EXPECT_TRUE(contains(on_d1, " watch ")) << "the watch ran on the during host";
  EXPECT_TRUE(contains(on_d2, "flows --respond")) << "the watch's responder ran on its target";
}

TEST_F(ProbesEndToEnd, AWatchAndAnAcceptanceProbeMayTargetTheSameDevice) {
  // Given a during-watch and an acceptance flows probe that both send to d1, then both run
  // (the watch's responder is still listening while the acceptance responder starts) and the
  // harmless change is accepted: two responders on one address use different ports
  // (probes.port for probes, probes.port + 1 for the watch).
  commit_probe_intent(
      "  probes:\n    - {name: d2-to-d1, layer: forwarding, host: d2, kind: flows, target: d1, "
      "flows: 4, timeout: 10s}\n"
      "  during: {host: d2, target: d1, flows: 4, max_disruption: 2s}\n");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output.find("Address already in use"), std::string::npos) << out.output;
}

TEST_F(ProbesEndToEnd, AFlowProbeWhoseTargetNoDeviceOwnsIsNoEvidenceAndNothingIsChanged) {
  // Given a flows probe toward an address no inventory device owns, then the baseline probe has
  // no evidence, the change is refused before execute (exit 3) and d1 is untouched.
  commit_probe_intent(
      "  probes:\n    - {name: d2-to-nowhere, layer: forwarding, host: d2, kind: flows, "
      "target: 127.0.0.9, flows: 4, timeout: 5s}\n");
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("no device in the inventory owns 127.0.0.9"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_TRUE(commands("step", "d1").empty());
}

TEST_F(ProbesEndToEnd, AProbeHostPrintingWronglyTypedOrDeeplyNestedJsonAfterTheChangeIsRolledBack) {
  // Given a probe host whose fabgate-probe, once the change is in place, prints a document
  // whose verdict is a number, or one nested 300,000 levels deep, then the acceptance probe is
  // no-evidence naming what was wrong, the change is rolled back and verified (exit 4), and
  // fabgate neither throws nor overflows its stack.
  const std::string deep = std::string(300'000, '[') + std::string(300'000, ']');
  for (const auto& [name, hostile] : std::vector<std::pair<std::string, std::string>>{
           {"wrongly typed", R"({"verdict":3,"reason":["x"],"flows":"many"})"},
           {"deeply nested", "{\"verdict\":\"pass\",\"flows\":" + deep + "}"}}) {
    SCOPED_TRACE(name);
    write_config("d1", "mtu 9000\n");
    std::filesystem::remove_all(evidence_);
    const std::string dir = sshd_->home();
    write_file(dir + "/hostile.json", hostile);
    // The real responder; the real probe until the change is in place, then the hostile text.
    write_file(dir + "/hostile-probe",
               "#!/bin/sh\ncase \" $* \" in *\" --respond \"*) exec " + kFabgateProbe +
                   " \"$@\";; esac\nif grep -q 'mtu 1500' " + config_path("d1") + "; then cat " +
                   dir + "/hostile.json; exit 0; fi\nexec " + kFabgateProbe + " \"$@\"\n");
    std::filesystem::permissions(dir + "/hostile-probe", std::filesystem::perms::owner_all |
                                                             std::filesystem::perms::group_read |
                                                             std::filesystem::perms::group_exec |
                                                             std::filesystem::perms::others_read |
                                                             std::filesystem::perms::others_exec);
    commit_probe_intent(
        "  probes:\n    - {name: d2-to-d1, layer: forwarding, host: d2, kind: flows, target: d1, "
        "flows: 4, timeout: 10s}\n",
        dir + "/hostile-probe");
    auto out = fabgate("apply c");
    EXPECT_EQ(out.exit_code, 4) << out.output;
    EXPECT_EQ(config("d1"), "mtu 9000\n");
    EXPECT_NE(out.output.find(name == "wrongly typed" ? "field 'verdict' is an integer"
                                                      : "nested deeper than 64 levels"),
              std::string::npos)
        << out.output;
  }
}

}  // namespace
}  // namespace fabgate::testing
