#include "adapters/git/git_repository.h"

#include <git2.h>

#include <algorithm>
#include <optional>
#include <set>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

#include "adapters/git/libgit2_handles.h"

namespace fabgate::git {

using namespace detail;  // libgit2_handles.h

namespace {

void ensure_libgit2_initialised() {
  static const int initialised = [] { return git_libgit2_init(); }();
  (void)initialised;
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "/" + b;
}

bool tree_has_blob(git_tree* tree, const std::string& path) {
  git_tree_entry* raw_entry = nullptr;
  if (git_tree_entry_bypath(&raw_entry, tree, path.c_str()) != 0) {
    git_error_clear();
    return false;
  }
  TreeEntryHandle entry(raw_entry);
  return git_tree_entry_type(entry.get()) == GIT_OBJECT_BLOB;
}

// The nearest folder at or above `folder` (inside the commit) holding `marker`; `folder` itself
// when none does.
std::string enclosing_root(git_tree* commit_tree, const std::string& folder,
                           const std::string& marker) {
  std::string candidate = folder;
  while (true) {
    if (tree_has_blob(commit_tree, join_path(candidate, marker))) return candidate;
    if (candidate.empty()) return folder;
    auto slash = candidate.rfind('/');
    candidate = slash == std::string::npos ? "" : candidate.substr(0, slash);
  }
}

// libgit2 refuses a repository another user owns, as git does (GIT_EOWNER; 1.5 reports it as
// GIT_ENOTFOUND with an unrelated message). Say so, with the owner, instead of the misleading
// "not inside a git repository"; nullopt when the nearest repository above is ours.
std::optional<GitFailure> ownership_failure(const std::filesystem::path& named,
                                            const std::filesystem::path& folder) {
  for (auto at = folder; !at.empty(); at = at.parent_path()) {
    struct stat git_dir {
    }, work_dir{};
    if (::lstat((at / ".git").c_str(), &git_dir) == 0 && ::stat(at.c_str(), &work_dir) == 0) {
      uid_t owner = git_dir.st_uid != ::geteuid() ? git_dir.st_uid : work_dir.st_uid;
      if (owner == ::geteuid()) return std::nullopt;
      git_error_clear();
      return GitFailure{GitFailure::Kind::not_owned,
                        "git: open '" + named.string() + "': the repository " + at.string() +
                            " is owned by uid " + std::to_string(owner) + ", not by you (uid " +
                            std::to_string(::geteuid()) +
                            "); git calls this dubious ownership (if you trust it, add it to "
                            "safe.directory in your git config)"};
    }
    if (at == at.parent_path()) break;
  }
  return std::nullopt;
}

}  // namespace

struct CommitTree::State {
  RepositoryHandle repository;
  TreeHandle root_tree;  // the intent root's tree inside the commit
  std::string intent_root;
  std::filesystem::path work_tree;
  CommitMeta meta;
};

CommitTree::CommitTree(std::unique_ptr<State> state) : state_(std::move(state)) {}
CommitTree::CommitTree(CommitTree&&) noexcept = default;
CommitTree& CommitTree::operator=(CommitTree&&) noexcept = default;
CommitTree::~CommitTree() = default;

Expected<CommitTree, GitFailure> CommitTree::open(const std::filesystem::path& repo_folder,
                                                  const std::string& ref,
                                                  const std::string& root_marker) {
  ensure_libgit2_initialised();
  std::error_code ec;
  auto folder = std::filesystem::weakly_canonical(std::filesystem::absolute(repo_folder), ec);
  if (ec || !std::filesystem::is_directory(folder)) {
    return GitFailure{GitFailure::Kind::not_a_repository,
                      "git: open '" + repo_folder.string() + "': no such directory"};
  }

  git_repository* raw_repository = nullptr;
  if (int code = git_repository_open_ext(&raw_repository, folder.c_str(), 0, nullptr); code != 0) {
    if (auto refused = ownership_failure(repo_folder, folder)) return *refused;
    return GitFailure{GitFailure::Kind::not_a_repository,
                      "git: open '" + repo_folder.string() +
                          "': not inside a git repository (intent must be committed to git)"};
  }
  auto state = std::make_unique<State>();
  state->repository.reset(raw_repository);
  const char* work_dir = git_repository_workdir(raw_repository);
  if (!work_dir) {
    return GitFailure{GitFailure::Kind::not_a_repository,
                      "git: open '" + repo_folder.string() +
                          "': bare repositories are not supported; use a clone with a work tree"};
  }
  state->work_tree = std::filesystem::weakly_canonical(work_dir, ec);
  auto relative = folder.lexically_relative(state->work_tree).generic_string();
  state->intent_root = (relative == ".") ? "" : relative;

  git_object* raw_object = nullptr;
  if (git_revparse_single(&raw_object, raw_repository, ref.c_str()) != 0) {
    return GitFailure{
        GitFailure::Kind::bad_ref,
        "git: resolve ref '" + ref + "' in " + state->work_tree.string() + ": " + last_git_error()};
  }
  ObjectHandle object(raw_object);
  git_object* raw_commit = nullptr;
  if (git_object_peel(&raw_commit, object.get(), GIT_OBJECT_COMMIT) != 0) {
    return GitFailure{GitFailure::Kind::bad_ref,
                      "git: ref '" + ref + "' does not name a commit: " + last_git_error()};
  }
  ObjectHandle commit_object(raw_commit);
  auto* commit = reinterpret_cast<git_commit*>(commit_object.get());

  const git_oid* commit_id = git_commit_id(commit);
  state->meta.id = oid_hex(commit_id);
  if (const git_signature* author = git_commit_author(commit)) {
    state->meta.author_name = author->name ? author->name : "";
    state->meta.author_email = author->email ? author->email : "";
  }
  if (const git_signature* committer = git_commit_committer(commit)) {
    state->meta.committer_name = committer->name ? committer->name : "";
    state->meta.committer_email = committer->email ? committer->email : "";
  }
  state->meta.time = TimePoint{std::chrono::seconds{git_commit_time(commit)}};
  if (const char* summary = git_commit_summary(commit)) state->meta.summary = summary;
  git_buf signature = GIT_BUF_INIT;
  git_buf signed_data = GIT_BUF_INIT;
  state->meta.has_signature =
      git_commit_extract_signature(&signature, &signed_data, raw_repository,
                                   const_cast<git_oid*>(commit_id), nullptr) == 0;
  if (state->meta.has_signature) {
    state->meta.signature.assign(signature.ptr, signature.size);
    state->meta.signed_data.assign(signed_data.ptr, signed_data.size);
  }
  git_buf_dispose(&signature);
  git_buf_dispose(&signed_data);
  git_error_clear();

  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, commit) != 0) {
    return GitFailure{GitFailure::Kind::read_failed,
                      "git: read tree of commit " + state->meta.id + ": " + last_git_error()};
  }
  TreeHandle commit_tree(raw_tree);
  if (!root_marker.empty())
    state->intent_root = enclosing_root(commit_tree.get(), state->intent_root, root_marker);
  if (state->intent_root.empty()) {
    state->root_tree = std::move(commit_tree);
  } else {
    git_tree_entry* raw_entry = nullptr;
    if (git_tree_entry_bypath(&raw_entry, commit_tree.get(), state->intent_root.c_str()) != 0) {
      return GitFailure{GitFailure::Kind::no_intent_root,
                        "git: folder '" + state->intent_root + "' does not exist in commit " +
                            state->meta.id.substr(0, 12) + " (is it committed?)"};
    }
    TreeEntryHandle entry(raw_entry);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) {
      return GitFailure{GitFailure::Kind::no_intent_root, "git: '" + state->intent_root +
                                                              "' is not a folder in commit " +
                                                              state->meta.id.substr(0, 12)};
    }
    git_tree* raw_subtree = nullptr;
    if (git_tree_lookup(&raw_subtree, raw_repository, git_tree_entry_id(entry.get())) != 0) {
      return GitFailure{GitFailure::Kind::read_failed,
                        "git: read folder '" + state->intent_root + "': " + last_git_error()};
    }
    state->root_tree.reset(raw_subtree);
  }
  return CommitTree(std::move(state));
}

