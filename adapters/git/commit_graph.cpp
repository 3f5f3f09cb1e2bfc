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

Expected<std::optional<std::string>, GitFailure> CommitGraph::resolve_full_ref(
    const std::string& name) const {
  if (name.rfind("refs/", 0) != 0)
    return GitFailure{GitFailure::Kind::bad_ref,
                      "git: '" + name +
                          "' is not a full reference name (refs/heads/..., "
                          "refs/remotes/... or refs/tags/...)"};
  git_reference* raw = nullptr;
  int code = git_reference_lookup(&raw, state_->repository.get(), name.c_str());
  if (code == GIT_ENOTFOUND) {
    git_error_clear();
    return std::optional<std::string>();
  }
  if (code != 0)
    return GitFailure{GitFailure::Kind::bad_ref, "git: look up reference '" + name + "' in " +
                                                     state_->shown + ": " + last_git_error()};
  ReferenceHandle reference(raw);
  git_object* raw_commit = nullptr;
  if (git_reference_peel(&raw_commit, reference.get(), GIT_OBJECT_COMMIT) != 0)
    return GitFailure{GitFailure::Kind::bad_ref,
                      "git: reference '" + name + "' does not name a commit: " + last_git_error()};
  ObjectHandle commit(raw_commit);
  return std::optional<std::string>(oid_hex(git_object_id(commit.get())));
}

Expected<CommitGraph::CommitRange, GitFailure> CommitGraph::commits_between(
    const std::string& hidden, const std::string& tip, std::size_t limit) const {
  auto failed = [&](const std::string& what) {
    return GitFailure{GitFailure::Kind::read_failed, "git: commits " + hidden.substr(0, 12) + ".." +
                                                         tip.substr(0, 12) + ": " + what + ": " +
                                                         last_git_error()};
  };
  auto newest = state_->oid_of(tip);
  if (!newest.ok()) return std::move(newest).error();
  git_revwalk* raw_walk = nullptr;
  if (git_revwalk_new(&raw_walk, state_->repository.get()) != 0) return failed("walk");
  RevwalkHandle walk(raw_walk);
  if (git_revwalk_push(walk.get(), &newest.value()) != 0) return failed("start");
  if (!hidden.empty()) {
    auto oldest = state_->oid_of(hidden);
    if (!oldest.ok()) return std::move(oldest).error();
    if (git_revwalk_hide(walk.get(), &oldest.value()) != 0) return failed("hide");
  }
  CommitRange range;
  git_oid oid;
  int code = 0;
  while ((code = git_revwalk_next(&oid, walk.get())) == 0) {
    if (range.commits.size() >= limit) {
      range.truncated = true;
      break;
    }
    git_commit* raw = nullptr;
    if (git_commit_lookup(&raw, state_->repository.get(), &oid) != 0) return failed("read");
    CommitHandle commit(raw);
    CommitPeople people;
    people.id = oid_hex(&oid);
    if (const git_signature* author = git_commit_author(commit.get()); author && author->email)
      people.author_email = author->email;
    if (const git_signature* committer = git_commit_committer(commit.get());
        committer && committer->email)
      people.committer_email = committer->email;
    range.commits.push_back(std::move(people));
  }
  if (code != 0 && code != GIT_ITEROVER && !range.truncated) return failed("walk");
  git_error_clear();
  return range;
}

}  // namespace fabgate::git
