// Runs the shipped bash completion and the man page generator against the built binaries, as a
// shell and `man` would, so neither can drift from the CLI.

#include <gtest/gtest.h>

#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using testing::GitRepo;
using testing::run_shell;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kCompletion = FABGATE_SOURCE_DIR "/cmd/fabgate/completion/fabgate.bash";
const std::string kZshCompletion = FABGATE_SOURCE_DIR "/cmd/fabgate/completion/_fabgate";
const std::string kGenMan = FABGATE_SOURCE_DIR "/scripts/gen-man";
const std::string kExampleIntent = FABGATE_SOURCE_DIR "/examples/intent";

// What `_fabgate` offers for the words typed so far (the last one is being completed).
std::string complete(const std::string& words, const std::string& folder = "/") {
  auto out = run_shell("cd " + shell_quoted(folder) + " && bash --norc --noprofile -c " +
                       shell_quoted("source " + shell_quoted(kCompletion) + "; COMP_WORDS=(" +
                                    shell_quoted(kFabgate) + " " + words +
                                    "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _fabgate; "
                                    "echo \"${COMPREPLY[*]}\"") +
                       " 2>&1");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  return out.output.substr(0, out.output.find_last_not_of('\n') + 1);
}

std::vector<std::string> lines_of(const std::string& command) {
  auto out = run_shell(command);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (auto end = out.output.find('\n'); end != std::string::npos;
       start = end + 1, end = out.output.find('\n', start))
    lines.push_back(out.output.substr(start, end - start));
  return lines;
}

