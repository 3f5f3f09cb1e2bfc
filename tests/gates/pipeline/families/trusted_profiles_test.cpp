// The collector profiles for commands on the controller (the twin's namespaces): given a
// change whose commit rewrites a collector profile, then the profiles are the trusted ref's
// and the change's own is named, never used; without a trusted policy only the shipped ones.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gates/pipeline/families/collector_snapshotter.h"

namespace fabgate::pipeline {
namespace {

const std::string kTrustedLinux =
    "platform: linux\nsources:\n  - category: interfaces\n    commands:\n"
    "      - run: ip -j link show\n        parse: ip-link\n";
const std::string kChangesLinux =
    "platform: linux\nsources:\n  - category: interfaces\n    commands:\n"
    "      - run: touch /tmp/owned; ip -j link show\n        parse: ip-link\n";

std::vector<std::string> commands_of(const snapshot::ProfileSet& profiles,
                                     const std::string& platform) {
  std::vector<std::string> out;
  auto it = profiles.find(platform);
  if (it == profiles.end()) return out;
  for (const auto& source : it->second.sources)
    for (const auto& command : source.commands) out.push_back(command.run);
  return out;
}

intent::IntentRepository repository_with_own_profile() {
  intent::IntentRepository repository;
  repository.settings.policies_dir = "policies";
  repository.policy_texts["policies/collectors/linux.yaml"] = kChangesLinux;
  return repository;
}

// A trusted policy whose collectors folder is `dir` and holds `files` (paths relative to it).
intent::TrustedPolicy trusted_with(const std::string& dir,
                                   const std::map<std::string, std::string>& files) {
  intent::TrustedPolicy trusted;
  trusted.source = "main at 1a2b3c4d5e6f (its tip)";
  trusted.collectors_dir = dir;
  for (const auto& [name, text] : files) trusted.collector_profiles[dir + "/" + name] = text;
  return trusted;
}

TEST(TrustedProfiles, TheTrustedRefsProfileIsUsedAndTheChangesOwnIsNamed) {
  // Given the trusted ref's linux profile and a change commit with its own, then the profile
  // set runs the trusted one's command and the note names the change's file and the source.
  auto repository = repository_with_own_profile();
  repository.trusted_policy = trusted_with("fleet/collectors", {{"linux.yaml", kTrustedLinux}});
  std::vector<std::string> notes;
  auto profiles = trusted_profiles_for(repository, notes);
  ASSERT_TRUE(profiles.ok()) << profiles.error().message;
  EXPECT_EQ(commands_of(profiles.value(), "linux"), std::vector<std::string>{"ip -j link show"});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("policies/collectors/linux.yaml"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("main at 1a2b3c4d5e6f"), std::string::npos) << notes[0];
}

TEST(TrustedProfiles, AProfileTheSameAsTheTrustedRefsIsNotNamed) {
  auto repository = repository_with_own_profile();
  repository.trusted_policy = trusted_with("policies/collectors", {{"linux.yaml", kChangesLinux}});
  std::vector<std::string> notes;
  auto profiles = trusted_profiles_for(repository, notes);
  ASSERT_TRUE(profiles.ok()) << profiles.error().message;
  EXPECT_TRUE(notes.empty());
}

TEST(TrustedProfiles, OnlyAYamlFileDirectlyInTheFolderIsAProfile) {
  // Given the trusted folder with linux.yaml beside an editor's backup and a subfolder's file
  // of the same stem, then only linux.yaml decides what the linux profile runs (a name cut at
  // its first ".yaml" once made linux.yaml.orig override linux.yaml).
  auto repository = repository_with_own_profile();
  repository.trusted_policy = trusted_with("fleet/collectors", {{"linux.yaml", kTrustedLinux},
                                                                {"linux.yaml.orig", kChangesLinux},
                                                                {"old/linux.yaml", kChangesLinux}});
  std::vector<std::string> notes;
  auto profiles = trusted_profiles_for(repository, notes);
  ASSERT_TRUE(profiles.ok()) << profiles.error().message;
  EXPECT_EQ(commands_of(profiles.value(), "linux"), std::vector<std::string>{"ip -j link show"});
}

TEST(TrustedProfiles, WithoutATrustedPolicyOnlyTheShippedProfilesRun) {
  // Given no trusted policy, then the change's own profile is named and the linux profile is
  // the shipped one (whose commands never include the change's).
  auto repository = repository_with_own_profile();
  std::vector<std::string> notes;
  auto profiles = trusted_profiles_for(repository, notes);
  ASSERT_TRUE(profiles.ok()) << profiles.error().message;
  auto commands = commands_of(profiles.value(), "linux");
  EXPECT_FALSE(commands.empty());
  for (const auto& command : commands) EXPECT_EQ(command.find("/tmp/owned"), std::string::npos);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the shipped profiles"), std::string::npos) << notes[0];
}

}  // namespace
}  // namespace fabgate::pipeline
