#include "adapters/git/commit_graph.h"

#include <git2.h>

#include "adapters/git/libgit2_handles.h"

namespace fabgate::git {

using namespace detail;  // libgit2_handles.h

struct CommitGraph::State {
  RepositoryHandle repository;
  std::string shown;  // the folder as given, for messages

  Expected<git_oid, GitFailure> oid_of(const std::string& commit) const {
    git_oid oid;
    if (git_oid_fromstr(&oid, commit.c_str()) != 0)
      return GitFailure{GitFailure::Kind::bad_ref, "git: '" + commit + "' is not a commit id in " +
                                                       shown + ": " + last_git_error()};
    return oid;
  }
};

CommitGraph::CommitGraph(std::unique_ptr<State> state) : state_(std::move(state)) {}
CommitGraph::CommitGraph(CommitGraph&&) noexcept = default;
CommitGraph& CommitGraph::operator=(CommitGraph&&) noexcept = default;
CommitGraph::~CommitGraph() = default;

Expected<CommitGraph, GitFailure> CommitGraph::open(const std::filesystem::path& repo_folder) {
  static const int initialised = git_libgit2_init();
  (void)initialised;
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, repo_folder.c_str(), 0, nullptr) != 0)
    return GitFailure{GitFailure::Kind::not_a_repository,
                      "git: open '" + repo_folder.string() + "': " + last_git_error()};
  auto state = std::make_unique<State>();
  state->repository.reset(raw);
  state->shown = repo_folder.string();
  return CommitGraph(std::move(state));
}

Expected<std::string, GitFailure> CommitGraph::resolve(const std::string& ref) const {
  git_object* raw = nullptr;
  if (git_revparse_single(&raw, state_->repository.get(), ref.c_str()) != 0)
    return GitFailure{GitFailure::Kind::bad_ref, "git: resolve ref '" + ref + "' in " +
                                                     state_->shown + ": " + last_git_error()};
  ObjectHandle object(raw);
  git_object* raw_commit = nullptr;
  if (git_object_peel(&raw_commit, object.get(), GIT_OBJECT_COMMIT) != 0)
    return GitFailure{GitFailure::Kind::bad_ref,
                      "git: ref '" + ref + "' does not name a commit: " + last_git_error()};
  ObjectHandle commit(raw_commit);
  return oid_hex(git_object_id(commit.get()));
}

Expected<std::optional<std::string>, GitFailure> CommitGraph::merge_base(
    const std::string& a, const std::string& b) const {
  auto one = state_->oid_of(a);
  if (!one.ok()) return std::move(one).error();
  auto two = state_->oid_of(b);
  if (!two.ok()) return std::move(two).error();
  git_oid base;
  int code = git_merge_base(&base, state_->repository.get(), &one.value(), &two.value());
  if (code == GIT_ENOTFOUND) {
    git_error_clear();
    return std::optional<std::string>();
  }
  if (code != 0)
    return GitFailure{GitFailure::Kind::read_failed, "git: merge base of " + a.substr(0, 12) +
                                                         " and " + b.substr(0, 12) + ": " +
                                                         last_git_error()};
  return std::optional<std::string>(oid_hex(&base));
}

Expected<bool, GitFailure> CommitGraph::is_ancestor(const std::string& ancestor,
                                                    const std::string& commit) const {
  auto older = state_->oid_of(ancestor);
  if (!older.ok()) return std::move(older).error();
  auto newer = state_->oid_of(commit);
  if (!newer.ok()) return std::move(newer).error();
  if (git_oid_equal(&older.value(), &newer.value())) return true;
  int code = git_graph_descendant_of(state_->repository.get(), &newer.value(), &older.value());
  if (code < 0)
    return GitFailure{GitFailure::Kind::read_failed, "git: is " + ancestor.substr(0, 12) +
                                                         " an ancestor of " + commit.substr(0, 12) +
                                                         ": " + last_git_error()};
  return code == 1;
}

Expected<std::optional<std::string>, GitFailure> CommitGraph::first_parent(
    const std::string& commit) const {
  auto id = state_->oid_of(commit);
  if (!id.ok()) return std::move(id).error();
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, state_->repository.get(), &id.value()) != 0)
    return GitFailure{GitFailure::Kind::read_failed,
                      "git: read commit " + commit.substr(0, 12) + ": " + last_git_error()};
  CommitHandle handle(raw);
  if (git_commit_parentcount(handle.get()) == 0) return std::optional<std::string>();
  return std::optional<std::string>(oid_hex(git_commit_parent_id(handle.get(), 0)));
}

}  // namespace fabgate::git
