#include "adapters/prom/prometheus_client.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"

namespace fabgate::prom {
namespace {

PromFailure from_http(const HttpFailure& failure) {
  return PromFailure{failure.kind == HttpFailure::Kind::timeout ? PromFailure::Kind::timeout
                                                                : PromFailure::Kind::unreachable,
                     "prometheus: " + failure.message};
}

std::optional<double> sample_value(const nlohmann::json& text) {
  if (!text.is_string()) return std::nullopt;
  const auto& s = text.get_ref<const std::string&>();
  if (s == "NaN") return std::nan("");
  if (s == "+Inf" || s == "Inf") return INFINITY;
  if (s == "-Inf") return -INFINITY;
  try {
    std::size_t used = 0;
    double value = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<SamplePoint> point_of(const nlohmann::json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number()) return std::nullopt;
  auto value = sample_value(pair[1]);
  if (!value) return std::nullopt;
  return SamplePoint{pair[0].get<double>(), *value};
}

std::string shorten(const std::string& text) {
  std::string out = text.substr(0, 120);
  for (auto& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return out + (text.size() > 120 ? "..." : "");
}

}  // namespace

std::string_view to_string(PromFailure::Kind kind) {
  switch (kind) {
    case PromFailure::Kind::unreachable:
      return "unreachable";
    case PromFailure::Kind::timeout:
      return "timeout";
    case PromFailure::Kind::rejected:
      return "rejected";
    case PromFailure::Kind::bad_answer:
      return "bad-answer";
  }
  return "unreachable";
}

std::string api_time(TimePoint when) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
  char text[48];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  return text;
}

TimePoint from_api_time(double seconds) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::milliseconds(static_cast<long long>(std::llround(seconds * 1000)))));
}

namespace {

PromFailure refused(const std::string& what, const std::string& why, long http_status,
                    const std::string& body) {
  return PromFailure{PromFailure::Kind::bad_answer, "prometheus: " + what + ": " + why + " (HTTP " +
                                                        std::to_string(http_status) + ": " +
                                                        shorten(body) + ")"};
}

// The API's envelope: {"status": "success", "data": ...} or {"status": "error", ...}. Returns
// the parsed document (data is checked to be an object); `bad` words a refusal.
Expected<nlohmann::json, PromFailure> read_envelope(const std::string& body, long http_status,
                                                    const std::string& what) {
  auto bad = [&](const std::string& why) { return refused(what, why, http_status, body); };
  // Typed, depth-limited reads (adapters/core/foreign_json.h): a field of another type is a
  // bad answer naming the field, never an exception in the middle of a change.
  auto parsed = parse_foreign_json(body);
  if (!parsed.ok()) return bad("the answer is " + parsed.problem);
  auto& doc = parsed.document;
  if (!doc.is_object()) return bad("the answer is not a JSON object");
  auto status = string_member(doc, "status");
  if (!status) return bad("the answer's status is " + member_kind(doc, "status"));
  if (*status == "error") {
    std::string type = string_member(doc, "errorType").value_or("error");
    std::string error = string_member(doc, "error").value_or("");
    return PromFailure{PromFailure::Kind::rejected,
                       "prometheus: " + what + ": " + type + ": " + error};
  }
  if (*status != "success" || http_status != 200) return bad("unexpected status");
  if (!object_member(doc, "data")) return bad("the answer's data is " + member_kind(doc, "data"));
  return std::move(doc);
}

std::map<std::string, std::string> string_labels(const nlohmann::json& object,
                                                 std::string_view key) {
  std::map<std::string, std::string> labels;
  if (const auto* found = object_member(object, key); found && found->is_object())
    for (const auto& [name, value] : found->items())
      if (value.is_string()) labels[name] = value.get<std::string>();
  return labels;
}

// Go's zero time ("0001-01-01T00:00:00Z") is how Prometheus says "never".
std::optional<TimePoint> unless_zero(std::optional<TimePoint> when) {
  if (when && when->time_since_epoch() < std::chrono::hours(24 * 365)) return std::nullopt;
  return when;
}

}  // namespace

bool RuleGroup::has_alerting_rules() const {
  for (const auto& rule : rules)
    if (rule.type == "alerting") return true;
  return false;
}

std::optional<Duration> parse_prometheus_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t number = 0;
    std::size_t digits = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
      number = number * 10 + (text[i] - '0');
      if (number > 1'000'000'000) return std::nullopt;
    }
    std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    static const std::pair<std::string_view, std::int64_t> kUnits[] = {{"ms", 1},
                                                                       {"s", 1'000},
                                                                       {"m", 60'000},
                                                                       {"h", 3'600'000},
                                                                       {"d", 86'400'000},
                                                                       {"w", 7 * 86'400'000},
                                                                       {"y", 365 * 86'400'000LL}};
    std::int64_t scale = 0;
    for (const auto& [name, ms] : kUnits)
      if (unit == name) scale = ms;
    if (digits == 0 || scale == 0) return std::nullopt;
    total_ms += number * scale;
  }
  return Duration{total_ms};
}

