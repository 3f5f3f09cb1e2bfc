#pragma once

// Reading device output that is several JSON objects back to back rather than one document:
// FRR 7.0 – 7.2 (and the Cumulus Linux 3.7 build of FRR 4.0) print `show evpn vni detail json`
// as one object per VNI, each followed by a newline, and close with an empty `{}` (the outer
// object they never filled). The empty `{}` is a terminator, not an entry. The output is the
// device's, so reading it is bounded in size, nesting and count, and anything else than that
// shape is an error naming where (byte, line, column) it went wrong; nothing here throws.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"
#include "adapters/core/result.h"

namespace fabgate::snapshot {

struct JsonSequenceLimits {
  std::size_t max_bytes = std::size_t{64} << 20;  // the SSH adapter's output limit
  std::size_t max_objects = 65536;                // more than any switch's VNIs
  int max_depth = kForeignJsonMaxDepth;           // per object
};

struct SequencedObject {
  nlohmann::json value;  // always an object, never the terminator
  std::size_t byte = 0;  // where its `{` is, counted from 1
};

// The objects of `{...}{...}...{}` in order, without the closing `{}`, or why the text is not
// that: "expected '{' at byte 40 (line 3, column 1), found '%'", "the object at byte 1 (line 1,
// column 1) is not closed before the end of the output", "ends without the empty {} that
// closes the list (output cut short?)". A lone `{}` is an empty sequence.
Expected<std::vector<SequencedObject>, std::string> parse_json_object_sequence(
    std::string_view text, const JsonSequenceLimits& limits = {});

// "byte 40 (line 3, column 1)" for the byte at `offset` (from 0) of `text`.
std::string text_position(std::string_view text, std::size_t offset);

}  // namespace fabgate::snapshot
