// Given real repositories written by the git CLI, then CommitGraph answers what the approval
// gate asks to find its trusted ref: refs, merge bases, ancestry and first parents.

#include "adapters/git/commit_graph.h"

#include <gtest/gtest.h>

#include "tests/support/git_repo.h"

namespace fabgate::git {
namespace {

using fabgate::testing::GitRepo;

std::string rev(GitRepo& repo, const std::string& ref) {
  auto out = repo.run("git rev-parse " + ref).output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(CommitGraph, FindsTheMergeBaseOfABranchWithMain) {
  // Given main with two commits and a feature branch off the first, then the merge base is the
  // first commit, the branch is not on main, the first commit is, and the root has no parent.
  GitRepo repo;
  repo.write("a", "1\n");
  repo.commit_all("one");
  const std::string one = repo.head();
  repo.write("a", "2\n");
  repo.commit_all("two");
  const std::string two = repo.head();
  repo.run("git checkout -q -b feature " + one);
  repo.write("b", "x\n");
  repo.commit_all("feature");
  const std::string feature = repo.head();

  auto graph = CommitGraph::open(repo.path());
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  EXPECT_EQ(graph->resolve("refs/heads/main").value(), two);
  EXPECT_EQ(graph->resolve("feature").value(), feature);
  auto base = graph->merge_base(feature, two);
  ASSERT_TRUE(base.ok()) << base.error().message;
  EXPECT_EQ(*base.value(), one);
  EXPECT_FALSE(graph->is_ancestor(feature, two).value());
  EXPECT_TRUE(graph->is_ancestor(one, two).value());
  EXPECT_TRUE(graph->is_ancestor(two, two).value());
  EXPECT_EQ(*graph->first_parent(two).value(), one);
  EXPECT_FALSE(graph->first_parent(one).value().has_value());
}

TEST(CommitGraph, MissingRefsAndUnrelatedHistoriesAreValuesNotCrashes) {
  // Given no master branch and an orphan branch, then resolving master is bad_ref naming it,
  // and the orphan shares no merge base with main.
  GitRepo repo;
  repo.write("a", "1\n");
  repo.commit_all("one");
  const std::string main_id = repo.head();
  repo.run("git checkout -q --orphan other && git rm -rq --cached . && rm a");
  repo.write("c", "3\n");
  repo.commit_all("orphan");
  const std::string orphan = rev(repo, "other");

  auto graph = CommitGraph::open(repo.path());
  ASSERT_TRUE(graph.ok());
  auto master = graph->resolve("refs/heads/master");
  ASSERT_FALSE(master.ok());
  EXPECT_EQ(master.error().kind, GitFailure::Kind::bad_ref);
  EXPECT_NE(master.error().message.find("refs/heads/master"), std::string::npos);
  auto base = graph->merge_base(orphan, main_id);
  ASSERT_TRUE(base.ok()) << base.error().message;
  EXPECT_FALSE(base->has_value());
  EXPECT_FALSE(graph->is_ancestor(orphan, main_id).value());
  EXPECT_FALSE(graph->merge_base("not-an-id", main_id).ok());
}

TEST(CommitTree, KeepsTheSignatureAndWhatItSigns) {
  // Given a commit signed with an SSH key, then CommitTree keeps the armored signature and the
  // commit object without it, which ssh-keygen -Y verify -n git accepts.
  GitRepo repo;
  if (repo.run("command -v ssh-keygen").exit_code != 0) GTEST_SKIP() << "ssh-keygen missing";
  auto key = repo.file("signer");
  ASSERT_EQ(repo.run("ssh-keygen -q -t ed25519 -N '' -C signer -f " + key).exit_code, 0);
  repo.write("a", "1\n");
  ASSERT_EQ(repo.run("git add a && git -c gpg.format=ssh -c user.signingkey=" + key +
                     " commit -q -S -m signed")
                .exit_code,
            0);
  auto tree = CommitTree::open(repo.path(), "HEAD");
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  EXPECT_TRUE(tree->commit().has_signature);
  EXPECT_EQ(tree->commit().signature.rfind("-----BEGIN SSH SIGNATURE-----", 0), 0u);
  EXPECT_EQ(tree->commit().signed_data.find("gpgsig"), std::string::npos);
  EXPECT_NE(tree->commit().signed_data.find("signed"), std::string::npos);
}

}  // namespace
}  // namespace fabgate::git
