#include "adapters/etcd/etcd_client.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"
#include "adapters/prom/http_client.h"

namespace fabgate::etcd {
namespace {

using nlohmann::json;

EtcdFailure bad_answer(const std::string& what, const std::string& field, const std::string& why) {
  return EtcdFailure{EtcdFailure::Kind::bad_answer, what + ": bad answer: " + why, 0, field};
}

// etcd's gateway writes int64 fields as JSON strings ("revision":"12") and omits fields that are
// zero (proto3). A missing field is `fallback`; a field of another type is empty.
std::optional<std::int64_t> int64_field(const json& object, std::string_view key,
                                        std::int64_t fallback) {
  if (!object.is_object()) return std::nullopt;
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return fallback;
  if (found->is_number_integer()) return found->get<std::int64_t>();
  if (!found->is_string()) return std::nullopt;
  const auto& text = found->get_ref<const std::string&>();
  std::int64_t number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return number;
}

// A bytes field: missing is empty bytes; anything but padded base64 text is empty.
std::optional<std::string> bytes_field(const json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return std::string();
  if (!found->is_string()) return std::nullopt;
  return base64_decode(found->get_ref<const std::string&>());
}

std::string compare_target(Compare::Target target) {
  switch (target) {
    case Compare::Target::create_revision:
      return "CREATE";
    case Compare::Target::mod_revision:
      return "MOD";
    case Compare::Target::version:
      return "VERSION";
    case Compare::Target::value:
      return "VALUE";
    case Compare::Target::lease:
      return "LEASE";
  }
  return "CREATE";
}

std::string compare_op(Compare::Op op) {
  switch (op) {
    case Compare::Op::equal:
      return "EQUAL";
    case Compare::Op::not_equal:
      return "NOT_EQUAL";
    case Compare::Op::greater:
      return "GREATER";
    case Compare::Op::less:
      return "LESS";
  }
  return "EQUAL";
}

json compare_json(const Compare& compare) {
  json out = {{"key", base64_encode(compare.key)},
              {"target", compare_target(compare.target)},
              {"result", compare_op(compare.op)}};
  switch (compare.target) {
    case Compare::Target::create_revision:
      out["create_revision"] = std::to_string(compare.number);
      break;
    case Compare::Target::mod_revision:
      out["mod_revision"] = std::to_string(compare.number);
      break;
    case Compare::Target::version:
      out["version"] = std::to_string(compare.number);
      break;
    case Compare::Target::value:
      out["value"] = base64_encode(compare.value);
      break;
    case Compare::Target::lease:
      out["lease"] = std::to_string(compare.number);
      break;
  }
  return out;
}

// The end of the range of keys starting with `prefix`: the prefix with its last byte that is
// not 0xff incremented, the rest dropped; "\0" (every key) when there is no such byte.
std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto last = static_cast<unsigned char>(prefix.back());
    if (last < 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');
}

// A range request for every key starting with `prefix` (an empty prefix: every key), sorted
// by key.
json prefix_range(const std::string& prefix) {
  return {{"key", base64_encode(prefix.empty() ? std::string(1, '\0') : prefix)},
          {"range_end", base64_encode(prefix_end(prefix))},
          {"sort_order", "ASCEND"},
          {"sort_target", "KEY"}};
}

json op_json(const TxnOp& op) {
  switch (op.kind) {
    case TxnOp::Kind::put: {
      json put = {{"key", base64_encode(op.key)}, {"value", base64_encode(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", put}};
    }
    case TxnOp::Kind::del:
      return {{"request_delete_range", {{"key", base64_encode(op.key)}}}};
    case TxnOp::Kind::get:
      return {{"request_range", {{"key", base64_encode(op.key)}}}};
    case TxnOp::Kind::get_prefix:
      return {{"request_range", prefix_range(op.key)}};
    case TxnOp::Kind::get_range:
      return {{"request_range",
               {{"key", base64_encode(op.key)},
                {"range_end", base64_encode(op.value)},
                {"sort_order", "ASCEND"},
                {"sort_target", "KEY"}}}};
    case TxnOp::Kind::del_prefix:
      return {{"request_delete_range",
               {{"key", base64_encode(op.key)}, {"range_end", base64_encode(prefix_end(op.key))}}}};
  }
  return json::object();
}

// The header's revision, which every answer carries.
Expected<std::int64_t, EtcdFailure> header_revision(const json& document, const std::string& what,
                                                    const std::string& place = "header") {
  const json* header = object_member(document, "header");
  if (!header) return bad_answer(what, place, wrong_member(document, "header", "an object", place));
  auto revision = int64_field(*header, "revision", -1);
  if (!revision || *revision < 0)
    return bad_answer(what, place + ".revision",
                      "field '" + place + ".revision' is " + member_kind(*header, "revision") +
                          ", not an integer");
  return *revision;
}

Expected<Range, EtcdFailure> read_range(const json& document, const std::string& what,
                                        const std::string& place) {
  Range range;
  auto revision = header_revision(document, what, place.empty() ? "header" : place + ".header");
  if (!revision) return std::move(revision).error();
  range.revision = *revision;
  auto found = document.find("kvs");
  if (found == document.end() || found->is_null()) return range;
  std::string kvs_name = place.empty() ? "kvs" : place + ".kvs";
  if (!found->is_array())
    return bad_answer(what, kvs_name, wrong_member(document, "kvs", "an array", kvs_name));
  for (std::size_t i = 0; i < found->size(); ++i) {
    const json& item = (*found)[i];
    std::string name = kvs_name + "[" + std::to_string(i) + "]";
    if (!item.is_object()) return bad_answer(what, name, name + " is " + json_kind(item));
    KeyValue kv;
    auto key = bytes_field(item, "key");
    if (!key) return bad_answer(what, name + ".key", "field '" + name + ".key' is not base64 text");
    auto value = bytes_field(item, "value");
    if (!value)
      return bad_answer(what, name + ".value", "field '" + name + ".value' is not base64 text");
    kv.key = std::move(*key);
    kv.value = std::move(*value);
    for (auto [field, into] : {std::pair{"create_revision", &kv.create_revision},
                               std::pair{"mod_revision", &kv.mod_revision},
                               std::pair{"version", &kv.version}, std::pair{"lease", &kv.lease}}) {
      auto number = int64_field(item, field, 0);
      if (!number)
        return bad_answer(what, name + "." + field,
                          "field '" + name + "." + field + "' is " + member_kind(item, field) +
                              ", not an integer");
      *into = *number;
    }
    range.kvs.push_back(std::move(kv));
  }
  return range;
}

Expected<std::int64_t, EtcdFailure> required_int(const json& document, std::string_view field,
                                                 const std::string& what, std::int64_t fallback) {
  auto number = int64_field(document, field, fallback);
  if (!number)
    return bad_answer(what, std::string(field),
                      "field '" + std::string(field) + "' is " + member_kind(document, field) +
                          ", not an integer");
  return *number;
}

// etcd's answers to a missing, bad or expired token or a refused permission: gRPC codes 16
// (unauthenticated) and 7 (permission denied), and 3 (invalid argument) with these messages.
bool is_auth_error(int code, const std::string& message) {
  if (code == 16 || code == 7) return true;
  for (const char* text :
       {"user name is empty", "authentication failed", "invalid auth token", "permission denied"})
    if (message.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string_view to_string(EtcdFailure::Kind kind) {
  switch (kind) {
    case EtcdFailure::Kind::unreachable:
      return "unreachable";
    case EtcdFailure::Kind::timeout:
      return "timeout";
    case EtcdFailure::Kind::rejected:
      return "rejected";
    case EtcdFailure::Kind::bad_answer:
      return "bad-answer";
    case EtcdFailure::Kind::auth:
      return "auth";
    case EtcdFailure::Kind::settings:
      return "settings";
  }
  return "unreachable";
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    std::uint32_t group = (static_cast<unsigned char>(bytes[i]) << 16) |
                          (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                          static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(group >> shift) & 63];
  }
  std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t group = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) group |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
    out += rest == 2 ? kAlphabet[(group >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    std::uint32_t group = 0;
    for (int j = 0; j < 4; ++j) {
      int value = j >= 4 - pad ? 0 : sextet(text[i + j]);
      if (value < 0) return std::nullopt;
      group = (group << 6) | static_cast<std::uint32_t>(value);
    }
    out += static_cast<char>((group >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((group >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(group & 0xff);
  }
  return out;
}

Compare Compare::absent(std::string key) {
  return Compare{std::move(key), Target::create_revision, Op::equal, 0, {}};
}
Compare Compare::present(std::string key) {
  return Compare{std::move(key), Target::create_revision, Op::greater, 0, {}};
}
Compare Compare::mod_revision_is(std::string key, std::int64_t revision) {
  return Compare{std::move(key), Target::mod_revision, Op::equal, revision, {}};
}
Compare Compare::value_is(std::string key, std::string value) {
  return Compare{std::move(key), Target::value, Op::equal, 0, std::move(value)};
}
Compare Compare::lease_is(std::string key, std::int64_t lease) {
  return Compare{std::move(key), Target::lease, Op::equal, lease, {}};
}
TxnOp TxnOp::put(std::string key, std::string value, std::int64_t lease) {
  return TxnOp{Kind::put, std::move(key), std::move(value), lease};
}
TxnOp TxnOp::del(std::string key) {
  return TxnOp{Kind::del, std::move(key), {}, 0};
}
TxnOp TxnOp::get(std::string key) {
  return TxnOp{Kind::get, std::move(key), {}, 0};
}
TxnOp TxnOp::get_prefix(std::string prefix) {
  return TxnOp{Kind::get_prefix, std::move(prefix), {}, 0};
}
TxnOp TxnOp::get_range(std::string from, std::string to) {
  return TxnOp{Kind::get_range, std::move(from), std::move(to), 0};
}
TxnOp TxnOp::del_prefix(std::string prefix) {
  return TxnOp{Kind::del_prefix, std::move(prefix), {}, 0};
}

namespace {
std::atomic<std::uint64_t> process_calls{0}, process_failed{0}, process_waited_us{0};
thread_local CallTally thread_calls;

// Counts one attempt on an endpoint that took `waited`.
void tally(std::chrono::steady_clock::duration waited, bool failed) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(waited);
  process_calls.fetch_add(1, std::memory_order_relaxed);
  process_waited_us.fetch_add(static_cast<std::uint64_t>(us.count()), std::memory_order_relaxed);
  if (failed) process_failed.fetch_add(1, std::memory_order_relaxed);
  ++thread_calls.calls;
  thread_calls.failed += failed ? 1 : 0;
  thread_calls.waited += us;
}
}  // namespace

CallTally calls_in_process() {
  return {process_calls.load(std::memory_order_relaxed),
          process_failed.load(std::memory_order_relaxed),
          std::chrono::microseconds(process_waited_us.load(std::memory_order_relaxed))};
}

CallTally calls_on_this_thread() { return thread_calls; }

struct EtcdClient::Answer {
  json document;
  std::string what;  // "POST http://127.0.0.1:2379/v3/kv/range", for messages
};

Expected<EtcdClient, EtcdFailure> EtcdClient::open(EtcdSettings settings) {
  using Kind = EtcdFailure::Kind;
  if (settings.endpoints.empty())
    return EtcdFailure{Kind::settings, "etcd: no endpoint configured"};
  if (settings.cert_file.empty() != settings.key_file.empty())
    return EtcdFailure{Kind::settings,
                       "etcd: a TLS client certificate needs both cert_file and key_file"};
  EtcdClient client(std::move(settings));
  const EtcdSettings& s = client.settings_;
  if (s.username.empty()) return client;
  for (const auto& endpoint : s.endpoints)
    if (endpoint.rfind("https://", 0) != 0 && !s.lab_plain_http_auth)
      return EtcdFailure{Kind::auth, "etcd: refusing to send user '" + s.username +
                                         "' and its password to " + endpoint +
                                         " over plain http (lab_plain_http_auth is off)"};
  auto authenticated = client.authenticate();
  if (!authenticated) return std::move(authenticated).error();
  return client;
}

Expected<Ok, EtcdFailure> EtcdClient::authenticate() {
  using Kind = EtcdFailure::Kind;
  const EtcdSettings& s = settings_;
  // Read when needed, never kept: the password lives in the environment only.
  const char* password = s.password_env.empty() ? nullptr : std::getenv(s.password_env.c_str());
  if (!password)
    return EtcdFailure{Kind::auth, "etcd: the password of user '" + s.username +
                                       "' is not set (environment variable '" + s.password_env +
                                       "')"};
  json body = {{"name", s.username}, {"password", password}};
  token_.clear();
  auto answer = call("/v3/auth/authenticate", body.dump(), false);
  if (!answer) {
    EtcdFailure failure = std::move(answer).error();
    if (failure.kind == Kind::rejected) failure.kind = Kind::auth;
    return failure;
  }
  auto token = string_member(answer->document, "token");
  if (!token || token->empty())
    return bad_answer(answer->what, "token", wrong_member(answer->document, "token", "a string"));
  token_ = *token;
  return Ok{};
}

Expected<EtcdClient::Answer, EtcdFailure> EtcdClient::call(const std::string& path,
                                                           const std::string& body,
                                                           bool reauthenticate) {
  using Kind = EtcdFailure::Kind;
  std::optional<EtcdFailure> last;
  for (std::size_t tried = 0; tried < settings_.endpoints.size(); ++tried) {
    std::size_t index = (current_ + tried) % settings_.endpoints.size();
    prom::HttpEndpoint endpoint;
    endpoint.base_url = settings_.endpoints[index];
    endpoint.ca_file = settings_.ca_file;
    endpoint.timeout = settings_.timeout;
    endpoint.authorization = token_;
    endpoint.cert_file = settings_.cert_file;
    endpoint.key_file = settings_.key_file;
    endpoint.connections = connections_;
    std::string what = "POST " + settings_.endpoints[index] + path;
    const auto sent = std::chrono::steady_clock::now();
    auto response = prom::http_request(endpoint, prom::HttpMethod::post, path, {}, body);
    tally(std::chrono::steady_clock::now() - sent, !response || response->status != 200);
    if (!response) {
      const auto& failure = response.error();
      if (failure.kind == prom::HttpFailure::Kind::too_large)
        return EtcdFailure{Kind::bad_answer, failure.message, 0, "body"};
      // Unreachable, a TLS failure or a timeout: the next endpoint may answer.
      last = EtcdFailure{
          failure.kind == prom::HttpFailure::Kind::timeout ? Kind::timeout : Kind::unreachable,
          failure.message};
      continue;
    }
    current_ = index;
    ForeignJson parsed = parse_foreign_json(response->body);
    if (!parsed.ok())
      return bad_answer(what, "body",
                        "HTTP " + std::to_string(response->status) + ", " + parsed.problem);
    if (!parsed.document.is_object())
      return bad_answer(what, "body", "the answer is " + json_kind(parsed.document));
    if (response->status != 200) {
      auto code = int64_field(parsed.document, "code", 0);
      std::string message = member_text(parsed.document, "message");
      if (message.empty()) message = member_text(parsed.document, "error");
      int grpc_code = code ? static_cast<int>(*code) : 0;
      Kind kind = is_auth_error(grpc_code, message) ? Kind::auth : Kind::rejected;
      // A token etcd no longer knows (it expired, or the member restarted): authenticate
      // again and retry once.
      if (kind == Kind::auth && reauthenticate && !token_.empty() &&
          message.find("invalid auth token") != std::string::npos) {
        auto again = authenticate();
        if (!again) return std::move(again).error();
        return call(path, body, false);
      }
      return EtcdFailure{kind,
                         what + ": HTTP " + std::to_string(response->status) + ", etcd code " +
                             std::to_string(grpc_code) + ": " +
                             (message.empty() ? "no message" : message),
                         grpc_code,
                         {}};
    }
    return Answer{std::move(parsed.document), what};
  }
  return *last;
}

Expected<Range, EtcdFailure> EtcdClient::get(const std::string& key) {
  auto answer = call("/v3/kv/range", json{{"key", base64_encode(key)}}.dump());
  if (!answer) return std::move(answer).error();
  return read_range(answer->document, answer->what, "");
}

Expected<Range, EtcdFailure> EtcdClient::get_prefix(const std::string& prefix) {
  auto answer = call("/v3/kv/range", prefix_range(prefix).dump());
  if (!answer) return std::move(answer).error();
  return read_range(answer->document, answer->what, "");
}

Expected<Written, EtcdFailure> EtcdClient::put(const std::string& key, const std::string& value,
                                               std::int64_t lease) {
  json body = {{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease != 0) body["lease"] = std::to_string(lease);
  auto answer = call("/v3/kv/put", body.dump());
  if (!answer) return std::move(answer).error();
  auto revision = header_revision(answer->document, answer->what);
  if (!revision) return std::move(revision).error();
  return Written{*revision, 0};
}

Expected<Written, EtcdFailure> EtcdClient::del(const std::string& key) {
  auto answer = call("/v3/kv/deleterange", json{{"key", base64_encode(key)}}.dump());
  if (!answer) return std::move(answer).error();
  auto revision = header_revision(answer->document, answer->what);
  if (!revision) return std::move(revision).error();
  auto deleted = required_int(answer->document, "deleted", answer->what, 0);
  if (!deleted) return std::move(deleted).error();
  return Written{*revision, *deleted};
}

Expected<Written, EtcdFailure> EtcdClient::del_prefix(const std::string& prefix) {
  if (prefix.empty())
    return EtcdFailure{EtcdFailure::Kind::settings,
                       "etcd: refusing to delete with an empty prefix (every key of the store)"};
  auto answer = call("/v3/kv/deleterange", json{{"key", base64_encode(prefix)},
                                                {"range_end", base64_encode(prefix_end(prefix))}}
                                               .dump());
  if (!answer) return std::move(answer).error();
  auto revision = header_revision(answer->document, answer->what);
  if (!revision) return std::move(revision).error();
  auto deleted = required_int(answer->document, "deleted", answer->what, 0);
  if (!deleted) return std::move(deleted).error();
  return Written{*revision, *deleted};
}

Expected<TxnResult, EtcdFailure> EtcdClient::txn(const std::vector<Compare>& compare,
                                                 const std::vector<TxnOp>& success,
                                                 const std::vector<TxnOp>& failure) {
  json body = {{"compare", json::array()}, {"success", json::array()}, {"failure", json::array()}};
  for (const auto& c : compare) body["compare"].push_back(compare_json(c));
  for (const auto& op : success) body["success"].push_back(op_json(op));
  for (const auto& op : failure) body["failure"].push_back(op_json(op));
  auto answer = call("/v3/kv/txn", body.dump());
  if (!answer) return std::move(answer).error();
  const json& document = answer->document;
  TxnResult result;
  auto revision = header_revision(document, answer->what);
  if (!revision) return std::move(revision).error();
  result.revision = *revision;
  // proto3: "succeeded" is omitted when false.
  if (document.contains("succeeded")) {
    auto succeeded = bool_member(document, "succeeded");
    if (!succeeded)
      return bad_answer(answer->what, "succeeded",
                        wrong_member(document, "succeeded", "a boolean"));
    result.succeeded = *succeeded;
  }
  auto responses = document.find("responses");
  if (responses == document.end() || responses->is_null()) return result;
  if (!responses->is_array())
    return bad_answer(answer->what, "responses", wrong_member(document, "responses", "an array"));
  for (std::size_t i = 0; i < responses->size(); ++i) {
    const json& item = (*responses)[i];
    std::string name = "responses[" + std::to_string(i) + "]";
    if (!item.is_object()) return bad_answer(answer->what, name, name + " is " + json_kind(item));
    const json* range = object_member(item, "response_range");
    if (!range) continue;
    auto read = read_range(*range, answer->what, name + ".response_range");
    if (!read) return std::move(read).error();
    result.reads.push_back(std::move(read).value());
  }
  return result;
}

Expected<Lease, EtcdFailure> EtcdClient::grant(std::int64_t ttl_seconds) {
  auto answer = call("/v3/lease/grant", json{{"TTL", std::to_string(ttl_seconds)}}.dump());
  if (!answer) return std::move(answer).error();
  auto id = required_int(answer->document, "ID", answer->what, 0);
  if (!id) return std::move(id).error();
  if (*id == 0) return bad_answer(answer->what, "ID", "field 'ID' is missing");
  auto ttl = required_int(answer->document, "TTL", answer->what, 0);
  if (!ttl) return std::move(ttl).error();
  return Lease{*id, *ttl};
}

Expected<Lease, EtcdFailure> EtcdClient::keepalive(std::int64_t lease) {
  // A stream in gRPC; over the gateway one request gives one {"result": {...}} and the end.
  auto answer = call("/v3/lease/keepalive", json{{"ID", std::to_string(lease)}}.dump());
  if (!answer) return std::move(answer).error();
  // A stream's error comes inside a 200 answer: {"error": {"grpc_code": 5, "message": ...}}.
  if (const json* error = object_member(answer->document, "error")) {
    auto code = int64_field(*error, "grpc_code", 0);
    return EtcdFailure{EtcdFailure::Kind::rejected,
                       answer->what + ": etcd: " + member_text(*error, "message"),
                       code ? static_cast<int>(*code) : 0,
                       {}};
  }
  const json* result = object_member(answer->document, "result");
  if (!result)
    return bad_answer(answer->what, "result",
                      wrong_member(answer->document, "result", "an object"));
  auto id = int64_field(*result, "ID", 0);
  if (!id) return bad_answer(answer->what, "result.ID", "field 'result.ID' is not an integer");
  auto ttl = int64_field(*result, "TTL", 0);
  if (!ttl) return bad_answer(answer->what, "result.TTL", "field 'result.TTL' is not an integer");
  return Lease{*id, *ttl};
}

Expected<Written, EtcdFailure> EtcdClient::revoke(std::int64_t lease) {
  auto answer = call("/v3/lease/revoke", json{{"ID", std::to_string(lease)}}.dump());
  if (!answer) return std::move(answer).error();
  auto revision = header_revision(answer->document, answer->what);
  if (!revision) return std::move(revision).error();
  return Written{*revision, 0};
}

Expected<LeaseStatus, EtcdFailure> EtcdClient::time_to_live(std::int64_t lease) {
  auto answer = call("/v3/lease/timetolive", json{{"ID", std::to_string(lease)}}.dump());
  if (!answer) return std::move(answer).error();
  LeaseStatus status;
  auto id = required_int(answer->document, "ID", answer->what, 0);
  if (!id) return std::move(id).error();
  auto ttl = required_int(answer->document, "TTL", answer->what, 0);
  if (!ttl) return std::move(ttl).error();
  auto granted = required_int(answer->document, "grantedTTL", answer->what, 0);
  if (!granted) return std::move(granted).error();
  return LeaseStatus{*id, *ttl, *granted};
}

}  // namespace fabgate::etcd
