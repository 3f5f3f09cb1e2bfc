#include "adapters/core/redact.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(Redactor, RemovesTheUserInformationOfUrls) {
  // Given URLs carrying a user name and password (in an error, in JSON, in a log line), then
  // what lies between "://" and '@' is gone and the scheme, host and path remain; URLs without
  // user information, an e-mail address and an already redacted URL are left as they are.
  Redactor redactor;
  EXPECT_EQ(redactor.redact("prometheus: GET https://scrape:CanaryPw1@prom.example:9090/api: 401"),
            "prometheus: GET https://[redacted]@prom.example:9090/api: 401");
  EXPECT_EQ(redactor.dump(nlohmann::json{{"url", "http://u:CanaryPw2@10.0.0.1/x?y=1"}}),
            R"({"url":"http://[redacted]@10.0.0.1/x?y=1"})");
  EXPECT_EQ(redactor.redact("git+ssh://deploy:CanaryPw3@git.example/repo.git and more"),
            "git+ssh://[redacted]@git.example/repo.git and more");
  EXPECT_EQ(redactor.redact("https://CanaryToken4@host"), "https://[redacted]@host");
  for (std::string kept : {"https://prom.example:9090/api/v1/query?q=a@b",
                           "mail ops@example.com about http://host/path", "https://[redacted]@host",
                           "\"http://host\",\"x@y\""}) {
    EXPECT_EQ(redactor.redact(kept), kept);
  }
}

TEST(Redactor, RemovesConfiguredValuesAnywhere) {
  Redactor redactor({"s3cr3t-value"});
  EXPECT_EQ(redactor.redact("echo s3cr3t-value | tee x"), "echo <redacted> | tee x");
}

TEST(Redactor, LeavesOrdinaryOutputAlone) {
  Redactor redactor;
  for (std::string text : {
           "BGP state Established, prefixes 12, interface swp1 up",
           // SNMP and AAA status output names algorithms and keys without holding them.
           "SNMP user ops\nAuthentication Protocol: SHA\nPrivacy Protocol: AES128\n",
           "key chain ospf\n key 1\n",
           "ip route 10.0.0.0/8 via 10.255.0.1 metric 20 sha 1",
       }) {
    EXPECT_EQ(redactor.redact(text), text);
  }
}

TEST(Redactor, KeepsThePunctuationThatFollowsASecret) {
  // Given a secret directly followed by a quote, a comma, a brace or the end of the line (a
  // vtysh -c '... password KEY' step, JSON or YAML text), then only the secret is replaced and
  // the punctuation that closes its context survives.
  Redactor redactor;
  EXPECT_EQ(redactor.redact("vtysh -c 'neighbor 10.0.0.1 password CanaryQ1'"),
            "vtysh -c 'neighbor 10.0.0.1 password <redacted>'");
  EXPECT_EQ(redactor.redact("vtysh -c \"neighbor 10.0.0.1 password CanaryQ2\" -c end"),
            "vtysh -c \"neighbor 10.0.0.1 password <redacted>\" -c end");
  EXPECT_EQ(redactor.redact("{password: CanaryQ3, user: admin}"),
            "{password: <redacted>, user: admin}");
  EXPECT_EQ(redactor.redact("{\"token\":\"CanaryQ4\"}"), "{\"token\":\"<redacted>\"}");
  EXPECT_EQ(redactor.redact("secret 5 CanaryQ5\nnext line"), "secret 5 <redacted>\nnext line");
  EXPECT_EQ(redactor.redact("password 'two words'"), "password '<redacted>'");
}

TEST(Redactor, RemovesAaaAndSnmpV3KeysAndBasicAuthorization) {
  // Given TACACS+ and RADIUS keys, SNMPv3 auth and priv keys, NTP keys and an HTTP Basic
  // authorization header, then every canary is gone and the command around it stays readable.
  Redactor redactor;
  struct Case {
    std::string in;
    std::string expected;
  } cases[] = {
      {"tacacs-server host 10.0.0.9 key 7 CanaryTac1",
       "tacacs-server host 10.0.0.9 key 7 <redacted>"},
      {"tacacs-server key CanaryTac2", "tacacs-server key <redacted>"},
      {"radius-server host 10.0.0.8 auth-port 1812 key CanaryRad3",
       "radius-server host 10.0.0.8 auth-port 1812 key <redacted>"},
      {"config tacacs passkey CanaryTac4", "config tacacs passkey <redacted>"},
      {"snmp-server user ops ops-group v3 auth sha CanaryAuth5 priv aes 128 CanaryPriv6",
       "snmp-server user ops ops-group v3 auth sha <redacted> priv aes 128 <redacted>"},
      {"createUser ops SHA-256 \"CanaryAuth7\" AES \"CanaryPriv8\"",
       "createUser ops SHA-256 \"<redacted>\" AES \"<redacted>\""},
      {"ntp authentication-key 1 md5 CanaryNtp9 7", "ntp authentication-key 1 md5 <redacted> 7"},
      {"Authorization: Basic Q2FuYXJ5QmFzaWMxMA==", "Authorization: Basic <redacted>"},
      {"curl -H 'Authorization: Basic Q2FuYXJ5MTE=' http://x",
       "curl -H 'Authorization: Basic <redacted>' http://x"},
      {"{\"Authorization\": \"Basic Q2FuYXJ5MTI=\"}", "{\"Authorization\": \"Basic <redacted>\"}"},
  };
  for (const auto& c : cases) EXPECT_EQ(redactor.redact(c.in), c.expected) << c.in;
}

