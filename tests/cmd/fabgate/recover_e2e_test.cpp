// `fabgate recover` after the controller is killed with SIGKILL, through the real binary, a real
// git repository and a real sshd on loopback. Two "devices" (names for the same sshd) each hold
// their configuration in a file; a two-step change edits both files and its rollback undoes the
// edits. The fault hook FABGATE_FAULT_KILL_AFTER_JOURNAL=k kills apply right after journal
// record k is durable, for every k of the run, and recover must bring back the baseline every
// time, in the same evidence bundle, which must then verify.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::CommandOutput;
using testing::kFabgate;
using testing::shell_quoted;

const std::string kBaseline = "hostname dev\nmtu 9000\n";
constexpr int kKilled = 128 + 9;  // the shell's status for a child killed by SIGKILL

// Two steps per device, each changing the device's file; the rollback undoes them in reverse
// and works whether or not a step ran (a crash can stop anywhere). The acceptance probe fails
// once d1 carries 'vlan 10', so an uninterrupted apply rolls back too: its journal covers the
// steps, the rollback and the restore verification.
const std::string kChange = R"(id: c
title: two devices, two steps each
targets: [d1, d2]
bounds: {max_targets: 2, step_timeout: 10s, deadline: 1m}
steps:
  - {device: d1, run: "echo 'mtu 9100' >> {home}/d1.conf"}
  - {device: d1, run: "echo 'vlan 10' >> {home}/d1.conf"}
  - {device: d2, run: "echo 'mtu 9100' >> {home}/d2.conf"}
  - {device: d2, run: "echo 'vlan 10' >> {home}/d2.conf"}
rollback:
  - {device: d1, run: "sed -i '/^vlan 10$/d' {home}/d1.conf"}
  - {device: d1, run: "sed -i '/^mtu 9100$/d' {home}/d1.conf"}
  - {device: d2, run: "sed -i '/^vlan 10$/d' {home}/d2.conf"}
  - {device: d2, run: "sed -i '/^mtu 9100$/d' {home}/d2.conf"}
acceptance:
  # One matching round verifies each restore here: the dwell has its own tests
  # (restore_path_test, telemetry_gates_test), and the journal test below recovers ~40 times.
  restore_dwell: 0s
  probes:
    - {name: no-vlan-10, layer: workload, host: d2, run: "! grep -q 'vlan 10' {home}/d1.conf", timeout: 10s}
)";

const std::string kLightProfile = R"(platform: linux
sources:
  - category: identity
    timeout: 10s
    commands:
      - {run: hostname, parse: hostname}
      - {run: uname -r, parse: kernel-release}
)";

class RecoverEndToEnd : public testing::FabgateEndToEnd {
 protected:
  void SetUp() override {
    FabgateEndToEnd::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    reset_devices();
    // A light collector profile: identity only. Recover does not depend on what a snapshot
    // holds, and ~50 crash points times up to four snapshots with the shipped Linux profile
    // (~3.5 s each on loopback) would make the every-point test take many minutes.
    repo_.write("policies/collectors/linux.yaml", kLightProfile);
    commit_intent(kChange);
  }

  // The sequence number of the first record with this event in an uninterrupted apply, which
  // is left behind as it found the devices (it rolls back) with its evidence removed.
  std::size_t first_record(const std::string& event) {
    auto out = fabgate("apply c --parallel 1");
    EXPECT_EQ(out.exit_code, 4) << out.output;
    std::size_t found = 0;
    auto records = journal(bundle());
    for (std::size_t i = 0; i < records.size() && found == 0; ++i)
      if (records[i].value("event", "") == event) found = i + 1;
    std::filesystem::remove_all(evidence_);
    reset_devices();
    return found;
  }

  void reset_devices() {
    for (const char* device : {"d1", "d2"}) write_config(device, kBaseline);
  }

  static std::vector<nlohmann::json> journal(const std::filesystem::path& dir) {
    std::vector<nlohmann::json> records;
    std::ifstream in(dir / "journal.jsonl");
    std::string line;
    while (std::getline(in, line)) records.push_back(nlohmann::json::parse(line, nullptr, false));
    return records;
  }
};

