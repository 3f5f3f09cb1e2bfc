#include "gates/pipeline/families/watch_verdict.h"

#include <algorithm>

#include "adapters/core/foreign_json.h"

namespace fabgate::pipeline {

namespace {

// Beyond this share of the watch in stalls it sampled only here and there: as in
// adapters/flows/watch.h (kMaxStalledShare), which the gate does not depend on.
constexpr double kMaxStalledShare = 0.1;

std::string ms(Duration value) {
  return std::to_string(value.count()) + " ms";
}

// Each reader sets `problem` (naming the field) and returns nullopt when the field is missing
// or of another type.
std::optional<Duration> read_ms(const nlohmann::json& object, const char* field,
                                std::string& problem, const std::string& where = "") {
  auto found = object.find(field);
  if (found == object.end()) {
    problem = "field '" + where + field + "' missing";
    return std::nullopt;
  }
  if (!found->is_number_integer() || found->get<long long>() < 0) {
    problem = "field '" + where + field + "' is not a non-negative integer";
    return std::nullopt;
  }
  return Duration{found->get<long long>()};
}

std::optional<std::string> read_text(const nlohmann::json& object, const char* field,
                                     std::string& problem, const std::string& where = "") {
  auto found = object.find(field);
  if (found == object.end()) {
    problem = "field '" + where + field + "' missing";
    return std::nullopt;
  }
  if (!found->is_string()) {
    problem = "field '" + where + field + "' is not a string";
    return std::nullopt;
  }
  return found->get<std::string>();
}

std::optional<TimePoint> read_time(const nlohmann::json& object, const char* field,
                                   std::string& problem, const std::string& where = "") {
  auto text = read_text(object, field, problem, where);
  if (!text) return std::nullopt;
  auto when = parse_iso8601(*text);
  if (!when) problem = "field '" + where + field + "' is not an ISO 8601 time";
  return when;
}

}  // namespace

WatchReading read_watch_report(const nlohmann::json& document) {
  WatchReading reading;
  std::string& problem = reading.problem;
  if (!document.is_object()) {
    problem = "the watch report is not a JSON object";
    return reading;
  }
  WatchFigures figures;
  auto verdict = read_text(document, "verdict", problem);
  if (!verdict) return reading;
  figures.verdict = *verdict;
  auto reason = read_text(document, "reason", problem);
  if (!reason) return reading;
  figures.reason = *reason;
  // A watch with no evidence (no reply ever, or it could not start) may carry nothing else.
  if (figures.verdict == "no-evidence") {
    reading.figures = figures;
    return reading;
  }
  if (figures.verdict != "pass" && figures.verdict != "fail") {
    problem = "field 'verdict' is '" + figures.verdict + "', not pass, fail or no-evidence";
    return reading;
  }
  struct Field {
    const char* name;
    Duration* into;
  };
  for (const Field& field :
       {Field{"resolution_ms", &figures.resolution},
        Field{"longest_interruption_ms", &figures.longest_interruption},
        Field{"longest_possible_interruption_ms", &figures.longest_possible_interruption},
        Field{"longest_stall_ms", &figures.longest_stall}, Field{"stalled_ms", &figures.stalled}}) {
    auto value = read_ms(document, field.name, problem);
    if (!value) return reading;
    *field.into = *value;
  }
  auto count = read_ms(document, "stall_count", problem);
  if (!count) return reading;
  figures.stall_count = static_cast<int>(count->count());
  // Optional: a watch that predates responder accounting counted every stall as its sampler's.
  if (document.contains("responder_stall_count")) {
    auto responder = read_ms(document, "responder_stall_count", problem);
    if (!responder) return reading;
    figures.responder_stall_count = static_cast<int>(responder->count());
  }
  auto started = read_time(document, "started_at", problem);
  if (!started) return reading;
  figures.started_at = *started;
  auto ended = read_time(document, "ended_at", problem);
  if (!ended) return reading;
  figures.ended_at = *ended;
  auto stopped_by = string_member(document, "stopped_by");
  if (!stopped_by) {
    problem = wrong_member(document, "stopped_by", "a string");
    return reading;
  }
  figures.stopped_by = *stopped_by;
  auto stalls = document.find("stalls");
  if (stalls == document.end()) {
    problem = "field 'stalls' missing";
    return reading;
  }
  if (!stalls->is_array()) {
    problem = "field 'stalls' is not an array";
    return reading;
  }
  for (std::size_t i = 0; i < stalls->size(); ++i) {
    const auto& item = (*stalls)[i];
    const std::string where = "stalls[" + std::to_string(i) + "].";
    if (!item.is_object()) {
      problem = "field 'stalls[" + std::to_string(i) + "]' is not an object";
      return reading;
    }
    auto at = read_time(item, "started_at", problem, where);
    if (!at) return reading;
    auto length = read_ms(item, "length_ms", problem, where);
    if (!length) return reading;
    figures.stalls.push_back(WatchStall{*at, *length});
  }
  reading.figures = figures;
  return reading;
}

namespace {

// Why the watch's report does not cover the window up to the stop request, or empty when it
// does.
std::string unwatched_window(const WatchFigures& figures, Duration until_stop) {
  const std::string after = ", before the disruption gate asked it to stop: the window after "
                            "it was not watched";
  if (figures.stopped_by != "signal")
    return "the watch stopped by itself (" + figures.stopped_by + ") at " +
           format_utc(figures.ended_at) + after;
  const auto watched = std::chrono::duration_cast<Duration>(figures.ended_at - figures.started_at);
  if (watched + figures.resolution < until_stop)
    return "the watch's window ended at " + format_utc(figures.ended_at) + " after " +
           ms(watched) + ", " + ms(until_stop - watched) + " short of the stop request" + after;
  return "";
}

}  // namespace

WatchJudgement judge_watch(const WatchReading& reading, const WatchRequest& request) {
  const Duration allowed = request.allowed;
  if (!reading.figures)
    return {Verdict::no_evidence, "unreadable watch report: " + reading.problem};
  const WatchFigures& figures = *reading.figures;
  if (figures.verdict == "no-evidence") return {Verdict::no_evidence, figures.reason};
  const std::string figure = "longest interruption " + ms(figures.longest_interruption) +
                             " (resolution " + ms(figures.resolution) + "; allowed " + ms(allowed) +
                             ")";
  if (figures.longest_interruption > allowed)
    return {Verdict::fail, figure + ": " + figures.reason};
  // What it saw is no evidence for what it did not: a pass needs the whole window.
  if (auto unwatched = unwatched_window(figures, request.until_stop); !unwatched.empty())
    return {Verdict::no_evidence, unwatched + "; " + figure};
  if (figures.stall_count > 0) {
    // The watch's own stalls are lost resolution, no evidence for their spans: named, never
    // read as an outage of the paths.
    const std::string stalled =
        "the watch itself stalled " + std::to_string(figures.stall_count) + " times (" +
        std::to_string(figures.responder_stall_count) + " of them its responder holding probes; " +
        "longest " + ms(figures.longest_stall) + ", " + ms(figures.stalled) + " together)";
    if (figures.longest_possible_interruption > allowed)
      return {Verdict::no_evidence,
              figure + ", up to " + ms(figures.longest_possible_interruption) +
                  " with the spans the watch did not see at its ends: cannot tell whether longer "
                  "than " +
                  ms(allowed) + "; " + stalled};
    if (figures.longest_stall > std::max(allowed, figures.resolution))
      return {Verdict::no_evidence, figure + ", but no evidence for " + ms(figures.longest_stall) +
                                        ": an interruption longer than allowed could have "
                                        "passed unseen while " +
                                        stalled};
    const auto watched =
        std::chrono::duration_cast<Duration>(figures.ended_at - figures.started_at);
    if (watched.count() > 0 && static_cast<double>(figures.stalled.count()) >
                                   kMaxStalledShare * static_cast<double>(watched.count()))
      return {Verdict::no_evidence, figure + ", but no evidence for " + ms(figures.stalled) +
                                        " of " + ms(watched) + " watched: " + stalled};
    if (figures.verdict == "fail") return {Verdict::fail, figure + ": " + figures.reason};
    return {Verdict::pass, figure + "; " + stalled + ", each within the allowance"};
  }
  if (figures.verdict == "fail") return {Verdict::fail, figure + ": " + figures.reason};
  return {Verdict::pass, figure + ": " + figures.reason};
}

}  // namespace fabgate::pipeline