TEST(Redactor, ConfiguredValuesMatchLiterallyAndInTheirJsonEscapedForm) {
  // Given a configured secret holding '&', '"', '\' and '<', then it is replaced where it
  // appears as it is and where a serialised JSON value quotes it escaped.
  const std::string secret = "Cn&ry\"Va\\l<ue";
  Redactor redactor({secret});
  EXPECT_EQ(redactor.redact("key is " + secret + "!"), "key is <redacted>!");
  const std::string quoted = nlohmann::json(secret).dump();  // "Cn&ry\"Va\\l<ue"
  EXPECT_EQ(redactor.redact("got " + quoted), "got \"<redacted>\"");
}

TEST(Redactor, ALongerSecretIsReplacedWholeEvenIfAShorterOneIsInside) {
  Redactor redactor({"abcd", "xxabcdyy"});
  EXPECT_EQ(redactor.redact("1 xxabcdyy 2 abcd"), "1 <redacted> 2 <redacted>");
}

TEST(Redactor, PrivateKeyCutOffBeforeItsEndIsRedactedToTheEnd) {
  // Given output truncated inside a private key block (no END line), then nothing after its
  // BEGIN line survives.
  Redactor redactor;
  EXPECT_EQ(redactor.redact("cat id:\n-----BEGIN RSA PRIVATE KEY-----\nCanaryPem1\nCanaryPem2"),
            "cat id:\n<redacted private key>");
}

TEST(Redactor, RedactingTwiceChangesNothingMore) {
  Redactor redactor({"Zq8kTokenValue"});
  for (std::string text : {"neighbor 1.1.1.1 password 'x y'", "token=Zq8kTokenValue, n=1",
                           "Authorization: Basic abc=", "snmp-server community pub RO"}) {
    std::string once = redactor.redact(text);
    EXPECT_EQ(redactor.redact(once), once) << text;
  }
}

TEST(Redactor, ColourCodesAfterASecretSurvive) {
  Redactor redactor;
  EXPECT_EQ(redactor.redact("\033[31mpassword CanaryC1\033[0m"),
            "\033[31mpassword <redacted>\033[0m");
}

TEST(Redactor, JsonIsRedactedValueByValueAndAlwaysParses) {
  // Given a document whose strings end in secrets followed by each character that used to be
  // swallowed, a configured secret with characters JSON escapes, a secret under a secret-named
  // key, a secret in an object key, control characters and bytes that are not UTF-8, then the
  // dumped text parses, no secret is in it, and every other value is intact.
  const std::string configured = "Cn&ry\"Va\\l<ue";
  Redactor redactor({configured});
  nlohmann::json document = {
      {"command", "vtysh -c 'neighbor 10.0.0.1 password CanaryJ1'"},
      {"quoted", "neighbor 10.0.0.1 password CanaryJ2\""},
      {"list", {"secret CanaryJ3,", "secret CanaryJ4}", "secret CanaryJ5"}},
      {"configured", "echo " + configured + " done"},
      {"auth-password", "CanaryJ6"},
      {"snmp", {{"priv-key", 123456789}}},
      {"peers", {{configured, "up"}}},
      {"output", std::string("bell\a esc\033[0m nul") + '\0' + " bad\xff\xfe end"},
  };
  for (int indent : {-1, 2}) {
    std::string text = redactor.dump(document, indent);
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << text;
    for (const char* canary :
         {"CanaryJ1", "CanaryJ2", "CanaryJ3", "CanaryJ4", "CanaryJ5", "CanaryJ6", "123456789"})
      EXPECT_EQ(text.find(canary), std::string::npos) << canary << " in " << text;
    EXPECT_EQ(text.find("Cn&ry"), std::string::npos) << text;
    EXPECT_EQ(parsed["command"], "vtysh -c 'neighbor 10.0.0.1 password <redacted>'");
    EXPECT_EQ(parsed["quoted"], "neighbor 10.0.0.1 password <redacted>\"");
    EXPECT_EQ(parsed["list"],
              nlohmann::json({"secret <redacted>,", "secret <redacted>}", "secret <redacted>"}));
    EXPECT_EQ(parsed["configured"], "echo <redacted> done");
    EXPECT_EQ(parsed["auth-password"], "<redacted>");
    EXPECT_EQ(parsed["snmp"]["priv-key"], "<redacted>");
    EXPECT_EQ(parsed["peers"]["<redacted>"], "up");
    EXPECT_EQ(parsed["output"].get<std::string>().substr(0, 4), "bell");
  }
  // The caller's document is left as it was (a snapshot is still compared unredacted).
  EXPECT_EQ(document["auth-password"], "CanaryJ6");
}

TEST(Redactor, JsonWithoutSecretsDumpsAsNlohmannDoes) {
  Redactor redactor({"not-in-there"});
  nlohmann::json document = {{"a", {1, 2.5, "x"}}, {"b", nullptr}, {"c", {{"d", true}}}};
  EXPECT_EQ(redactor.dump(document, 2), document.dump(2));
}

}  // namespace
}  // namespace fabgate
