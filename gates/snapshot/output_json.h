#pragma once

// How the normalizers read a device command's JSON output. The output is the device's, so it
// may have any shape: it is parsed depth-limited (adapters/core/foreign_json.h), and a member of
// another type than the normalizer reads is its failure naming the field
// ("field 'ipv4Unicast.peers.10.0.0.1.pfxRcd' is a string, not an integer"), never a
// nlohmann::json type_error. Values the snapshot only carries through (a peer's state, a link's
// MTU) are copied as they are: the depth limit keeps any copy shallow.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"

namespace fabgate::snapshot {

// The output parsed, or why not: "not JSON: '% BGP instance not found'", "not JSON (empty
// output)", "nested deeper than 64 levels".
Expected<nlohmann::json, std::string> parse_output_json(std::string_view output);

// "[3]": a list element's place in the output, for Fields' `where`.
std::string element_path(std::size_t index);

// Typed reads of the members of one object of the output. Readers of one output share
// `problem`; the first failure is kept there and later reads return their fallbacks, so a
// normalizer reads on and returns `problem` once it is set.
class Fields {
 public:
  // `where` names the object in the output ("ipv4Unicast.peers.10.0.0.1", "[3]"); a value that
  // is not an object at all is a failure too.
  Fields(const nlohmann::json& object, std::string where, std::string& problem);

  // Optional members: absent reads as `otherwise`.
  std::string text(std::string_view key, std::string_view otherwise = "");
  std::int64_t integer(std::string_view key, std::int64_t otherwise = 0);
  bool flag(std::string_view key, bool otherwise = false);
  // An absent object or array reads as an empty one.
  const nlohmann::json& object(std::string_view key);
  const nlohmann::json& array(std::string_view key);

  // Required members: absent is a failure too.
  std::string required_text(std::string_view key);
  std::int64_t required_integer(std::string_view key);
  // Of any type, carried into the snapshot as it is (null when absent).
  const nlohmann::json& required(std::string_view key);

  // "ipv4Unicast.peers.10.0.0.1.pfxRcd": the member's name in a failure.
  std::string path(std::string_view key) const;

 private:
  bool absent(std::string_view key) const;
  void wrong(std::string_view key, std::string_view expected);

  const nlohmann::json& object_;
  std::string where_;
  std::string& problem_;
};

}  // namespace fabgate::snapshot
