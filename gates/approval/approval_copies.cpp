#include "gates/approval/approval_copies.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "gates/approval/approval_file.h"

namespace fabgate::approval {

JudgeWithCopies::JudgeWithCopies(pipeline::ApprovalJudge& judge, std::vector<std::string> given)
    : judge_(judge), given_(std::move(given)) {}

pipeline::ApprovalJudgement JudgeWithCopies::judge(const intent::IntentRepository& repository,
                                                   const intent::Change& change,
                                                   const std::string& plan_digest,
                                                   pipeline::RehearsalCheck rehearsal) {
  ApprovalReadings readings;
  auto judgement = judge_.judge(repository, change, plan_digest, rehearsal);
  // The judge reads each file once, in the order of its records; a record is matched with the
  // next reading of the same file, so the same file given twice gets each its own bytes.
  const auto& read = readings.readings();
  std::size_t next = 0;
  for (auto& record : judgement.approvals) {
    auto found = std::find_if(read.begin() + static_cast<std::ptrdiff_t>(next), read.end(),
                              [&](const auto& reading) { return reading.file == record.file; });
    if (found == read.end()) continue;
    next = static_cast<std::size_t>(found - read.begin()) + 1;
    if (found->is_approval) record.content = found->content;
  }
  for (auto& line : non_approvals_in_folders(given_)) judgement.details.push_back(std::move(line));
  return judgement;
}

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
