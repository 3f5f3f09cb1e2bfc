#include "adapters/core/yaml_reader.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(ParseYaml, SyntaxErrorNamesFileLineAndColumn) {
  // Given a YAML file with an unclosed bracket on line 2, then the error points there.
  auto parsed = parse_yaml("a: 1\nb: [1, 2\n", "bad.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(parsed.error().message.find("bad.yaml:"), std::string::npos);
}

TEST(YamlReader, UnknownKeyGetsLocationAndSuggestion) {
  // Given a mapping with a misspelt key on line 2, then the problem names 2:3 and the fix.
  Diagnostics diagnostics;
  YamlReader reader("change.yaml", diagnostics);
  auto root = parse_yaml("bounds:\n  step_timout: 5s\n", "change.yaml").value();
  reader.check_keys(root["bounds"], {"step_timeout", "deadline"}, "bounds");
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics.items()[0].where.to_string(), "change.yaml:2:3");
  EXPECT_NE(diagnostics.items()[0].hint.find("step_timeout"), std::string::npos);
}

TEST(YamlReader, ReportsEveryProblemNotJustTheFirst) {
  Diagnostics diagnostics;
  YamlReader reader("f.yaml", diagnostics);
  auto root = parse_yaml("a: 5x\nb: maybe\nc: -3\n", "f.yaml").value();
  reader.duration(root, "a", Need::required, "test");
  reader.boolean(root, "b", Need::required, "test");
  reader.integer(root, "c", Need::required, "test", 0, 10);
  reader.string(root, "d", Need::required, "test");
  EXPECT_EQ(diagnostics.size(), 4u);
  auto lines = diagnostics.lines();
  EXPECT_EQ(lines[0].substr(0, 9), "f.yaml:1:");
}

TEST(YamlReader, ChoiceSuggestsNearestValue) {
  Diagnostics diagnostics;
  YamlReader reader("r.yaml", diagnostics);
  auto root = parse_yaml("layer: forwardng\n", "r.yaml").value();
  EXPECT_FALSE(reader.choice(root, "layer", Need::required, "rule", {"link", "forwarding"}));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics.items()[0].hint.find("'forwarding'"), std::string::npos);
}

}  // namespace
}  // namespace fabgate

namespace fabgate {
namespace {

TEST(YamlReader, DuplicateKeysAreReportedWithBothLines) {
  // Given a document that defines leaf1 twice, then the second one is reported, naming the first.
  Diagnostics diagnostics;
  YamlReader reader("inventory.yaml", diagnostics);
  auto root = parse_yaml("devices:\n  leaf1: {role: leaf}\n  leaf2: {}\n  leaf1: {role: spine}\n",
                         "inventory.yaml")
                  .value();
  reader.check_duplicate_keys(root);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics.items()[0].where.line, 4);
  EXPECT_NE(diagnostics.items()[0].message.find("first defined at line 2"), std::string::npos);
}

}  // namespace
}  // namespace fabgate

namespace fabgate {
namespace {

// "Billion laughs": `levels` anchors, each a list of `width` aliases to the one before, so the
// last expands to width^levels scalars while the text stays a few hundred bytes.
std::string laughing_document(int levels, int width) {
  std::string text = "l0: &l0 lol\n";
  for (int level = 1; level < levels; ++level) {
    text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < width; ++i) text += (i ? ", *l" : "*l") + std::to_string(level - 1);
    text += "]\n";
  }
  return text;
}

TEST(ParseYaml, TextThatIsNotUtf8IsRefusedNamingFileLineAndColumn) {
  // Given a change whose title holds a Latin-1 byte on line 2, then it is invalid input naming
  // changes/c.yaml:2:11 and the byte, and the message itself is UTF-8.
  auto parsed = parse_yaml("id: c\ntitle: caf\xe9 change\n", "changes/c.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(parsed.error().message.find("changes/c.yaml:2:11: error: byte 0xe9 at offset 16"),
            std::string::npos)
      << parsed.error().message;
  EXPECT_EQ(parsed.error().message.find('\xe9'), std::string::npos);
}

TEST(ParseYaml, AliasExpansionPastTheNodeLimitIsRefusedAtTheAliasThatPassesIt) {
  // Given a 10-level, 9-wide billion-laughs document (9^9 scalars once expanded, 430 bytes),
  // then it is invalid input naming the file and the line where the expansion passes the
  // limit, instead of a tree that every reader would walk for minutes.
  auto parsed = parse_yaml(laughing_document(10, 9), "inventory.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(parsed.error().message.find("inventory.yaml:8:"), std::string::npos)
      << parsed.error().message;
  EXPECT_NE(parsed.error().message.find("more than 1000000 nodes with its aliases expanded"),
            std::string::npos)
      << parsed.error().message;
}

TEST(ParseYaml, ModestAliasesStillWork) {
  // Given anchors and aliases used the ordinary way (a shared credential block), then the
  // document loads and the alias reads as the anchored value.
  auto parsed = parse_yaml(laughing_document(3, 4) + "cred: &c {user: ro}\nuse: *c\n", "f.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed.value()["use"]["user"].Scalar(), "ro");
  EXPECT_EQ(parsed.value()["l2"].size(), 4u);
}

TEST(ParseYaml, AliasInsideItsOwnAnchorIsACycleAndRefused) {
  // Given a list that contains an alias to itself (yaml-cpp builds a cyclic graph, which any
  // recursive reader would follow until the stack overflows), then it is invalid input naming
  // the alias's place.
  auto parsed = parse_yaml("a: &a [1, *a]\n", "changes/loop.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("changes/loop.yaml:1:11: error: YAML alias refers to a "
                                        "node that contains it"),
            std::string::npos)
      << parsed.error().message;
}

TEST(ParseYaml, DocumentsOverTheSizeLimitAreRefusedUnread) {
  // Given a file one byte over the limit, then it is refused by its size, naming it.
  std::string big(kMaxYamlBytes + 1, '#');
  auto parsed = parse_yaml(big, "policies/huge.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("policies/huge.yaml: error: 16777217 bytes, more than "
                                        "the 16 MiB"),
            std::string::npos)
      << parsed.error().message;
}

TEST(ParseYaml, DeepNestingIsASyntaxErrorNotACrash) {
  // Given 100,000 nested flow lists, then yaml-cpp's own depth guard refuses it as invalid
  // input naming the file (this test crashes if that guard is ever lost).
  std::string deep(100'000, '[');
  deep += std::string(100'000, ']');
  auto parsed = parse_yaml(deep, "deep.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("deep.yaml:"), std::string::npos);
}

}  // namespace
}  // namespace fabgate
