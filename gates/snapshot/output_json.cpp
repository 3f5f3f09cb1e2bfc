#include "gates/snapshot/output_json.h"

#include "adapters/core/foreign_json.h"
#include "adapters/core/shorten.h"
#include "adapters/core/text.h"

namespace fabgate::snapshot {

using nlohmann::json;

Expected<json, std::string> parse_output_json(std::string_view output) {
  auto parsed = parse_foreign_json(output);
  if (parsed.ok()) return std::move(parsed.document);
  if (parsed.too_deep) return parsed.problem;
  std::string start = shorten(trim(output), 60);
  return "not JSON" + (start.empty() ? std::string(" (empty output)") : ": '" + start + "'");
}

std::string element_path(std::size_t index) {
  return "[" + std::to_string(index) + "]";
}

namespace {

const json& empty_object() {
  static const json empty = json::object();
  return empty;
}

const json& empty_array() {
  static const json empty = json::array();
  return empty;
}

const json& null_value() {
  static const json null;
  return null;
}

}  // namespace

Fields::Fields(const json& object, std::string where, std::string& problem)
    : object_(object), where_(std::move(where)), problem_(problem) {
  if (!object_.is_object() && problem_.empty())
    problem_ = (where_.empty() ? std::string("the output") : "field '" + where_ + "'") + " is " +
               json_kind(object_) + ", not an object";
}

std::string Fields::path(std::string_view key) const {
  return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
}

bool Fields::absent(std::string_view key) const {
  return !object_.is_object() || !object_.contains(key);
}

void Fields::wrong(std::string_view key, std::string_view expected) {
  if (problem_.empty()) problem_ = wrong_member(object_, key, expected, path(key));
}

std::string Fields::text(std::string_view key, std::string_view otherwise) {
  if (absent(key)) return std::string(otherwise);
  if (auto value = string_member(object_, key)) return *value;
  wrong(key, "a string");
  return std::string(otherwise);
}

std::int64_t Fields::integer(std::string_view key, std::int64_t otherwise) {
  if (absent(key)) return otherwise;
  if (auto value = integer_member(object_, key)) return *value;
  wrong(key, "an integer");
  return otherwise;
}

bool Fields::flag(std::string_view key, bool otherwise) {
  if (absent(key)) return otherwise;
  if (auto value = bool_member(object_, key)) return *value;
  wrong(key, "a boolean");
  return otherwise;
}

const json& Fields::object(std::string_view key) {
  if (absent(key)) return empty_object();
  if (const auto* value = object_member(object_, key)) return *value;
  wrong(key, "an object");
  return empty_object();
}

const json& Fields::array(std::string_view key) {
  if (absent(key)) return empty_array();
  if (const auto* value = array_member(object_, key)) return *value;
  wrong(key, "an array");
  return empty_array();
}

std::string Fields::required_text(std::string_view key) {
  if (absent(key)) wrong(key, "a string");
  return text(key);
}

std::int64_t Fields::required_integer(std::string_view key) {
  if (absent(key)) wrong(key, "an integer");
  return integer(key);
}

const json& Fields::required(std::string_view key) {
  if (absent(key)) {
    wrong(key, "");
    return null_value();
  }
  return object_.at(key);
}

}  // namespace fabgate::snapshot
