#pragma once

// Reading the long lists of a device's JSON output (a route table, an AFT) in batches of whole
// elements, each parsed by simdjson as a list of its own: simdjson's index of a document is
// about 1.6 times its size, so a 150 MB table read at once would cost 240 MB of index beside its
// text; in batches it costs a batch's. Internal to gates/snapshot (route_output.cpp).

#include <simdjson.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fabgate::snapshot::json_lists {

inline constexpr std::size_t kBatchBytes = 1u << 20;
inline constexpr std::size_t kMaxDepth = 64;  // as parse_output_json (adapters/core/foreign_json.h)

// Where one list sits in the text: its opening bracket, then a comma between two of its elements
// about every kBatchBytes, then its closing bracket. Batch k is the elements between cuts k and k+1.
struct ListCuts {
  bool found = false;
  std::vector<std::size_t> cuts;
};

struct Scan {
  bool too_deep = false;  // arrays and objects nest deeper than kMaxDepth somewhere
  bool closed = false;    // the top value ends
  bool trailing = false;  // something but blanks follows it
  bool repeated = false;  // a target list appears twice
  bool mismatched = false;  // a bracket closed by a brace, or the other way round
  std::vector<ListCuts> lists;  // one per target, in the order given
};

// One pass over the bytes, before simdjson reads anything. A target is the member names leading
// from the top value to a list, module prefixes ("openconfig-aft:") dropped: {} is a top-level
// list, {"ipv4-unicast", "ipv4-entry"} the list under those members of the top object.
Scan scan(std::string_view text, const std::vector<std::vector<std::string_view>>& targets);

// Parses each batch of `list` as a list of its own and hands it to `read(array)`, one after the
// other (the reader counts elements across batches); stops when `read` returns false. A
// simdjson failure is returned as its error code (the batch is not valid JSON).
template <typename Read>
simdjson::error_code read_batches(std::string_view text, const ListCuts& list,
                                  simdjson::ondemand::parser& parser, Read&& read) {
  std::string batch;
  for (std::size_t k = 0; k + 1 < list.cuts.size(); ++k) {
    const std::string_view elements =
        text.substr(list.cuts[k] + 1, list.cuts[k + 1] - list.cuts[k] - 1);
    batch.reserve(elements.size() + 2 + simdjson::SIMDJSON_PADDING);
    batch.assign("[");
    batch.append(elements);
    batch.push_back(']');
    simdjson::padded_string_view view(batch.data(), batch.size(), batch.capacity());
    simdjson::ondemand::document document;
    if (auto code = parser.iterate(view).get(document)) return code;
    simdjson::ondemand::array array;
    if (auto code = document.get_array().get(array)) return code;
    if (!read(array)) return simdjson::SUCCESS;
  }
  return simdjson::SUCCESS;
}

// "an object", "a string", "an integer", ...: a value's kind in the words of the normalizers.
std::string kind_of(simdjson::ondemand::value& value);

}  // namespace fabgate::snapshot::json_lists
