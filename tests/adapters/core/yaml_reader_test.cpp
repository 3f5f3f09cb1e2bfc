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