TEST_F(RecoverEndToEnd, SigkillAtEveryJournalPointIsRecoveredToTheBaseline) {
  // Given an uninterrupted apply (rolled back by its failing acceptance, exit 4) with N journal
  // records, then for EVERY k in 1..N: apply killed right after record k dies of SIGKILL, and
  // recover leaves both devices exactly at the baseline, exits 3 when no step had started, 2
  // when the run had ended (run-end), 4 otherwise, and the bundle verifies.
  auto uninterrupted = fabgate("apply c --parallel 1");
  ASSERT_EQ(uninterrupted.exit_code, 4) << uninterrupted.output;
  ASSERT_EQ(config("d1"), kBaseline);
  auto records = journal(bundle());
  const std::size_t n = records.size();
  std::map<std::string, int> events;
  std::size_t first_step = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_FALSE(records[i].is_discarded()) << "journal line " << i + 1;
    ASSERT_EQ(records[i]["seq"], i + 1);
    std::string event = records[i].value("event", "");
    ++events[event];
    if (event == "step-start" && first_step == 0) first_step = i + 1;
  }
  // The journal must cover the whole run, or "every point" would prove little.
  ASSERT_EQ(events["run-start"], 1);
  ASSERT_EQ(events["step-start"], 4);
  ASSERT_EQ(events["step-end"], 4);
  ASSERT_EQ(events["rollback-start"], 4);
  ASSERT_GE(events["gate-start"], 10);
  ASSERT_EQ(records.back().value("event", ""), "run-end");
  ASSERT_GE(n, 30u);
  ASSERT_GT(first_step, 1u);

  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(12);
  for (std::size_t k = 1; k <= n; ++k) {
    SCOPED_TRACE("killed after journal record " + std::to_string(k) + " (" +
                 records[k - 1].value("event", "") + " " +
                 records[k - 1].value("gate", records[k - 1].value("device", "")) + ")");
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the test ran out of time";
    std::filesystem::remove_all(evidence_);
    reset_devices();
    auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(k),
                               "apply c --parallel 1");
    ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
    auto dir = bundle();
    ASSERT_FALSE(std::filesystem::exists(dir / "manifest.json"));
    ASSERT_EQ(journal(dir).size(), k);

    auto recovered = fabgate("recover " + shell_quoted(dir.string()));
    int expected = k < first_step ? 3 : k == n ? 2 : 4;
    EXPECT_EQ(recovered.exit_code, expected) << recovered.output;
    EXPECT_EQ(config("d1"), kBaseline);
    EXPECT_EQ(config("d2"), kBaseline);
    auto verify = fabgate("evidence verify " + shell_quoted(dir.string()));
    EXPECT_EQ(verify.exit_code, 0) << verify.output;
    // The recovery is recorded in the same journal, after the dead run's records.
    auto after = journal(dir);
    ASSERT_GT(after.size(), k);
    EXPECT_EQ(after[k].value("event", ""), "recover-start");
    EXPECT_EQ(after.back().value("event", ""), "run-end");
    if (expected == 4) {
      auto manifest = nlohmann::json::parse(testing::read_file((dir / "manifest.json").string()));
      EXPECT_EQ(manifest["exit_code"], 4);
      EXPECT_EQ(manifest["recovery"]["after_record"], k);
    }
    if (k == n) {  // sealed by recover: the bundle keeps the run's own exit code
      EXPECT_EQ(read_json(dir / "manifest.json")["exit_code"], 4);
    }
    if (::testing::Test::HasFailure()) break;  // one broken point explains the rest
  }
}

TEST_F(RecoverEndToEnd, FinishedRunHasNothingToRecover) {
  // Given a run that ended and sealed its bundle, then recover exits 2, says so and sends
  // nothing: no rollback command appears in the evidence.
  auto applied = fabgate("apply c");
  ASSERT_EQ(applied.exit_code, 4) << applied.output;
  auto dir = bundle();
  auto commands_before = testing::read_file((dir / "commands.jsonl").string());
  auto out = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("nothing to recover"), std::string::npos) << out.output;
  EXPECT_EQ(testing::read_file((dir / "commands.jsonl").string()), commands_before);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
}

TEST_F(RecoverEndToEnd, ARunThatEndedButDiedBeforeItsManifestIsSealedWithItsOwnExitCode) {
  // Given an apply that rolled back (run-end, exit 4) and was killed before writing its
  // manifest, then recover exits 2 (nothing to recover) and seals the bundle with the run's
  // exit code 4, not 2; the bundle verifies and `evidence show` says exit 4.
  auto run_end = first_record("run-end");
  ASSERT_GT(run_end, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(run_end),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  ASSERT_FALSE(std::filesystem::exists(dir / "manifest.json"));
  auto out = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("nothing to recover"), std::string::npos) << out.output;
  EXPECT_EQ(read_json(dir / "manifest.json")["exit_code"], 4);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
  auto show = fabgate("evidence show " + shell_quoted(dir.string()));
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("exit 4"), std::string::npos) << show.output;
}

