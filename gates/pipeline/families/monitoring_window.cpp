// What Prometheus observed during a change window (docs/monitoring.md "What each verdict
// proves"): how many times it scraped each target, whether a scrape failed, and whether its rule
// groups were evaluated. freshness-post and alerts-acceptance judge with these.

#include "gates/pipeline/families/monitoring.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "adapters/core/text.h"

namespace fabgate::pipeline {
namespace {

std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  char text[64];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void worst(Verdict& into, Verdict verdict) {
  if (verdict == Verdict::fail || (verdict == Verdict::no_evidence && into == Verdict::pass))
    into = verdict;
}

// The window's length as a PromQL range, in whole milliseconds (at least 1 s).
Duration window_length(TimePoint start, TimePoint end) {
  return std::max<Duration>(Duration{1'000}, std::chrono::duration_cast<Duration>(end - start));
}

std::string range_of(Duration length) {
  return "[" + std::to_string(length.count()) + "ms]";
}

std::map<std::string, std::string> without_name(std::map<std::string, std::string> labels) {
  labels.erase("__name__");
  return labels;
}

// One instant query at Prometheus' clock with its record in `records`; a failure is a detail.
struct Asker {
  const prom::PrometheusClient& prometheus;
  nlohmann::json& records;
  MonitoringJudgement& judgement;

  std::optional<prom::QueryAnswer> operator()(const std::string& device, const std::string& purpose,
                                              const std::string& query) {
    nlohmann::json record = {
        {"device", device}, {"purpose", purpose}, {"query", query}, {"verdict", "no-evidence"}};
    auto answer = prometheus.query_now(query);
    if (!answer.ok()) {
      record["error"] = answer.error().message;
      records.push_back(record);
      worst(judgement.verdict, Verdict::no_evidence);
      judgement.details.push_back("[telemetry] " + device + ": " + answer.error().message);
      return std::nullopt;
    }
    record["evaluated_at"] = format_utc(answer->evaluated_at);
    record["answer"] = raw_answer(answer->raw);
    records.push_back(record);
    return std::move(answer.value());
  }

  // Judges the last query; one answer may hold several series (targets), so its record keeps
  // every reason and the worst verdict.
  void judge_last(Verdict verdict, const std::string& reason) {
    auto& record = records.back();
    if (!record.contains("reasons") || verdict != Verdict::pass)
      record["verdict"] = std::string(to_string(verdict));
    record["reasons"].push_back(reason);
    worst(judgement.verdict, verdict);
    if (verdict != Verdict::pass) judgement.details.push_back("[telemetry] " + reason);
  }
};

// The failed scrapes among one target's `up` samples of the window.
struct ScrapeFailures {
  std::size_t samples = 0;
  std::size_t failed = 0;
  std::size_t longest_run = 0;  // consecutive failed scrapes
  bool last_failed = false;
  double first = 0, last = 0;  // times of the first and last failed scrape
};

ScrapeFailures failures_in(const prom::Series& series) {
  ScrapeFailures out;
  std::size_t run = 0;
  for (const auto& point : series.points) {
    ++out.samples;
    const bool failed = !(point.value >= 1);
    out.last_failed = failed;
    if (!failed) {
      run = 0;
      continue;
    }
    if (out.failed++ == 0) out.first = point.time;
    out.last = point.time;
    out.longest_run = std::max(out.longest_run, ++run);
  }
  return out;
}

// Why a target's failed scrapes leave the window unobserved, or nothing when they can be
// tolerated (docs/monitoring.md "No unobserved gap in the window"): isolated single failures,
// at most 1 in 10 of the window's scrapes, the last one successful, no alert pending on it.
std::optional<std::string> intolerable(const ScrapeFailures& failures, const PendingAlerts& pending,
                                       const std::string& device) {
  if (failures.samples == 0 || failures.failed == 0)
    return "its samples in the window could not be read";
  if (failures.last_failed) return "the window's last scrape failed";
  if (failures.longest_run > 1)
    return std::to_string(failures.longest_run) + " failed scrapes in a row";
  if (failures.failed * 10 > failures.samples)
    return std::to_string(failures.failed) + " of " + std::to_string(failures.samples) +
           " scrapes failed, more than 1 in 10";
  if (pending.unknown) return "whether an alert was pending on it is unknown: " + *pending.unknown;
  if (pending.devices.count(device))
    return "an alert was pending on it during the window, and a failed scrape restarts its for:";
  return std::nullopt;
}

}  // namespace

MonitoringJudgement check_window_scrapes(const prom::PrometheusClient& prometheus,
                                         const intent::PrometheusSettings& settings,
                                         const std::vector<const intent::Device*>& targets,
                                         TimePoint window_start, TimePoint window_end,
                                         const PendingAlerts* failed_scrapes) {
  MonitoringJudgement judgement;
  judgement.verdict = Verdict::pass;
  const Duration length = window_length(window_start, window_end);
  const std::string range = range_of(length);
  const double length_s = std::chrono::duration<double>(length).count();
  const std::string window = "the " + std::to_string(std::llround(length_s)) + " s window";
  nlohmann::json records = nlohmann::json::array();
  Asker ask{prometheus, records, judgement};
  std::size_t few = 0, failing = 0, unknown = 0, tolerated_targets = 0;

  std::string targets_raw;
  auto scraped = prometheus.targets(&targets_raw);
  if (!scraped.ok()) {
    worst(judgement.verdict, Verdict::no_evidence);
    judgement.details.push_back("[telemetry] " + scraped.error().message);
    ++unknown;
  }
  for (const auto* device : targets) {
    if (!scraped.ok()) break;
    auto matcher = series_matcher(settings.series, *device);
    if (!matcher) {
      ++unknown;
      worst(judgement.verdict, Verdict::no_evidence);
      judgement.details.push_back(device->name + ": the series template '" + settings.series +
                                  "' names something the device does not have");
      continue;
    }
    const std::string up = "up{" + *matcher + "}";

    // How many scrapes the window holds, against what the target's interval implies.
    auto counted = ask(device->name, "scrape-count", "count_over_time(" + up + range + ")");
    if (!counted) {
      ++unknown;
      continue;
    }
    if (counted->series.empty()) {
      ++few;
      ask.judge_last(Verdict::no_evidence, device->name + ": no scrape of " + up + " in " + window +
                                               ": Prometheus did not observe the "
                                               "target during the change");
      continue;
    }
    for (const auto& series : counted->series) {
      const auto labels = without_name(series.labels);
      const double count = series.points.empty() ? std::nan("") : series.points[0].value;
      auto target = std::find_if(scraped->begin(), scraped->end(),
                                 [&](const prom::ScrapeTarget& t) { return t.labels == labels; });
      if (target == scraped->end() || target->scrape_interval <= Duration::zero()) {
        ++few;
        ask.judge_last(Verdict::no_evidence,
                       device->name + ": target " + labels_text(labels) +
                           " is not among the targets Prometheus scrapes now, so how many "
                           "scrapes the window should hold is unknown");
        continue;
      }
      const double expected =
          std::floor(length_s / std::chrono::duration<double>(target->scrape_interval).count());
      const double needed = std::max(2.0, std::ceil(expected / 2));
      const std::string every = format_duration(target->scrape_interval);
      if (!(count >= needed)) {
        ++few;
        ask.judge_last(Verdict::no_evidence,
                       device->name + ": " + number(count) + " scrapes of target " +
                           labels_text(labels) + " in " + window + ", at least " + number(needed) +
                           " needed (one every " + every + ": half the " + number(expected) +
                           " expected, and at least 2): Prometheus did not observe the change");
      } else {
        ask.judge_last(Verdict::pass, device->name + ": " + number(count) + " scrapes of " +
                                          labels_text(labels) + " in the window (one every " +
                                          every + ")");
      }
    }
    if (!failed_scrapes) continue;

    // A failed scrape (up == 0) leaves a gap in every series of the target: an alert on them
    // could not fire then.
    auto lowest = ask(device->name, "scrape-failures", "min_over_time(" + up + range + ")");
    if (!lowest) {
      ++unknown;
      continue;
    }
    std::vector<std::map<std::string, std::string>> down;
    for (const auto& series : lowest->series)
      if (series.points.empty() || !(series.points[0].value >= 1))
        down.push_back(without_name(series.labels));
    if (lowest->series.empty()) {
      ++unknown;
      ask.judge_last(Verdict::no_evidence, device->name + ": no " + up + " sample in the window");
      continue;
    }
    if (down.empty()) {
      ask.judge_last(Verdict::pass, device->name + ": no failed scrape in the window");
      continue;
    }
    // Which, when, and whether the gap can be tolerated: from the raw samples of the window.
    auto samples = ask(device->name, "failed-scrapes", up + range);
    std::vector<std::string> refused, tolerated;
    for (const auto& labels : down) {
      ScrapeFailures failures;
      if (samples)
        for (const auto& series : samples->series)
          if (without_name(series.labels) == labels) failures = failures_in(series);
      const std::string target = device->name + ": target " + labels_text(labels);
      auto why_not = intolerable(failures, *failed_scrapes, device->name);
      if (!why_not) {
        tolerated.push_back(target + " missed 1 scrape (up == 0 at " +
                            format_utc(prom::from_api_time(failures.first)) +
                            ") between two successful ones, tolerated: no alert was pending on "
                            "it, so the gap hides at most what lasted under two scrape intervals");
        continue;
      }
      std::string when;
      if (failures.failed)
        when =
            ", " + plural(failures.failed, "failed scrape", "failed scrapes") + ", the first at " +
            format_utc(prom::from_api_time(failures.first)) +
            (failures.failed > 1 ? ", the last at " + format_utc(prom::from_api_time(failures.last))
                                 : "");
      refused.push_back(target + " was down during the change (up == 0" + when + "; " + *why_not +
                        "): its series have a gap there, so an alert on them could " + "not fire");
    }
    if (refused.empty()) {
      ask.judge_last(Verdict::pass, join(tolerated, "; "));
      tolerated_targets += tolerated.size();
      for (auto& line : tolerated) judgement.details.push_back(std::move(line));
      continue;
    }
    ++failing;
    ask.judge_last(Verdict::no_evidence, join(refused, "; "));
  }
  judgement.evidence = {{"window_start", format_utc(window_start)},
                        {"window_end", format_utc(window_end)},
                        {"range", range},
                        {"queries", records},
                        {"targets", raw_answer(targets_raw)}};
  std::vector<std::string> parts;
  if (few) parts.push_back(plural(few, "target", "targets") + " scraped too few times");
  if (failing)
    parts.push_back(plural(failing, "target", "targets") + " with failed scrapes not tolerated");
  if (unknown)
    parts.push_back("the window's scrapes of " + plural(unknown, "target", "targets") + " unknown");
  judgement.summary = parts.empty() ? "every target scraped throughout the window"
                                    : "during the change window: " + join(parts, ", ");
  if (parts.empty() && tolerated_targets)
    judgement.summary += " (" + plural(tolerated_targets, "target", "targets") +
                         " with one isolated failed scrape, tolerated)";
  return judgement;
}

MonitoringJudgement check_rule_evaluation(const prom::PrometheusClient& prometheus,
                                          const intent::PrometheusSettings& settings,
                                          TimePoint window_start, TimePoint window_end) {
  MonitoringJudgement judgement;
  const Duration length = window_length(window_start, window_end);
  judgement.evidence = {{"window_start", format_utc(window_start)},
                        {"window_end", format_utc(window_end)}};
  auto give_up = [&](const std::string& why) {
    judgement.verdict = Verdict::no_evidence;
    judgement.summary = "whether the alerting rules were evaluated during the change is unknown";
    judgement.details.push_back("[telemetry] " + why);
    judgement.evidence["error"] = why;
    return judgement;
  };
  // Prometheus' clock, so that "inside the window" does not depend on the controller's.
  auto clock = prometheus.query_now("time()");
  if (!clock.ok()) return give_up(clock.error().message);
  if (clock->series.empty() || clock->series[0].points.empty() ||
      !std::isfinite(clock->series[0].points[0].value))
    return give_up("prometheus: time() answered no time");
  const TimePoint now = prom::from_api_time(clock->series[0].points[0].value);
  const TimePoint start = now - length;
  judgement.evidence["prometheus_now"] = format_utc(now);
  judgement.evidence["window_start_on_prometheus_clock"] = format_utc(start);
  std::string raw;
  auto groups = prometheus.rule_groups(&raw);
  judgement.evidence["answer"] = raw_answer(raw);
  if (!groups.ok()) return give_up(groups.error().message);

  judgement.verdict = Verdict::pass;
  nlohmann::json findings = nlohmann::json::array();
  std::size_t alerting = 0, unevaluated = 0, broken = 0;
  for (const auto& group : *groups) {
    if (!group.has_alerting_rules()) continue;
    ++alerting;
    const std::string name =
        "rule group " + group.name + (group.file.empty() ? "" : " (" + group.file + ")");
    nlohmann::json finding = {
        {"group", group.name}, {"file", group.file}, {"interval", format_duration(group.interval)}};
    std::string reason;
    if (!group.last_evaluation) {
      reason = name + " has never been evaluated: nobody evaluated its alerts during the change";
    } else {
      finding["last_evaluation"] = format_utc(*group.last_evaluation);
      const auto age = now - *group.last_evaluation;
      if (*group.last_evaluation < start)
        reason = name + " last evaluated at " + format_utc(*group.last_evaluation) +
                 ", before the window began (" + format_utc(start) +
                 " on Prometheus' clock): nobody evaluated its alerts during the change";
      else if (age > settings.max_age)
        reason = name + " last evaluated " +
                 format_duration(std::chrono::duration_cast<Duration>(age)) +
                 " ago, longer than max_age " + format_duration(settings.max_age) +
                 ": its alerts have not judged the end of the change";
    }
    if (!reason.empty()) ++unevaluated;
    for (const auto& rule : group.rules)
      if (rule.type == "alerting" && rule.health == "err") {
        ++broken;
        reason += (reason.empty() ? "" : "; ") + std::string("alerting rule ") + rule.name +
                  " in " + name + " fails to evaluate (" + rule.last_error + "): it cannot fire";
      }
    finding["verdict"] = reason.empty() ? "pass" : "no-evidence";
    if (!reason.empty()) {
      finding["reason"] = reason;
      judgement.verdict = Verdict::no_evidence;
      judgement.details.push_back("[telemetry] " + reason);
    }
    findings.push_back(finding);
  }
  judgement.evidence["groups"] = findings;
  if (alerting == 0) {
    judgement.verdict = Verdict::no_evidence;
    judgement.details.push_back(
        "[telemetry] Prometheus (" + prometheus.endpoint().base_url +
        ") evaluates no alerting rule: its ALERTS history cannot show an alert; "
        "monitoring.prometheus must be the Prometheus that evaluates the alerts");
  }
  std::vector<std::string> parts;
  if (alerting == 0) parts.push_back("no alerting rule in Prometheus");
  if (unevaluated)
    parts.push_back(plural(unevaluated, "rule group", "rule groups") +
                    " not evaluated during the change");
  if (broken) parts.push_back(plural(broken, "alerting rule", "alerting rules") + " failing");
  judgement.summary = parts.empty() ? plural(alerting, "rule group", "rule groups") +
                                          " with alerting rules evaluated during the change"
                                    : join(parts, ", ");
  return judgement;
}

}  // namespace fabgate::pipeline
