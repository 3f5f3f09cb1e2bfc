#include "adapters/core/redact.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

// Each case plants a canary secret and asserts it is gone and the context survives.
TEST(Redactor, RemovesCommonSecretShapes) {
  Redactor redactor;
  struct Case {
    std::string in;
    std::string canary;
    std::string kept;
  } cases[] = {
      {"neighbor 10.0.0.1 password CanaryBgp1", "CanaryBgp1", "neighbor 10.0.0.1 password"},
      {"username admin secret 5 CanaryHash2", "CanaryHash2", "secret 5"},
      {"snmp-server community CanaryComm3 RO", "CanaryComm3", "snmp-server community"},
      {"Authorization: Bearer CanaryTok.en4", "CanaryTok.en4", "Authorization: Bearer"},
      {"{\"password\": \"CanaryJson5\"}", "CanaryJson5", "password"},
      {"api_key=CanaryKey6 other", "CanaryKey6", "other"},
      {"x\n-----BEGIN OPENSSH PRIVATE KEY-----\nCanaryPem7\n-----END OPENSSH PRIVATE KEY-----\ny",
       "CanaryPem7", "y"},
  };
  for (const auto& c : cases) {
    std::string out = redactor.redact(c.in);
    EXPECT_EQ(out.find(c.canary), std::string::npos) << out;
    EXPECT_NE(out.find(c.kept), std::string::npos) << out;
  }
}

TEST(Redactor, RemovesConfiguredValuesAnywhere) {
  Redactor redactor({"s3cr3t-value"});
  EXPECT_EQ(redactor.redact("echo s3cr3t-value | tee x"), "echo <redacted> | tee x");
}

TEST(Redactor, LeavesOrdinaryOutputAlone) {
  Redactor redactor;
  std::string text = "BGP state Established, prefixes 12, interface swp1 up";
  EXPECT_EQ(redactor.redact(text), text);
}

}  // namespace
}  // namespace fabgate
