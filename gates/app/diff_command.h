#pragma once

#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "gates/app/console.h"
#include "gates/app/options.h"

namespace fabgate::app {

// `fabgate diff PRE POST`: compares two snapshot files outside any change run.
struct DiffOptions {
  std::string pre_file;
  std::string post_file;
  std::vector<std::string> rule_files;  // empty: the built-in fabric-default rule set
  std::string change_file;              // its compare.expected list replaces no-change
  std::string exceptions_file;          // exceptions register; empty: none
  std::string max_age = "10m";          // "0s" turns the age check off
  std::string html_file;                // also write the comparison as a page (report.html's view)
};

// Exit codes: accepted (0) when every check passes or is waived; refused (3) when any check
// fails or has no evidence, or when no check was evaluated; invalid input (2) for unreadable or
// malformed files. The JSON document's verdict keeps no-evidence apart from fail. With
// html_file, the page is written (atomically) whatever the verdict; a page that cannot be
// written is an internal error (1).
Result<ExitCode> run_diff(const DiffOptions& options, const CommonOptions& common,
                          Console& console);

}  // namespace fabgate::app
