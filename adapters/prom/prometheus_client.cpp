#include "adapters/prom/prometheus_client.h"

#include <cmath>
#include <cstdio>

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

Expected<QueryAnswer, PromFailure> parse_query_answer(const std::string& body, long http_status,
                                                      const std::string& what) {
  auto bad = [&](const std::string& why) {
    return PromFailure{PromFailure::Kind::bad_answer, "prometheus: " + what + ": " + why +
                                                          " (HTTP " + std::to_string(http_status) +
                                                          ": " + shorten(body) + ")"};
  };
  // Typed, depth-limited reads (adapters/core/foreign_json.h): a field of another type is a
  // bad answer naming the field, never an exception in the middle of a change.
  auto parsed = parse_foreign_json(body);
  if (!parsed.ok()) return bad("the answer is " + parsed.problem);
  const auto& doc = parsed.document;
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
  const auto* data = object_member(doc, "data");
  if (!data) return bad("the answer's data is " + member_kind(doc, "data"));
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

}  // namespace fabgate::prom
