#include "adapters/prom/alertmanager_client.h"

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"

namespace fabgate::prom {
namespace {

AlertFailure from_http(const HttpFailure& failure) {
  return AlertFailure{failure.kind == HttpFailure::Kind::timeout ? PromFailure::Kind::timeout
                                                                 : PromFailure::Kind::unreachable,
                      "alertmanager: " + failure.message};
}

std::string shorten(const std::string& text) {
  std::string out = text.substr(0, 120);
  for (auto& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return out + (text.size() > 120 ? "..." : "");
}

AlertFailure bad(const std::string& what, const std::string& why, long status,
                 const std::string& body) {
  // A 4xx/5xx is Alertmanager refusing (bad matcher, overloaded); anything else that does not
  // parse is not Alertmanager's answer.
  auto kind = status >= 400 ? PromFailure::Kind::rejected : PromFailure::Kind::bad_answer;
  return AlertFailure{kind, "alertmanager: " + what + ": " + why + " (HTTP " +
                                std::to_string(status) + ": " + shorten(body) + ")"};
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string Alert::name() const {
  auto it = labels.find("alertname");
  return it == labels.end() ? std::string("(unnamed)") : it->second;
}

std::string Alert::to_line() const {
  std::string out = name() + "{";
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (key == "alertname") continue;
    if (!first) out += ",";
    out += key + "=" + quote(value);
    first = false;
  }
  return out + "}";
}

Expected<std::vector<Alert>, AlertFailure> parse_alerts(const std::string& body, long status) {
  const std::string what = "GET /api/v2/alerts";
  if (status != 200) return bad(what, "unexpected status", status, body);
  // Typed, depth-limited reads (adapters/core/foreign_json.h): never a throw mid-change.
  auto parsed = parse_foreign_json(body);
  if (!parsed.ok()) return bad(what, "the answer is " + parsed.problem, status, body);
  const auto& doc = parsed.document;
  if (!doc.is_array()) return bad(what, "not a JSON list", status, body);
  std::vector<Alert> alerts;
  for (const auto& item : doc) {
    const auto* labels = object_member(item, "labels");
    if (!labels) return bad(what, "an alert without labels", status, body);
    Alert alert;
    for (const auto& [key, value] : labels->items())
      if (value.is_string()) alert.labels[key] = value.get<std::string>();
    alert.fingerprint = string_member(item, "fingerprint").value_or("");
    auto starts = parse_iso8601(string_member(item, "startsAt").value_or(""));
    if (!starts) return bad(what, "an alert without a valid startsAt", status, body);
    alert.starts_at = *starts;
    if (const auto* state = object_member(item, "status")) {
      alert.state = string_member(*state, "state").value_or("");
      for (const char* key : {"silencedBy", "inhibitedBy"})
        if (auto list = state->find(key); list != state->end() && list->is_array())
          for (const auto& id : *list)
            if (id.is_string())
              (std::string(key) == "silencedBy" ? alert.silenced_by : alert.inhibited_by)
                  .push_back(id.get<std::string>());
    }
    if (alert.state.empty()) return bad(what, "an alert without a state", status, body);
    alerts.push_back(std::move(alert));
  }
  return alerts;
}

Expected<Ok, AlertFailure> AlertmanagerClient::ready() const {
  auto response = http_request(endpoint_, HttpMethod::get, "/-/ready");
  if (!response.ok()) return from_http(response.error());
  if (response->status != 200)
    return AlertFailure{PromFailure::Kind::rejected, "alertmanager: " + endpoint_.base_url +
                                                         "/-/ready: HTTP " +
                                                         std::to_string(response->status)};
  return Ok{};
}

Expected<std::vector<Alert>, AlertFailure> AlertmanagerClient::alerts(std::string* raw) const {
  auto response =
      http_request(endpoint_, HttpMethod::get,
                   "/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true");
  if (!response.ok()) return from_http(response.error());
  if (raw) *raw = response->body;
  return parse_alerts(response->body, response->status);
}

Expected<std::string, AlertFailure> AlertmanagerClient::create_silence(
    const SilenceRequest& request) const {
  nlohmann::json matchers = nlohmann::json::array();
  for (const auto& m : request.matchers)
    matchers.push_back(
        {{"name", m.name}, {"value", m.value}, {"isRegex", m.is_regex}, {"isEqual", true}});
  nlohmann::json body = {{"matchers", matchers},
                         {"startsAt", format_utc(request.starts_at)},
                         {"endsAt", format_utc(request.ends_at)},
                         {"createdBy", request.created_by},
                         {"comment", request.comment}};
  auto response = http_request(endpoint_, HttpMethod::post, "/api/v2/silences", {}, body.dump());
  const std::string what = "POST /api/v2/silences";
  if (!response.ok()) return from_http(response.error());
  auto parsed = parse_foreign_json(response->body);
  auto id = string_member(parsed.document, "silenceID");
  if (response->status != 200 || !id)
    return bad(what, "no silenceID in the answer", response->status, response->body);
  return *id;
}

Expected<Ok, AlertFailure> AlertmanagerClient::expire_silence(const std::string& id) const {
  auto response = http_request(endpoint_, HttpMethod::del, "/api/v2/silence/" + url_encode(id));
  if (!response.ok()) return from_http(response.error());
  if (response->status == 200) return Ok{};
  // Alertmanager refuses to expire a silence that already expired; that is the state we want.
  if (auto state = silence(id); state.ok() && state->state == "expired") return Ok{};
  return bad("DELETE /api/v2/silence/" + id, "not expired", response->status, response->body);
}

Expected<SilenceState, AlertFailure> AlertmanagerClient::silence(const std::string& id) const {
  const std::string what = "GET /api/v2/silence/" + id;
  auto response = http_request(endpoint_, HttpMethod::get, "/api/v2/silence/" + url_encode(id));
  if (!response.ok()) return from_http(response.error());
  auto parsed = parse_foreign_json(response->body);
  const auto& doc = parsed.document;
  const auto* status = object_member(doc, "status");
  if (response->status != 200 || !status)
    return bad(what, "not a silence", response->status, response->body);
  SilenceState state;
  state.id = string_member(doc, "id").value_or(id);
  state.state = string_member(*status, "state").value_or("");
  state.comment = string_member(doc, "comment").value_or("");
  if (auto ends = parse_iso8601(string_member(doc, "endsAt").value_or(""))) state.ends_at = *ends;
  return state;
}

}  // namespace fabgate::prom
