#include "adapters/ssh/known_hosts_filter.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

namespace fabgate::ssh {

namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

KnownHostsFilter::Filtered::~Filtered() {
  if (fd_ >= 0) ::close(fd_);
}

KnownHostsFilter& KnownHostsFilter::shared() {
  static KnownHostsFilter filter;
  return filter;
}

std::size_t KnownHostsFilter::lines_read() const {
  std::lock_guard lock(mutex_);
  return lines_read_;
}

void KnownHostsFilter::add_line(Index& index, std::string line) {
  const std::size_t at = index.lines.size();
  std::string_view text(line);
  const std::size_t start = text.find_first_not_of(" \t");
  index.lines.push_back(std::move(line));
  if (start == std::string_view::npos) return;  // blank
  text.remove_prefix(start);
  if (text.front() == '#') return;  // a comment
  const std::string_view hosts = text.substr(0, text.find_first_of(" \t"));
  // Markers (@cert-authority, @revoked), hashed names and patterns are left to libssh.
  if (hosts.empty() || hosts.front() == '@' || hosts.front() == '|' ||
      hosts.find_first_of("*?!") != std::string_view::npos) {
    index.unresolved.push_back(at);
    return;
  }
  std::size_t from = 0;
  while (from <= hosts.size()) {
    std::size_t comma = hosts.find(',', from);
    if (comma == std::string_view::npos) comma = hosts.size();
    if (comma > from) {
      auto& lines = index.by_name[lowercase(hosts.substr(from, comma - from))];
      if (lines.empty() || lines.back() != at) lines.push_back(at);
    }
    from = comma + 1;
  }
}

Expected<KnownHostsFilter::Index*, std::string> KnownHostsFilter::current(
    const std::string& path) {
  struct stat status {};
  Index& index = indexes_[path];
  if (::stat(path.c_str(), &status) != 0) {
    if (errno != ENOENT) return "cannot read known_hosts file " + path + ": " + std::strerror(errno);
    index = Index{};  // no file: every host is unknown, as libssh would say
    return &index;
  }
  const std::int64_t mtime_ns =
      static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec;
  if (index.exists && index.size == status.st_size && index.mtime_ns == mtime_ns) return &index;
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read known_hosts file " + path + ": " + std::strerror(errno);
  Index fresh;
  fresh.exists = true;
  fresh.size = status.st_size;
  fresh.mtime_ns = mtime_ns;
  for (std::string line; std::getline(in, line);) {
    add_line(fresh, std::move(line));
    ++lines_read_;
  }
  if (in.bad()) return "cannot read known_hosts file " + path + ": read error";
  index = std::move(fresh);
  return &index;
}

Expected<KnownHostsFilter::Filtered, std::string> KnownHostsFilter::for_host(
    const std::string& path, const std::string& name) {
  std::lock_guard lock(mutex_);
  auto index = current(path);
  if (!index) return index.error();

  const Index& lines = **index;
  std::vector<std::size_t> chosen = lines.unresolved;
  auto take = [&](const std::string& key) {
    auto found = lines.by_name.find(key);
    if (found != lines.by_name.end()) {
      chosen.insert(chosen.end(), found->second.begin(), found->second.end());
    }
  };
  const std::string key = lowercase(name);
  take(key);
  // On port 22 libssh also matches "[host]:22".
  if (key.empty() || key.front() != '[') take("[" + key + "]:22");
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());

  std::string text;
  for (std::size_t at : chosen) {
    text += lines.lines[at];
    text += '\n';
  }
  const int fd = ::memfd_create("fabgate-known-hosts", MFD_CLOEXEC);
  if (fd < 0) return std::string("cannot make an in-memory file: ") + std::strerror(errno);
  Filtered filtered(fd);
  if (!write_all(fd, text)) {
    return std::string("cannot write an in-memory file: ") + std::strerror(errno);
  }
  return filtered;
}

bool KnownHostsFilter::append(const std::string& path, const std::string& line,
                              std::string* error) {
  std::lock_guard lock(mutex_);
  // Bring the index up to date first, so the appended line is not read a second time.
  auto index = current(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (error != nullptr) *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string entry = line;
  if (entry.empty() || entry.back() != '\n') entry += '\n';
  const bool written = write_all(fd, entry);
  const int saved_errno = errno;
  ::close(fd);
  if (!written) {
    if (error != nullptr) *error = "cannot write " + path + ": " + std::strerror(saved_errno);
    return false;
  }
  struct stat status {};
  if (index && (*index)->exists && ::stat(path.c_str(), &status) == 0 &&
      status.st_size == (*index)->size + static_cast<std::int64_t>(entry.size())) {
    // Nobody else wrote in between: extend the index instead of re-reading the file.
    entry.pop_back();
    add_line(**index, std::move(entry));
    (*index)->size = status.st_size;
    (*index)->mtime_ns = static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 +
                         status.st_mtim.tv_nsec;
  } else {
    indexes_.erase(path);  // re-read on next use
  }
  return true;
}

}  // namespace fabgate::ssh
