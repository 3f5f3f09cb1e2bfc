#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "adapters/core/result.h"

namespace fabgate::ssh {

// A fleet's known_hosts file read once per run and handed to libssh one host at a time.
//
// libssh reads the whole known_hosts file three times per session (to order the host-key
// algorithms, then the user file and the global file, which fabgate points at the same file),
// so with one line per device a fleet of N devices costs N x 3N line parses: at 2,000 devices
// this was a quarter of the controller's CPU per device, and it grows with the fleet
// (docs/benchmarks.md "One controller, 10,000 devices"). Instead the file is indexed by host
// name once, and each session's libssh gets an anonymous in-memory file (/proc/self/fd/N of a
// memfd: nothing touches a disk or outlives the process) holding only the lines that can apply
// to its host, in the file's order: every line naming the host (as "host",
// "[host]:port", or "[host]:22" for port 22), and every line this index cannot rule out (hashed
// names, wildcard or negated patterns, markers). libssh then decides exactly as it would on
// the whole file: a superset of the matching lines in the same order gives the same answer.
class KnownHostsFilter {
 public:
  // The lines of `path` for the host known_hosts calls `name` ("host" or "[host]:port"), in a
  // new in-memory file; it is closed when the returned value goes. A missing `path` gives an
  // empty file (libssh's "unknown host"); an unreadable one an error.
  class Filtered {
   public:
    explicit Filtered(int fd) : fd_(fd) {}
    Filtered(Filtered&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Filtered& operator=(Filtered&&) = delete;
    Filtered(const Filtered&) = delete;
    ~Filtered();
    // A path any open() in this process reads the extract through.
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

   private:
    int fd_;
  };

  // The process's filter (one index per file, kept while the file's size and mtime hold).
  static KnownHostsFilter& shared();

  KnownHostsFilter() = default;
  KnownHostsFilter(const KnownHostsFilter&) = delete;
  KnownHostsFilter& operator=(const KnownHostsFilter&) = delete;

  Expected<Filtered, std::string> for_host(const std::string& path, const std::string& name);

  // Appends `line` (one known_hosts entry) to `path` and to its index, under the lock every
  // reader takes, so that accepting new keys for many devices does not re-read the file per
  // device. False with `error` set when the file cannot be written.
  bool append(const std::string& path, const std::string& line, std::string* error);

  // Lines read from files so far (re-reads included): what a test asserts "read once" with.
  std::size_t lines_read() const;

 private:
  struct Index {
    bool exists = false;
    std::int64_t size = -1;
    std::int64_t mtime_ns = -1;
    std::vector<std::string> lines;
    std::unordered_map<std::string, std::vector<std::size_t>> by_name;
    std::vector<std::size_t> unresolved;  // hashed, patterns, markers: candidates for every host
  };

  Expected<Index*, std::string> current(const std::string& path);
  void add_line(Index& index, std::string line);

  mutable std::mutex mutex_;
  std::map<std::string, Index> indexes_;
  std::size_t lines_read_ = 0;
};

}  // namespace fabgate::ssh
