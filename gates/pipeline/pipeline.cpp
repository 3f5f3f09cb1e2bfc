#include "gates/pipeline/pipeline.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "adapters/core/text.h"
#include "gates/compare/default_rules.h"
#include "gates/compare/engine.h"
#include "gates/compare/exception_register.h"
#include "gates/compare/rule_set.h"
#include "gates/compare/snapshot.h"
#include "gates/compat/check.h"
#include "gates/compat/matrix.h"
#include "gates/pipeline/identity_check.h"
#include "gates/pipeline/interruption.h"
#include "gates/pipeline/monitoring.h"
#include "gates/pipeline/plan_digest.h"
#include "gates/pipeline/report_html.h"
#include "gates/pipeline/reports.h"

namespace fabgate::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

Duration since(Clock::time_point start) {
  return std::chrono::duration_cast<Duration>(Clock::now() - start);
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// Rule sets named by fabgate.yaml and the change, read from the commit's policies/compare/;
// "fabric-default" and "rdma-default" fall back to the copies compiled into fabgate.
Result<std::vector<compare::RuleSet>> rule_sets_for(const intent::IntentRepository& repository,
                                                    const intent::Change& change) {
  std::vector<std::string> names = repository.settings.rule_sets;
  for (const auto& name : change.compare.rule_sets)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::vector<compare::RuleSet> sets;
  const std::string compare_dir = repository.settings.policies_dir + "/compare/";
  for (const auto& name : names) {
    std::optional<compare::RuleSet> found;
    for (const auto& [path, text] : repository.policy_texts) {
      if (path.rfind(compare_dir, 0) != 0) continue;
      auto set = compare::load_rule_set(text, path);
      if (!set.ok()) return std::move(set).error();
      if (set->name == name) found = std::move(set.value());
    }
    if (!found && (name == "fabric-default" || name == "rdma-default")) {
      auto set = name == "fabric-default" ? compare::load_rule_set(compare::default_rule_set_text(),
                                                                   compare::kDefaultRuleSetName)
                                          : compare::load_rule_set(compare::rdma_rule_set_text(),
                                                                   compare::kRdmaRuleSetName);
      if (!set.ok()) return std::move(set).error();
      found = std::move(set.value());
    }
    if (!found) return Error::invalid_input("compare: rule set '" + name + "' not found");
    sets.push_back(std::move(*found));
  }
  return sets;
}

Result<compare::ExceptionRegister> exceptions_for(const intent::IntentRepository& repository) {
  auto it = repository.policy_texts.find(repository.settings.policies_dir + "/exceptions.yaml");
  if (it == repository.policy_texts.end()) return compare::ExceptionRegister{};
  return compare::load_exception_register(it->second, it->first);
}

// The register entry that waives a probe which did not pass (scope naming its host, rule
// `probe:<name>`, not expired); null when none does.
const compare::ExceptionEntry* waiver_of(const Result<compare::ExceptionRegister>& exceptions,
                                         const ProbeOutcome& outcome) {
  if (outcome.verdict == Verdict::pass || !exceptions.ok()) return nullptr;
  for (const auto& entry : exceptions->entries)
    if (!entry.expired(now_utc()) && entry.covers(outcome.host, "probe:" + outcome.name, {}))
      return &entry;
  return nullptr;
}

// "round 2 at +1.1s (snapshot 0.9s, probes 0.4s): WHY" for settle-restored's details.
template <typename Round>
std::string round_line(std::size_t number, const Round& round) {
  return "round " + std::to_string(number) + " at +" + format_duration(round.started_after) +
         " (snapshot " + format_duration(round.snapshot_took) + ", probes " +
         format_duration(round.probes_took) + "): " + round.not_held;
}

std::string check_line(const compare::CheckResult& result) {
  return "[" + std::string(compare::to_string(result.layer)) + "] " + result.path + ": " +
         result.pre.value_or("(absent)") + " -> " + result.post.value_or("(absent)") + ": " +
         result.reason +
         (result.exception_id.empty() ? "" : " (waived by " + result.exception_id + ")");
}

}  // namespace

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::plan:
      return "plan";
    case Mode::apply:
      return "apply";
    case Mode::rehearse:
      return "rehearse";
  }
  return "apply";
}

Pipeline::Pipeline(const intent::IntentRepository& repository, const intent::Change& change,
                   Collaborators collaborators, PipelineOptions options)
    : repository_(repository),
      change_(change),
      with_(collaborators),
      options_(std::move(options)),
      probe_context_{repository.inventory, repository.settings.probes} {
  for (const auto& device : repository_.inventory.devices) scope_.push_back(&device);
  if (const char* gates = std::getenv(kFaultThrowInGate)) {
    std::string list = gates;
    std::replace(list.begin(), list.end(), ',', '\n');
    for (const auto& name : split_lines(list)) fault_gates_.insert(std::string(trim(name)));
  }
}

GateRecord& Pipeline::gate(const std::string& name, const std::function<void(GateRecord&)>& body) {
  GateRecord record;
  record.name = name;
  record.started = now_utc();
  auto start = Clock::now();
  // Nothing a gate body throws leaves the run: it is this gate failing, and the run goes on
  // down the path any failed gate takes (refused before the first step, rolled back after it).
  try {
    with_.observer.gate_started(name);
    with_.evidence.append_journal(
        {{"event", "gate-start"}, {"gate", name}, {"at", format_utc(record.started)}});
    if (fault_gates_.count(name))
      throw std::runtime_error(std::string("fault injected by ") + kFaultThrowInGate);
    body(record);
    if (with_.session_notes)
      for (auto& note : with_.session_notes()) record.details.push_back(std::move(note));
  } catch (const std::exception& error) {
    fail_on_internal_error(record, error.what());
  } catch (...) {
    fail_on_internal_error(record, "an exception of unknown type");
  }
  // A verdict is only as good as the evidence kept for it: a file this gate could not write
  // (a full disk, an I/O error) leaves it without evidence, whatever its checks said. Undoing
  // is the exception: the rollback and the disarm go ahead unrecorded (undoing matters more
  // than recording it), their verdicts rest on the devices' answers, and the restore is proven
  // by the gates after them.
  const bool records_best_effort = name == "rollback" || name == "confirm-disarm";
  for (auto& failure : with_.evidence.take_failed_writes()) {
    if (!blocks(record.verdict) && !records_best_effort) {
      record.verdict = Verdict::no_evidence;
      record.summary = "its evidence could not be written to the bundle";
    }
    record.details.push_back("evidence not kept: " + failure);
  }
  record.duration = since(start);
  with_.evidence.append_journal({{"event", "gate-end"},
                                 {"gate", name},
                                 {"verdict", std::string(to_string(record.verdict))},
                                 {"at", format_utc(now_utc())}});
  outcome_.gates.push_back(std::move(record));
  note_first_failure(outcome_.gates.back());
  if (outcome_.change_started && !failure_detected_ && blocks(outcome_.gates.back().verdict))
    failure_detected_ = Clock::now();
  try {
    with_.observer.gate_finished(outcome_.gates.back());
  } catch (...) {
    // The terminal could not show it; the record is kept and the report shows it.
  }
  return outcome_.gates.back();
}

void Pipeline::fail_on_internal_error(GateRecord& record, const std::string& what) {
  record.verdict = Verdict::fail;
  record.summary = "stopped on an internal error; treated as a failed gate";
  record.details.insert(record.details.begin(), "internal error: " + what);
  outcome_.internal_errors.push_back(record.name + ": " + what);
}

void Pipeline::note_interruption(GateRecord& record) {
  interruption_noted_ = true;
  record.verdict = Verdict::fail;
  std::string how = Interruption::first_name() + " received";
  record.details.push_back(how + ": " +
                           (outcome_.change_started || !execution_.touched.empty()
                                ? "the change is rolled back and the restore verified"
                                : "the run stops before any step is sent"));
  outcome_.interrupted_by = Interruption::first_name();
}

GateRecord& Pipeline::skip(const std::string& name, const std::string& why) {
  GateRecord record;
  record.name = name;
  record.verdict = Verdict::skipped;
  record.summary = why;
  record.started = now_utc();
  outcome_.gates.push_back(std::move(record));
  with_.observer.gate_finished(outcome_.gates.back());
  return outcome_.gates.back();
}

bool Pipeline::stopped() {
  // A signal stops the run at the next gate boundary (a wait inside a gate notices it sooner):
  // it is recorded as a failed gate of its own, so the run takes the failed-gate path.
  if (Interruption::requested() && !interruption_noted_)
    gate("interrupted", [&](GateRecord& r) {
      note_interruption(r);
      r.summary = "the operator or the CI runner asked the run to stop";
    });
  return std::any_of(outcome_.gates.begin(), outcome_.gates.end(),
                     [](const GateRecord& record) { return blocks(record.verdict); });
}

void Pipeline::note_first_failure(const GateRecord& record) {
  if (!outcome_.first_disproven.empty() || !blocks(record.verdict)) return;
  outcome_.first_disproven =
      record.name + ": " + (record.details.empty() ? record.summary : record.details.front());
}

// ---- the gates ------------------------------------------------------------------------------

void Pipeline::check_window(GateRecord& record) {
  if (!change_.window) {
    record.verdict = Verdict::pass;
    record.summary = "no maintenance window declared";
    return;
  }
  const auto& window = *change_.window;
  bool inside = options_.now >= window.start && options_.now < window.end;
  record.verdict = inside ? Verdict::pass : Verdict::fail;
  record.summary = std::string(inside ? "inside" : "outside") + " the window " +
                   format_utc(window.start) + " .. " + format_utc(window.end) + " (now " +
                   format_utc(options_.now) + ")";
}

void Pipeline::take_snapshot(GateRecord& record, const std::string& label, nlohmann::json& into) {
  record_snapshot(record, label,
                  with_.snapshotter.take(scope_, repository_.commit.id, &with_.observer), into);
}

void Pipeline::record_snapshot(GateRecord& record, const std::string& label, TakenSnapshot taken,
                               nlohmann::json& into) {
  const auto& collected = scope_;
  into = std::move(taken.document);
  auto written = with_.evidence.write_json("snapshots/" + label + ".json", into);
  if (!written.ok()) {
    // A snapshot that is not on disk cannot be audited, and a missing pre.json leaves recover
    // without a baseline: it is absent evidence, whatever the devices answered.
    record.verdict = Verdict::no_evidence;
    record.summary = "snapshots/" + label + ".json could not be written";
    record.details.push_back("evidence: " + written.error().message);
    for (auto& line : taken.missing) record.details.push_back(std::move(line));
    return;
  }
  if (label == "pre") outcome_.configs_captured = captured_configs(into);
  if (label != "pre") {
    for (auto& delta : config_deltas(pre_, into, label, with_.evidence.redactor()))
      outcome_.config_deltas.push_back(std::move(delta));
  }
  if (taken.missing.empty()) {
    record.verdict = Verdict::pass;
    record.summary = count_of(collected.size(), "device") + ", every source collected";
  } else {
    record.verdict = Verdict::no_evidence;
    record.summary = count_of(taken.missing.size(), "source") + " without evidence";
    for (auto& line : taken.missing) record.details.push_back(std::move(line));
  }
  check_identity(record, label, into, collected);
}

