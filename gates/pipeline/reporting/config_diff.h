#pragma once

// Running-configuration deltas for reviewers: the `config` category of the pre, post and
// restored snapshots (docs/snapshot-format.md) as unified diffs per device, secrets redacted,
// rendered as a Markdown section of report.md and review.md.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"

namespace fabgate::pipeline {

// A unified diff ("--- a", "+++ b", "@@ -l,n +l,n @@" hunks with `context` lines around each
// change) of two texts split into lines. Empty when they are equal.
std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_name, const std::string& after_name,
                         int context = 3);

// One device's configuration delta between two snapshots.
struct ConfigDelta {
  std::string device;
  std::string compared;  // "post vs pre", "restored vs pre"
  // The unified diff (redacted), empty when unchanged; or why there is none.
  std::string diff;
  std::string missing;  // non-empty: the configuration was not captured in one snapshot
};

// For every device whose `config` was captured in `pre` (snapshot documents; `later` may be
// null when that snapshot was not taken), the delta `later` vs `pre`, labelled `phase`.
std::vector<ConfigDelta> config_deltas(const nlohmann::json& pre, const nlohmann::json& later,
                                       const std::string& phase, const Redactor& redactor);

// "leaf1 (42 lines)" for every device whose `config` the snapshot captured.
std::vector<std::string> captured_configs(const nlohmann::json& snapshot);

// "## Configuration changes" with one fenced diff block per device and comparison; an
// unchanged configuration is one line, a configuration missing from a snapshot says so.
// Empty when no snapshot captured any configuration.
std::string config_diff_markdown(const std::vector<ConfigDelta>& deltas);

// review.md's section for a plan run, which takes only the pre snapshot: which devices' running
// configuration the baseline holds, and where the diffs will be. Empty when none was captured.
std::string config_capture_markdown(const std::vector<std::string>& captured);

}  // namespace fabgate::pipeline
