// A step whose SSH session drops after its command was sent, through the real `fabgate` binary,
// a real git repository and a real sshd on loopback: what a step that bounces the management
// plane (ifreload, a daemon restart, a management ACL) does to fabgate. The device's state is a
// file; the step adds a line to it and then kills the sshd process serving its own session.
// Whether the line landed cannot be known from the controller, so the step must count as
// applied: rolled back by the run, and by `fabgate recover` when the run died.

#include <filesystem>
#include <fstream>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::shell_quoted;

const std::string kBaseline = "hostname dev\nmtu 9000\n";
constexpr int kKilled = 128 + 9;  // the shell's status for a child killed by SIGKILL

// The step writes its change, then kills its session's sshd process (the shell's parent), so
// no exit status ever comes back. The probe fails while d1 holds the VLAN, so exit 4 proves
// the line is gone.
const std::string kChange = R"(id: c
title: add VLAN 100 and drop the session
targets: [d1]
bounds: {max_targets: 1, step_timeout: 20s, deadline: 1m}
steps:
  - {device: d1, run: "echo 'vlan 100' >> {home}/d1.conf && kill -9 $PPID; sleep 10"}
rollback:
  - {device: d1, run: "sed -i '/^vlan 100$/d' {home}/d1.conf"}
acceptance:
  restore_dwell: 0s
  probes:
    - {name: no-vlan-100, layer: workload, host: d2, run: "! grep -q 'vlan 100' {home}/d1.conf", timeout: 10s}
)";

// Identity only: what this test proves is about the device's file, which the probe checks.
const std::string kLightProfile = R"(platform: linux
sources:
  - category: identity
    timeout: 10s
    commands:
      - {run: hostname, parse: hostname}
      - {run: uname -r, parse: kernel-release}
)";

const std::string kTreatedAsApplied =
    "the session dropped after the command was sent; treated as applied";

class UnknownFateEndToEnd : public testing::FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* device : {"d1", "d2"}) write_config(device, kBaseline);
    repo_.write("policies/collectors/linux.yaml", kLightProfile);
    commit_intent(kChange);
  }

  static std::vector<nlohmann::json> journal(const std::filesystem::path& dir) {
    std::vector<nlohmann::json> records;
    std::ifstream in(dir / "journal.jsonl");
    std::string line;
    while (std::getline(in, line)) records.push_back(nlohmann::json::parse(line, nullptr, false));
    return records;
  }

  // The step-end record of d1's step in a journal; null when there is none.
  static nlohmann::json step_end(const std::filesystem::path& dir) {
    for (const auto& record : journal(dir))
      if (record.value("event", "") == "step-end" && record.value("device", "") == "d1")
        return record;
    return nullptr;
  }
};

TEST_F(UnknownFateEndToEnd, AStepWhoseSessionDroppedAfterItWasSentIsRolledBack) {
  // Given a step that adds VLAN 100 to d1 and then drops its own SSH session, then the run
  // rolls d1 back (the VLAN is gone, the file is its baseline byte for byte) and exits 4;
  // execution.json and the journal record the step as outcome-unknown, treated as applied.
  auto out = fabgate("apply c");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), kBaseline) << "the change is still on d1";

  auto dir = bundle();
  auto execution = read_json(dir / "execution.json");
  ASSERT_EQ(execution["steps"].size(), 1u) << execution.dump(2);
  const auto& step = execution["steps"][0];
  EXPECT_EQ(step["state"], "outcome-unknown") << execution.dump(2);
  EXPECT_EQ(step["may_have_applied"], true) << execution.dump(2);
  EXPECT_NE(step["reason"].get<std::string>().find(kTreatedAsApplied), std::string::npos)
      << execution.dump(2);
  ASSERT_EQ(execution["rollback"].size(), 1u) << execution.dump(2);
  EXPECT_EQ(execution["rollback"][0]["state"], "succeeded") << execution.dump(2);
  EXPECT_EQ(commands("rollback", "d1").size(), 1u);

  auto end = step_end(dir);
  ASSERT_FALSE(end.is_null());
  EXPECT_EQ(end["state"], "outcome-unknown") << end.dump();
  EXPECT_NE(end.value("reason", "").find(kTreatedAsApplied), std::string::npos) << end.dump();

  auto m = manifest();
  EXPECT_EQ(m["exit_code"], 4);
  EXPECT_NE(m["device_state"].get<std::string>().find("baseline verified"), std::string::npos)
      << m["device_state"];
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
}

TEST_F(UnknownFateEndToEnd, RecoverRollsBackAStepWhoseOutcomeIsUnknown) {
  // Given a run killed right after it journaled that d1's step lost its session after being
  // sent (before its own rollback), then d1 still holds the VLAN, and `fabgate recover` rolls
  // it back as applied: the baseline returns, exit 4, and its execution.json says why.
  auto first = fabgate("apply c");
  ASSERT_EQ(first.exit_code, 4) << first.output;
  std::size_t end_at = 0;
  auto records = journal(bundle());
  for (std::size_t i = 0; i < records.size() && end_at == 0; ++i)
    if (records[i].value("event", "") == "step-end") end_at = i + 1;
  ASSERT_GT(end_at, 0u);
  std::filesystem::remove_all(evidence_);
  write_config("d1", kBaseline);

  auto killed =
      fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(end_at), "apply c");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  ASSERT_EQ(config("d1"), kBaseline + "vlan 100\n");
  auto end = step_end(dir);
  ASSERT_FALSE(end.is_null());
  ASSERT_EQ(end["state"], "outcome-unknown") << end.dump();

  auto out = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_EQ(config("d1"), kBaseline) << "recover left the change on d1";
  auto execution = read_json(dir / "execution.json");
  ASSERT_EQ(execution["steps"].size(), 1u) << execution.dump(2);
  EXPECT_EQ(execution["steps"][0]["state"], "outcome-unknown") << execution.dump(2);
  EXPECT_NE(execution["steps"][0]["reason"].get<std::string>().find(kTreatedAsApplied),
            std::string::npos)
      << execution.dump(2);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
}

}  // namespace
}  // namespace fabgate