void Pipeline::check_identity(GateRecord& record, const std::string& label,
                              const nlohmann::json& snapshot,
                              const std::vector<const intent::Device*>& devices) {
  // Every snapshot, not only the baseline: an address that answers as another device after the
  // change (or after a rollback) would make post and restored describe the wrong box.
  auto findings = check_identities(devices, snapshot);
  if (findings.empty()) return;
  std::size_t wrong = 0, unproven = 0;
  nlohmann::json document = nlohmann::json::array();
  std::vector<std::string> lines;
  for (const auto& finding : findings) {
    wrong += finding.verdict == Verdict::fail;
    unproven += finding.verdict == Verdict::no_evidence;
    if (finding.verdict != Verdict::pass) lines.push_back(finding.line);
    document.push_back(to_json(finding));
  }
  // Wrong identities first: they are the headline of the gate.
  std::stable_partition(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find(" answered as ") != std::string::npos;
  });
  record.details.insert(record.details.begin(), lines.begin(), lines.end());
  auto written = with_.evidence.write_json("snapshots/" + label + "-identity.json", document);
  if (!written.ok()) {
    record.details.push_back("evidence: " + written.error().message);
    if (record.verdict == Verdict::pass) record.verdict = Verdict::no_evidence;
  }
  if (wrong) {
    record.verdict = Verdict::fail;
    record.summary =
        count_of(wrong, "device identity") + " differ from the inventory; " + record.summary;
  } else if (unproven) {
    if (record.verdict == Verdict::pass) record.verdict = Verdict::no_evidence;
    record.summary =
        count_of(unproven, "declared identity field") + " not proven; " + record.summary;
  } else {
    record.summary += "; " + count_of(findings.size(), "declared identity field") + " match";
  }
}

void Pipeline::check_compat(GateRecord& record) {
  // Judges the identity the pre-change snapshot collected for every target against the
  // compatibility matrix committed at <policies>/compat.yaml (docs/compat.md). A target without
  // identity is no-evidence with or without a matrix: a version gate without identity would be
  // a pass without evidence. Identity counts only when its source collected it, and with a
  // matrix a target whose platform it does not list is no-evidence too: nobody said which
  // versions that platform is qualified with.
  const std::string matrix_path = repository_.settings.policies_dir + "/compat.yaml";
  std::optional<compat::Matrix> matrix;
  if (auto text = repository_.policy_texts.find(matrix_path);
      text != repository_.policy_texts.end()) {
    auto loaded = compat::load_matrix(text->second, matrix_path);
    if (!loaded.ok()) {
      // validate, plan and apply reject a bad matrix before the pipeline (exit 2); should one
      // get here anyway, nothing was proven.
      record.verdict = Verdict::no_evidence;
      record.summary = loaded.error().message;
      record.details = loaded.error().details;
      return;
    }
    matrix = std::move(loaded.value());
  }
  static const nlohmann::json kNoDevices = nlohmann::json::object();
  const auto& devices = pre_.contains("devices") ? pre_.at("devices") : kNoDevices;
  std::size_t without_identity = 0, checked_targets = 0, outside = 0, unproven = 0;
  std::map<std::string, std::vector<std::string>> unlisted;  // platform -> targets
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& target : change_.targets) {
    auto entry = devices.find(target);
    if (entry == devices.end() || !compat::identity_collected(*entry)) {
      ++without_identity;
      record.details.push_back(target + ": no identity collected (hostname, OS, versions)");
      continue;
    }
    if (!matrix) continue;
    const intent::Device* device = repository_.inventory.find(target);
    std::string platform = device ? device->platform : std::string();
    if (!matrix->find(platform)) {
      unlisted[platform].push_back(target);
      continue;
    }
    ++checked_targets;
    for (const auto& finding :
         compat::check_identity(*matrix, target, platform, entry->at("identity"))) {
      outside += finding.verdict == compat::FindingVerdict::fail;
      unproven += finding.verdict == compat::FindingVerdict::no_evidence;
      if (finding.verdict != compat::FindingVerdict::pass)
        record.details.push_back(finding.to_line());
      findings.push_back(compat::to_json(finding));
    }
  }
  const bool without_evidence = unproven || without_identity || !unlisted.empty();
  record.verdict = outside            ? Verdict::fail
                   : without_evidence ? Verdict::no_evidence
                                      : Verdict::pass;
  if (!matrix) {
    record.summary = without_identity
                         ? "identity missing on " + count_of(without_identity, "target")
                         : "identity collected for " + count_of(change_.targets.size(), "target");
    record.summary += "; no compatibility matrix (" + matrix_path + "), so no version was checked";
    return;
  }
  std::vector<std::string> parts;
  if (outside) parts.push_back(count_of(outside, "version") + " outside " + matrix_path);
  if (unproven) parts.push_back(count_of(unproven, "required version") + " without evidence");
  if (without_identity)
    parts.push_back("identity missing on " + count_of(without_identity, "target"));
  // A platform the matrix does not list was never qualified: listing it with nothing under it
  // is how a matrix says that nothing is required of it.
  nlohmann::json unlisted_json = nlohmann::json::object();
  for (const auto& [platform, targets] : unlisted) {
    std::string name = platform.empty() ? std::string("(none)") : platform;
    parts.push_back("platform " + name + " is not in " + matrix_path + " (" + join(targets, ", ") +
                    ")");
    for (const auto& target : targets)
      record.details.push_back(target + ": platform " + name + " is not in " + matrix_path +
                               ", so no version of it is qualified (list `" + name +
                               ":` with nothing under it to require nothing)");
    unlisted_json[platform] = targets;
  }
  if (parts.empty())
    parts.push_back(count_of(findings.size(), "version") + " on " +
                    count_of(checked_targets, "target") + " within " + matrix_path);
  record.summary = join(parts, "; ");
  auto written = with_.evidence.write_json(
      "compat.json",
      {{"matrix", matrix_path}, {"findings", findings}, {"unlisted_platforms", unlisted_json}});
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
}

void Pipeline::check_rollback_plan(GateRecord& record) {
  std::set<std::string> stepped, undone;
  for (const auto& step : change_.steps) stepped.insert(step.device);
  for (const auto& step : change_.rollback) undone.insert(step.device);
  for (const auto& device : stepped)
    if (!undone.count(device))
      record.details.push_back(device + " has steps but no rollback steps");
  if (!with_.gnmi)
    for (const auto* list : {&change_.steps, &change_.rollback})
      for (const auto& step : *list)
        if (step.run.empty())
          record.details.push_back(step.device +
                                   ": gNMI steps are not executable without a gNMI client");
  record.verdict = record.details.empty() ? Verdict::pass : Verdict::fail;
  record.summary = record.details.empty() ? count_of(change_.rollback.size(), "rollback step") +
                                                " for " + count_of(stepped.size(), "device")
                                          : "the change cannot be undone as written";
}

void Pipeline::check_approval(GateRecord& record) {
  const auto& policy = repository_.settings.approval;
  // plan only says what apply will need; approvals are proven when something is about to run.
  if (options_.mode == Mode::plan) {
    record.verdict = Verdict::pass;
    record.summary =
        policy.min_approvals == 0
            ? "policy requires no approvals"
            : "policy requires " +
                  count_of(static_cast<std::size_t>(policy.min_approvals), "approval") +
                  " of this plan's digest (needed before apply)";
    if (policy.require_rehearsal) record.summary += "; a passing rehearsal is required";
    record.details.push_back("plan digest: " + plan_digest(repository_, change_));
    return;
  }
  if (options_.approval_judge) {
    auto judgement = options_.approval_judge->judge(
        repository_, change_, plan_digest(repository_, change_),
        options_.mode == Mode::rehearse ? RehearsalCheck::not_applicable
                                        : RehearsalCheck::per_policy);
    record.verdict = judgement.verdict;
    record.summary = std::move(judgement.summary);
    record.details = std::move(judgement.details);
    outcome_.approvals = std::move(judgement.approvals);
    copy_approvals_into_bundle(record);
    return;
  }
  bool needs_rehearsal = policy.require_rehearsal && options_.mode == Mode::apply;
  if (policy.min_approvals == 0 && !needs_rehearsal) {
    record.verdict = Verdict::pass;
    record.summary = "policy requires no approvals";
    return;
  }
  record.verdict = Verdict::fail;
  record.summary = "policy requires approvals or a rehearsal, and nothing can prove them";
  record.details.push_back("approvals required: " + std::to_string(policy.min_approvals) +
                           ", valid: 0" + (needs_rehearsal ? "; rehearsal required: none" : ""));
}

void Pipeline::copy_approvals_into_bundle(GateRecord& record) {
  // Approvals are copied as they are, signature included: the manifest then lists and hashes
  // them, and the bundle still proves what was approved after the file given (often in /tmp)
  // is gone. A file too large to be an approval, or unreadable, is not copied; the judge
  // already recorded why it did not count.
  constexpr std::uintmax_t kMaxApprovalBytes = 1 << 20;
  std::size_t index = 0;
  for (auto& approval : outcome_.approvals) {
    ++index;
    std::error_code error;
    const std::filesystem::path given(approval.file);
    if (!std::filesystem::is_regular_file(given, error) ||
        std::filesystem::file_size(given, error) > kMaxApprovalBytes)
      continue;
    std::ifstream in(given, std::ios::binary);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) continue;
    std::string name = given.filename().string();
    if (name.empty() || name.front() == '.') name = "approval" + name;
    const std::string copy = "approvals/" + std::to_string(index) + "-" + name;
    auto written = with_.evidence.write(copy, content);
    if (!written.ok()) {
      record.details.push_back("evidence: " + written.error().message);
      continue;
    }
    approval.bundle_copy = copy;
  }
}

std::vector<intent::Probe> Pipeline::host_probes() const {
  // promql probes ask Prometheus; every other kind runs on its host.
  std::vector<intent::Probe> on_hosts;
  for (const auto& declared : change_.acceptance.probes)
    if (declared.kind != "promql") on_hosts.push_back(declared);
  return on_hosts;
}

