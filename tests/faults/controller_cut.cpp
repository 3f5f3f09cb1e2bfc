#include "tests/faults/controller_cut.h"

#include <signal.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/shell.h"

namespace fabgate::faults {
namespace {

using testing::run_shell;
using testing::shell_quoted;

constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC

// Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on a unified system, its `unified`
// folder on a hybrid one; empty when neither.
std::string cgroup2_hierarchy() {
  for (const char* path : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct statfs info {};
    if (::statfs(path, &info) == 0 && info.f_type == kCgroup2Magic) return path;
  }
  return "";
}

bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Removes the tables and cgroups of test processes that are gone.
void sweep_dead(const std::string& hierarchy) {
  const std::regex table("^table inet fgfault_([0-9]+)$");
  std::istringstream lines(run_shell("nft list tables 2>/dev/null").output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, table) && gone(std::stoi(match[1].str())))
      (void)run_shell("nft delete table inet fgfault_" + match[1].str());
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(hierarchy, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("fgfault-", 0) == 0 && gone(std::stoi(name.substr(8))))
      (void)run_shell("rmdir " + shell_quoted(entry.path().string()));
  }
}

std::string move(pid_t pid, const std::string& group) {
  std::ofstream procs(group + "/cgroup.procs");
  procs << pid << std::flush;
  return procs ? "" : "cannot move pid " + std::to_string(pid) + " into " + group;
}

}  // namespace

std::optional<std::string> ControllerCut::unavailable() {
  if (::geteuid() != 0) return "not root: a cgroup and an nftables rule need CAP_NET_ADMIN";
  if (run_shell("command -v nft").exit_code != 0)
    return "`nft` is missing: scripts/bootstrap --tests installs nftables";
  if (cgroup2_hierarchy().empty()) return "no cgroup v2 hierarchy at /sys/fs/cgroup(/unified)";
  return std::nullopt;
}

ControllerCut::ControllerCut(const std::vector<int>& etcd_client_ports) {
  if (auto why = unavailable()) {
    failure_ = *why;
    return;
  }
  hierarchy_ = cgroup2_hierarchy();
  sweep_dead(hierarchy_);
  const std::string id = std::to_string(::getpid());
  group_ = hierarchy_ + "/fgfault-" + id;
  table_ = "fgfault_" + id;
  std::error_code error;
  std::filesystem::create_directory(group_, error);
  if (error) {
    failure_ = "cannot create " + group_ + ": " + error.message();
    return;
  }
  std::string ports;
  for (int port : etcd_client_ports) ports += (ports.empty() ? "" : ", ") + std::to_string(port);
  // nft names the cgroup by its path under /sys/fs/cgroup, and its level is its depth in the
  // v2 hierarchy (1: a child of the root).
  const std::string path = std::filesystem::path(group_).lexically_relative("/sys/fs/cgroup");
  auto made = run_shell("nft add table inet " + table_ + " && nft add chain inet " + table_ +
                        " out '{ type filter hook output priority 0; }' && nft add rule inet " +
                        table_ + " out socket cgroupv2 level 1 '\"" + path +
                        "\"' tcp dport '{ " + ports + " }' drop 2>&1");
  if (made.exit_code != 0) failure_ = "nft: " + made.output;
}

ControllerCut::~ControllerCut() {
  if (!table_.empty()) (void)run_shell("nft delete table inet " + table_ + " 2>/dev/null");
  if (group_.empty()) return;
  // Processes still inside (a cut controller the test could not heal) go back to the root.
  std::ifstream procs(group_ + "/cgroup.procs");
  for (pid_t pid; procs >> pid;) (void)move(pid, hierarchy_);
  std::error_code error;
  std::filesystem::remove(group_, error);
}

std::string ControllerCut::cut(pid_t pid) const {
  return failure_.empty() ? move(pid, group_) : failure_;
}

std::string ControllerCut::heal(pid_t pid) const {
  return failure_.empty() ? move(pid, hierarchy_) : failure_;
}

}  // namespace fabgate::faults
