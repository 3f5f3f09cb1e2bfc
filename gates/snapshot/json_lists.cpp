#include "gates/snapshot/json_lists.h"

#include "adapters/core/text.h"

namespace fabgate::snapshot::json_lists {

namespace {

std::string_view without_module(std::string_view name) {
  auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

struct Frame {
  bool array = false;
  std::string_view key;  // the member being read, in an object
  int target = -1;       // the target this list is, if any
};

}  // namespace

Scan scan(std::string_view text, const std::vector<std::vector<std::string_view>>& targets) {
  Scan out;
  out.lists.resize(targets.size());
  std::vector<Frame> stack;
  std::size_t string_start = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        // A string followed by ':' inside an object is the name of the member that follows.
        if (!stack.empty() && !stack.back().array) {
          std::size_t next = i + 1;
          while (next < text.size() && (text[next] == ' ' || text[next] == '\n' ||
                                        text[next] == '\t' || text[next] == '\r'))
            ++next;
          if (next < text.size() && text[next] == ':')
            stack.back().key = text.substr(string_start, i - string_start);
        }
      }
    } else if (c == '"') {
      in_string = true;
      string_start = i + 1;
    } else if (c == '[' || c == '{') {
      Frame frame;
      frame.array = c == '[';
      if (frame.array) {
        for (std::size_t t = 0; t < targets.size(); ++t) {
          if (targets[t].size() != stack.size()) continue;
          bool match = true;
          for (std::size_t d = 0; d < stack.size() && match; ++d)
            match = !stack[d].array && without_module(stack[d].key) == targets[t][d];
          if (!match) continue;
          if (out.lists[t].found) {
            out.repeated = true;
            continue;
          }
          out.lists[t].found = true;
          out.lists[t].cuts.push_back(i);
          frame.target = static_cast<int>(t);
        }
      }
      stack.push_back(frame);
      if (stack.size() > kMaxDepth) {
        out.too_deep = true;
        return out;
      }
    } else if (c == ',' && !stack.empty() && stack.back().target >= 0) {
      auto& cuts = out.lists[static_cast<std::size_t>(stack.back().target)].cuts;
      if (i - cuts.back() >= kBatchBytes) cuts.push_back(i);
    } else if ((c == ']' || c == '}') && !stack.empty()) {
      if (stack.back().array != (c == ']')) {
        out.mismatched = true;
        return out;
      }
      if (stack.back().target >= 0)
        out.lists[static_cast<std::size_t>(stack.back().target)].cuts.push_back(i);
      stack.pop_back();
      if (stack.empty()) {
        out.closed = true;
        out.trailing = !trim(text.substr(i + 1)).empty();
        return out;
      }
    }
  }
  return out;
}

std::string kind_of(simdjson::ondemand::value& value) {
  simdjson::ondemand::json_type type;
  if (value.type().get(type)) return "not JSON";
  switch (type) {
    case simdjson::ondemand::json_type::array: return "an array";
    case simdjson::ondemand::json_type::object: return "an object";
    case simdjson::ondemand::json_type::string: return "a string";
    case simdjson::ondemand::json_type::boolean: return "a boolean";
    case simdjson::ondemand::json_type::null: return "null";
    case simdjson::ondemand::json_type::number: {
      simdjson::ondemand::number_type number;
      if (value.get_number_type().get(number)) return "a number";
      return number == simdjson::ondemand::number_type::floating_point_number ? "a number"
                                                                                : "an integer";
    }
  }
  return "of no JSON type";
}

}  // namespace fabgate::snapshot::json_lists