void Pipeline::probe(GateRecord& record, const std::string& phase) {
  judge_probes(record, phase,
               run_probes(with_.remote, probe_context_, host_probes(), phase, &with_.observer));
}

void Pipeline::judge_probes(GateRecord& record, const std::string& phase,
                            std::vector<ProbeOutcome> outcomes) {
  for (const auto& declared : change_.acceptance.probes)
    if (declared.kind == "promql") probe_promql(declared, phase, outcomes);
  nlohmann::json document = nlohmann::json::array();
  std::size_t passed = 0;
  record.verdict = Verdict::pass;
  // A probe that failed or had no evidence may be waived by the exceptions register, with a
  // scope naming the host and `rule: probe:<name>` (e.g. no RDMA device on a host in RMA). The
  // waiver is listed wherever the probe is.
  auto exceptions = exceptions_for(repository_);
  std::size_t waived = 0;
  for (auto& outcome : outcomes) {
    if (const auto* entry = waiver_of(exceptions, outcome)) {
      outcome.waived_by = entry->id;
      record.details.push_back("[" + outcome.layer + "] " + outcome.name + " on " + outcome.host +
                               ": " + std::string(to_string(outcome.verdict)) + " WAIVED by " +
                               entry->id + " (" + entry->owner + ", until " +
                               format_utc(entry->expiry) + "): " + outcome.reason);
      if (std::find(outcome_.exceptions_used.begin(), outcome_.exceptions_used.end(), entry->id) ==
          outcome_.exceptions_used.end())
        outcome_.exceptions_used.push_back(entry->id);
    }
    document.push_back(to_json(outcome));
    if (outcome.verdict == Verdict::pass || !outcome.waived_by.empty()) {
      ++passed;
      waived += !outcome.waived_by.empty();
    } else {
      if (record.verdict != Verdict::fail) record.verdict = outcome.verdict;
      record.details.push_back("[" + outcome.layer + "] " + outcome.name + " on " + outcome.host +
                               ": " + std::string(to_string(outcome.verdict)) + ": " +
                               outcome.reason);
    }
    auto& layer = outcome_.layers[phase][outcome.layer];
    bool counts_as_pass = outcome.verdict == Verdict::pass || !outcome.waived_by.empty();
    if (layer.is_null() || (!counts_as_pass && layer != "fail"))
      layer = counts_as_pass ? "pass" : std::string(to_string(outcome.verdict));
    outcome_.probes.push_back(outcome);
  }
  auto written = with_.evidence.write_json("probes/" + phase + ".json", document);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  record.summary = outcomes.empty()
                       ? "no probes declared"
                       : std::to_string(passed) + "/" + std::to_string(outcomes.size()) +
                             " probes passed" +
                             (waived ? " (" + std::to_string(waived) + " waived)" : "");
  if (outcomes.empty() && phase != "restored") {
    // A change without probes proves nothing about the service; refuse rather than pass.
    record.verdict = Verdict::no_evidence;
    record.summary = "no probes declared: the service cannot be proven";
  }
}

void Pipeline::execute(GateRecord& record) {
  Executor executor(with_.remote, repository_.inventory, change_, &with_.evidence,
                    options_.parallelism, with_.gnmi);
  auto deadline = started_ + change_.bounds.deadline;
  try {
    execution_ = executor.apply(deadline);
  } catch (...) {
    // What was sent before the throw is in the journal (every step is write-ahead): the
    // rollback undoes exactly that.
    adopt_journaled_steps();
    throw;
  }
  outcome_.steps = execution_.runs;
  outcome_.change_started = !execution_.runs.empty();
  std::size_t ok = 0;
  for (const auto& run : execution_.runs) {
    if (run.state == StepState::succeeded)
      ++ok;
    else
      record.details.push_back(run.device + " step " + std::to_string(run.index) + ": " +
                               run.reason);
  }
  if (execution_.failure && record.details.empty()) record.details.push_back(*execution_.failure);
  record.verdict = execution_.failure ? Verdict::fail : Verdict::pass;
  record.summary = std::to_string(ok) + "/" + std::to_string(change_.steps.size()) +
                   " steps succeeded on " + count_of(execution_.touched.size(), "device");
}

void Pipeline::settle(GateRecord& record) {
  // The change's own settle is bounded by its deadline; after a rollback the full settle time
  // is given, since verifying the restore matters more than the change's deadline.
  auto left = change_.bounds.deadline - since(started_);
  Duration wait = failure_detected_ ? change_.acceptance.settle
                                    : std::min<Duration>(change_.acceptance.settle,
                                                         std::max(left, Duration::zero()));
  const auto waiting = Clock::now();
  if (!Interruption::sleep_unless(wait, 0)) {
    note_interruption(record);
    record.summary = "interrupted after " + format_duration(since(waiting)) + " of " +
                     format_duration(wait);
    return;
  }
  record.verdict = Verdict::pass;
  record.summary = "waited " + format_duration(wait) + " for the fabric to converge";
}

void Pipeline::settle_restored(GateRecord& record) {
  // The restore is verified in rounds instead of after a fixed wait. Each round takes the
  // restored snapshot, compares it with the baseline and runs the probes on hosts at the same
  // time; the first round in which all of that holds is the verification, and its evidence is
  // what snapshot-restored, compare-restored and restored-probes record. Probes alone would not
  // do: after spine1's rollback in the lab they passed over spine2 in 0.7 s while spine1's BGP
  // routes were still missing. A round that does not hold is followed by another after
  // kSettlePollInterval, and the last one starts at the change's settle bound, so a slow
  // convergence still gets the time a fixed settle gave it.
  const Duration bound = std::max(change_.acceptance.settle, Duration::zero());
  const auto start = Clock::now();
  ProbeContext at_bound = probe_context_;
  at_bound.concurrent_flows = true;  // a round lasts as long as its slowest part
  ProbeContext early = at_bound;
  early.flows_reply_timeout = kSettlePollReplyTimeout;
  // A round costs a full snapshot. First watch only what the fault changed, every
  // kSettlePollInterval, until it is back: the first round then starts about when the fabric
  // converged instead of before (a round at once after the rollback would not hold: routing
  // needs time to re-advertise).
  const std::string watched = watch_fault_footprint(start, bound);
  std::vector<std::string> not_held;
  for (;;) {
    if (Interruption::abandoned()) {
      record.verdict = Verdict::fail;
      record.summary = "abandoned by a second signal before a round held";
      return;  // no round: the restored gates say the restore is not verified
    }
    const bool last = since(start) >= bound;
    RestoreRound round = restore_round(last ? at_bound : early, start);
    if (round.not_held.empty() || last) {
      restore_round_ = std::move(round);
      break;
    }
    not_held.push_back(round_line(not_held.size() + 1, round));
    const Duration left = bound - since(start);
    if (left > Duration::zero())
      (void)Interruption::sleep_unless(std::min(kSettlePollInterval, left), 1);
  }
  const RestoreRound& kept = *restore_round_;
  const std::size_t rounds = not_held.size() + 1;
  record.verdict = Verdict::pass;
  if (kept.not_held.empty()) {
    outcome_.settle_restored = kept.started_after;
    record.summary = "the restore held in round " + std::to_string(rounds) + ", started " +
                     format_duration(kept.started_after) + " after the rollback (settle bound " +
                     format_duration(bound) + ")";
  } else {
    record.summary = "no round held within the settle bound of " + format_duration(bound) +
                     "; the last round, started at +" + format_duration(kept.started_after) +
                     ", is judged by the restored gates";
    not_held.push_back(round_line(rounds, kept));
  }
  // Rounds that did not hold are progress, not failures: name the first and the last.
  if (!not_held.empty()) record.details.push_back(not_held.front());
  if (not_held.size() > 2)
    record.details.push_back("(" + std::to_string(not_held.size() - 2) + " more rounds)");
  if (not_held.size() > 1) record.details.push_back(not_held.back());
  if (kept.not_held.empty())
    record.details.push_back(round_line(rounds, kept) + "snapshot, comparison and probes held");
  if (!watched.empty()) record.details.insert(record.details.begin(), watched);
}

std::map<std::string, std::set<std::string>> Pipeline::differing_parts(
    const nlohmann::json& document) {
  std::map<std::string, std::set<std::string>> parts;
  std::vector<std::string> problems;
  auto report = compare_with_pre(document, "restored", false, problems);
  if (!report) return parts;
  for (const auto& result : report->results) {
    if (result.verdict != compare::Verdict::fail && result.verdict != compare::Verdict::no_evidence)
      continue;
    // devices.<device>.<category>...: the category is the snapshot part to watch.
    const std::string prefix = "devices." + result.device + ".";
    if (result.device.empty() || result.path.rfind(prefix, 0) != 0) continue;
    const std::string rest = result.path.substr(prefix.size());
    parts[result.device].insert(rest.substr(0, rest.find('.')));
  }
  return parts;
}

std::string Pipeline::watch_fault_footprint(Clock::time_point settle_started, Duration bound) {
  if (!post_.is_object() || !post_.contains("devices")) return {};
  const auto footprint = differing_parts(post_);
  if (footprint.empty()) return {};
  std::vector<const intent::Device*> devices;
  std::set<std::string> categories;
  std::vector<std::string> names;
  for (const auto* device : scope_) {
    auto found = footprint.find(device->name);
    if (found == footprint.end()) continue;
    devices.push_back(device);
    categories.insert(found->second.begin(), found->second.end());
    names.push_back(device->name + " " + join({found->second.begin(), found->second.end()}, "/"));
  }
  if (devices.empty()) return {};
  const auto watch_started = Clock::now();
  std::size_t polls = 0;
  bool back = false;
  std::string unwatchable;
  while (!back && since(settle_started) < bound && !Interruption::abandoned()) {
    if (polls > 0) (void)Interruption::sleep_unless(kSettlePollInterval, 1);
    ++polls;
    TakenSnapshot part =
        with_.snapshotter.take_categories(devices, categories, repository_.commit.id);
    if (!part.missing.empty() || !part.document.contains("devices")) continue;
    // The post snapshot with the watched parts replaced: only those can still differ.
    nlohmann::json merged = post_;
    for (const auto* device : devices) {
      const auto& taken = part.document["devices"][device->name];
      auto& into = merged["devices"][device->name];
      for (const auto& category : footprint.at(device->name)) {
        // A part no source of its own collects (derived from another's output) cannot be
        // watched alone: waiting for it would last until the bound. The rounds take over.
        if (!taken.contains("sources") || !taken["sources"].contains(category)) {
          unwatchable = device->name + " " + category;
          break;
        }
        if (taken.contains(category))
          into[category] = taken[category];
        else
          into.erase(category);
        into["sources"][category] = taken["sources"][category];
      }
      if (!unwatchable.empty()) break;
    }
    if (!unwatchable.empty()) break;
    auto still = differing_parts(merged);
    back = std::none_of(footprint.begin(), footprint.end(), [&](const auto& entry) {
      auto now = still.find(entry.first);
      return now != still.end() &&
             std::any_of(entry.second.begin(), entry.second.end(),
                         [&](const auto& c) { return now->second.contains(c); });
    });
  }
  if (polls == 0) return {};  // no settle time: the one round starts at once
  if (!unwatchable.empty())
    return "what the fault changed (" + join(names, ", ") + ") was not watched: " + unwatchable +
           " has no source of its own to collect alone; the rounds started at once";
  return "watched what the fault changed (" + join(names, ", ") + "): " + std::to_string(polls) +
         " partial snapshot" + (polls == 1 ? "" : "s") + " in " +
         format_duration(since(watch_started)) +
         (back ? ", until it matched the baseline; then the rounds"
               : ", without a match within the settle bound; then the last round");
}

