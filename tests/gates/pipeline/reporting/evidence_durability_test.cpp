// The evidence bundle's folders are durable: every folder the bundle creates has its name
// fsynced in the folder that holds it, so a crash after a file inside was fsynced cannot lose
// the bundle (and with it the journal recover needs).
//
// This binary replaces fsync(2) for the whole process (a definition in the executable wins
// over libc's) with one that notes which path each call made durable and then makes the real
// system call. It is its own test binary so that no other suite runs with that replacement.

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gates/pipeline/reporting/evidence.h"
#include "tests/support/temp_dir.h"

namespace {

std::mutex synced_mutex;
std::vector<std::string> synced_paths;

std::vector<std::string> take_synced() {
  std::lock_guard<std::mutex> lock(synced_mutex);
  return std::exchange(synced_paths, {});
}

}  // namespace

extern "C" int fsync(int fd) {
  char target[4096];
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  if (n > 0) {
    std::lock_guard<std::mutex> lock(synced_mutex);
    synced_paths.emplace_back(target, static_cast<std::size_t>(n));
  }
  return static_cast<int>(::syscall(SYS_fsync, fd));
}

namespace fabgate::pipeline {
namespace {

bool was_synced(const std::vector<std::string>& synced, const std::filesystem::path& dir) {
  auto wanted = std::filesystem::canonical(dir).string();
  return std::find(synced.begin(), synced.end(), wanted) != synced.end();
}

TEST(EvidenceDurability, NewBundleFsyncsEveryFolderThatGainedANewFolder) {
  // Given an evidence root that does not exist yet, then creating a bundle in it fsyncs the
  // folder holding the root, the root (holding the change folder) and the change folder
  // (holding the run folder), besides the run folder that holds the journal.
  testing::TempDir top("fabgate-durable");
  auto root = std::filesystem::path(top.path()) / "evidence";
  take_synced();
  auto bundle = EvidenceBundle::create(root, "drain", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  auto synced = take_synced();
  auto dir = (*bundle)->dir();
  EXPECT_TRUE(was_synced(synced, top.path())) << "the folder holding evidence/";
  EXPECT_TRUE(was_synced(synced, root)) << "evidence/, holding drain/";
  EXPECT_TRUE(was_synced(synced, root / "drain")) << "drain/, holding the run folder";
  EXPECT_TRUE(was_synced(synced, dir)) << "the run folder, holding journal.jsonl";
}

TEST(EvidenceDurability, FileInANewSubfolderAlsoFsyncsTheBundleFolder) {
  // Given a bundle, then writing snapshots/pre.json (recover's baseline) fsyncs the bundle
  // folder that gained snapshots/, not only snapshots/ itself.
  testing::TempDir top("fabgate-durable");
  auto bundle = EvidenceBundle::create(top.path(), "drain", now_utc(), "run1", Redactor{});
  ASSERT_TRUE(bundle.ok()) << bundle.error().message;
  take_synced();
  ASSERT_TRUE((*bundle)->write("snapshots/pre.json", "{}\n").ok());
  auto synced = take_synced();
  EXPECT_TRUE(was_synced(synced, (*bundle)->dir() / "snapshots"));
  EXPECT_TRUE(was_synced(synced, (*bundle)->dir())) << "the bundle folder, holding snapshots/";
}

}  // namespace
}  // namespace fabgate::pipeline
