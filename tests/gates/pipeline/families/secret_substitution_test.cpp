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

}  // namespace
}  // namespace fabgate::pipeline
