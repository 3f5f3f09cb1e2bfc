#include "gates/pipeline/families/monitoring.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>

#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"

namespace fabgate::pipeline {
namespace {

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool same_hostname(const std::string& expected, const std::string& found) {
  std::string want = lower(expected), got = lower(found);
  return want == got || (want.find('.') == std::string::npos && got.rfind(want + ".", 0) == 0);
}

std::string count_of(std::size_t n, const std::string& noun) {
  if (n == 1 || noun.ends_with("series")) return std::to_string(n) + " " + noun;
  if (noun.ends_with("y") && !noun.ends_with("ey"))
    return std::to_string(n) + " " + noun.substr(0, noun.size() - 1) + "ies";
  return std::to_string(n) + " " + noun + "s";
}

std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  char text[64];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

double seconds_of(TimePoint when) {
  return std::chrono::duration<double>(when.time_since_epoch()).count();
}

nlohmann::json query_record(const std::string& device, const std::string& purpose,
                            const std::string& query, TimePoint at) {
  return {{"device", device},
          {"purpose", purpose},
          {"query", query},
          {"evaluated_at", format_utc(at)},
          {"verdict", "no-evidence"}};
}

void worst(Verdict& into, Verdict verdict) {
  if (verdict == Verdict::fail || (verdict == Verdict::no_evidence && into == Verdict::pass))
    into = verdict;
}

std::string regex_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\.^$|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

struct Comparison {
  std::string op;
  double bound = 0;
  bool holds(double value) const {
    if (op == "<") return value < bound;
    if (op == "<=") return value <= bound;
    if (op == "==") return value == bound;
    if (op == "!=") return value != bound;
    if (op == ">=") return value >= bound;
    if (op == ">") return value > bound;
    return false;
  }
};

std::optional<Comparison> parse_comparison(const std::string& text) {
  static const std::regex pattern(
      "\\s*(<=|>=|==|!=|<|>)\\s*(-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?)\\s*");
  std::smatch match;
  if (!std::regex_match(text, match, pattern)) return std::nullopt;
  return Comparison{match[1].str(), std::stod(match[2].str())};
}

}  // namespace

std::string labels_text(const std::map<std::string, std::string>& labels) {
  std::string out = "{";
  for (const auto& [key, value] : labels) {
    if (out.size() > 1) out += ",";
    out += key + "=\"" + value + "\"";
  }
  return out + "}";
}

// Raw answers as JSON when they parse (they are the API's JSON), else as text. Depth-limited:
// the evidence bundle copies and dumps this document recursively, and the answer is kept even
// when the client refused it (300,000 levels of nesting then stay text).
nlohmann::json raw_answer(const std::string& raw) {
  auto parsed = parse_foreign_json(raw);
  return parsed.ok() ? std::move(parsed.document) : nlohmann::json(raw);
}

std::optional<std::string> series_matcher(const std::string& series, const intent::Device& device) {
  std::string out;
  std::size_t at = 0;
  while (at < series.size()) {
    auto open = series.find("{{", at);
    if (open == std::string::npos) {
      out += series.substr(at);
      break;
    }
    auto close = series.find("}}", open);
    if (close == std::string::npos) return std::nullopt;
    out += series.substr(at, open - at);
    std::string name = series.substr(open + 2, close - open - 2);
    if (name == "name") {
      out += device.name;
    } else if (name == "mgmt") {
      out += device.ssh.host;
    } else if (name.rfind("label.", 0) == 0) {
      auto label = device.labels.find(name.substr(6));
      if (label == device.labels.end()) return std::nullopt;
      out += label->second;
    } else {
      return std::nullopt;
    }
    at = close + 2;
  }
  return out;
}

std::string expected_hostname(const intent::Device& device) {
  return device.identity && !device.identity->hostname.empty() ? device.identity->hostname
                                                               : device.name;
}

std::vector<std::string> promql_metric_names(const std::string& query) {
  std::vector<std::string> names;
  auto is_start = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  };
  auto is_part = [&](char c) { return is_start(c) || std::isdigit(static_cast<unsigned char>(c)); };
  std::size_t i = 0;
  while (i < query.size()) {
    char c = query[i];
    if (c == '"' || c == '\'' || c == '`') {  // skip string literals (label values)
      std::size_t end = i + 1;
      while (end < query.size() && query[end] != c) end += query[end] == '\\' ? 2 : 1;
      i = end + 1;
      continue;
    }
    if (!is_start(c) || (i > 0 && is_part(query[i - 1]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < query.size() && is_part(query[end])) ++end;
    std::size_t next = end;
    while (next < query.size() && std::isspace(static_cast<unsigned char>(query[next]))) ++next;
    std::string name = query.substr(i, end - i);
    if (next < query.size() && query[next] == '{' &&
        std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
    i = end;
  }
  return names;
}

MonitoringJudgement check_freshness_of(
    const prom::PrometheusClient& prometheus, const intent::PrometheusSettings& settings,
    const std::vector<const intent::Device*>& targets, TimePoint at,
    const std::map<std::string, std::vector<std::string>>& probe_metrics,
    std::optional<TimePoint> window_start) {
  MonitoringJudgement judgement;
  judgement.verdict = Verdict::pass;
  nlohmann::json queries = nlohmann::json::array();
  std::size_t down = 0, stale = 0, absent = 0, wrong = 0, failed = 0, fresh_series = 0,
              unscraped = 0;
  const auto max_age_s = std::chrono::duration<double>(settings.max_age).count();
  const std::string max_age = format_duration(settings.max_age);
  // The targets Prometheus scrapes now, read once for all devices.
  std::optional<Expected<std::vector<prom::ScrapeTarget>, prom::PromFailure>> scraped;
  std::string scraped_raw;
  for (const auto* device : targets) {
    auto matcher = series_matcher(settings.series, *device);
    if (!matcher) {
      worst(judgement.verdict, Verdict::no_evidence);
      judgement.details.push_back(device->name + ": the series template '" + settings.series +
                                  "' names something the device does not have");
      continue;
    }
    // Every query runs at Prometheus' own clock, so an age is its evaluation time minus the
    // sample's timestamp, both Prometheus'.
    auto ask = [&](const std::string& purpose,
                   const std::string& query) -> std::optional<prom::QueryAnswer> {
      auto record = query_record(device->name, purpose, query, at);
      auto answer = prometheus.query_now(query);
      if (!answer.ok()) {
        ++failed;
        record["error"] = answer.error().message;
        record["failure"] = std::string(prom::to_string(answer.error().kind));
        queries.push_back(record);
        worst(judgement.verdict, Verdict::no_evidence);
        judgement.details.push_back("[telemetry] " + device->name + ": " + answer.error().message);
        return std::nullopt;
      }
      record["evaluated_at"] = format_utc(answer->evaluated_at);
      record["answer"] = raw_answer(answer->raw);
      queries.push_back(record);
      return std::move(answer.value());
    };
    auto verdict_last = [&](Verdict verdict, const std::string& reason) {
      queries.back()["verdict"] = std::string(to_string(verdict));
      queries.back()["reason"] = reason;
      worst(judgement.verdict, verdict);
      if (verdict != Verdict::pass) judgement.details.push_back("[telemetry] " + reason);
    };
    // The oldest newest-sample among an answer's series of timestamp(...): NaN when a sample
    // is not a time (never younger than max_age).
    auto age_of = [](const prom::QueryAnswer& answer) {
      double age = std::nan("");
      for (const auto& series : answer.series) {
        const double one =
            series.points.empty() ? std::nan("") : series.points[0].time - series.points[0].value;
        if (std::isnan(one)) return one;
        age = std::isnan(age) ? one : std::max(age, one);
      }
      return age;
    };
    auto young = [&](double age) { return age >= -1 && age <= max_age_s; };

    // 1. The target is scraped and its last scrape succeeded.
    const std::string up_query = "up{" + *matcher + "}";
    auto up = ask("target-up", up_query);
    if (!up) continue;
    if (up->series.empty()) {
      ++absent;
      verdict_last(Verdict::no_evidence, device->name + ": Prometheus has no target matching " +
                                             up_query + ", so nothing observes the device");
      continue;
    }
    bool is_up = std::all_of(up->series.begin(), up->series.end(), [](const prom::Series& s) {
      return !s.points.empty() && s.points[0].value == 1;
    });
    if (!is_up) {
      ++down;
      verdict_last(Verdict::no_evidence,
                   device->name + ": target " + labels_text(up->series[0].labels) +
                       " is down (up == 0): its last scrape failed, so no fresh evidence");
      continue;
    }
    verdict_last(Verdict::pass, device->name + ": scraped (up == 1)");

    // 2. That `up == 1` is recent: an instant query returns the newest sample of the last 5
    //    minutes, also when Prometheus stopped scraping the target minutes ago.
    if (auto ages = ask("target-up-age", "timestamp(" + up_query + ")")) {
      const double age = age_of(*ages);
      if (ages->series.empty() || !young(age)) {
        ++stale;
        verdict_last(Verdict::no_evidence,
                     device->name + ": newest " + up_query + " sample is " + number(age) +
                         " s old on Prometheus' clock, older than max_age " + max_age +
                         ": Prometheus has not scraped the target since (up == 1 is an old "
                         "answer, not a fresh one)");
      } else {
        verdict_last(Verdict::pass, device->name + ": up " + number(age) + " s old");
      }
    }

    // 3. Prometheus still scrapes each of the device's targets, often enough for max_age.
    if (!scraped) scraped = prometheus.targets(&scraped_raw);
    nlohmann::json listed = {{"device", device->name},
                             {"purpose", "target-scraped"},
                             {"query", "/api/v1/targets"},
                             {"evaluated_at", format_utc(at)}};
    if (!scraped->ok()) {
      ++failed;
      queries.push_back(listed);
      verdict_last(Verdict::no_evidence, device->name + ": " + scraped->error().message);
    } else {
      for (const auto& series : up->series) {
        auto labels = series.labels;
        labels.erase("__name__");
        queries.push_back(listed);
        queries.back()["target"] = labels_text(labels);
        auto target = std::find_if(scraped->value().begin(), scraped->value().end(),
                                   [&](const prom::ScrapeTarget& t) { return t.labels == labels; });
        if (target == scraped->value().end()) {
          ++unscraped;
          verdict_last(Verdict::no_evidence,
                       device->name + ": target " + labels_text(labels) +
                           " is not among the targets Prometheus scrapes now (removed, or "
                           "Prometheus restarted without it); its last samples stay visible to "
                           "instant queries for 5 minutes");
        } else if (target->scrape_interval > settings.max_age) {
          ++unscraped;
          verdict_last(Verdict::no_evidence,
                       device->name + ": target " + labels_text(labels) + " is scraped every " +
                           format_duration(target->scrape_interval) + ", longer than max_age " +
                           max_age + ": its samples cannot be proven fresh");
        } else {
          verdict_last(Verdict::pass, device->name + ": target " + labels_text(labels) +
                                          " scraped every " +
                                          format_duration(target->scrape_interval));
        }
      }
    }

    // 4. Every metric a check needs (the `fresh` list and what this device's promql probes
    //    select) has a sample younger than max_age.
    std::vector<std::string> needed = settings.fresh;
    if (auto probed = probe_metrics.find(device->name); probed != probe_metrics.end())
      for (const auto& metric : probed->second)
        if (std::find(needed.begin(), needed.end(), metric) == needed.end())
          needed.push_back(metric);
    for (const auto& metric : needed) {
      const std::string query = "timestamp(" + metric + "{" + *matcher + "})";
      auto answer = ask("fresh", query);
      if (!answer) continue;
      if (answer->series.empty()) {
        ++absent;
        verdict_last(Verdict::no_evidence, device->name + ": no " + metric + "{" + *matcher +
                                               "} series: absent evidence is not health");
        continue;
      }
      const double age = age_of(*answer);
      ++fresh_series;
      if (!young(age)) {
        ++stale;
        verdict_last(Verdict::no_evidence, device->name + ": newest " + metric + " sample is " +
                                               number(age) + " s old, older than max_age " +
                                               max_age + " (stale)");
      } else {
        verdict_last(Verdict::pass, device->name + ": " + metric + " " + number(age) + " s old");
      }
    }

    // 5. The source reports, freshly, the identity the inventory expects (timestamp() keeps
    //    the labels but the metric name).
    if (settings.identity_metric.empty()) continue;
    const std::string series = settings.identity_metric + "{" + *matcher + "}";
    auto answer = ask("identity", "timestamp(" + series + ")");
    if (!answer) continue;
    const std::string expected = expected_hostname(*device);
    std::set<std::string> reported;
    for (const auto& found : answer->series) {
      auto label = found.labels.find(settings.identity_label);
      if (label != found.labels.end()) reported.insert(label->second);
    }
    const double age = age_of(*answer);
    if (reported.empty()) {
      ++absent;
      verdict_last(Verdict::no_evidence, device->name + ": no " + series + " with label " +
                                             settings.identity_label +
                                             ", so the source's identity is unknown");
    } else if (reported.size() > 1 || !same_hostname(expected, *reported.begin())) {
      ++wrong;
      verdict_last(Verdict::fail,
                   device->name + ": " + series + " reports " + settings.identity_label + "=" +
                       join(std::vector<std::string>(reported.begin(), reported.end()), ",") +
                       ", inventory says " + expected + ": the series describe another device");
    } else if (!young(age)) {
      ++stale;
      verdict_last(Verdict::no_evidence, device->name + ": newest " + series + " sample is " +
                                             number(age) + " s old, older than max_age " + max_age +
                                             ": the identity is not a current one");
    } else {
      verdict_last(Verdict::pass, device->name + ": " + settings.identity_label + "=" +
                                      *reported.begin() + " as the inventory says");
    }
  }
  judgement.evidence = {{"prometheus", settings.endpoint.url},
                        {"evaluated_at", format_utc(at)},
                        {"max_age", format_duration(settings.max_age)},
                        {"queries", queries}};
  if (scraped) judgement.evidence["targets"] = raw_answer(scraped_raw);
  std::vector<std::string> parts;
  if (failed) parts.push_back(count_of(failed, "query") + " without an answer");
  if (down) parts.push_back(count_of(down, "target") + " down");
  if (unscraped) parts.push_back(count_of(unscraped, "target") + " not scraped within max_age");
  if (absent) parts.push_back(count_of(absent, "series") + " absent");
  if (stale) parts.push_back(count_of(stale, "series") + " stale");
  if (wrong) parts.push_back(count_of(wrong, "wrong identity"));
  if (window_start) {
    auto window = check_window_scrapes(prometheus, settings, targets, *window_start, at, nullptr);
    worst(judgement.verdict, window.verdict);
    for (auto& line : window.details) judgement.details.push_back(std::move(line));
    judgement.evidence["window"] = std::move(window.evidence);
    if (window.verdict != Verdict::pass) parts.push_back(window.summary);
  }
  if (parts.empty())
    parts.push_back(count_of(targets.size(), "target") + " scraped, " +
                    count_of(fresh_series, "metric") + " fresh within " + max_age +
                    (settings.identity_metric.empty() ? "" : ", identities as the inventory says") +
                    (window_start ? ", scraped throughout the change window" : ""));
  judgement.summary = join(parts, "; ");
  return judgement;
}

ProbeOutcome run_promql_probe(const prom::PrometheusClient& prometheus,
                              const intent::PrometheusSettings& settings,
                              const intent::Device& host, const intent::Probe& probe,
                              const std::string& phase, TimePoint window_start, TimePoint at) {
  ProbeOutcome outcome;
  outcome.name = probe.name;
  outcome.layer = probe.layer;
  outcome.host = probe.host;
  outcome.kind = "promql";
  outcome.phase = phase;
  outcome.started = now_utc();
  auto started = std::chrono::steady_clock::now();
  auto finish = [&](Verdict verdict, std::string reason) {
    outcome.verdict = verdict;
    outcome.reason = std::move(reason);
    outcome.detail["verdict"] = std::string(to_string(verdict));
    outcome.duration =
        std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started);
    return outcome;
  };
  auto matcher = series_matcher(settings.series, host);
  if (!matcher)
    return finish(Verdict::no_evidence,
                  "the series template names something " + host.name + " does not have");
  std::string query = probe.query;
  for (std::size_t pos; (pos = query.find("{{series}}")) != std::string::npos;)
    query.replace(pos, 10, *matcher);
  auto comparison = parse_comparison(probe.expect);
  if (!comparison)
    return finish(Verdict::no_evidence, "expect '" + probe.expect + "' is not a comparison");
  if (window_start > at) window_start = at;
  Duration step = std::max<Duration>(
      Duration{1'000}, std::chrono::duration_cast<Duration>((at - window_start) / 250));
  outcome.detail = {{"query", query},
                    {"expect", probe.expect},
                    {"range", probe.range},
                    {"evaluated_at", format_utc(at)}};
  if (probe.range) {
    outcome.detail["start"] = format_utc(window_start);
    outcome.detail["step"] = format_duration(step);
  }
  auto answer = probe.range ? prometheus.query_range(query, window_start, at, step)
                            : prometheus.query(query, at);
  if (!answer.ok()) {
    outcome.detail["error"] = answer.error().message;
    return finish(Verdict::no_evidence, answer.error().message);
  }
  outcome.output = answer->raw;
  outcome.detail["answer"] = raw_answer(answer->raw);
  std::vector<std::pair<std::string, double>> values;
  for (const auto& series : answer->series)
    for (const auto& point : series.points)
      values.emplace_back(labels_text(series.labels), point.value);
  if (values.empty()) {
    if (!probe.empty_is_zero)
      return finish(Verdict::no_evidence,
                    query +
                        " returned nothing: absent series are not health (set empty_is_zero "
                        "when no series means zero)");
    values.emplace_back("(empty, read as 0)", 0.0);
  }
  for (const auto& [labels, value] : values) {
    if (std::isnan(value)) return finish(Verdict::no_evidence, query + " " + labels + " is NaN");
    if (!comparison->holds(value))
      return finish(Verdict::fail,
                    query + " " + labels + " = " + number(value) + ", expected " + probe.expect);
  }
  double highest = values[0].second;
  for (const auto& [labels, value] : values) highest = std::max(highest, value);
  return finish(Verdict::pass, count_of(values.size(), "value") + " " + probe.expect +
                                   " (highest " + number(highest) + ")");
}

bool alert_concerns(const prom::Alert& alert, const intent::AlertmanagerSettings& settings,
                    const intent::Device& device) {
  auto named = alert.labels.find(settings.device_label);
  if (named != alert.labels.end()) return named->second == device.name;
  for (const auto& key : settings.failure_domain) {
    auto mine = device.labels.find(key);
    auto theirs = alert.labels.find(key);
    if (mine != device.labels.end() && theirs != alert.labels.end() &&
        mine->second == theirs->second)
      return true;
  }
  return false;
}

MonitoringJudgement check_alerts_before(const prom::AlertmanagerClient& alertmanager,
                                        const intent::AlertmanagerSettings& settings,
                                        const std::vector<const intent::Device*>& targets,
                                        const compare::ExceptionRegister& exceptions,
                                        TimePoint now) {
  MonitoringJudgement judgement;
  std::string raw;
  auto alerts = alertmanager.alerts(&raw);
  judgement.evidence = {{"alertmanager", settings.endpoint.url},
                        {"evaluated_at", format_utc(now)},
                        {"answer", raw_answer(raw)}};
  if (!alerts.ok()) {
    judgement.summary = "the alerts could not be read, so a firing alert cannot be ruled out";
    judgement.details.push_back("[telemetry] " + alerts.error().message);
    judgement.evidence["error"] = alerts.error().message;
    return judgement;
  }
  judgement.verdict = Verdict::pass;
  std::size_t blocking = 0, waived = 0, silenced = 0;
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& alert : *alerts) {
    for (const auto* device : targets) {
      if (!alert_concerns(alert, settings, *device)) continue;
      nlohmann::json finding = {{"device", device->name},
                                {"alert", alert.to_line()},
                                {"state", alert.state},
                                {"starts_at", format_utc(alert.starts_at)}};
      if (alert.state == "suppressed") {
        ++silenced;
        judgement.details.push_back(device->name + ": " + alert.to_line() +
                                    " is firing but silenced or inhibited (not blocking)");
        finding["verdict"] = "pass";
      } else {
        const compare::ExceptionEntry* waiver = nullptr;
        for (const auto& entry : exceptions.entries)
          if (!entry.expired(now) && entry.covers(device->name, "alert:" + alert.name(), {})) {
            waiver = &entry;
            break;
          }
        if (waiver) {
          ++waived;
          judgement.details.push_back(device->name + ": " + alert.to_line() +
                                      " is firing, WAIVED by " + waiver->id + " (" + waiver->owner +
                                      ", until " + format_utc(waiver->expiry) + ")");
          finding["verdict"] = "waived";
          finding["waived_by"] = waiver->id;
          if (std::find(judgement.exceptions_used.begin(), judgement.exceptions_used.end(),
                        waiver->id) == judgement.exceptions_used.end())
            judgement.exceptions_used.push_back(waiver->id);
        } else {
          ++blocking;
          judgement.verdict = Verdict::fail;
          judgement.details.insert(judgement.details.begin() + static_cast<long>(blocking - 1),
                                   "[telemetry] " + device->name + ": alert " + alert.to_line() +
                                       " is firing since " + format_utc(alert.starts_at) +
                                       " and not silenced");
          finding["verdict"] = "fail";
        }
      }
      findings.push_back(finding);
      break;
    }
  }
  judgement.evidence["findings"] = findings;
  if (blocking)
    judgement.summary = count_of(blocking, "firing alert") + " on the targets' failure domain";
  else
    judgement.summary = "no firing unsilenced alert on " + count_of(targets.size(), "target");
  if (waived) judgement.summary += " (" + std::to_string(waived) + " waived)";
  if (silenced) judgement.summary += " (" + std::to_string(silenced) + " silenced)";
  return judgement;
}

MonitoringJudgement check_alerts_after(const prom::AlertmanagerClient& alertmanager,
                                       const intent::AlertmanagerSettings& settings,
                                       const std::vector<const intent::Device*>& targets,
                                       const std::vector<std::string>& expected,
                                       TimePoint window_start, const AlertHistory& source) {
  const prom::PrometheusClient* history = source.prometheus;
  MonitoringJudgement judgement;
  std::string raw;
  auto alerts = alertmanager.alerts(&raw);
  const TimePoint now = now_utc();
  judgement.evidence = {{"alertmanager", settings.endpoint.url},
                        {"window_start", format_utc(window_start)},
                        {"evaluated_at", format_utc(now)},
                        {"answer", raw_answer(raw)}};
  if (!alerts.ok()) {
    judgement.summary = "the alerts could not be read, so a new alert cannot be ruled out";
    judgement.details.push_back("[telemetry] " + alerts.error().message);
    judgement.evidence["error"] = alerts.error().message;
    return judgement;
  }
  judgement.verdict = Verdict::pass;
  std::vector<prom::Alert> candidates;
  std::set<std::string> known;  // label sets of the alerts Alertmanager returned
  for (const auto& alert : *alerts) {
    auto labels = alert.labels;
    known.insert(labels_text(labels));
    if (alert.starts_at >= window_start) candidates.push_back(alert);
  }

  // Alertmanager forgets an alert once it resolved. Prometheus' ALERTS series keep it: a
  // range query with a step no longer than the rule evaluation (1 s) sees every evaluation at
  // which an alert was firing. A series already firing at the window's start was there before
  // the change (alerts-pre judged it); any other started during the window.
  bool history_missing = false;
  if (history) {
    const Duration window = std::chrono::duration_cast<Duration>(now - window_start);
    const Duration step = std::max<Duration>(Duration{1'000}, window / 10'000);
    const std::string query = "ALERTS{alertstate=\"firing\"}";
    nlohmann::json record = {{"prometheus", history->endpoint().base_url},
                             {"query", query},
                             {"start", format_utc(window_start)},
                             {"end", format_utc(now)},
                             {"step", format_duration(step)}};
    auto answer = history->query_range(query, window_start, now, step);
    if (!answer.ok()) {
      history_missing = true;
      record["error"] = answer.error().message;
      judgement.details.push_back(
          "[telemetry] the alert history (" + query + ") could not be read, so an alert that " +
          "fired and resolved during the change cannot be ruled out: " + answer.error().message);
    } else {
      record["answer"] = raw_answer(answer->raw);
      const double start_s = seconds_of(window_start);
      const double step_s = std::chrono::duration<double>(step).count();
      for (const auto& series : answer->series) {
        if (series.points.empty()) continue;
        prom::Alert alert;
        alert.labels = series.labels;
        alert.labels.erase("__name__");
        alert.labels.erase("alertstate");
        if (known.count(labels_text(alert.labels))) continue;  // Alertmanager has it
        // The series' firing episodes: a gap longer than a step means it resolved and fired
        // again. An episode that began at the window's start was firing before the run
        // (alerts-pre judged it); one that began later is new, even when an earlier episode of
        // the same alert was already firing at the start.
        std::optional<double> began;
        for (std::size_t i = 0; i < series.points.size() && !began; ++i) {
          const double time = series.points[i].time;
          const bool episode_start = i == 0 || time - series.points[i - 1].time > 1.5 * step_s;
          if (episode_start && time > start_s + 0.001) began = time;
        }
        if (!began) continue;  // one episode, firing since before the run
        alert.starts_at = prom::from_api_time(*began);
        alert.state = series.points.back().time < seconds_of(now) - 2 * step_s
                          ? "resolved"
                          : "firing (not yet in Alertmanager)";
        candidates.push_back(std::move(alert));
      }
    }
    judgement.evidence["history"] = record;
  }

  // The history speaks only for what Prometheus observed: every target scraped throughout the
  // window without a failed scrape, and the rule groups evaluated during it.
  std::vector<std::string> unobserved;
  std::string tolerated_note;  // " (1 target with one isolated failed scrape, tolerated)"
  if (history) {
    // A failed scrape is tolerated only on a target without a pending alert (its `for:`
    // would restart), so the pending history is read too.
    PendingAlerts pending;
    {
      const Duration window = std::chrono::duration_cast<Duration>(now - window_start);
      const Duration step = std::max<Duration>(Duration{1'000}, window / 10'000);
      const std::string query = "ALERTS{alertstate=\"pending\"}";
      nlohmann::json record = {{"query", query}, {"step", format_duration(step)}};
      auto answer = history->query_range(query, window_start, now, step);
      if (!answer.ok()) {
        pending.unknown = answer.error().message;
        record["error"] = answer.error().message;
      } else {
        record["answer"] = raw_answer(answer->raw);
        for (const auto& series : answer->series) {
          if (series.points.empty()) continue;
          prom::Alert alert;
          alert.labels = series.labels;
          for (const auto* device : targets)
            if (alert_concerns(alert, settings, *device)) pending.devices.insert(device->name);
        }
      }
      judgement.evidence["pending_history"] = record;
    }
    auto scrapes =
        check_window_scrapes(*history, source.settings, targets, window_start, now, &pending);
    auto rules = check_rule_evaluation(*history, source.settings, window_start, now);
    for (auto* part : {&scrapes, &rules}) {
      // A passing part's details are what it tolerated (an isolated failed scrape): reported.
      for (auto& line : part->details) judgement.details.push_back(std::move(line));
      if (part->verdict != Verdict::pass) unobserved.push_back(part->summary);
    }
    if (scrapes.verdict == Verdict::pass && scrapes.summary.find("tolerated") != std::string::npos)
      tolerated_note = scrapes.summary.substr(scrapes.summary.find(" ("));
    judgement.evidence["scrapes"] = std::move(scrapes.evidence);
    judgement.evidence["rule_evaluation"] = std::move(rules.evidence);
  }

  std::size_t fresh = 0, allowed = 0;
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& alert : candidates) {
    for (const auto* device : targets) {
      if (!alert_concerns(alert, settings, *device)) continue;
      bool is_expected =
          std::find(expected.begin(), expected.end(), alert.name()) != expected.end();
      findings.push_back({{"device", device->name},
                          {"alert", alert.to_line()},
                          {"state", alert.state},
                          {"starts_at", format_utc(alert.starts_at)},
                          {"verdict", is_expected ? "expected" : "fail"}});
      if (is_expected) {
        ++allowed;
        judgement.details.push_back(device->name + ": alert " + alert.to_line() +
                                    " started during the change, declared as expected");
      } else {
        ++fresh;
        judgement.verdict = Verdict::fail;
        std::string note = alert.state == "suppressed" ? " (silenced)"
                           : alert.state == "resolved"
                               ? " and resolved before this check (from Prometheus' ALERTS history)"
                               : "";
        judgement.details.insert(judgement.details.begin() + static_cast<long>(fresh - 1),
                                 "[telemetry] " + device->name + ": alert " + alert.to_line() +
                                     " started firing at " + format_utc(alert.starts_at) +
                                     " during the change" + note);
      }
      break;
    }
  }
  judgement.evidence["findings"] = findings;
  if ((history_missing || !unobserved.empty()) && judgement.verdict == Verdict::pass)
    judgement.verdict = Verdict::no_evidence;
  judgement.summary =
      fresh ? count_of(fresh, "alert") + " started firing on the targets during the change"
      : history_missing ? "no new alert in Alertmanager, but the alert history could not be read"
      : !unobserved.empty()
          ? "no new alert seen, but Prometheus did not observe the whole change (" +
                join(unobserved, "; ") + ")"
          : "no new alert on " + count_of(targets.size(), "target") +
                (history ? " (Alertmanager and Prometheus' alert history, every target scraped "
                           "and every alerting rule group evaluated during the change)"
                         : "");
  if (allowed) judgement.summary += " (" + std::to_string(allowed) + " expected)";
  if (judgement.verdict == Verdict::pass) judgement.summary += tolerated_note;
  return judgement;
}

prom::SilenceRequest window_silence(const intent::AlertmanagerSettings& settings,
                                    const std::vector<const intent::Device*>& targets,
                                    const std::string& run_id, const std::string& change_id,
                                    TimePoint starts, TimePoint ends) {
  std::vector<std::string> names;
  for (const auto* device : targets) names.push_back(regex_escape(device->name));
  prom::SilenceRequest request;
  request.matchers.push_back({settings.device_label, join(names, "|"), true});
  request.starts_at = starts;
  request.ends_at = ends;
  request.created_by = "fabgate";
  request.comment = "fabgate run " + run_id + " change " + change_id +
                    ": change window; expired by fabgate when the run ends";
  return request;
}

}  // namespace fabgate::pipeline
