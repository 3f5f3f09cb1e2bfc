#pragma once

// Questions about a repository's history that the approval gate asks to find the trusted ref
// its policy is read from (docs/approvals.md "Where the policy comes from"): does a ref exist,
// which commit is the merge base of two, is one an ancestor of another, what is a commit's
// first parent.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "adapters/core/result.h"
#include "adapters/git/git_repository.h"

namespace fabgate::git {

class CommitGraph {
 public:
  static Expected<CommitGraph, GitFailure> open(const std::filesystem::path& repo_folder);
  CommitGraph(CommitGraph&&) noexcept;
  CommitGraph& operator=(CommitGraph&&) noexcept;
  ~CommitGraph();

  // The full id of the commit `ref` names (a branch, tag, id or any revision git accepts);
  // bad_ref when it names none.
  Expected<std::string, GitFailure> resolve(const std::string& ref) const;
  // The best common ancestor of two commits; nullopt when their histories are unrelated.
  Expected<std::optional<std::string>, GitFailure> merge_base(const std::string& a,
                                                              const std::string& b) const;
  // True when `ancestor` is `commit` or reachable from it.
  Expected<bool, GitFailure> is_ancestor(const std::string& ancestor,
                                         const std::string& commit) const;
  // The first parent of `commit`; nullopt for a root commit.
  Expected<std::optional<std::string>, GitFailure> first_parent(const std::string& commit) const;

 private:
  struct State;
  explicit CommitGraph(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace fabgate::git