// How a name is written in roff: '-' is a hyphen there, "\-" the minus a flag is typed with.
std::string roff_escaped(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(BashCompletion, CompletesCommandPrefixes) {
  EXPECT_EQ(complete("ap"), "apply approve");
  EXPECT_EQ(complete("val"), "validate");
}

TEST(BashCompletion, CompletesFlagsOfTheCommandAndTheCommonOnes) {
  EXPECT_EQ(complete("approve --k"), "--key");
  EXPECT_EQ(complete("plan --ju"), "--junit");
}

TEST(BashCompletion, CompletesEvidenceSubcommandsAndTheirFlags) {
  // Given `fabgate evidence`, then its subcommands verify, show and sign are offered, and the
  // signing and signature-checking flags complete.
  EXPECT_EQ(complete("evidence ''"), "verify show sign");
  EXPECT_EQ(complete("evidence s"), "show sign");
  EXPECT_EQ(complete("evidence --allowed"), "--allowed-signers");
  EXPECT_EQ(complete("evidence --ke"), "--key");
  // After the subcommand, the bundle folder.
  testing::TempDir dir;
  run_shell("mkdir -p " + shell_quoted(dir.file("bundle-1")) + " && touch " +
            shell_quoted(dir.file("notes.txt")));
  EXPECT_EQ(complete("evidence sign b", dir.path()), "bundle-1");
}

TEST(BashCompletion, CompletesChangeIdsFromTheIntentAtHead) {
  // Given the example intent committed in net/intent, then plan completes its change ids, with
  // --repo and from a folder inside the intent; a change only in the work tree is not offered.
  GitRepo repo;
  repo.run("mkdir -p net && cp -r " + shell_quoted(kExampleIntent) + " net/intent");
  repo.commit_all("add intent");
  repo.run(
      "sed 's/^id: .*/id: not-committed/' net/intent/changes/drain-spine1.yaml > "
      "net/intent/changes/extra.yaml");
  EXPECT_EQ(complete("plan --repo net/intent ''", repo.path()), "drain-spine1 leaf2-mtu-9100");
  EXPECT_EQ(complete("apply dr", repo.path() + "/net/intent/changes"), "drain-spine1");
  // --wait takes a duration: nothing is offered for it, and the change after it completes.
  EXPECT_EQ(complete("apply --wa", repo.path()), "--wait");
  EXPECT_EQ(complete("apply --repo net/intent --wait ''", repo.path()), "");
  EXPECT_EQ(complete("apply --repo net/intent --wait 5m dr", repo.path()), "drain-spine1");
}

TEST(BashCompletion, OutsideARepositoryOffersNothingAndPrintsNothing) {
  testing::TempDir plain;
  EXPECT_EQ(complete("plan ''", plain.path()), "");
}

// What the zsh `_fabgate` offers for the words typed so far (the last one is being
// completed). compsys is replaced by two functions that print what it would have been given:
// compadd (filtered by the word's prefix, as compsys matches) and _files.
std::string complete_zsh(const std::string& words, const std::string& folder = "/") {
  std::string script =
      "compadd() { if [[ $1 == -a ]]; then print -rl -- ${(M)${(P)2}:#${words[CURRENT]}*}; "
      "else print -rl -- ${(M)@:#${words[CURRENT]}*}; fi }; "
      "_files() { print -r -- '(files)' }; "
      "words=(" +
      shell_quoted(kFabgate) + " " + words +
      "); CURRENT=${#words}; "
      "source " +
      shell_quoted(kZshCompletion);
  auto out =
      run_shell("cd " + shell_quoted(folder) + " && zsh -f -c " + shell_quoted(script) + " 2>&1");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  std::string text = out.output.substr(0, out.output.find_last_not_of('\n') + 1);
  for (auto& c : text)
    if (c == '\n') c = ' ';
  return text;
}

std::string zsh_missing() {
  if (run_shell("command -v zsh").exit_code != 0)
    return "zsh is not installed (scripts/bootstrap --tests installs it)";
  return {};
}

TEST(ZshCompletion, LoadsUnderCompinitAndRegistersFabgate) {
  // Given the folder holding _fabgate on fpath, then compinit reads its #compdef line and
  // completes `fabgate` with it.
  if (auto why = zsh_missing(); !why.empty()) GTEST_SKIP() << why;
  testing::TempDir home;
  std::string folder = kZshCompletion.substr(0, kZshCompletion.rfind('/'));
  auto out = run_shell("HOME=" + shell_quoted(home.path()) + " zsh -f -c " +
                       shell_quoted("fpath=(" + shell_quoted(folder) +
                                    " $fpath); autoload -Uz compinit; compinit -u -d " +
                                    shell_quoted(home.path() + "/zcompdump") +
                                    "; print -r -- ${_comps[fabgate]}") +
                       " 2>&1");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output, "_fabgate\n");
}

