#pragma once

#include <string>

#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace fabgate::testing {

// A real git repository in a temporary folder, driven with the git CLI, so intent-reading
// code is tested against what git really writes.
class GitRepo {
 public:
  GitRepo();
  const std::string& path() const { return dir_.path(); }
  std::string file(const std::string& relative) const { return dir_.file(relative); }
  // Writes a file (creating folders) without committing it.
  void write(const std::string& relative, const std::string& content);
  // Runs a shell command inside the repository.
  CommandOutput run(const std::string& command);
  void commit_all(const std::string& message);
  std::string head();

 private:
  TempDir dir_;
};

}  // namespace fabgate::testing
