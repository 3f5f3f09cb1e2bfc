#include "gates/approval/approval_file.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace fabgate::approval {

std::string statement(const SignedApproval& approval) {
  std::ostringstream text;
  text << kApprovalFormat << "\n"
       << "namespace: " << approval.signature_namespace << "\n"
       << "approver: " << approval.approver << "\n"
       << "change: " << approval.change << "\n"
       << "commit: " << approval.commit << "\n"
       << "digest: " << approval.digest << "\n"
       << "approved_at: " << approval.approved_at << "\n";
  return text.str();
}

nlohmann::json to_json(const SignedApproval& approval) {
  return {{"format", kApprovalFormat},
          {"approver", approval.approver},
          {"digest", approval.digest},
          {"change", approval.change},
          {"commit", approval.commit},
          {"approved_at", approval.approved_at},
          {"namespace", approval.signature_namespace},
          {"signature", approval.signature}};
}

Result<SignedApproval> read_approval_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error::invalid_input("approval " + name + ": cannot be read");
  auto document = nlohmann::json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return Error::invalid_input("approval " + name + ": not a JSON object");
  if (document.value("format", "") != kApprovalFormat)
    return Error::invalid_input("approval " + name + ": format is not " +
                                std::string(kApprovalFormat));
  SignedApproval approval;
  std::vector<std::string> problems;
  auto field = [&](const char* key, std::string& into) {
    auto it = document.find(key);
    if (it == document.end() || !it->is_string() || it->get<std::string>().empty()) {
      problems.push_back("'" + std::string(key) + "' is missing or not a string");
      return;
    }
    into = it->get<std::string>();
    if (std::string(key) != "signature" && into.find('\n') != std::string::npos)
      problems.push_back("'" + std::string(key) + "' holds a newline");
  };
  field("approver", approval.approver);
  field("digest", approval.digest);
  field("change", approval.change);
  field("commit", approval.commit);
  field("approved_at", approval.approved_at);
  field("namespace", approval.signature_namespace);
  field("signature", approval.signature);
  if (!problems.empty())
    return Error::invalid_input("approval " + name + ": malformed", std::move(problems));
  return approval;
}

std::string approval_file_name(const std::string& principal) {
  std::string name;
  for (char c : principal) {
    bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '@' || c == '.' || c == '-' ||
                c == '_' || c == '+';
    name += safe ? c : '_';
  }
  if (name.empty() || name.front() == '.') name.insert(0, "_");
  return name + ".json";
}

}  // namespace fabgate::approval
