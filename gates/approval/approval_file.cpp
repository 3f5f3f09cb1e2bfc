#include "gates/approval/approval_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <utility>

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

namespace {

// The descriptor of an approval file, closed on every way out.
class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

Result<std::string> read_approval_bytes(const std::filesystem::path& file) {
  const std::string name = file.string();
  auto refused = [&](const std::string& why) {
    return Error::invalid_input("approval " + name + ": " + why);
  };
  OpenFile opened(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (opened.fd() < 0) {
    const int failed = errno;
    struct stat link {};
    // O_NOFOLLOW answers ELOOP when the last part of the path is a symbolic link.
    if (failed == ELOOP && ::lstat(file.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      return refused(
          "is a symbolic link, refused: approval files are read without following links "
          "(give the file itself)");
    return refused(std::string("cannot be read: ") + std::strerror(failed));
  }
  struct stat info {};
  if (::fstat(opened.fd(), &info) != 0)
    return refused(std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return refused("not an approval: " + kind_of(info.st_mode));
  if (static_cast<std::uintmax_t>(info.st_size) > kMaxApprovalFileBytes)
    return refused("not an approval: " + std::to_string(info.st_size) + " bytes, more than " +
                   std::to_string(kMaxApprovalFileBytes) + " (an approval is about 1 KiB)");
  // The size is checked again while reading: the file may grow after fstat.
  std::string content;
  char buffer[1 << 14];
  while (true) {
    ssize_t n = ::read(opened.fd(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refused(std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    if (content.size() + static_cast<std::size_t>(n) > kMaxApprovalFileBytes)
      return refused("not an approval: it grew past " + std::to_string(kMaxApprovalFileBytes) +
                     " bytes while it was read");
    content.append(buffer, static_cast<std::size_t>(n));
  }
  return content;
}

Result<SignedApproval> parse_approval(const std::string& name, std::string_view content) {
  auto document = nlohmann::json::parse(content, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return Error::invalid_input("approval " + name + ": not an approval: not a JSON object");
  auto format = document.find("format");
  if (format == document.end() || !format->is_string() ||
      format->get<std::string>() != kApprovalFormat)
    return Error::invalid_input("approval " + name + ": not an approval: its format is not " +
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

Result<SignedApproval> read_approval_file(const std::filesystem::path& file) {
  auto content = read_approval_bytes(file);
  if (!content.ok()) return std::move(content).error();
  return parse_approval(file.string(), content.value());
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
