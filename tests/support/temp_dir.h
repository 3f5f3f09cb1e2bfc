#pragma once

#include <string>

namespace fabgate::testing {

// A fresh directory under /tmp, removed with everything in it when the object dies, so a
// failing test still cleans up.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "fabgate-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Whole-file helpers for tests; they throw std::runtime_error on I/O failure.
void write_file(const std::string& path, const std::string& content, unsigned mode = 0644);
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);

}  // namespace fabgate::testing