Pipeline::RestoreRound Pipeline::restore_round(const ProbeContext& context,
                                               Clock::time_point settle_started) {
  RestoreRound round;
  round.started_after = since(settle_started);
  // The probes on hosts run on another thread while the snapshot is taken (the SSH sessions
  // serialise a snapshot and a probe on the same host).
  const auto on_hosts = host_probes();
  const auto probes_started = Clock::now();
  auto probes = std::async(std::launch::async, [&] {
    auto outcomes = run_probes(with_.remote, context, on_hosts, "restored");
    return std::make_pair(std::move(outcomes), since(probes_started));
  });
  round.snapshot = with_.snapshotter.take(scope_, repository_.commit.id, &with_.observer);
  round.snapshot_took = since(probes_started);
  std::tie(round.probes, round.probes_took) = probes.get();
  round.not_held = why_round_does_not_hold(round);
  return round;
}

std::string Pipeline::why_round_does_not_hold(const RestoreRound& round) {
  if (!round.snapshot.missing.empty())
    return "snapshot: " + round.snapshot.missing.front() +
           (round.snapshot.missing.size() > 1
                ? " (+" + std::to_string(round.snapshot.missing.size() - 1) + " more)"
                : "");
  for (const auto& finding : check_identities(scope_, round.snapshot.document))
    if (finding.verdict != Verdict::pass) return "identity: " + finding.line;
  if (pre_.is_null()) return "no baseline to compare with";
  std::vector<std::string> problems;
  auto report = compare_with_pre(round.snapshot.document, "restored", false, problems);
  if (!report)
    return "comparison: " + (problems.empty() ? std::string("could not run") : problems.front());
  if (!report->accepted()) {
    std::size_t differing = report->failed;
    std::string first = report->first_disproven && !report->results.empty()
                            ? check_line(report->results[*report->first_disproven])
                            : compare::summary_line(*report);
    return "compare: " + first +
           (differing > 1 ? " (+" + std::to_string(differing - 1) + " more)" : "");
  }
  auto exceptions = exceptions_for(repository_);
  for (const auto& outcome : round.probes)
    if (outcome.verdict != Verdict::pass && !waiver_of(exceptions, outcome))
      return "probe " + outcome.name + " on " + outcome.host + ": " +
             std::string(to_string(outcome.verdict)) + ": " + outcome.reason;
  return {};
}

std::optional<compare::Report> Pipeline::compare_with_pre(const nlohmann::json& after,
                                                          const std::string& label,
                                                          bool with_expected_differences,
                                                          std::vector<std::string>& problems) {
  auto rule_sets = rule_sets_for(repository_, change_);
  auto exceptions = exceptions_for(repository_);
  // The baseline is read once per run: settle-restored compares every round with it.
  if (!pre_parsed_)
    pre_parsed_ = std::make_shared<Result<compare::Snapshot>>(compare::parse_snapshot(
        pre_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "snapshots/pre.json"));
  const auto& pre = *pre_parsed_;
  auto post =
      compare::parse_snapshot(after.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                              "snapshots/" + label + ".json");
  for (const auto* problem :
       {rule_sets.ok() ? nullptr : &rule_sets.error(),
        exceptions.ok() ? nullptr : &exceptions.error(), pre.ok() ? nullptr : &pre.error(),
        post.ok() ? nullptr : &post.error()}) {
    if (!problem) continue;
    problems.push_back(problem->message);
    for (const auto& detail : problem->details) problems.push_back(detail);
  }
  if (!problems.empty()) return std::nullopt;
  compare::CompareOptions options;
  options.max_age = repository_.settings.snapshot_max_age;
  // Every route that changed is named in diffs/ (report.md shows the first few).
  options.route_examples = 100'000;
  static const std::vector<intent::ExpectedDifference> kNone;
  return compare::compare_snapshots(pre.value(), post.value(), rule_sets.value(),
                                    with_expected_differences ? change_.compare.expected : kNone,
                                    exceptions.value(), options);
}

void Pipeline::compare(GateRecord& record, const nlohmann::json& after, const std::string& label,
                       bool with_expected_differences) {
  std::vector<std::string> problems;
  auto compared = compare_with_pre(after, label, with_expected_differences, problems);
  if (!compared) {
    record.verdict = Verdict::no_evidence;
    record.details = std::move(problems);
    record.summary = "the comparison could not run";
    return;
  }
  const compare::Report& report = *compared;
  auto json = compare::to_json(report);
  auto written = with_.evidence.write_json("diffs/" + label + "-vs-pre.json", json);
  if (written.ok())
    written = with_.evidence.write("diffs/" + label + "-vs-pre.txt",
                                   join(compare::render_human(report), "\n") + "\n");
  ChangeListing listing{label + " vs pre", "diffs/" + label + "-vs-pre-changes.txt",
                        changes_of(json)};
  if (written.ok()) written = with_.evidence.write(listing.file, change_listing_text(listing));
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  outcome_.changes.push_back(std::move(listing));

  std::map<std::string, std::string> layers;
  for (const auto& result : report.results) {
    auto& layer = layers[std::string(compare::to_string(result.layer))];
    bool bad =
        result.verdict == compare::Verdict::fail || result.verdict == compare::Verdict::no_evidence;
    if (layer.empty() || (bad && layer != "fail"))
      layer = result.verdict == compare::Verdict::waived
                  ? "pass"
                  : std::string(compare::to_string(result.verdict));
    if (bad) record.details.push_back(check_line(result));
    // BFD and EVPN are control plane, and reported as their own layers too: an overlay report
    // must say whether EVPN held separately from the underlay's sessions.
    for (const char* part : {"bfd", "evpn"}) {
      if (result.path.find("devices." + result.device + "." + part + ".") != 0) continue;
      auto& own = layers[part];
      if (own.empty() || (bad && own != "fail"))
        own = result.verdict == compare::Verdict::waived
                  ? "pass"
                  : std::string(compare::to_string(result.verdict));
    }
  }
  for (const auto& [layer, verdict] : layers) outcome_.layers[label + "-compare"][layer] = verdict;
  if (report.first_disproven && !report.results.empty()) {
    // Put the first disproven hypothesis first, as the report's headline.
    std::string headline = check_line(report.results[*report.first_disproven]);
    auto it = std::find(record.details.begin(), record.details.end(), headline);
    if (it != record.details.end()) std::rotate(record.details.begin(), it, it + 1);
  }
  record.verdict = report.accepted()   ? Verdict::pass
                   : report.failed > 0 ? Verdict::fail
                                       : Verdict::no_evidence;
  record.summary = compare::summary_line(report);
}

