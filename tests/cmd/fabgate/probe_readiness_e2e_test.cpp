// The long-running probes of `fabgate apply` through the built fabgate and fabgate-probe
// binaries against a real sshd on loopback: the continuous watch of `acceptance.during` and the
// RDMA listener must say they are ready before anything relies on them. d1 owns the data
// address 127.0.0.1, so the responder and the listener run "on d1"; the watch and the RDMA
// client run "on d2".

#include <gtest/gtest.h>

#include <string>

#include "adapters/rdma/device_scan.h"
#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::change;
using testing::kFabgateProbe;
using testing::shell_quoted;

class ProbeReadinessEndToEnd : public testing::FabgateEndToEnd {
 protected:
  // Commits `change_yaml` with fabgate-probe at `binary` and d1 owning 127.0.0.1.
  void commit_with_probes(const std::string& change_yaml, const std::string& binary) {
    port_ = testing::free_probe_port();
    ASSERT_NE(port_, 0) << "no free port on 127.0.0.1";
    commit_intent(change_yaml,
                  "probes:\n  binary: " + binary + "\n  port: " + std::to_string(port_) + "\n");
    std::string inventory = testing::read_file(repo_.file("inventory.yaml"));
    auto d1 = inventory.find("  d1:\n");
    ASSERT_NE(d1, std::string::npos) << inventory;
    inventory.insert(d1 + 6, "    data_addresses: [127.0.0.1]\n");
    repo_.write("inventory.yaml", inventory);
    repo_.commit_all("d1 owns 127.0.0.1");
  }

  // The change of e2e_fixture.h with a 4-flow watch from d2 to d1 across it.
  static std::string watched_change() {
    return change("echo 'mtu 9100' >> {home}/d1.conf") +
           "  during: {host: d2, target: d1, flows: 4, max_disruption: 1s}\n";
  }

  // Writes an executable script standing in for fabgate-probe and returns its path.
  std::string script(const std::string& name, const std::string& body) {
    std::string path = repo_.file(name);
    testing::write_file(path, "#!/bin/sh\n" + body, 0755);
    return path;
  }

  int port_ = 0;
};

TEST_F(ProbeReadinessEndToEnd, AWatchThatSamplesLetsTheChangeRunAndMeasuresIt) {
  // Given the real fabgate-probe, then watch-start passes once the watch is sampling, the
  // change runs (exit 0), and the disruption gate judges what the watch measured.
  commit_with_probes(watched_change(), kFabgateProbe);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
  auto during = read_json(bundle() / "probes" / "during.json");
  EXPECT_EQ(during["verdict"], "pass") << during.dump(2);
  EXPECT_EQ(during["detail"]["flows"].size(), 4u) << during.dump(2);
}

TEST_F(ProbeReadinessEndToEnd, AWatchThatRejectsItsFlagsRefusesTheChangeBeforeAnyStep) {
  // Given a host whose fabgate-probe rejects a flag fabgate passes to `watch` (an older
  // version; here the real binary handed one more flag it does not know), while its flows
  // responder works, then watch-start fails naming the watch and the probe's own complaint,
  // the run exits 3, and d1 received no step and kept its configuration.
  std::string older = script("older-probe", "if [ \"$1\" = watch ]; then shift; exec " +
                                                shell_quoted(kFabgateProbe) +
                                                " watch --from-a-newer-fabgate \"$@\"; fi\nexec " +
                                                shell_quoted(kFabgateProbe) + " \"$@\"\n");
  commit_with_probes(watched_change(), older);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("watch on d2 exited before it was ready"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("--from-a-newer-fabgate"), std::string::npos) << out.output;
  EXPECT_TRUE(commands("step", "d1").empty()) << "a step was sent although the watch never ran";
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  EXPECT_EQ(manifest()["exit_code"], 3);
}

TEST_F(ProbeReadinessEndToEnd, AMissingProbeBinaryRefusesTheChangeBeforeAnyStep) {
  // Given probes.binary pointing at nothing, then watch-start fails (nothing can listen for
  // the watch), the run exits 3 and d1 received no step.
  commit_with_probes(watched_change(), repo_.file("no-such-fabgate-probe"));
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("flows responder on d1 exited before it was ready"), std::string::npos)
      << out.output;
  EXPECT_TRUE(commands("step", "d1").empty());
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(ProbeReadinessEndToEnd, AWatchThatNeverSamplesIsStoppedAndRefusesTheChange) {
  // Given a watch that runs but never says it is sampling (a stand-in that only sleeps), then
  // fabgate stops waiting after its readiness deadline, stops the process, refuses the change
  // (exit 3) and sends no step; the stand-in is not left running on the host.
  std::string mute =
      script("mute-probe", "if [ \"$1\" = watch ]; then exec sleep 59.125; fi\nexec " +
                               shell_quoted(kFabgateProbe) + " \"$@\"\n");
  commit_with_probes(watched_change(), mute);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("watch on d2 was not ready within 5s"), std::string::npos)
      << out.output;
  EXPECT_TRUE(commands("step", "d1").empty());
  EXPECT_EQ(testing::run_shell("pgrep -f '^sleep 59.125$'").exit_code, 1)
      << "the watch that never became ready was left running";
}

TEST_F(ProbeReadinessEndToEnd, AnRdmaListenerThatCannotListenIsNoEvidenceAndNoClientIsSent) {
  // Given a host without an RDMA device and a change whose baseline includes an RDMA probe from
  // d2 to d1, then the listener on d1 never says it listens: the probe is no-evidence with the
  // listener's own reason, no client is started on d2, and the change is refused (exit 3).
  if (!rdma::no_usable_port_reason(rdma::scan_devices(), "", 0))
    GTEST_SKIP() << "this host has an active RDMA port; the listener would listen";
  std::string yaml = change("echo 'mtu 9100' >> {home}/d1.conf");
  yaml +=
      "    - name: rdma-write\n      layer: transport\n      host: d2\n      kind: rdma\n"
      "      target: d1\n      timeout: 5s\n";
  commit_with_probes(yaml, kFabgateProbe);
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("RDMA listener on d1 exited before it was ready"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("RDMA"), std::string::npos) << out.output;
  for (const auto& sent : commands("probe", "d2"))
    EXPECT_EQ(sent.find("rdma-write --connect"), std::string::npos) << sent;
  EXPECT_TRUE(commands("step", "d1").empty());
}

}  // namespace
}  // namespace fabgate
