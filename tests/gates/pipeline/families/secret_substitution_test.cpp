// The text side of secret delivery: which $NAME references a command makes, and what the
// device is sent instead. (End to end, with a real sshd: tests/cmd/fabgate/secrets_e2e_test.cpp.)

#include "gates/pipeline/families/secret_substitution.h"

#include <gtest/gtest.h>

namespace fabgate::pipeline {
namespace {

const std::vector<std::string> kListed = {"BGP_MD5_KEY", "API_TOKEN"};

TEST(SecretReferences, BothSpellingsAreFoundOnceEachInOrderOfUse) {
  // Given a command using ${API_TOKEN} and $BGP_MD5_KEY twice, then each listed name is
  // reported once, first use first.
  auto found = secret_references(
      "curl -H \"x: ${API_TOKEN}\" && vtysh -c 'password $BGP_MD5_KEY' $BGP_MD5_KEY", kListed);
  EXPECT_EQ(found, (std::vector<std::string>{"API_TOKEN", "BGP_MD5_KEY"}));
}

TEST(SecretReferences, LongerNamesShellDefaultsAndUnlistedNamesAreNotReferences) {
  // Given $BGP_MD5_KEY_2 (another name, as a shell reads it), ${BGP_MD5_KEY:-x} (a shell
  // expansion fabgate does not imitate), $HOME and a lone '$', then no listed name is used.
  EXPECT_TRUE(
      secret_references("echo $BGP_MD5_KEY_2 ${BGP_MD5_KEY:-x} $HOME $ $1 ${", kListed).empty());
}

TEST(SubstituteSecrets, ValuesReplaceReferencesVerbatimAndNothingElseChanges) {
  // Given values for both names, then every reference becomes its value, and '$' text that
  // is not a reference to them stays exactly as written.
  SecretValues values = {{"BGP_MD5_KEY", "s3cr$t pw"}, {"API_TOKEN", "tok"}};
  EXPECT_EQ(
      substitute_secrets("a $BGP_MD5_KEY b ${API_TOKEN}c $BGP_MD5_KEY_2 $HOME ${X:-y} $", values),
      "a s3cr$t pw b tokc $BGP_MD5_KEY_2 $HOME ${X:-y} $");
  // A value that itself looks like a reference is not expanded again.
  EXPECT_EQ(substitute_secrets("$API_TOKEN", {{"API_TOKEN", "$BGP_MD5_KEY"}}), "$BGP_MD5_KEY");
}

TEST(SubstituteSecrets, NamesWithoutAValueAreLeftAsWritten) {
  // Given no value for a name, then its reference is sent as written (the caller refuses a
  // change that uses an unset secret before anything is sent; this is only the text rule).
  EXPECT_EQ(substitute_secrets("x $BGP_MD5_KEY y", {}), "x $BGP_MD5_KEY y");
}

// Records how each command was passed on.
class CapturingRemote final : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string& command, Duration,
                   std::string_view) override {
    sent.push_back("run: " + command);
    return ssh::CommandResult{};
  }
  RemoteResult run_via_stdin(const intent::Device&, ssh::CredentialRole, const std::string& command,
                             Duration, std::string_view) override {
    sent.push_back("stdin: " + command);
    return ssh::CommandResult{};
  }
  std::vector<std::string> sent;
};

TEST(SecretSubstitutingRemote, ACommandHoldingASecretTravelsOnStdinAndOthersAsBefore) {
  // Given a step that uses a secret and one that does not, then the first is passed on with
  // its value for delivery on standard input (never in the exec request, which `ps` on the
  // device shows), and the second unchanged by the ordinary path.
  CapturingRemote inner;
  SecretSubstitutingRemote remote(inner, {{"BGP_MD5_KEY", "Canary-md5"}});
  intent::Device device;
  device.name = "leaf1";
  ASSERT_TRUE(remote.run(device, ssh::CredentialRole::change,
                         "vtysh -c 'neighbor 10.0.0.1 password $BGP_MD5_KEY'", Duration{1'000},
                         "step"));
  ASSERT_TRUE(
      remote.run(device, ssh::CredentialRole::change, "echo $HOME", Duration{1'000}, "step"));
  EXPECT_EQ(inner.sent,
            (std::vector<std::string>{"stdin: vtysh -c 'neighbor 10.0.0.1 password Canary-md5'",
                                      "run: echo $HOME"}));
}

}  // namespace
}  // namespace fabgate::pipeline