void Pipeline::start_watch(GateRecord& record) {
  watch_ = std::make_unique<WatchSession>(with_.remote, probe_context_, *change_.acceptance.during);
  Duration longest = change_.bounds.deadline + change_.acceptance.settle + Duration{120'000};
  if (auto failed = watch_->start(longest)) {
    record.verdict = Verdict::no_evidence;
    record.summary = "the continuous probe could not start";
    record.details.push_back(failed->reason);
    watch_.reset();
    return;
  }
  record.verdict = Verdict::pass;
  record.summary = std::to_string(change_.acceptance.during->flows) + " flows from " +
                   change_.acceptance.during->host + " to " + change_.acceptance.during->target +
                   ", resolution " + std::to_string(change_.acceptance.during->interval.count()) +
                   " ms";
}

void Pipeline::stop_watch(GateRecord& record) {
  // Out of the run first: whatever stop() does, this session is stopped once (its destructor
  // ends what still runs on the hosts).
  auto watch = std::move(watch_);
  ProbeOutcome outcome = watch->stop();
  (void)with_.evidence.write_json("probes/during.json", to_json(outcome));
  outcome_.probes.push_back(outcome);
  outcome_.layers["during"]["forwarding"] = std::string(to_string(outcome.verdict));
  record.verdict = outcome.verdict;
  record.summary = outcome.reason;
  if (blocks(outcome.verdict)) record.details.push_back("[forwarding] " + outcome.reason);
}

// How long telemetry streams may run: long enough for the change and, should it be rolled
// back, the rollback and its verification (the device locks' lease, less the confirm timer).
static Duration telemetry_bound(const intent::Change& change) {
  return change.bounds.deadline + 2 * change.acceptance.settle + Duration{900'000};
}

// What the change declares about its telemetry: the gap it tolerates and the flaps it causes.
static TelemetryRules telemetry_rules(const intent::Change& change) {
  return {change.acceptance.telemetry_max_gap, change.acceptance.expected_flaps};
}

void Pipeline::start_telemetry(GateRecord& record) {
  auto started = telemetry_->start(telemetry_bound(change_), Duration{5'000});
  record.verdict = started.verdict;
  record.summary = std::move(started.summary);
  record.details = std::move(started.details);
  if (blocks(record.verdict)) note_telemetry("during", record.verdict);
}

// The gate's details: why a device is no-evidence, then every event.
static void telemetry_details(GateRecord& record, const TelemetryOutcome& outcome) {
  record.verdict = outcome.verdict;
  record.summary = outcome.summary;
  for (const auto& device : outcome.devices) {
    if (!device.stream_failure.empty())
      record.details.push_back(device.device + ": " + device.stream_failure);
    for (const auto& gap : device.gaps) record.details.push_back(device.device + ": " + gap);
    for (const auto& flap : device.unexpected_flaps)
      record.details.push_back(device.device + ": " + flap + " (not in acceptance.expected_flaps)");
    for (const auto& gap : device.covered_gaps)
      record.details.push_back(device.device + ": " + gap);
  }
  for (const auto& line : event_lines(outcome)) record.details.push_back(line);
}

void Pipeline::stop_telemetry(GateRecord& record, AfterAcceptance then) {
  TelemetryOutcome outcome;
  if (then == AfterAcceptance::keep_streaming) {
    outcome = telemetry_->cut(Flaps::judged);
  } else {
    outcome = telemetry_->stop(Flaps::judged);
    telemetry_.reset();
  }
  outcome.phase = "during";
  auto written = with_.evidence.write_json("telemetry/during.json", to_json(outcome));
  note_telemetry("during", outcome.verdict);
  telemetry_details(record, outcome);
  if (then == AfterAcceptance::keep_streaming)
    record.details.push_back(
        "the streams keep running through the rollback (telemetry/rollback.json)");
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  outcome_.telemetry = std::move(outcome);
}

void Pipeline::begin_rollback_telemetry() {
  rollback_telemetry_started_ = now_utc();
  if (telemetry_ || !with_.gnmi_connect) return;  // still streaming since before the change
  auto subjects = telemetry_subjects(repository_.inventory, change_.targets, pre_);
  if (std::none_of(subjects.begin(), subjects.end(),
                   [](const TelemetrySubject& subject) { return subject.device->gnmi; }))
    return;
  telemetry_ = std::make_unique<TelemetrySession>(with_.gnmi_connect, std::move(subjects),
                                                  Duration{1000}, telemetry_rules(change_));
  gate("telemetry-rollback-start", [&](GateRecord& r) {
    auto started = telemetry_->start(telemetry_bound(change_), Duration{5'000});
    r.verdict = started.verdict;
    r.summary = std::move(started.summary);
    r.details = std::move(started.details);
    if (blocks(r.verdict)) note_telemetry("rollback", r.verdict);
  });
  rollback_telemetry_started_ = now_utc();
}

void Pipeline::stop_rollback_telemetry(GateRecord& record) {
  // The restore can be verified within one sample of the rollback: wait (at most two sampling
  // intervals) for one sample more, so the window shows the state that was verified.
  TelemetryOutcome outcome = telemetry_->stop_after_next_sample();
  telemetry_.reset();
  outcome.phase = "rollback";
  outcome.rollback_started = rollback_telemetry_started_;
  auto written = with_.evidence.write_json("telemetry/rollback.json", to_json(outcome));
  note_telemetry("rollback", outcome.verdict);
  telemetry_details(record, outcome);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
  outcome_.rollback_telemetry = std::move(outcome);
}

void Pipeline::read_rehearsal_config_diffs() {
  std::filesystem::path given = options_.rehearsal_for_review;
  std::filesystem::path bundle = std::filesystem::is_directory(given) ? given : given.parent_path();
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  };
  nlohmann::json record = read(bundle / "rehearsal.json");
  if (!record.is_object() || !record.contains("digest")) {
    outcome_.config_deltas_refused =
        (bundle / "rehearsal.json").string() + " is missing or not a rehearsal record";
    return;
  }
  std::string digest = plan_digest(repository_, change_);
  if (record["digest"] != digest) {
    outcome_.config_deltas_refused = "the rehearsal in " + bundle.string() + " is of " +
                                     record["digest"].dump() + ", not of this plan (" + digest +
                                     "): its diffs are not shown";
    return;
  }
  nlohmann::json pre = read(bundle / "snapshots/pre.json");
  if (!pre.is_object()) {
    outcome_.config_deltas_refused = (bundle / "snapshots/pre.json").string() + " is unreadable";
    return;
  }
  for (const char* later : {"post", "restored"}) {
    nlohmann::json snapshot = read(bundle / ("snapshots/" + std::string(later) + ".json"));
    for (auto& delta : config_deltas(pre, snapshot.is_object() ? snapshot : nlohmann::json(), later,
                                     with_.evidence.redactor()))
      outcome_.config_deltas.push_back(std::move(delta));
  }
  outcome_.config_deltas_from = "rehearsal " + bundle.string();
}

void Pipeline::roll_back(GateRecord& record) {
  Executor executor(with_.remote, repository_.inventory, change_, &with_.evidence,
                    options_.parallelism, with_.gnmi);
  std::vector<std::string> to_undo;
  for (const auto& device : execution_.touched)
    if (!reverted_by_timer_.count(device)) to_undo.push_back(device);
  for (const auto& device : reverted_by_timer_)
    record.details.push_back(device +
                             ": already reverted by its confirm timer; not rolled back "
                             "twice (the restore is still verified below)");
  rollback_ = executor.rollback(to_undo);
  outcome_.rollback_steps = rollback_.runs;
  for (const auto& run : rollback_.runs)
    if (run.state != StepState::succeeded)
      record.details.push_back(run.device + " rollback step " + std::to_string(run.index) + ": " +
                               run.reason);
  for (const auto& device : rollback_.failed_devices)
    if (std::none_of(rollback_.runs.begin(), rollback_.runs.end(),
                     [&](const StepRun& r) { return r.device == device; }))
      record.details.push_back(device + ": no rollback steps declared");
  record.verdict = rollback_.complete() ? Verdict::pass : Verdict::fail;
  if (execution_.touched.empty()) {
    record.summary = "no device was changed; nothing to roll back";
    return;
  }
  std::vector<std::string> parts;
  if (!to_undo.empty())
    parts.push_back("rolled back " +
                    join(std::vector<std::string>(to_undo.rbegin(), to_undo.rend()), ", ") +
                    (rollback_.complete() ? "" : " (INCOMPLETE)"));
  if (!reverted_by_timer_.empty())
    parts.push_back(
        join(std::vector<std::string>(reverted_by_timer_.begin(), reverted_by_timer_.end()), ", ") +
        " already reverted by its confirm timer");
  record.summary = join(parts, "; ");
}

// ---- monitoring (docs/monitoring.md) ---------------------------------------------------------

std::vector<const intent::Device*> Pipeline::targets() const {
  std::vector<const intent::Device*> out;
  for (const auto& name : change_.targets)
    if (const auto* device = repository_.inventory.find(name)) out.push_back(device);
  return out;
}

void Pipeline::note_telemetry(const std::string& phase, Verdict verdict) {
  // The worst verdict of the phase's telemetry checks, like the probes' layers.
  auto& layer = outcome_.layers[phase]["telemetry"];
  if (layer.is_null() || layer == "pass" || (verdict == Verdict::fail && layer != "fail"))
    layer = std::string(to_string(verdict));
}

void Pipeline::probe_promql(const intent::Probe& declared, const std::string& phase,
                            std::vector<ProbeOutcome>& outcomes) {
  const auto& settings = repository_.settings.monitoring.prometheus;
  const intent::Device* host = repository_.inventory.find(declared.host);
  if (!settings || !with_.prometheus || !host) {
    ProbeOutcome outcome;
    outcome.name = declared.name;
    outcome.layer = declared.layer;
    outcome.host = declared.host;
    outcome.kind = "promql";
    outcome.phase = phase;
    outcome.started = now_utc();
    outcome.reason = "no Prometheus client: monitoring.prometheus is not configured for this run";
    outcomes.push_back(std::move(outcome));
    return;
  }
  outcomes.push_back(run_promql_probe(*with_.prometheus, *settings, *host, declared, phase,
                                      run_started_at_, now_utc()));
}

void Pipeline::check_freshness(GateRecord& record, const std::string& phase) {
  const auto& settings = *repository_.settings.monitoring.prometheus;
  if (!with_.prometheus) {
    record.verdict = Verdict::no_evidence;
    record.summary = "fabgate.yaml configures Prometheus but this run has no client for it";
    return;
  }
  // The metrics the change's promql probes read on a target must be fresh too. Probes that
  // read an empty answer as 0 are left out: for them no series is a valid answer.
  std::map<std::string, std::vector<std::string>> probe_metrics;
  for (const auto& probe : change_.acceptance.probes)
    if (probe.kind == "promql" && !probe.empty_is_zero)
      for (auto& metric : promql_metric_names(probe.query))
        probe_metrics[probe.host].push_back(std::move(metric));
  auto judgement =
      check_freshness_of(*with_.prometheus, settings, targets(), now_utc(), probe_metrics);
  record.verdict = judgement.verdict;
  record.summary = std::move(judgement.summary);
  record.details = std::move(judgement.details);
  note_telemetry(phase == "pre" ? "baseline" : "acceptance", record.verdict);
  auto written =
      with_.evidence.write_json("monitoring/freshness-" + phase + ".json", judgement.evidence);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
}

void Pipeline::check_alerts(GateRecord& record, const std::string& phase) {
  const auto& settings = *repository_.settings.monitoring.alertmanager;
  if (!with_.alertmanager) {
    record.verdict = Verdict::no_evidence;
    record.summary = "fabgate.yaml configures Alertmanager but this run has no client for it";
    return;
  }
  MonitoringJudgement judgement;
  if (phase == "pre") {
    auto exceptions = exceptions_for(repository_);
    static const compare::ExceptionRegister kNone;
    judgement = check_alerts_before(*with_.alertmanager, settings, targets(),
                                    exceptions.ok() ? exceptions.value() : kNone, now_utc());
    for (const auto& id : judgement.exceptions_used)
      if (std::find(outcome_.exceptions_used.begin(), outcome_.exceptions_used.end(), id) ==
          outcome_.exceptions_used.end())
        outcome_.exceptions_used.push_back(id);
  } else {
    // With Prometheus configured, its ALERTS history also catches an alert that fired and
    // resolved within the settle time.
    const prom::PrometheusClient* history =
        repository_.settings.monitoring.prometheus ? with_.prometheus : nullptr;
    judgement = check_alerts_after(*with_.alertmanager, settings, targets(),
                                   change_.acceptance.expected_alerts, run_started_at_, history);
  }
  record.verdict = judgement.verdict;
  record.summary = std::move(judgement.summary);
  record.details = std::move(judgement.details);
  note_telemetry(phase == "pre" ? "baseline" : "acceptance", record.verdict);
  auto written =
      with_.evidence.write_json("monitoring/alerts-" + phase + ".json", judgement.evidence);
  if (!written.ok()) record.details.push_back("evidence: " + written.error().message);
}

void Pipeline::create_silence(GateRecord& record) {
  const auto& settings = *repository_.settings.monitoring.alertmanager;
  if (!with_.alertmanager) {
    record.verdict = Verdict::no_evidence;
    record.summary = "fabgate.yaml configures Alertmanager but this run has no client for it";
    return;
  }
  // Long enough for the whole run, like the device locks' lease; fabgate expires it sooner.
  Duration span = change_.bounds.deadline + 2 * change_.acceptance.settle +
                  change_.confirm_timeout.value_or(Duration::zero()) + Duration{15 * 60'000};
  auto start = now_utc();
  auto request =
      window_silence(settings, targets(), with_.evidence.run_id(), change_.id, start, start + span);
  auto created = with_.alertmanager->create_silence(request);
  nlohmann::json matchers = nlohmann::json::array();
  for (const auto& m : request.matchers)
    matchers.push_back({{"name", m.name}, {"value", m.value}, {"is_regex", m.is_regex}});
  nlohmann::json document = {{"alertmanager", settings.endpoint.url},
                             {"matchers", matchers},
                             {"starts_at", format_utc(request.starts_at)},
                             {"ends_at", format_utc(request.ends_at)},
                             {"comment", request.comment}};
  if (!created.ok()) {
    record.verdict = Verdict::no_evidence;
    record.summary = "the change-window silence could not be created";
    record.details.push_back("[telemetry] " + created.error().message);
    document["error"] = created.error().message;
    (void)with_.evidence.write_json("monitoring/silence.json", document);
    return;
  }
  silence_id_ = created.value();
  // Journaled before any step, so `fabgate recover` expires it if this run dies.
  with_.evidence.append_journal({{"event", "silence-created"},
                                 {"silence", silence_id_},
                                 {"alertmanager", settings.endpoint.url},
                                 {"ends_at", format_utc(request.ends_at)},
                                 {"at", format_utc(now_utc())}});
  document["id"] = silence_id_;
  (void)with_.evidence.write_json("monitoring/silence.json", document);
  record.verdict = Verdict::pass;
  record.summary = "silence " + silence_id_ + " on " + matchers[0]["name"].get<std::string>() +
                   "=~" + matchers[0]["value"].get<std::string>() + " until " +
                   format_utc(request.ends_at) + " (expired when the run ends)";
}

void Pipeline::expire_silence() {
  if (silence_id_.empty() || !with_.alertmanager) return;
  gate("silence-expire", [&](GateRecord& record) {
    auto expired = with_.alertmanager->expire_silence(silence_id_);
    if (!expired.ok()) {
      // The run's outcome stands; the silence still ends by itself at its end time.
      record.verdict = Verdict::fail;
      record.summary = "silence " + silence_id_ +
                       " could not be expired; it ends by itself (monitoring/silence.json)";
      record.details.push_back("[telemetry] " + expired.error().message);
      return;
    }
    with_.evidence.append_journal(
        {{"event", "silence-expired"}, {"silence", silence_id_}, {"at", format_utc(now_utc())}});
    record.verdict = Verdict::pass;
    record.summary = "silence " + silence_id_ + " expired";
    silence_id_.clear();
  });
}

// ---- the pipeline ---------------------------------------------------------------------------

RunOutcome Pipeline::run() {
  // The only way out of a run: whatever happens below, the outputs are written and sealed
  // (write_outputs() never throws), and a throw that escaped the gates still ends in a rollback
  // or a loud NOT RESTORED naming `fabgate recover`.
  try {
    run_gates();
  } catch (const std::exception& error) {
    escaped(error.what());
  } catch (...) {
    escaped("an exception of unknown type");
  }
  write_outputs(outcome_);
  return outcome_;
}

void Pipeline::escaped(const std::string& what) {
  gate("controller", [&](GateRecord& r) { fail_on_internal_error(r, what); });
  if (execution_.touched.empty()) adopt_journaled_steps();
  if (rollback_started_) {
    // The exit path itself failed: what the devices hold now is unknown.
    outcome_.exit_code = ExitCode::not_restored;
    outcome_.device_state =
        "NOT RESTORED: the rollback or its verification stopped on an internal error (" + what +
        ")";
    return;
  }
  if (execution_.touched.empty()) {
    outcome_.exit_code = ExitCode::refused;
    outcome_.device_state = "untouched: no step was sent";
    return;
  }
  try {
    roll_back_after_failure(false);
  } catch (const std::exception& again) {
    outcome_.exit_code = ExitCode::not_restored;
    outcome_.device_state = std::string("NOT RESTORED: the rollback stopped on an internal error (") +
                            again.what() + ")";
  } catch (...) {
    outcome_.exit_code = ExitCode::not_restored;
    outcome_.device_state = "NOT RESTORED: the rollback stopped on an internal error";
  }
}

void Pipeline::adopt_journaled_steps() {
  auto journal = read_journal(with_.evidence.dir() / "journal.jsonl");
  if (!journal.ok()) return;
  auto crashed = read_crashed_run(journal.value());
  if (!crashed.ok()) return;
  for (const auto& device : crashed->touched)
    if (std::find(execution_.touched.begin(), execution_.touched.end(), device) ==
        execution_.touched.end())
      execution_.touched.push_back(device);
  if (execution_.runs.empty()) {
    execution_.runs = crashed->steps;
    outcome_.steps = crashed->steps;
  }
  if (!execution_.touched.empty()) outcome_.change_started = true;
}

void Pipeline::run_gates() {
  started_ = Clock::now();
  run_started_at_ = now_utc();
  // Everything `fabgate recover` needs to rebuild this run if the controller dies.
  RunStart start{options_.origin.repo,
                 options_.origin.ref,
                 repository_.commit.id,
                 options_.origin.intent_root,
                 change_.id,
                 std::string(to_string(options_.mode)),
                 options_.operator_name,
                 options_.origin.evidence_root,
                 with_.evidence.run_id(),
                 options_.parallelism};
  auto start_record = start.to_json();
  start_record["at"] = format_utc(now_utc());
  with_.evidence.append_journal(start_record);

  // Read-only gates: each must prove its point or the run stops before anything is touched.
  // 1. window: refuse outside the change's maintenance window.
  gate("window", [&](GateRecord& r) { check_window(r); });
  // 1b. device-locks: no other run may touch these devices until this one is finished.
  if (!stopped() && options_.mode != Mode::plan) lock_devices();
  // 2. snapshot(pre): the baseline, from every device in the inventory.
  if (!stopped()) gate("snapshot-pre", [&](GateRecord& r) { take_snapshot(r, "pre", pre_); });
  // 3. compat: the targets' identity is known (versions are checked against it).
  if (!stopped()) gate("compat", [&](GateRecord& r) { check_compat(r); });
  // 4. rollback-plan: every device that will change can be changed back.
  if (!stopped()) gate("rollback-plan", [&](GateRecord& r) { check_rollback_plan(r); });
  // 5. approval: the plan was approved as policy requires (plan only reports it).
  if (!stopped()) gate("approval", [&](GateRecord& r) { check_approval(r); });
  // 5b. freshness-pre: the monitoring observes every target now (scraped, fresh samples, the
  //     source reports the inventory's identity); otherwise its silence proves nothing.
  const auto& monitoring = repository_.settings.monitoring;
  if (!stopped() && monitoring.prometheus)
    gate("freshness-pre", [&](GateRecord& r) { check_freshness(r, "pre"); });
  // 5c. alerts-pre: no firing, unsilenced alert on a target's failure domain: a change on a
  //     device that is already alarming would be blamed for it, or hide it.
  if (!stopped() && monitoring.alertmanager)
    gate("alerts-pre", [&](GateRecord& r) { check_alerts(r, "pre"); });
  // 6. baseline-probes: the service works before the change; otherwise we would be blamed
  //    for, or hide, an existing fault.
  if (!stopped()) gate("baseline-probes", [&](GateRecord& r) { probe(r, "baseline"); });

  // 6a. silence: the targets' alerts are silenced for the change window (journaled; expired
  //     when the run ends, or by `fabgate recover`).
  if (!stopped() && options_.mode != Mode::plan && monitoring.alertmanager &&
      monitoring.alertmanager->silence)
    gate("silence", [&](GateRecord& r) { create_silence(r); });

  // 6b. confirm-arm: like a confirmed commit, each target gets a device-side job that rolls it
  //     back by itself unless this run confirms the change: a controller that dies or loses
  //     the device cannot leave the change behind unverified.
  if (!stopped() && options_.mode != Mode::plan && with_.safeguards && change_.confirm_timeout)
    gate("confirm-arm",
         [&](GateRecord& r) { with_.safeguards->arm_timers(r, with_.evidence.run_id()); });

  // 7. watch: a continuous probe that measures the disruption the change causes.
  if (!stopped() && options_.mode != Mode::plan && change_.acceptance.during)
    gate("watch-start", [&](GateRecord& r) { start_watch(r); });

  // 7b. telemetry-start: a gNMI stream of interface state from every target and neighbour with
  //     a gnmi endpoint, open before the first step, so a flap or an error burst the change
  //     causes is seen at the device's own timestamps (telemetry_layer.h).
  if (!stopped() && options_.mode != Mode::plan && with_.gnmi_connect) {
    auto subjects = telemetry_subjects(repository_.inventory, change_.targets, pre_);
    if (std::any_of(subjects.begin(), subjects.end(),
                    [](const TelemetrySubject& subject) { return subject.device->gnmi; })) {
      telemetry_ = std::make_unique<TelemetrySession>(with_.gnmi_connect, std::move(subjects),
                                                      Duration{1000}, telemetry_rules(change_));
      gate("telemetry-start", [&](GateRecord& r) { start_telemetry(r); });
    }
  }

  if (options_.mode == Mode::plan && !options_.rehearsal_for_review.empty())
    read_rehearsal_config_diffs();

  if (stopped() || options_.mode == Mode::plan) {
    outcome_.exit_code = stopped() ? ExitCode::refused : ExitCode::accepted;
    outcome_.device_state = "untouched: no step was sent";
    watch_.reset();  // stops the continuous probe on its hosts
    return;
  }

  // Change gates: from here on, any failure rolls the change back.
  // 7. execute: waves of steps within the bounds, journaled.
  gate("execute", [&](GateRecord& r) { execute(r); });
  // 8. settle: give routing time to converge before judging it.
  if (!stopped()) gate("settle", [&](GateRecord& r) { settle(r); });
  // 9. acceptance: the same probes as the baseline must pass again, and the disruption seen
  //    during the change stays within max_disruption. The post snapshot (10.) is taken on
  //    another thread meanwhile: it describes the same settled state, and when the probes
  //    fail it is the fault capture the rollback waits for.
  std::future<TakenSnapshot> post_taking;
  if (!stopped()) {
    post_taking = std::async(std::launch::async, [&] {
      return with_.snapshotter.take(scope_, repository_.commit.id, nullptr);
    });
    gate("acceptance", [&](GateRecord& r) { probe(r, "acceptance"); });
  }
  if (watch_) gate("disruption", [&](GateRecord& r) { stop_watch(r); });
  // 9a. telemetry: the during window ends. A run that already failed is rolled back, so its
  //     streams keep running to show what the rollback does (telemetry-restored).
  if (telemetry_)
    gate("telemetry", [&](GateRecord& r) {
      stop_telemetry(r,
                     stopped() ? AfterAcceptance::keep_streaming : AfterAcceptance::close_streams);
    });
  // 9b. freshness-post and alerts-acceptance: the monitoring still observes the targets, and
  //     no alert started firing on them during the change (silenced or not).
  if (!stopped() && monitoring.prometheus)
    gate("freshness-post", [&](GateRecord& r) { check_freshness(r, "post"); });
  if (!stopped() && monitoring.alertmanager)
    gate("alerts-acceptance", [&](GateRecord& r) { check_alerts(r, "acceptance"); });
  // 10. snapshot(post) and 11. compare: everything not declared as expected must hold. They
  //     run even when an earlier gate failed, to capture the fault before rolling back: the
  //     report then says which layers held while which failed (BGP up, flows dropped).
  //     The post snapshot covers every device in scope, also when the change already failed:
  //     a fault shows where it shows (a withdrawn VNI is missed on the other leaf, which shares
  //     no subnet with the target).
  //     An interrupted run goes straight to the rollback: no new snapshot is started for it.
  stopped();
  if (post_taking.valid() || !Interruption::requested()) {
    auto& post_snapshot = gate("snapshot-post", [&](GateRecord& r) {
      if (post_taking.valid())
        record_snapshot(r, "post", post_taking.get(), post_);
      else
        take_snapshot(r, "post", post_);
    });
    if (!blocks(post_snapshot.verdict))
      gate("compare", [&](GateRecord& r) { compare(r, post_, "post", true); });
    else
      skip("compare", "the post-change snapshot lacks evidence, so nothing can be compared");
  } else {
    skip("snapshot-post", "interrupted: the run goes straight to the rollback");
    skip("compare", "interrupted: nothing to compare");
  }

  bool forced = options_.mode == Mode::rehearse && !stopped();
  // 12. confirm: the change is proven, so the device-side timers must not revert it. A timer
  //     that cannot be disarmed will revert the device: then the change is not confirmed and
  //     goes the rollback way.
  if (!stopped() && !forced && with_.safeguards && with_.safeguards->has_armed_timers())
    gate("confirm", [&](GateRecord& r) {
      for (const auto& [device, state] : with_.safeguards->disarm_timers(r)) {
        // Too late: the device already rolled itself back (or tried to), so the change is
        // not in place there any more.
        r.verdict = Verdict::fail;
        r.details.push_back(device + ": the confirm timer fired (" + std::string(to_string(state)) +
                            ") before the change was confirmed; confirm_timeout is too short "
                            "for this change");
        if (state == TimerState::fired_restored) reverted_by_timer_.insert(device);
      }
    });
  if (!stopped() && !forced) {
    outcome_.exit_code = ExitCode::accepted;
    outcome_.device_state = "changed as intended and verified";
    return;
  }
  roll_back_after_failure(forced);
}

void Pipeline::roll_back_after_failure(bool forced) {
  // The watch must stop before the rollback, whatever failed. (The telemetry streams, if
  // still running, go on through the rollback: restore_and_verify() ends them.)
  if (watch_) gate("disruption", [&](GateRecord& r) { stop_watch(r); });

  // Recovery: undo exactly what may have been applied, then prove the baseline came back at
  // every layer with the same evidence that admitted the change.
  if (!failure_detected_) failure_detected_ = Clock::now();  // a rehearsal's forced rollback
  disarm_before_rollback();
  bool restored = restore_and_verify();
  // A rehearsal passes when the change was accepted and its forced rollback was proven: exit 0,
  // the same code as an accepted apply, because that is what CI waits for.
  if (forced && restored) {
    outcome_.exit_code = ExitCode::accepted;
    outcome_.device_state =
        "rehearsed: the change was accepted, then rolled back; baseline verified at every layer";
  }
}

bool Pipeline::restore_and_verify() {
  rollback_started_ = true;
  // Telemetry through the rollback: the streams still running since before the change, or
  // fresh ones (rehearse, recover, a failure found after acceptance); ended below.
  begin_rollback_telemetry();
  // 12. rollback: the devices touched, last touched first.
  gate("rollback", [&](GateRecord& r) { roll_back(r); });
  // 13. settle-restored: the restore verification in rounds (settle_restored()), each a
  //     restored snapshot and the probes on hosts taken together, until one holds or the last
  //     one, started at the settle bound, was taken.
  restore_round_.reset();
  if (Interruption::abandoned())
    skip("settle-restored", "abandoned by a second signal: the restore is not verified");
  else if (!execution_.touched.empty())
    gate("settle-restored", [&](GateRecord& r) { settle_restored(r); });
  else
    restore_round_ = restore_round(probe_context_, Clock::now());  // nothing to wait for
  if (!restore_round_) {
    // No round to judge (abandoned, or the verification itself failed): nothing proves the
    // baseline, so the restore is not verified.
    for (const char* name : {"snapshot-restored", "compare-restored", "restored-probes"})
      skip(name, "no round of the restore verification was completed");
    return conclude_restore();
  }
  RestoreRound& round = *restore_round_;
  // 14. snapshot(restored) and compare restored vs pre, with no expected differences: the
  //     kept round's snapshot, recorded and judged as any snapshot is.
  auto& restored_snapshot = gate("snapshot-restored", [&](GateRecord& r) {
    record_snapshot(r, "restored", std::move(round.snapshot), restored_);
  });
  if (pre_.is_null())  // recover found no baseline in the bundle
    skip("compare-restored",
         "no baseline: snapshots/pre.json is missing or unreadable, so the restore cannot be "
         "verified");
  else if (!blocks(restored_snapshot.verdict))
    gate("compare-restored", [&](GateRecord& r) { compare(r, restored_, "restored", false); });
  else
    skip("compare-restored", "the restored snapshot lacks evidence, so nothing can be compared");
  // 15. probes again: forwarding restored is proven by traffic, not by sessions being up.
  gate("restored-probes", [&](GateRecord& r) {
    judge_probes(r, "restored", std::move(round.probes));
    r.details.push_back("the probes on hosts ran alongside the restored snapshot and took " +
                        format_duration(round.probes_took));
  });
  return conclude_restore();
}

bool Pipeline::conclude_restore() {
  bool restored = true;
  std::vector<std::string> still_different;
  for (const auto& record : outcome_.gates) {
    bool recovery_gate = record.name == "rollback" || record.name == "snapshot-restored" ||
                         record.name == "compare-restored" || record.name == "restored-probes";
    if (recovery_gate && (blocks(record.verdict) || record.verdict == Verdict::skipped)) {
      restored = false;
      for (const auto& detail : record.details)
        still_different.push_back(record.name + ": " + detail);
      if (record.details.empty()) still_different.push_back(record.name + ": " + record.summary);
    }
  }
  if (restored) outcome_.detection_to_restore = since(*failure_detected_);
  outcome_.exit_code = restored ? ExitCode::rolled_back : ExitCode::not_restored;
  outcome_.device_state =
      restored ? "rolled back; baseline verified at every layer"
               : "NOT RESTORED: " + (still_different.empty() ? std::string("see report")
                                                             : still_different.front());
  // telemetry-restored: what the streams saw from the rollback's start (or acceptance) until
  // now. It shows the rollback's own flaps and when things came back; the gates above prove
  // the baseline, so its verdict (the evidence's coverage) does not change the exit code.
  if (telemetry_) gate("telemetry-restored", [&](GateRecord& r) { stop_rollback_telemetry(r); });
  return restored;
}

RunOutcome Pipeline::recover(const CrashedRun& crashed, const std::string& recovered_by) {
  // The same single way out as run(): recover is a rollback, so anything that escapes it
  // leaves the devices NOT RESTORED, said loudly, with the bundle sealed.
  try {
    recover_gates(crashed, recovered_by);
  } catch (const std::exception& error) {
    rollback_started_ = true;
    escaped(error.what());
  } catch (...) {
    rollback_started_ = true;
    escaped("an exception of unknown type");
  }
  write_outputs(outcome_);
  return outcome_;
}

void Pipeline::recover_gates(const CrashedRun& crashed, const std::string& recovered_by) {
  started_ = Clock::now();
  failure_detected_ = started_;  // the crash is the failure; recover starts restoring at once
  nlohmann::json torn = nullptr;
  if (crashed.torn)
    torn = {
        {"line", crashed.torn->line}, {"bytes", crashed.torn->bytes}, {"why", crashed.torn->why}};
  with_.evidence.append_journal({{"event", "recover-start"},
                                 {"after_record", crashed.last_sequence},
                                 {"last_event", crashed.last_event},
                                 {"torn_record_discarded", torn},
                                 {"devices", crashed.touched},
                                 {"operator", recovered_by},
                                 {"at", format_utc(now_utc())}});
  outcome_.change_started = true;
  outcome_.steps = crashed.steps;
  outcome_.first_disproven = "controller: the run died after journal record " +
                             std::to_string(crashed.last_sequence) + " (" + crashed.last_event +
                             "); finished by fabgate recover";
  execution_.touched = crashed.touched;
  if (with_.safeguards) {
    // The crashed run's locks are this run's (same run id); the timers it armed are found on
    // the devices: one that already fired means the device reverted by itself.
    lock_devices();
    if (std::any_of(outcome_.gates.begin(), outcome_.gates.end(),
                    [](const GateRecord& record) { return blocks(record.verdict); })) {
      outcome_.exit_code = ExitCode::not_restored;
      outcome_.device_state =
          "NOT RESTORED: another run holds a target's lock, so recover did not touch it";
      return;
    }
    with_.safeguards->adopt_timers(with_.evidence.run_id(), change_.targets);
    disarm_before_rollback();
  }
  // The baseline is the run's own pre-change snapshot, as written to the bundle before any step.
  std::ifstream in(with_.evidence.dir() / "snapshots/pre.json");
  if (in) {
    auto pre = nlohmann::json::parse(in, nullptr, false);
    if (!pre.is_discarded() && pre.is_object()) pre_ = std::move(pre);
  }
  restore_and_verify();
}

void Pipeline::lock_devices() {
  if (!with_.safeguards) return;
  // The lease outlives the longest this run can take: the change's deadline, two settles
  // (after the change and after a rollback), the confirm timer, and time for the restore
  // verification. A holder past its lease is judged dead.
  Duration lease = change_.bounds.deadline + 2 * change_.acceptance.settle +
                   change_.confirm_timeout.value_or(Duration::zero()) + Duration{15 * 60'000};
  gate("device-locks",
       [&](GateRecord& r) { with_.safeguards->lock_targets(r, with_.evidence.run_id(), lease); });
}

void Pipeline::disarm_before_rollback() {
  if (!with_.safeguards || !with_.safeguards->has_armed_timers()) return;
  gate("confirm-disarm", [&](GateRecord& r) {
    for (const auto& [device, state] : with_.safeguards->disarm_timers(r))
      if (state == TimerState::fired_restored) reverted_by_timer_.insert(device);
  });
}

void Pipeline::finish_safeguards(RunOutcome& outcome) {
  if (!with_.safeguards) return;
  if (outcome.exit_code != ExitCode::not_restored && with_.safeguards->has_armed_timers()) {
    // A run refused after arming (the watch could not start) sent no step: a timer left
    // armed would run the rollback on an untouched device.
    GateRecord last_try;
    with_.safeguards->disarm_timers(last_try);
    if (with_.safeguards->has_armed_timers()) {
      // A timer still armed may revert its device later, after another run changed it: the
      // lock stays, so no other run starts there, and a human must look.
      outcome.exit_code = ExitCode::not_restored;
      outcome.device_state = "NOT RESTORED: a confirm timer could not be disarmed (" +
                             join(last_try.details, "; ") +
                             "); it may still revert its device, so the targets stay locked";
    }
  }
  if (outcome.exit_code == ExitCode::not_restored) {
    if (with_.safeguards->holds_locks())
      outcome.diagnosis.push_back(
          "the targets stay locked by this run because they are NOT RESTORED; once a human has "
          "repaired them, `fabgate recover` or a run with --take-over-locks takes the lock over");
  } else {
    with_.safeguards->release_locks();
  }
  (void)with_.evidence.write_json("safeguards.json", with_.safeguards->to_json());
}

// Says in words what the layers mean together, for the cases operators get burned by.
void Pipeline::diagnose() {
  auto verdict_of = [&](const std::string& phase, const std::string& layer) -> std::string {
    if (!outcome_.layers.contains(phase) || !outcome_.layers[phase].contains(layer)) return "";
    return outcome_.layers[phase][layer].get<std::string>();
  };
  bool forwarding_failed = verdict_of("acceptance", "forwarding") == "fail" ||
                           verdict_of("during", "forwarding") == "fail";
  bool transport_failed = verdict_of("acceptance", "transport") == "fail";
  std::string control = verdict_of("post-compare", "control-plane");
  std::string link = verdict_of("post-compare", "link");
  if ((forwarding_failed || transport_failed) && control == "pass") {
    outcome_.diagnosis.push_back(
        std::string("control plane held while ") +
        (forwarding_failed ? "forwarding" : "transport") +
        " failed: every BGP session check held (no session or prefix count changed beyond what "
        "the change declared)" +
        (link == "pass" ? " and so did every link check" : "") +
        ", yet traffic was lost. A dashboard of sessions and links would have shown green.");
  }
  // The overlay: EVPN routes being present say nothing about frames crossing VXLAN. Only an
  // overlay probe proves the overlay; without one the report says so.
  std::string overlay = verdict_of("acceptance", "overlay");
  std::string evpn = verdict_of("post-compare", "evpn");
  if (!evpn.empty() && overlay.empty())
    outcome_.diagnosis.push_back(
        "the overlay was not probed: EVPN state (" + evpn +
        ") shows what the control plane advertises, not that frames cross VXLAN; declare a "
        "flows probe with layer: overlay to prove it.");
  if (overlay == "fail" && control == "pass") {
    bool small_passed = false, full_size_failed = false;
    for (const auto& probe : outcome_.probes) {
      if (probe.phase != "acceptance") continue;
      int size = probe.detail.is_object() && probe.detail.contains("size") &&
                         probe.detail["size"].is_number_integer()
                     ? probe.detail["size"].get<int>()
                     : 0;
      if (probe.verdict == Verdict::pass && size < 1400) small_passed = true;
      if (probe.layer == "overlay" && probe.verdict == Verdict::fail && size >= 1400)
        full_size_failed = true;
    }
    if (small_passed && full_size_failed)
      outcome_.diagnosis.push_back(
          "control plane and small packets held while full-size overlay frames were lost: "
          "every BGP, BFD and EVPN check held and small probes crossed, yet full-size frames "
          "with don't-fragment set did not cross the overlay. That is an MTU black hole: "
          "VXLAN adds 50 bytes, so the underlay must carry more than the hosts' MTU.");
    else
      outcome_.diagnosis.push_back(
          "control plane held while the overlay failed: every BGP, BFD and EVPN check held, "
          "yet frames did not cross the overlay. EVPN routes present are not a working "
          "overlay.");
  }
  if (verdict_of("restored-compare", "control-plane") == "pass" &&
      verdict_of("restored", "forwarding") == "fail")
    outcome_.diagnosis.push_back(
        "after rollback the sessions are back but forwarding is not: the baseline is NOT "
        "restored.");
}

void Pipeline::write_outputs(RunOutcome& outcome) {
  // Never throws: each part that fails is named, and the manifest is still attempted.
  auto attempt = [&](const std::string& what, const std::function<void()>& part) {
    try {
      part();
    } catch (const std::exception& error) {
      outcome.internal_errors.push_back(what + ": " + error.what());
    } catch (...) {
      outcome.internal_errors.push_back(what + ": an exception of unknown type");
    }
  };
  attempt("ending the run", [&] { end_run(outcome); });
  std::optional<ReportContext> context;
  attempt("reports", [&] { context.emplace(write_reports(outcome)); });
  // Files that could not be written: an accepted run never exits 0 with a bundle that lacks
  // them (exits 3, 4 and 5 already ask for attention and stand).
  for (auto& failure : with_.evidence.take_failed_writes())
    outcome.evidence_not_written.push_back(std::move(failure));
  if (!outcome.evidence_not_written.empty() && outcome.exit_code == ExitCode::accepted) {
    outcome.exit_code = ExitCode::internal_error;
    outcome.device_state += "; the evidence bundle is incomplete (" +
                            outcome.evidence_not_written.front() + ")";
  }
  with_.evidence.append_journal({{"event", "run-end"},
                                 {"exit_code", to_int(outcome.exit_code)},
                                 {"at", format_utc(now_utc())}});
  Status sealed = Error::internal("the manifest could not be rendered");
  attempt("manifest", [&] {
    if (!context) return;
    auto manifest = render_manifest(*context, outcome);
    manifest["layer_recovery"] = std::move(layer_recovery_);  // `fabgate evidence show` prints it
    if (!outcome.internal_errors.empty()) manifest["internal_errors"] = outcome.internal_errors;
    if (!outcome.evidence_not_written.empty())
      manifest["evidence_not_written"] = outcome.evidence_not_written;
    if (options_.annotate) options_.annotate(with_.evidence, manifest);
    sealed = with_.evidence.finish(manifest);
  });
  outcome.sealed = sealed.ok();
  if (!sealed.ok()) {
    outcome.evidence_not_written.push_back("manifest.json: " + sealed.error().message);
    if (outcome.exit_code == ExitCode::accepted) outcome.exit_code = ExitCode::internal_error;
    outcome.device_state += "; the evidence bundle is NOT sealed (" + sealed.error().message + ")";
  }
}

void Pipeline::name_the_way_back(RunOutcome& outcome) {
  // Exit 5 is a hand-off to a human: say which devices may still hold the change, and the
  // command that finishes the job once they are reachable again.
  outcome.may_still_be_changed = execution_.touched;
  outcome.recover_command = "fabgate recover " + shell_quote(with_.evidence.dir().string());
  if (!outcome.may_still_be_changed.empty())
    outcome.device_state +=
        "; may still be changed: " + join(outcome.may_still_be_changed, ", ");
  outcome.device_state += "; finish with: " + outcome.recover_command;
}

void Pipeline::end_run(RunOutcome& outcome) {
  watch_.reset();  // a continuous probe still running on its host is stopped
  expire_silence();  // whatever the outcome
  // A silence fabgate could not expire keeps the targets' alerts from paging anyone until its
  // end time. An accepted run then exits 1, so CI does not read it as a clean success; exits
  // 3, 4 and 5 stand (they already ask for attention) and name the silence too.
  if (!silence_id_.empty()) {
    std::string left = "silence " + silence_id_ +
                       " could not be expired and hides the targets' alerts until its end time: "
                       "expire it by hand";
    if (outcome.exit_code == ExitCode::accepted) outcome.exit_code = ExitCode::internal_error;
    outcome.device_state += "; " + left;
  }
  finish_safeguards(outcome);
  if (outcome.exit_code == ExitCode::not_restored) name_the_way_back(outcome);
  diagnose();
}

ReportContext Pipeline::write_reports(RunOutcome& outcome) {
  ReportContext context{repository_,
                        change_,
                        options_.mode,
                        options_.operator_name,
                        with_.evidence.run_id(),
                        with_.evidence.redactor()};
  nlohmann::json execution = {{"steps", nlohmann::json::array()},
                              {"rollback", nlohmann::json::array()}};
  for (const auto& run : outcome.steps) execution["steps"].push_back(to_json(run));
  for (const auto& run : outcome.rollback_steps) execution["rollback"].push_back(to_json(run));
  (void)with_.evidence.write_json("execution.json", execution);
  (void)with_.evidence.write("report.md", render_report_markdown(context, outcome));
  // report.html: every value redacted before it was escaped, so the markup is written as it is.
  auto page = render_bundle_report(context, outcome, with_.evidence.dir(), pre_);
  (void)with_.evidence.write_redacted("report.html", page.html);
  (void)with_.evidence.write_redacted("junit.xml", render_junit(context, outcome));
  if (options_.mode == Mode::plan) {
    (void)with_.evidence.write("review.md", render_review_markdown(context, outcome));
    (void)with_.evidence.write_json("plan.json", render_plan_json(context, outcome));
  }
  if (options_.mode == Mode::rehearse)
    (void)with_.evidence.write_json("rehearsal.json", render_rehearsal_json(context, outcome));
  layer_recovery_ = to_json(page.layers);
  return context;
}

}  // namespace fabgate::pipeline
