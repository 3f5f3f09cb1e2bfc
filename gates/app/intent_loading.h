#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "adapters/core/result.h"
#include "adapters/git/git_repository.h"
#include "gates/app/console.h"
#include "gates/app/options.h"
#include "gates/intent/loader.h"
#include "gates/intent/model.h"

namespace fabgate::app {

// The intent as read from --repo at --ref, with every validation problem and every intent file
// whose work-tree content differs from the commit.
struct LoadedIntent {
  intent::CommitInfo commit;
  std::string intent_root;
  std::filesystem::path intent_dir;  // the intent root in the work tree (for relative paths)
  intent::LoadOutcome outcome;
  std::vector<std::string> uncommitted;  // "examples/intent/changes/x.yaml (modified)"
  std::vector<std::string> files;        // intent files at the commit, as diagnostics name them
  std::string commit_signature;          // the commit's signature header ("" when unsigned)
  std::string commit_signed_data;        // what that signature signs
};

// Opens the repository and reads the intent from the commit (never the work tree). Only an
// unusable repository or ref is an Error here; validation problems are in outcome.
Result<LoadedIntent> read_intent(const CommonOptions& options);
// The same from `files` (the commit's tree, or a tree that serves some of its files from
// elsewhere: trusted_policy.h), with commit facts and work-tree differences from `commit_tree`.
LoadedIntent read_intent_from(const git::FileTree& files, const git::CommitTree& commit_tree);

// read_intent, then the fleet settings from the trusted ref (trusted_policy.h; no trusted ref:
// an Error, exit 2), then: invalid intent -> invalid_input listing every problem; work-tree
// differences are printed as warnings. For commands that only read (snapshot, status).
Result<intent::IntentRepository> load_intent(const CommonOptions& options, Console& console);
// load_intent, keeping where the intent lives (intent_dir: paths fabgate.yaml gives relative to
// it) and which commit it is; outcome.repository is set.
Result<LoadedIntent> load_valid_intent(const CommonOptions& options, Console& console);

// A path fabgate.yaml gives (~ expanded), made absolute against the intent folder.
std::filesystem::path resolve_in_intent(const std::filesystem::path& intent_dir,
                                        const std::string& path);

// Warns (console.warn) about every lab-only setting that weakens security, one line per device:
// gnmi lab_insecure_plaintext_credentials (docs/security.md "gNMI credentials").
void warn_lab_only_settings(const intent::IntentRepository& repository, Console& console);

// The reusable "what was reviewed is what runs" check: plan and apply refuse (invalid input)
// when an intent file in the work tree differs from the commit.
Status require_committed(const LoadedIntent& loaded);

}  // namespace fabgate::app
