#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"

namespace fabgate::pipeline {

// Every gate and check ends in one of these. no_evidence blocks exactly like fail (DESIGN.md
// rule 1); skipped is only for gates that did not run because an earlier one stopped the run,
// or that the change declares not wanted (intent `not_wanted`).
enum class Verdict { pass, fail, no_evidence, skipped };

std::string_view to_string(Verdict verdict);
inline bool blocks(Verdict verdict) {
  return verdict == Verdict::fail || verdict == Verdict::no_evidence;
}

// What one gate did, for the terminal, report.md, junit.xml and the manifest.
struct GateRecord {
  std::string name;
  // A gate whose body never decides has proven nothing: it blocks.
  Verdict verdict = Verdict::no_evidence;
  std::string summary;               // one line
  std::vector<std::string> details;  // further lines (each failing check, each device...)
  TimePoint started;
  Duration duration{0};
};

}  // namespace fabgate::pipeline