const CommitMeta& CommitTree::commit() const {
  return state_->meta;
}
const std::string& CommitTree::intent_root() const {
  return state_->intent_root;
}
std::filesystem::path CommitTree::work_tree() const {
  return state_->work_tree;
}

std::optional<std::string> CommitTree::read(const std::string& path) const {
  git_tree_entry* raw_entry = nullptr;
  if (git_tree_entry_bypath(&raw_entry, state_->root_tree.get(), path.c_str()) != 0) {
    git_error_clear();
    return std::nullopt;
  }
  TreeEntryHandle entry(raw_entry);
  if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return std::nullopt;
  git_blob* raw_blob = nullptr;
  if (git_blob_lookup(&raw_blob, state_->repository.get(), git_tree_entry_id(entry.get())) != 0) {
    git_error_clear();
    return std::nullopt;
  }
  BlobHandle blob(raw_blob);
  const char* content = static_cast<const char*>(git_blob_rawcontent(blob.get()));
  return std::string(content, static_cast<std::size_t>(git_blob_rawsize(blob.get())));
}

namespace {
struct WalkPayload {
  std::string prefix;
  std::vector<std::string>* files;
};

int collect_blob(const char* root, const git_tree_entry* entry, void* payload) {
  auto* walk = static_cast<WalkPayload*>(payload);
  if (git_tree_entry_type(entry) == GIT_OBJECT_BLOB) {
    walk->files->push_back(join_path(walk->prefix, std::string(root) + git_tree_entry_name(entry)));
  }
  return 0;
}
}  // namespace

