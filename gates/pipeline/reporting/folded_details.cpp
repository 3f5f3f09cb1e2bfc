#include "gates/pipeline/reporting/folded_details.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "adapters/core/text.h"

namespace fabgate::pipeline {
namespace {

constexpr std::string_view kSeparator = ": ";

// One cause and the subjects it was reported for, in the order they were met.
struct Group {
  std::vector<std::string> heads;  // the cause's first segments joined ("bgp", "interfaces")
  std::string tail;                // the cause after its first segment, or the whole cause
  std::vector<std::string> subjects;
  bool foldable = true;
  std::string original;  // the line as given, for a group of one
};

bool one_word(std::string_view text) {
  return !text.empty() && text.find_first_of(" \t[](){}") == std::string_view::npos;
}

std::string folded_line(const Group& group, std::size_t names_shown) {
  if (!group.foldable || (group.subjects.size() == 1 && group.heads.size() <= 1))
    return group.original;
  std::string cause = group.heads.empty()
                          ? group.tail
                          : join(group.heads, ", ") + std::string(kSeparator) + group.tail;
  std::string line = group.subjects.front() + std::string(kSeparator) + cause;
  std::size_t more = group.subjects.size() - 1;
  if (more == 0) return line;
  std::vector<std::string> names(group.subjects.begin() + 1,
                                 group.subjects.begin() + 1 + std::min(more, names_shown));
  if (more > names_shown) names.push_back("…");
  return line + " (same on " + std::to_string(more) + " more device" + (more == 1 ? "" : "s") +
         ": " + join(names, ", ") + ")";
}

}  // namespace

std::vector<std::string> fold_repeated_details(const std::vector<std::string>& details,
                                               std::size_t names_shown) {
  // First pass: identical causes across subjects.
  std::vector<Group> groups;
  std::map<std::string, std::size_t> by_cause;
  for (std::size_t i = 0; i < details.size(); ++i) {
    const std::string& line = details[i];
    std::size_t colon = line.find(kSeparator);
    std::string_view subject =
        colon == std::string::npos ? std::string_view{} : std::string_view(line).substr(0, colon);
    if (!one_word(subject)) {
      Group alone;
      alone.foldable = false;
      alone.original = line;
      groups.push_back(std::move(alone));
      continue;
    }
    std::string cause = line.substr(colon + kSeparator.size());
    auto [found, added] = by_cause.emplace(cause, groups.size());
    if (added) {
      Group group;
      group.tail = cause;
      group.original = line;
      groups.push_back(std::move(group));
    }
    auto& subjects = groups[found->second].subjects;
    if (std::find(subjects.begin(), subjects.end(), subject) == subjects.end())
      subjects.emplace_back(subject);
  }
  // Second pass: on the same subjects, causes that differ only in their first segment (one
  // word: the category a collector failed for) are one cause.
  std::vector<Group> joined;
  std::map<std::string, std::size_t> by_tail;
  for (auto& group : groups) {
    std::size_t colon = group.tail.find(kSeparator);
    bool splits = group.foldable && colon != std::string::npos &&
                  one_word(std::string_view(group.tail).substr(0, colon));
    if (!splits) {
      joined.push_back(std::move(group));
      continue;
    }
    std::string head = group.tail.substr(0, colon);
    std::string tail = group.tail.substr(colon + kSeparator.size());
    std::string key = tail + '\n' + join(group.subjects, "\n");
    auto [found, added] = by_tail.emplace(key, joined.size());
    if (added) {
      group.heads = {head};
      group.tail = tail;
      joined.push_back(std::move(group));
    } else {
      joined[found->second].heads.push_back(head);
    }
  }
  std::vector<std::string> lines;
  lines.reserve(joined.size());
  for (const auto& group : joined) lines.push_back(folded_line(group, names_shown));
  return lines;
}

}  // namespace fabgate::pipeline