TEST(ZshCompletion, CompletesCommandsFlagsAndChangeIds) {
  if (auto why = zsh_missing(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(complete_zsh("pl"), "plan");
  EXPECT_EQ(complete_zsh("ap"), "apply approve");
  EXPECT_EQ(complete_zsh("approve --k"), "--key");
  EXPECT_EQ(complete_zsh("inventory ''"), "import");
  EXPECT_EQ(complete_zsh("inventory import --from c"), "containerlab");
  GitRepo repo;
  repo.run("mkdir -p net && cp -r " + shell_quoted(kExampleIntent) + " net/intent");
  repo.commit_all("add intent");
  EXPECT_EQ(complete_zsh("plan --repo net/intent ''", repo.path()), "drain-spine1 leaf2-mtu-9100");
  EXPECT_EQ(complete_zsh("apply --repo net/intent --wait ''", repo.path()), "");
}

TEST(BashCompletion, CompletesInventoryImportAndItsSource) {
  EXPECT_EQ(complete("inv"), "inventory");
  EXPECT_EQ(complete("inventory im"), "import");
  EXPECT_EQ(complete("inventory import --from ''"), "containerlab ansible");
  EXPECT_EQ(complete("inventory import --f"), "--force --from");
}

TEST(BashCompletion, CompletesStatusAndOffersNoArgumentAfterIt) {
  // Given `fabgate stat`, then status is offered; after it nothing but flags (it takes no
  // argument), so no file names are offered either.
  EXPECT_EQ(complete("stat"), "status");
  EXPECT_EQ(complete("status ''", FABGATE_SOURCE_DIR), "");
  EXPECT_EQ(complete("status --js"), "--json");
}

TEST(ZshCompletion, CompletesStatusAndOffersNoArgumentAfterIt) {
  if (auto why = zsh_missing(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(complete_zsh("stat"), "status");
  EXPECT_EQ(complete_zsh("status ''", FABGATE_SOURCE_DIR), "");
}

TEST(ManPages, NameEveryCommandTheBinariesList) {
  // Given the pages generated from the built binaries, then fabgate(1) has a section for every
  // command `fabgate` lists, the common options and every exit code; fabgate-probe(1) names its
  // subcommands and fabgate-gnmid(8) its flags.
  testing::TempDir out;
  auto generated = run_shell(shell_quoted(kGenMan) + " " + shell_quoted(FABGATE_BINARY_DIR) + " " +
                             shell_quoted(out.path()) + " 2>&1");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  auto fabgate = testing::read_file(out.file("man1/fabgate.1"));
  auto commands = lines_of(shell_quoted(kFabgate) + " __complete commands");
  ASSERT_GE(commands.size(), 9u);
  for (const auto& command : commands)
    EXPECT_NE(fabgate.find(".SS " + command + "\n"), std::string::npos) << command;
  EXPECT_NE(fabgate.find(".SS evidence verify\n"), std::string::npos);
  EXPECT_NE(fabgate.find(".SS evidence sign\n"), std::string::npos);
  EXPECT_NE(fabgate.find("\\-\\-allowed\\-signers"), std::string::npos);
  EXPECT_NE(fabgate.find(".SH EXIT STATUS"), std::string::npos);
  for (int code = 0; code <= 5; ++code)
    EXPECT_NE(fabgate.find("\\fB" + std::to_string(code) + "\\fR"), std::string::npos) << code;
  EXPECT_NE(fabgate.find("\\-\\-junit FILE"), std::string::npos);

  auto probe = testing::read_file(out.file("man1/fabgate-probe.1"));
  for (const auto& line :
       lines_of(shell_quoted(FABGATE_BINARY_DIR "/cmd/fabgate-probe/fabgate-probe") +
                " --help | sed -n '/^Subcommands:/,$p' | awk 'NR>1 && NF {print $1}'"))
    EXPECT_NE(probe.find(".SS " + roff_escaped(line) + "\n"), std::string::npos) << line;
  auto gnmid = testing::read_file(out.file("man8/fabgate-gnmid.8"));
  EXPECT_NE(gnmid.find("\\-\\-listen"), std::string::npos);
  EXPECT_NE(testing::read_file(out.file("man5/fabgate-intent.5")).find(".TH FABGATE-INTENT 5"),
            std::string::npos);
}

TEST(ManPages, RenderWithoutRoffWarnings) {
  if (run_shell("command -v groff").exit_code != 0) GTEST_SKIP() << "groff is not installed";
  testing::TempDir out;
  ASSERT_EQ(run_shell(shell_quoted(kGenMan) + " " + shell_quoted(FABGATE_BINARY_DIR) + " " +
                      shell_quoted(out.path()))
                .exit_code,
            0);
  for (const char* page : {"man1/fabgate.1", "man1/fabgate-probe.1", "man8/fabgate-gnmid.8",
                           "man5/fabgate-intent.5"}) {
    auto rendered = run_shell("groff -man -Tutf8 -ww -z " + shell_quoted(out.file(page)) + " 2>&1");
    EXPECT_EQ(rendered.exit_code, 0) << page;
    EXPECT_EQ(rendered.output, "") << page << ": " << rendered.output;
  }
}

}  // namespace
}  // namespace fabgate
