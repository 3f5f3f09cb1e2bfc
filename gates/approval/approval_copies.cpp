#include "gates/approval/approval_copies.h"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace fabgate::approval {

std::vector<std::string> non_approvals_in_folders(const std::vector<std::string>& given) {
  std::vector<std::string> lines;
  for (const auto& path : given) {
    std::error_code error;
    if (!std::filesystem::is_directory(path, error)) continue;
    std::vector<std::pair<std::string, std::string>> left_out;  // path, why
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      std::error_code status_error;
      const bool is_link = entry.is_symlink(status_error);
      const bool regular = entry.is_regular_file(status_error);  // follows a link
      const bool folder = entry.is_directory(status_error);
      const bool json = entry.path().extension() == ".json";
      if (regular && json) continue;  // judged: a link among them is refused by the reader
      std::string why = folder    ? (is_link ? "a symbolic link to a folder" : "a folder")
                        : !json   ? "not a .json file"
                        : is_link ? "a symbolic link that leads nowhere"
                                  : "not a regular file";
      left_out.emplace_back(entry.path().string(), why);
    }
    std::sort(left_out.begin(), left_out.end());
    for (const auto& [file, why] : left_out)
      lines.push_back(file + ": not an approval (" + why + "), not copied");
  }
  return lines;
}

}  // namespace fabgate::approval
