#include "adapters/core/foreign_json.h"

#include <limits>

namespace fabgate {

int json_nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > deepest) deepest = depth;
        if (deepest > limit) return limit + 1;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

ForeignJson parse_foreign_json(std::string_view text, int max_depth) {
  ForeignJson out;
  out.document = nlohmann::json(nlohmann::json::value_t::discarded);
  if (json_nesting_depth(text, max_depth) > max_depth) {
    out.problem = "nested deeper than " + std::to_string(max_depth) + " levels";
    out.too_deep = true;
    return out;
  }
  out.document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out.document.is_discarded()) out.problem = "not JSON";
  return out;
}

namespace {

const nlohmann::json* member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

}  // namespace

std::optional<std::string> string_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (!value || !value->is_string()) return std::nullopt;
  return value->get_ref<const std::string&>();
}

std::optional<double> number_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (!value || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

std::optional<std::int64_t> integer_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (!value) return std::nullopt;
  if (value->is_number_integer()) {
    if (value->is_number_unsigned() &&
        value->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return std::nullopt;
    return value->get<std::int64_t>();
  }
  return std::nullopt;
}

std::optional<std::uint64_t> unsigned_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (!value || !value->is_number_integer()) return std::nullopt;
  if (value->is_number_unsigned()) return value->get<std::uint64_t>();
  auto signed_value = value->get<std::int64_t>();
  if (signed_value < 0) return std::nullopt;
  return static_cast<std::uint64_t>(signed_value);
}

std::optional<bool> bool_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (!value || !value->is_boolean()) return std::nullopt;
  return value->get<bool>();
}

const nlohmann::json* object_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  return value && value->is_object() ? value : nullptr;
}

const nlohmann::json* array_member(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  return value && value->is_array() ? value : nullptr;
}

std::optional<TimePoint> time_member(const nlohmann::json& object, std::string_view key) {
  auto text = string_member(object, key);
  if (!text) return std::nullopt;
  return parse_iso8601(*text);
}

std::string member_text(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (!value || value->is_null()) return {};
  if (value->is_string()) return value->get_ref<const std::string&>();
  return value->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string member_kind(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  return value ? json_kind(*value) : "missing";
}

std::string wrong_member(const nlohmann::json& object, std::string_view key,
                         std::string_view expected, std::string_view name) {
  std::string out = "field '" + std::string(name.empty() ? key : name) + "' is ";
  if (!member(object, key)) return out + "missing";
  return out + member_kind(object, key) + ", not " + std::string(expected);
}

std::string json_kind(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "an integer";
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "of no JSON type";
  }
}

}  // namespace fabgate
