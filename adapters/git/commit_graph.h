#pragma once

// Questions about a repository's history that the approval gate asks to find the trusted ref
// its policy is read from (docs/approvals.md "Where the policy comes from"): does a ref exist,
// which commit is the merge base of two, is one an ancestor of another, what is a commit's
// first parent.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  // The commit a reference names by its full name ("refs/heads/main", "refs/remotes/origin/main",
  // "refs/tags/v1"), peeled to a commit, with no revision shorthand: "main" is not a full name
  // and is refused (bad_ref), so a tag can never stand in for a branch of the same name. nullopt
  // when no such reference exists.
  Expected<std::optional<std::string>, GitFailure> resolve_full_ref(const std::string& name) const;

  // Who made one commit, as the self-approval check reads them.
  struct CommitPeople {
    std::string id;
    std::string author_email;
    std::string committer_email;
  };
  // The commits reachable from `tip` but not from `hidden` (empty: none hidden), newest first,
  // at most `limit`; `truncated` is set when there were more. `git log hidden..tip`.
  struct CommitRange {
    std::vector<CommitPeople> commits;
    bool truncated = false;
  };
  Expected<CommitRange, GitFailure> commits_between(const std::string& hidden,
                                                    const std::string& tip,
                                                    std::size_t limit) const;

 private:
  struct State;
  explicit CommitGraph(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace fabgate::git
