#include "gates/app/intent_loading.h"

#include "adapters/core/text.h"

#include "adapters/git/git_repository.h"
#include "gates/app/trusted_policy.h"
#include "gates/intent/loader.h"

namespace fabgate::app {

intent::CommitInfo to_commit_info(const git::CommitMeta& meta) {
  intent::CommitInfo info;
  info.id = meta.id;
  info.author_name = meta.author_name;
  info.author_email = meta.author_email;
  info.committer_name = meta.committer_name;
  info.committer_email = meta.committer_email;
  info.time = meta.time;
  info.summary = meta.summary;
  info.signed_commit = meta.has_signature;
  return info;
}

Result<LoadedIntent> read_intent(const CommonOptions& options) {
  auto tree = git::CommitTree::open(options.repo, options.ref, "fabgate.yaml");
  if (!tree.ok()) return Error::invalid_input(tree.error().message);
  return read_intent_from(tree.value(), tree.value());
}

LoadedIntent read_intent_from(const git::FileTree& files, const git::CommitTree& commit_tree) {
  const git::CommitTree* tree = &commit_tree;
  LoadedIntent loaded;
  loaded.outcome =
      intent::load_intent_repository(files, to_commit_info(tree->commit()), tree->intent_root());
  loaded.commit = to_commit_info(tree->commit());
  loaded.commit_signature = tree->commit().signature;
  loaded.commit_signed_data = tree->commit().signed_data;
  loaded.intent_root = tree->intent_root();
  loaded.intent_dir = tree->work_tree() / tree->intent_root();
  std::vector<std::string> paths = intent::intent_paths(
      loaded.outcome.repository ? loaded.outcome.repository->settings : intent::Settings{});
  auto shown_path = [&](const std::string& path) {
    return tree->intent_root().empty() ? path : tree->intent_root() + "/" + path;
  };
  for (const auto& path : paths) {
    if (files.read(path)) {
      loaded.files.push_back(shown_path(path));
      continue;
    }
    for (const auto& file : files.list(path)) loaded.files.push_back(shown_path(file));
  }
  for (const auto& difference : tree->work_tree_differences(paths)) {
    std::string shown =
        tree->intent_root().empty() ? difference.path : tree->intent_root() + "/" + difference.path;
    loaded.uncommitted.push_back(shown + " (" + git::to_string(difference.kind) + ")");
  }
  return loaded;
}

Result<LoadedIntent> load_valid_intent(const CommonOptions& options, Console& console) {
  auto loaded = read_intent(options);
  if (!loaded.ok()) return std::move(loaded).error();
  // snapshot and status reach devices and the coordination store too: with the fleet
  // settings of the trusted ref, never the commit's own (trusted_policy.h, docs/security.md).
  if (loaded->outcome.diagnostics.empty()) {
    auto trusted = read_trusted_policy(options, loaded.value(), nullptr);
    if (!trusted.ok()) return std::move(trusted).error();
    auto under_trusted = read_intent_under_trusted_ref(options, trusted.value());
    if (!under_trusted.ok()) return std::move(under_trusted).error();
    loaded = std::move(under_trusted).value().take();
    if (loaded->outcome.diagnostics.empty())
      if (auto inside = refuse_fleet_files_in_work_tree(loaded.value()); !inside.ok())
        return std::move(inside).error();
  }
  if (!loaded->outcome.diagnostics.empty()) {
    return Error::invalid_input("intent at " + loaded->commit.id.substr(0, 12) + " is invalid (" +
                                    std::to_string(loaded->outcome.diagnostics.size()) +
                                    " problems)",
                                loaded->outcome.diagnostics.lines());
  }
  for (const auto& file : loaded->uncommitted)
    console.warn("work tree differs from commit " + loaded->commit.id.substr(0, 12) + ": " + file);
  warn_lab_only_settings(*loaded->outcome.repository, console);
  return loaded;
}

Result<intent::IntentRepository> load_intent(const CommonOptions& options, Console& console) {
  auto loaded = load_valid_intent(options, console);
  if (!loaded.ok()) return std::move(loaded).error();
  return std::move(*loaded->outcome.repository);
}

void warn_lab_only_settings(const intent::IntentRepository& repository, Console& console) {
  for (const auto& line : intent::lab_only_settings(repository.inventory)) console.warn(line);
}

Status require_committed(const LoadedIntent& loaded) {
  if (loaded.uncommitted.empty()) return Ok{};
  return Error::invalid_input("intent files in the work tree differ from commit " +
                                  loaded.commit.id.substr(0, 12) +
                                  "; fabgate runs exactly what was committed and reviewed",
                              loaded.uncommitted);
}

std::filesystem::path resolve_in_intent(const std::filesystem::path& intent_dir,
                                        const std::string& path) {
  std::filesystem::path expanded = expand_home(path);
  return expanded.is_absolute() ? expanded : intent_dir / expanded;
}

}  // namespace fabgate::app
