#pragma once

// What changed between two snapshots, named entry by entry for people: report.md and report.html
// list the first entries of each category (routes, bgp, interfaces, ...) and point to the full
// list this writes into diffs/. Built from a comparison document (compare::to_json), so the
// Markdown writer (from the run) and the page (from the bundle's diffs/*.json) list the same.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/redact.h"

namespace fabgate::pipeline {

// The first entries of each category shown in report.md and report.html.
inline constexpr std::size_t kChangesShownPerCategory = 10;

// One category of facts (the path segment after `devices.<device>.`: "routes", "bgp", ...).
struct ChangeCategory {
  std::string name;
  std::size_t added = 0, removed = 0, changed = 0;
  // Every entry, in comparison order: "- leaf1 routes.ipv4: 10.1.2.0/24 ..." for a route
  // withdrawn, "+ ..." added, "~ ..." changed, and for another element
  // "~ leaf1 bgp.peers.\"10.0.1.0\".state: \"Established\" -> \"Idle\" (fail)".
  std::vector<std::string> entries;
  // Routes counted but not named (the comparison names at most CompareOptions::route_examples
  // per table and direction).
  std::size_t unnamed = 0;
  std::size_t total() const { return entries.size() + unnamed; }
};

// One comparison's changes ("post vs pre"), and the diffs/ file holding the full list.
struct ChangeListing {
  std::string label;                       // "post vs pre", "restored vs pre"
  std::string file;                        // "diffs/post-vs-pre-changes.txt"
  std::vector<ChangeCategory> categories;  // in order of first appearance
};

// The entries of `comparison` that name a change: every route added, removed or changed (from a
// route table's details), and every other element whose pre and post values differ and that
// failed, had no evidence, was waived, or was allowed by the change's expected differences.
// Elements that other rules let move (counters under increase, range or delta) are not listed:
// they move on every run and would hide what the change did.
std::vector<ChangeCategory> changes_of(const nlohmann::json& comparison);

// The full list as text for diffs/: a heading per category with its counts, then every entry.
std::string change_listing_text(const ChangeListing& listing);

// "## What changed" for report.md: per comparison and category the counts, the first
// kChangesShownPerCategory entries, then "and M more, full list in diffs/…". Empty when no
// comparison ran.
// Each entry is redacted with `redactor` before it is flattened onto its line.
std::string change_listing_markdown(const std::vector<ChangeListing>& listings,
                                    const Redactor& redactor);

// "12 changed, 1 removed" ("no change" when all are zero).
std::string change_counts(const ChangeCategory& category);

}  // namespace fabgate::pipeline
