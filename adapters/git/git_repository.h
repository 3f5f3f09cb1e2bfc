#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/core/time.h"
#include "adapters/git/file_tree.h"

namespace fabgate::git {

struct GitFailure {
  enum class Kind {
    not_a_repository,  // --repo is not inside a git work tree
    not_owned,         // the repository belongs to another user (git's "dubious ownership")
    bad_ref,           // --ref does not resolve to a commit
    read_failed,       // an object could not be read
    no_intent_root,    // the intent folder is not in that commit
  };
  Kind kind;
  std::string message;  // names the operation and the path or ref
};

struct CommitMeta {
  std::string id;
  std::string author_name;
  std::string author_email;
  std::string committer_name;
  std::string committer_email;
  TimePoint time;
  std::string summary;
  bool has_signature = false;  // gpgsig/ssh signature header present (not verified here)
  std::string signature;       // the gpgsig header's value ("-----BEGIN SSH SIGNATURE-----...")
  std::string signed_data;     // the commit object without that header: what was signed
};

// How a file of the intent root in the work tree differs from the commit being read.
struct WorkTreeDifference {
  enum class Kind { modified, deleted, untracked };
  Kind kind;
  std::string path;  // relative to the intent root
};

// One commit of a repository, opened for reading the intent root's files. The intent root is
// the folder named by --repo, relative to the work tree's top; intent often lives in a folder
// of a monorepo.
class CommitTree final : public FileTree {
 public:
  // With `root_marker` set ("fabgate.yaml") and no such file in the named folder at the commit,
  // the intent root is the nearest enclosing folder that has one, so --repo may name any folder
  // inside the intent; when none has it, the folder named (and the caller reports it missing).
  static Expected<CommitTree, GitFailure> open(const std::filesystem::path& repo_folder,
                                               const std::string& ref,
                                               const std::string& root_marker = "");
  CommitTree(CommitTree&&) noexcept;
  CommitTree& operator=(CommitTree&&) noexcept;
  ~CommitTree() override;

  const CommitMeta& commit() const;
  // "" when --repo is the top of the work tree, else e.g. "examples/intent".
  const std::string& intent_root() const;
  std::filesystem::path work_tree() const;

  std::optional<std::string> read(const std::string& path) const override;
  std::vector<std::string> list(const std::string& directory) const override;

  // Files under the given intent paths (files or folders, relative to the intent root) whose
  // work-tree content differs from the commit: edited, deleted, or present but not committed.
  // Git-ignored files are skipped. plan and apply refuse when this is not empty.
  std::vector<WorkTreeDifference> work_tree_differences(
      const std::vector<std::string>& intent_paths) const;

 private:
  struct State;
  explicit CommitTree(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

std::string to_string(WorkTreeDifference::Kind kind);

}  // namespace fabgate::git