std::vector<std::string> CommitTree::list(const std::string& directory) const {
  std::vector<std::string> files;
  git_tree* tree = state_->root_tree.get();
  TreeHandle subtree;
  std::string prefix = directory;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (!prefix.empty()) {
    git_tree_entry* raw_entry = nullptr;
    if (git_tree_entry_bypath(&raw_entry, tree, prefix.c_str()) != 0) {
      git_error_clear();
      return files;
    }
    TreeEntryHandle entry(raw_entry);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) return files;
    git_tree* raw_subtree = nullptr;
    if (git_tree_lookup(&raw_subtree, state_->repository.get(), git_tree_entry_id(entry.get())) !=
        0) {
      git_error_clear();
      return files;
    }
    subtree.reset(raw_subtree);
    tree = subtree.get();
  }
  WalkPayload payload{prefix, &files};
  git_tree_walk(tree, GIT_TREEWALK_PRE, collect_blob, &payload);
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<WorkTreeDifference> CommitTree::work_tree_differences(
    const std::vector<std::string>& intent_paths) const {
  std::vector<WorkTreeDifference> differences;
  std::set<std::string> committed;
  git_repository* repository = state_->repository.get();
  const auto root_on_disk = state_->work_tree / state_->intent_root;

  for (const auto& intent_path : intent_paths) {
    std::vector<std::string> files = list(intent_path);
    if (files.empty() && read(intent_path)) files.push_back(intent_path);
    for (const auto& file : files) {
      committed.insert(file);
      git_tree_entry* raw_entry = nullptr;
      if (git_tree_entry_bypath(&raw_entry, state_->root_tree.get(), file.c_str()) != 0) continue;
      TreeEntryHandle entry(raw_entry);
      auto on_disk = root_on_disk / file;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(on_disk, ec)) {
        differences.push_back({WorkTreeDifference::Kind::deleted, file});
        continue;
      }
      git_oid disk_id;
      std::string repo_relative = join_path(state_->intent_root, file);
      if (git_repository_hashfile(&disk_id, repository, on_disk.c_str(), GIT_OBJECT_BLOB,
                                  repo_relative.c_str()) != 0 ||
          !git_oid_equal(&disk_id, git_tree_entry_id(entry.get()))) {
        differences.push_back({WorkTreeDifference::Kind::modified, file});
      }
    }
  }

  // Files on disk under the intent paths that the commit does not have.
  for (const auto& intent_path : intent_paths) {
    auto start = root_on_disk / intent_path;
    std::error_code ec;
    std::vector<std::filesystem::path> candidates;
    if (std::filesystem::is_regular_file(start, ec)) {
      candidates.push_back(start);
    } else if (std::filesystem::is_directory(start, ec)) {
      for (auto it = std::filesystem::recursive_directory_iterator(start, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) candidates.push_back(it->path());
      }
    }
    for (const auto& candidate : candidates) {
      std::string file = candidate.lexically_relative(root_on_disk).generic_string();
      if (committed.count(file)) continue;
      int ignored = 0;
      std::string repo_relative = join_path(state_->intent_root, file);
      if (git_ignore_path_is_ignored(&ignored, repository, repo_relative.c_str()) == 0 && ignored)
        continue;
      differences.push_back({WorkTreeDifference::Kind::untracked, file});
    }
  }
  std::sort(differences.begin(), differences.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  differences.erase(std::unique(differences.begin(), differences.end(),
                                [](const auto& a, const auto& b) { return a.path == b.path; }),
                    differences.end());
  return differences;
}

std::string to_string(WorkTreeDifference::Kind kind) {
  switch (kind) {
    case WorkTreeDifference::Kind::modified:
      return "modified";
    case WorkTreeDifference::Kind::deleted:
      return "deleted";
    case WorkTreeDifference::Kind::untracked:
      return "not committed";
  }
  return "changed";
}

}  // namespace fabgate::git
