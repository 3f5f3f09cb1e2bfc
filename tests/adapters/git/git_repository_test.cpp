#include "adapters/git/git_repository.h"

#include <gtest/gtest.h>

#include "tests/support/git_repo.h"

namespace fabgate::git {
namespace {

using fabgate::testing::GitRepo;
using fabgate::testing::TempDir;

TEST(CommitTree, ReadsTheCommitNotTheWorkTree) {
  // Given a committed file later edited on disk, then fabgate reads the committed content.
  GitRepo repo;
  repo.write("fabgate.yaml", "version: 1\n");
  repo.commit_all("initial");
  repo.write("fabgate.yaml", "version: 2\n");
  auto tree = CommitTree::open(repo.path(), "HEAD");
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  EXPECT_EQ(tree->read("fabgate.yaml"), "version: 1\n");
  EXPECT_EQ(tree->commit().id, repo.head());
  EXPECT_EQ(tree->commit().author_name, "Test Author");
  EXPECT_EQ(tree->commit().author_email, "author@example.net");
  EXPECT_EQ(tree->commit().summary, "initial");
  EXPECT_FALSE(tree->commit().has_signature);
}

TEST(CommitTree, OlderRefsAreReadable) {
  GitRepo repo;
  repo.write("a.yaml", "one\n");
  repo.commit_all("one");
  repo.write("a.yaml", "two\n");
  repo.commit_all("two");
  auto tree = CommitTree::open(repo.path(), "HEAD~1");
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->read("a.yaml"), "one\n");
}

TEST(CommitTree, WorkTreeDifferencesNameEditedDeletedAndUncommittedFiles) {
  // Given an edited inventory, a deleted change, a new uncommitted change and an ignored file,
  // then exactly the first three are reported.
  GitRepo repo;
  repo.write(".gitignore", "changes/*.swp\n");
  repo.write("fabgate.yaml", "version: 1\n");
  repo.write("inventory.yaml", "devices: {}\n");
  repo.write("changes/a.yaml", "id: a\n");
  repo.write("changes/b.yaml", "id: b\n");
  repo.commit_all("initial");
  repo.write("inventory.yaml", "devices: {x: {}}\n");
  std::filesystem::remove(repo.file("changes/b.yaml"));
  repo.write("changes/c.yaml", "id: c\n");
  repo.write("changes/.a.yaml.swp", "junk");  // ignored by .gitignore: not intent
  repo.write("changes/a.yaml.swp", "junk");
  auto tree = CommitTree::open(repo.path(), "HEAD");
  ASSERT_TRUE(tree.ok());
  auto differences =
      tree->work_tree_differences({"fabgate.yaml", "inventory.yaml", "changes", "policies"});
  std::vector<std::string> seen;
  for (const auto& d : differences) seen.push_back(d.path + ":" + to_string(d.kind));
  EXPECT_EQ(seen,
            (std::vector<std::string>{"changes/b.yaml:deleted", "changes/c.yaml:not committed",
                                      "inventory.yaml:modified"}));
}

TEST(CommitTree, CleanWorkTreeHasNoDifferences) {
  GitRepo repo;
  repo.write("fabgate.yaml", "version: 1\n");
  repo.write("changes/a.yaml", "id: a\n");
  repo.commit_all("initial");
  auto tree = CommitTree::open(repo.path(), "HEAD");
  ASSERT_TRUE(tree.ok());
  EXPECT_TRUE(tree->work_tree_differences({"fabgate.yaml", "changes"}).empty());
}

TEST(CommitTree, AFolderInsideTheRepositoryIsTheIntentRoot) {
  // Given intent in net/intent of a monorepo, then paths are relative to that folder.
  GitRepo repo;
  repo.write("README", "monorepo\n");
  repo.write("net/intent/fabgate.yaml", "version: 1\n");
  repo.write("net/intent/changes/x.yaml", "id: x\n");
  repo.commit_all("initial");
  auto tree = CommitTree::open(repo.file("net/intent"), "HEAD");
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  EXPECT_EQ(tree->intent_root(), "net/intent");
  EXPECT_EQ(tree->read("fabgate.yaml"), "version: 1\n");
  EXPECT_EQ(tree->list("changes"), std::vector<std::string>{"changes/x.yaml"});
  EXPECT_FALSE(tree->read("README"));
}

TEST(CommitTree, UncommittedIntentFolderIsAClearError) {
  GitRepo repo;
  repo.write("README", "x\n");
  repo.commit_all("initial");
  repo.write("net/intent/fabgate.yaml", "version: 1\n");
  auto tree = CommitTree::open(repo.file("net/intent"), "HEAD");
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.error().message.find("'net/intent' does not exist in commit"), std::string::npos);
}

TEST(CommitTree, UnknownRefIsABadRef) {
  GitRepo repo;
  repo.write("a", "x");
  repo.commit_all("initial");
  auto tree = CommitTree::open(repo.path(), "no-such-branch");
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.error().kind, GitFailure::Kind::bad_ref);
  EXPECT_NE(tree.error().message.find("no-such-branch"), std::string::npos);
}

TEST(CommitTree, AFolderOutsideGitIsNotARepository) {
  TempDir plain;
  auto tree = CommitTree::open(plain.path(), "HEAD");
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.error().kind, GitFailure::Kind::not_a_repository);
  auto missing = CommitTree::open(plain.file("nope"), "HEAD");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such directory"), std::string::npos);
}

TEST(CommitTree, ARepositoryWithoutCommitsHasNoHead) {
  GitRepo repo;
  auto tree = CommitTree::open(repo.path(), "HEAD");
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.error().kind, GitFailure::Kind::bad_ref);
}

TEST(CommitTree, ListsFilesRecursivelyAndSorted) {
  GitRepo repo;
  repo.write("policies/compare/b.yaml", "b");
  repo.write("policies/compare/a.yaml", "a");
  repo.write("policies/exceptions.yaml", "e");
  repo.commit_all("initial");
  auto tree = CommitTree::open(repo.path(), "HEAD");
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->list("policies"),
            (std::vector<std::string>{"policies/compare/a.yaml", "policies/compare/b.yaml",
                                      "policies/exceptions.yaml"}));
  EXPECT_TRUE(tree->list("missing").empty());
}

}  // namespace
}  // namespace fabgate::git
