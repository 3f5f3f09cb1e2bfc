#include "gates/pipeline/verdict.h"

namespace fabgate::pipeline {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::no_evidence:
      return "no-evidence";
    case Verdict::skipped:
      return "skipped";
  }
  return "unknown";
}

}  // namespace fabgate::pipeline
