#pragma once

// Shared by the intent loader tests: load an in-memory intent tree at a fixed commit, and every
// diagnostic as one text to search.

#include <string>

#include "gates/intent/loader.h"
#include "tests/support/memory_tree.h"

namespace fabgate::intent::testing_helpers {

inline LoadOutcome load(const fabgate::testing::MemoryTree& tree) {
  CommitInfo commit;
  commit.id = "0123456789abcdef0123456789abcdef01234567";
  return load_intent_repository(tree, commit, "");
}

inline std::string all_lines(const LoadOutcome& outcome) {
  std::string all;
  for (const auto& line : outcome.diagnostics.lines()) all += line + "\n";
  return all;
}

}  // namespace fabgate::intent::testing_helpers
