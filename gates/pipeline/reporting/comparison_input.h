#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabgate::pipeline {

// A comparison as compare::to_json wrote it, with its raw files relative to the bundle: what
// report.html shows of it, and where the layer-recovery model finds its snapshots' times.
struct ComparisonInput {
  std::string title;                         // "post-change vs pre-change"
  const nlohmann::json* document = nullptr;  // compare::to_json(report)
  std::string json_link;                     // "diffs/post-vs-pre.json"; empty: not linked
  std::string text_link;                     // "diffs/post-vs-pre.txt"; empty: not linked
};

}  // namespace fabgate::pipeline