TEST_F(RecoverEndToEnd, AnExitCodeEditedFrom4To0IsTampered) {
  // Given the bundle of an apply that exited 4, with "exit_code": 4 edited to 0 in its
  // manifest (every file still matching its hash), then `evidence verify` says TAMPERED
  // (exit 3) without --allowed-signers, and `evidence show` refuses (exit 3) without printing
  // "exit 0".
  auto applied = fabgate("apply c");
  ASSERT_EQ(applied.exit_code, 4) << applied.output;
  auto dir = bundle();
  auto manifest = read_json(dir / "manifest.json");
  ASSERT_EQ(manifest["exit_code"], 4);
  manifest["exit_code"] = 0;
  testing::write_file((dir / "manifest.json").string(), manifest.dump(2) + "\n");
  auto verify = fabgate("evidence verify " + shell_quoted(dir.string()));
  EXPECT_EQ(verify.exit_code, 3) << verify.output;
  EXPECT_NE(verify.output.find("TAMPERED"), std::string::npos) << verify.output;
  EXPECT_NE(verify.output.find("manifest: its content does not match its bundle_sha256"),
            std::string::npos)
      << verify.output;
  auto show = fabgate("evidence show " + shell_quoted(dir.string()));
  EXPECT_EQ(show.exit_code, 3) << show.output;
  EXPECT_EQ(show.output.find("exit 0"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("TAMPERED"), std::string::npos) << show.output;
}

TEST_F(RecoverEndToEnd, TornLastRecordIsReportedAndTheRunRecovered) {
  // Given a run killed after its first step ended, plus half a record at the end of the
  // journal (a crash while writing), then recover, run from another folder, names the torn
  // line, ignores it, restores the baseline (exit 4) and the evidence verifies.
  auto after_first_step = first_record("step-end");
  ASSERT_GT(after_first_step, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(after_first_step),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  ASSERT_NE(config("d1"), kBaseline);
  std::ofstream(dir / "journal.jsonl", std::ios::app) << R"({"event":"step-start","dev)";
  // Run from outside the repository: recover finds the intent through the journal alone.
  auto out = testing::run_shell("cd / && " + shell_quoted(kFabgate) + " recover " +
                                shell_quoted(dir.string()) + " 2>&1");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_NE(out.output.find("journal.jsonl:" + std::to_string(after_first_step + 1) +
                            ": torn last record (crash while writing"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), kBaseline);
  EXPECT_EQ(config("d2"), kBaseline);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
}

TEST_F(RecoverEndToEnd, RepoOverrideIsHonouredAndJsonSaysWhatHappened) {
  // Given a run killed after its first step, then `recover --repo` reads the intent from the
  // folder given (a missing one is an error naming it, exit 2, nothing sent), and with a clone
  // holding the journaled commit it restores the baseline and prints one JSON document saying
  // so (exit 4).
  auto after_first_step = first_record("step-end");
  ASSERT_GT(after_first_step, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(after_first_step),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  ASSERT_NE(config("d1"), kBaseline);

  auto missing = fabgate("recover --repo /nonexistent/intent " + shell_quoted(dir.string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("/nonexistent/intent"), std::string::npos) << missing.output;
  EXPECT_NE(config("d1"), kBaseline) << "a refused recover touched the device";

  std::string clone = repo_.file("clone");
  ASSERT_EQ(
      testing::run_shell("git clone -q " + shell_quoted(repo_.path()) + " " + shell_quoted(clone))
          .exit_code,
      0);
  auto out =
      testing::run_shell("cd / && " + shell_quoted(kFabgate) + " recover --json --repo " +
                         shell_quoted(clone) + " " + shell_quoted(dir.string()) + " 2>/dev/null");
  EXPECT_EQ(out.exit_code, 4) << out.output;
  auto summary = nlohmann::json::parse(out.output, nullptr, false);
  ASSERT_FALSE(summary.is_discarded()) << "not one JSON document: " << out.output;
  EXPECT_EQ(summary.value("recovered", false), true) << summary.dump(2);
  EXPECT_EQ(summary.value("exit_code", -1), 4) << summary.dump(2);
  EXPECT_EQ(config("d1"), kBaseline);
  EXPECT_EQ(config("d2"), kBaseline);
  auto manifest = read_json(dir / "manifest.json");
  EXPECT_EQ(manifest["recovery"].value("repo", ""), clone) << manifest["recovery"].dump();
}

TEST_F(RecoverEndToEnd, CorruptJournalIsRefusedAndNothingIsSent) {
  // Given a dead run whose journal was altered in the middle, then recover refuses (exit 2)
  // naming the line, and sends nothing: it never guesses what ran.
  auto after_first_step = first_record("step-end");
  ASSERT_GT(after_first_step, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(after_first_step),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  std::string text = testing::read_file((dir / "journal.jsonl").string());
  auto at = text.find("\"gate\":\"window\"");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 15, "\"gate\":\"wind0w\"");
  testing::write_file((dir / "journal.jsonl").string(), text);
  auto changed = config("d1");
  auto out = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("checksum mismatch in the middle of the journal"), std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), changed);
}

TEST_F(RecoverEndToEnd, CompleteLastRecordWithABadChecksumIsRefusedAndNothingIsSent) {
  // Given a dead run whose last journal record is whole (newline included) but has one byte
  // changed, then that is corruption, not a crash while writing: recover refuses (exit 2)
  // naming journal.jsonl and the line, and sends nothing, rather than dropping a record whose
  // action may have run.
  auto after_first_step = first_record("step-end");
  ASSERT_GT(after_first_step, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(after_first_step),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  std::string text = testing::read_file((dir / "journal.jsonl").string());
  auto at = text.rfind("\"succeeded\"");
  ASSERT_NE(at, std::string::npos) << text;
  ASSERT_EQ(text.back(), '\n');
  text[at + 1] = 'S';
  testing::write_file((dir / "journal.jsonl").string(), text);
  auto changed = config("d1");
  auto commands_before = testing::read_file((dir / "commands.jsonl").string());
  auto out = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("journal.jsonl:" + std::to_string(after_first_step) +
                            ": checksum mismatch in the last record"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(config("d1"), changed);
  EXPECT_EQ(testing::read_file((dir / "commands.jsonl").string()), commands_before);
}

TEST_F(RecoverEndToEnd, MissingPreSnapshotIsRolledBackButNotVerified) {
  // Given a dead run whose baseline snapshot is gone, then recover still rolls the devices
  // back but exits 5 and says the baseline cannot be verified: absent evidence is not health.
  auto after_first_step = first_record("step-end");
  ASSERT_GT(after_first_step, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(after_first_step),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  std::filesystem::remove(dir / "snapshots/pre.json");
  auto out = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(out.exit_code, 5) << out.output;
  EXPECT_NE(out.output.find("snapshots/pre.json is missing"), std::string::npos) << out.output;
  EXPECT_EQ(config("d1"), kBaseline);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
}

TEST_F(RecoverEndToEnd, RecoverKilledItselfCanBeRunAgain) {
  // Given a dead run, and a recover killed right after its first rollback record, then a
  // second recover undoes the same devices, restores the baseline (exit 4), and the one bundle
  // holds both attempts and verifies.
  auto after_first_step = first_record("step-end");
  ASSERT_GT(after_first_step, 0u);
  auto killed = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(after_first_step),
                             "apply c --parallel 1");
  ASSERT_EQ(killed.exit_code, kKilled) << killed.output;
  auto dir = bundle();
  std::size_t dead_at = journal(dir).size();
  auto first = fabgate_with("FABGATE_FAULT_KILL_AFTER_JOURNAL=" + std::to_string(dead_at + 3),
                            "recover " + shell_quoted(dir.string()));
  ASSERT_EQ(first.exit_code, kKilled) << first.output;
  auto second = fabgate("recover " + shell_quoted(dir.string()));
  EXPECT_EQ(second.exit_code, 4) << second.output;
  EXPECT_EQ(config("d1"), kBaseline);
  EXPECT_EQ(config("d2"), kBaseline);
  std::size_t attempts = 0;
  for (const auto& record : journal(dir)) attempts += record.value("event", "") == "recover-start";
  EXPECT_EQ(attempts, 2u);
  EXPECT_EQ(fabgate("evidence verify " + shell_quoted(dir.string())).exit_code, 0);
}

}  // namespace
}  // namespace fabgate