Expected<QueryAnswer, PromFailure> parse_query_answer(const std::string& body, long http_status,
                                                      const std::string& what) {
  auto bad = [&](const std::string& why) { return refused(what, why, http_status, body); };
  auto envelope = read_envelope(body, http_status, what);
  if (!envelope.ok()) return envelope.error();
  const auto& doc = envelope.value();
  const auto* data = object_member(doc, "data");
  QueryAnswer answer;
  answer.raw = body;
  auto result_type = string_member(*data, "resultType");
  if (!result_type) return bad("data.resultType is " + member_kind(*data, "resultType"));
  answer.result_type = *result_type;
  auto result = data->find("result");
  if (result == data->end()) return bad("the answer has no result");
  if (const auto* warnings = array_member(doc, "warnings"))
    for (const auto& w : *warnings)
      if (w.is_string()) answer.warnings.push_back(w.get<std::string>());
  if (answer.result_type == "scalar" || answer.result_type == "string") {
    auto point = point_of(*result);
    if (!point && answer.result_type == "scalar") return bad("a scalar without a value");
    Series series;
    if (point) series.points.push_back(*point);
    answer.series.push_back(std::move(series));
    return answer;
  }
  if ((answer.result_type != "vector" && answer.result_type != "matrix") || !result->is_array())
    return bad("unknown result type '" + answer.result_type + "'");
  for (const auto& item : *result) {
    if (!item.is_object()) return bad("a result item is not an object");
    Series series;
    if (auto metric = item.find("metric"); metric != item.end() && metric->is_object())
      for (const auto& [name, value] : metric->items())
        if (value.is_string()) series.labels[name] = value.get<std::string>();
    if (answer.result_type == "vector") {
      auto value = item.find("value");
      auto point = value == item.end() ? std::nullopt : point_of(*value);
      if (!point) return bad("a sample without a [time, value] pair");
      series.points.push_back(*point);
    } else {
      auto values = item.find("values");
      if (values == item.end() || !values->is_array()) return bad("a range series without values");
      for (const auto& pair : *values) {
        auto point = point_of(pair);
        if (!point) return bad("a range sample without a [time, value] pair");
        series.points.push_back(*point);
      }
    }
    answer.series.push_back(std::move(series));
  }
  return answer;
}

Expected<std::vector<ScrapeTarget>, PromFailure> parse_targets_answer(const std::string& body,
                                                                      long http_status) {
  const std::string what = "targets";
  auto bad = [&](const std::string& why) { return refused(what, why, http_status, body); };
  auto envelope = read_envelope(body, http_status, what);
  if (!envelope.ok()) return envelope.error();
  const auto& data = *object_member(envelope.value(), "data");
  const auto* active = array_member(data, "activeTargets");
  if (!active || !active->is_array())
    return bad("data.activeTargets is " + member_kind(data, "activeTargets"));
  std::vector<ScrapeTarget> targets;
  for (const auto& item : *active) {
    if (!item.is_object()) return bad("an active target is " + json_kind(item));
    ScrapeTarget target;
    if (!object_member(item, "labels")) return bad(wrong_member(item, "labels", "an object"));
    target.labels = string_labels(item, "labels");
    auto interval = string_member(item, "scrapeInterval");
    auto parsed = interval ? parse_prometheus_duration(*interval) : std::nullopt;
    if (!parsed) return bad(wrong_member(item, "scrapeInterval", "a duration"));
    target.scrape_interval = *parsed;
    target.scrape_url = string_member(item, "scrapeUrl").value_or("");
    target.health = string_member(item, "health").value_or("");
    target.last_error = string_member(item, "lastError").value_or("");
    target.last_scrape = unless_zero(time_member(item, "lastScrape"));
    targets.push_back(std::move(target));
  }
  return targets;
}

