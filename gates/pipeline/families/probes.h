#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/progress.h"
#include "gates/intent/model.h"
#include "gates/pipeline/families/remote.h"
#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

// The result of one probe run, in one phase (baseline, acceptance, restored, during).
struct ProbeOutcome {
  std::string name;
  std::string layer;
  std::string host;
  std::string kind;
  std::string phase;
  Verdict verdict = Verdict::no_evidence;
  std::string reason;  // one line: why it passed, failed or had no evidence
  int exit_status = -1;
  std::string output;     // raw output, for evidence
  nlohmann::json detail;  // the built-in probe's JSON document (per-flow results...)
  std::string waived_by;  // exception id when a fail/no-evidence was waived by the register
  TimePoint started;
  Duration duration{0};
};

nlohmann::json to_json(const ProbeOutcome& outcome);
// A declared probe as the plan digest and the review artifact show it.
nlohmann::json to_json(const intent::Probe& probe);

// Everything probes need besides the remote: where hosts are and how to run fabgate-probe.
struct ProbeContext {
  const intent::Inventory& inventory;
  const intent::ProbeSettings& settings;
  // Non-zero: `flows` probes count a packet as lost when unanswered this long (`--reply-timeout`)
  // instead of fabgate-probe's 1 s. settle-restored's polls use it so that a round that fails
  // ends sooner; a shorter wait can only turn a pass into a fail, never the other way.
  Duration flows_reply_timeout{0};
  // `flows` probes that share no device (neither host nor responder) with the ones before them
  // run at the same time instead of one after the other. settle-restored's rounds use it: a
  // round is as long as its slowest part. Other kinds always run alone, in declared order.
  bool concurrent_flows = false;
  // Non-zero: `flows` probes send this many packets per flow (`--packets`) instead of
  // fabgate-probe's 5. The load-spread window uses it so that the probes' own packets dominate
  // the members' counters (spread_gates.cpp).
  int flows_packets = 0;
  // Set (acceptance): once a probe's outcome makes this true, the probes after it are not run
  // and read "not run" (no evidence): the change has already failed, and a slow probe (a
  // collective's timeout) would only keep a broken fabric waiting for its rollback.
  std::function<bool(const ProbeOutcome&)> stop_after;
};

// Runs the probes of a change in order, each within its own timeout, with the read
// credential. `command` probes run the intent's command; `flows` and `rdma` probes start a
// responder on the device that owns the target address, run fabgate-probe on the host and
// stop the responder. A probe that cannot run (host unreachable, probe or responder missing,
// unparsable output) is no_evidence, never pass. `progress` (may be null) hears "N/M probes".
std::vector<ProbeOutcome> run_probes(Remote& remote, const ProbeContext& context,
                                     const std::vector<intent::Probe>& probes,
                                     const std::string& phase, ProgressSink* progress = nullptr);

// The longest one declared probe may take from its start to its verdict: its own `timeout`
// plus what fabgate spends around it (starting and stopping a responder or listener, the
// transport margin of each SSH command); a collective's is its `timeout` (the whole probe)
// plus each rank's start and collection.
Duration probe_bound(const intent::Probe& probe);

// fabgate-probe watch's own limit on --max-duration (adapters/flows/watch.cpp, docs/lab.md).
inline constexpr Duration kWatchLimit{6 * 60 * 60 * 1000};

// Everything the continuous probe must outlast before the disruption gate stops it: the
// change's deadline (counted from the run's start, before the watch starts), the settle time,
// the acceptance probes one after another (each its probe_bound) and a margin for the gates
// between them and the disruption gate (on the failure and rehearsal paths the post snapshot
// and compare come first). Not capped: a watch given less (kWatchLimit) stops by itself, and
// its verdict is then no evidence (watch_verdict.h), never pass.
Duration watch_must_outlast(const intent::Change& change);

// The continuous probe of `acceptance.during`: started before execute, stopped after
// acceptance (or before rollback), judged against max_disruption.
class WatchSession {
 public:
  WatchSession(Remote& remote, const ProbeContext& context, intent::WatchProbe watch)
      : remote_(remote), context_(context), watch_(std::move(watch)) {}
  ~WatchSession();  // stops anything still running on the hosts
  WatchSession(const WatchSession&) = delete;
  WatchSession& operator=(const WatchSession&) = delete;

  // Starts the responder and the watch; a failure to start is returned as the outcome
  // (no_evidence) and the session is not running.
  std::optional<ProbeOutcome> start(Duration max_duration);
  ProbeOutcome stop();
  bool running() const { return running_; }

 private:
  Remote& remote_;
  const ProbeContext& context_;
  intent::WatchProbe watch_;
  bool running_ = false;
  const intent::Device* host_ = nullptr;
  const intent::Device* responder_device_ = nullptr;
  std::string responder_pid_;
  std::string watch_pid_;
  std::string watch_output_file_;
  TimePoint started_;
};

// The device whose data addresses include `target`, or whose name is `target`.
const intent::Device* owner_of(const intent::Inventory& inventory, const std::string& target);

}  // namespace fabgate::pipeline
