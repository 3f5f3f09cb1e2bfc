#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapters/git/file_tree.h"

namespace fabgate::testing {

// An intent root held in memory: loader and digest logic are tested without git.
class MemoryTree : public git::FileTree {
 public:
  std::map<std::string, std::string> files;
  std::optional<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> list(const std::string& directory) const override {
    std::vector<std::string> out;
    for (const auto& [path, content] : files)
      if (path.rfind(directory + "/", 0) == 0) out.push_back(path);
    return out;
  }
};

}  // namespace fabgate::testing
