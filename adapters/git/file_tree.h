#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fabgate::git {

// Read-only view of the files of one intent root. The seam exists so validation can be unit
// tested on an in-memory tree; the real implementation reads a git commit (CommitTree).
// Paths are relative to the intent root and use '/'.
class FileTree {
 public:
  virtual ~FileTree() = default;
  // nullopt when there is no such file.
  virtual std::optional<std::string> read(const std::string& path) const = 0;
  // Every file below `directory` (recursively), sorted; empty when the directory is absent.
  virtual std::vector<std::string> list(const std::string& directory) const = 0;
};

}  // namespace fabgate::git
