#pragma once

// What the libgit2 adapters share (git_repository.cpp, commit_graph.cpp): RAII over libgit2's
// handles, each freed with its own free function, and the text of libgit2's last error.
// Internal to adapters/git.

#include <git2.h>

#include <memory>
#include <string>

namespace fabgate::git::detail {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* handle) const {
    Free(handle);
  }
};
using RepositoryHandle = std::unique_ptr<git_repository, Deleter<git_repository_free>>;
using ObjectHandle = std::unique_ptr<git_object, Deleter<git_object_free>>;
using CommitHandle = std::unique_ptr<git_commit, Deleter<git_commit_free>>;
using TreeHandle = std::unique_ptr<git_tree, Deleter<git_tree_free>>;
using TreeEntryHandle = std::unique_ptr<git_tree_entry, Deleter<git_tree_entry_free>>;
using BlobHandle = std::unique_ptr<git_blob, Deleter<git_blob_free>>;
using ReferenceHandle = std::unique_ptr<git_reference, Deleter<git_reference_free>>;
using RevwalkHandle = std::unique_ptr<git_revwalk, Deleter<git_revwalk_free>>;

// libgit2's last error on this thread, cleared so a later call cannot report it again.
inline std::string last_git_error() {
  const git_error* error = git_error_last();
  std::string message = error && error->message ? error->message : "unknown libgit2 error";
  git_error_clear();
  return message;
}

inline std::string oid_hex(const git_oid* oid) {
  char buffer[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buffer, sizeof buffer, oid);
  return buffer;
}

}  // namespace fabgate::git::detail