Expected<std::vector<RuleGroup>, PromFailure> parse_rules_answer(const std::string& body,
                                                                 long http_status) {
  const std::string what = "rules";
  auto bad = [&](const std::string& why) { return refused(what, why, http_status, body); };
  auto envelope = read_envelope(body, http_status, what);
  if (!envelope.ok()) return envelope.error();
  const auto& data = *object_member(envelope.value(), "data");
  const auto* groups = array_member(data, "groups");
  if (!groups || !groups->is_array()) return bad("data.groups is " + member_kind(data, "groups"));
  std::vector<RuleGroup> out;
  for (const auto& item : *groups) {
    if (!item.is_object()) return bad("a rule group is " + json_kind(item));
    RuleGroup group;
    auto name = string_member(item, "name");
    if (!name) return bad(wrong_member(item, "name", "a string", "a group's name"));
    group.name = *name;
    group.file = string_member(item, "file").value_or("");
    auto interval = number_member(item, "interval");
    if (!interval || !(*interval >= 0) || *interval > 1e9)
      return bad(wrong_member(item, "interval", "seconds", "group " + group.name + "'s interval"));
    group.interval = Duration{static_cast<std::int64_t>(std::llround(*interval * 1000))};
    // A group that was evaluated has a time here; a missing or unreadable one is "never".
    auto last = string_member(item, "lastEvaluation");
    if (last && !parse_iso8601(*last))
      return bad(wrong_member(item, "lastEvaluation", "a time",
                              "group " + group.name + "'s lastEvaluation"));
    group.last_evaluation = unless_zero(time_member(item, "lastEvaluation"));
    const auto* rules = array_member(item, "rules");
    if (!rules || !rules->is_array())
      return bad(wrong_member(item, "rules", "an array", "group " + group.name + "'s rules"));
    for (const auto& entry : *rules) {
      if (!entry.is_object())
        return bad("a rule of group " + group.name + " is " + json_kind(entry));
      Rule rule;
      rule.name = string_member(entry, "name").value_or("");
      rule.type = string_member(entry, "type").value_or("");
      rule.health = string_member(entry, "health").value_or("");
      rule.last_error = string_member(entry, "lastError").value_or("");
      group.rules.push_back(std::move(rule));
    }
    out.push_back(std::move(group));
  }
  return out;
}

Expected<Ok, PromFailure> PrometheusClient::ready() const {
  auto response = http_request(endpoint_, HttpMethod::get, "/-/ready");
  if (!response.ok()) return from_http(response.error());
  if (response->status != 200)
    return PromFailure{
        PromFailure::Kind::rejected,
        "prometheus: " + endpoint_.base_url + "/-/ready: HTTP " + std::to_string(response->status)};
  return Ok{};
}

Expected<QueryAnswer, PromFailure> PrometheusClient::query(const std::string& promql,
                                                           TimePoint at) const {
  auto response = http_request(endpoint_, HttpMethod::post, "/api/v1/query",
                               {{"query", promql}, {"time", api_time(at)}});
  if (!response.ok()) return from_http(response.error());
  auto answer = parse_query_answer(response->body, response->status, "query '" + promql + "'");
  if (answer.ok()) {
    answer->query = promql;
    answer->evaluated_at = at;
  }
  return answer;
}

Expected<QueryAnswer, PromFailure> PrometheusClient::query_range(const std::string& promql,
                                                                 TimePoint start, TimePoint end,
                                                                 Duration step) const {
  char step_text[32];
  std::snprintf(step_text, sizeof step_text, "%.3f", static_cast<double>(step.count()) / 1000.0);
  auto response = http_request(
      endpoint_, HttpMethod::post, "/api/v1/query_range",
      {{"query", promql}, {"start", api_time(start)}, {"end", api_time(end)}, {"step", step_text}});
  if (!response.ok()) return from_http(response.error());
  auto answer =
      parse_query_answer(response->body, response->status, "range query '" + promql + "'");
  if (answer.ok()) {
    answer->query = promql;
    answer->evaluated_at = end;
  }
  return answer;
}

Expected<QueryAnswer, PromFailure> PrometheusClient::query_now(const std::string& promql) const {
  const TimePoint asked = now_utc();
  auto response = http_request(endpoint_, HttpMethod::post, "/api/v1/query", {{"query", promql}});
  if (!response.ok()) return from_http(response.error());
  auto answer = parse_query_answer(response->body, response->status, "query '" + promql + "'");
  if (answer.ok()) {
    answer->query = promql;
    // Prometheus' evaluation time is on every sample of an instant vector or scalar; for a
    // range selector's raw samples, or without a sample, when it was asked.
    answer->evaluated_at = asked;
    if (answer->result_type != "matrix")
      for (const auto& series : answer->series)
        if (!series.points.empty()) {
          answer->evaluated_at = from_api_time(series.points[0].time);
          break;
        }
  }
  return answer;
}

Expected<std::vector<ScrapeTarget>, PromFailure> PrometheusClient::targets(std::string* raw) const {
  auto response = http_request(endpoint_, HttpMethod::get, "/api/v1/targets?state=active");
  if (!response.ok()) return from_http(response.error());
  if (raw) *raw = response->body;
  return parse_targets_answer(response->body, response->status);
}

Expected<std::vector<RuleGroup>, PromFailure> PrometheusClient::rule_groups(
    std::string* raw) const {
  auto response = http_request(endpoint_, HttpMethod::get, "/api/v1/rules");
  if (!response.ok()) return from_http(response.error());
  if (raw) *raw = response->body;
  return parse_rules_answer(response->body, response->status);
}

}  // namespace fabgate::prom
