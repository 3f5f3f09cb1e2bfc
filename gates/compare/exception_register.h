#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "gates/compare/path_pattern.h"

namespace fabgate::compare {

// One accepted risk from policies/exceptions.yaml. Its scope names devices and rules by glob
// and, optionally, elements by a path pattern relative to the device (`bgp.peers.*.state`).
// An entry must narrow by rule or path: a device-wide blanket waiver is not accepted.
struct ExceptionEntry {
  std::string id;
  std::string device = "*";
  std::string rule = "*";
  std::optional<PathPattern> path;
  std::string reason;
  std::string owner;
  TimePoint expiry;
  SourceLocation where;

  bool expired(TimePoint now) const { return expiry <= now; }
  // `relative_path`: the element's path segments after devices.<device>.
  bool covers(const std::string& device_name, const std::string& rule_name,
              const std::vector<std::string>& relative_path) const;
};

struct ExceptionRegister {
  std::string file;
  std::vector<ExceptionEntry> entries;
};

// Parses an exceptions register (`exceptions:` list). Every problem is reported with
// file:line:column; ids must be unique.
Result<ExceptionRegister> load_exception_register(std::string_view yaml_text,
                                                  const std::string& file_name);

}  // namespace fabgate::compare
