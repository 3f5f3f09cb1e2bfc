#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fabgate::hostfacts::testing {

// Samples written by hand from the documented output formats (see docs/rdma.md).
inline std::filesystem::path data_path(const std::string& name) {
  return std::filesystem::path(FABGATE_SOURCE_DIR) / "tests/gates/hostfacts/data" / name;
}

inline std::string read_sample(const std::string& name) {
  std::ifstream stream(data_path(name));
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace fabgate::hostfacts::testing
