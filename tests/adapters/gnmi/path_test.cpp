#include "adapters/gnmi/path.h"

#include <gtest/gtest.h>

namespace fabgate::gnmi {
namespace {

std::string parse_error(std::string_view text) {
  auto path = parse_path(text);
  if (path) return "parsed: " + path->to_string();
  return path.error().describe(text);
}

TEST(GnmiPath, ParsesElementsAndKeys) {
  // Given the usual OpenConfig interface path, then each element and its key come out as
  // written and print back unchanged.
  auto path = parse_path("/interfaces/interface[name=eth1]/state/oper-status");
  ASSERT_TRUE(path) << path.error().describe("");
  ASSERT_EQ(path->elements.size(), 4u);
  EXPECT_EQ(path->elements[1].name, "interface");
  EXPECT_EQ(path->elements[1].keys.at("name"), "eth1");
  EXPECT_EQ(path->origin, "");
  EXPECT_EQ(path->to_string(), "/interfaces/interface[name=eth1]/state/oper-status");
}

TEST(GnmiPath, ParsesOriginMultipleKeysAndRoot) {
  // Given an origin, a list with two keys and the bare root, then the origin is separated,
  // keys print in name order, and the root has no elements.
  auto path = parse_path(
      "openconfig:/network-instances/network-instance[name=default]/protocols/"
      "protocol[name=bgp][identifier=BGP]");
  ASSERT_TRUE(path);
  EXPECT_EQ(path->origin, "openconfig");
  EXPECT_EQ(path->elements[3].keys.size(), 2u);
  EXPECT_EQ(path->to_string(),
            "openconfig:/network-instances/network-instance[name=default]/protocols/"
            "protocol[identifier=BGP][name=bgp]");
  auto root = parse_path("/");
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->elements.empty());
}

TEST(GnmiPath, KeyValuesMayHoldEscapedBracketsSlashesAndEquals) {
  // Given key values with an escaped ']', a '/' and a '=', then the value is read whole and
  // printing escapes it again so the text round-trips.
  auto path = parse_path(R"(/a/b[k=x\]y/z=w]/c)");
  ASSERT_TRUE(path) << path.error().describe("");
  EXPECT_EQ(path->elements[1].keys.at("k"), "x]y/z=w");
  EXPECT_EQ(path->to_string(), R"(/a/b[k=x\]y/z=w]/c)");
  auto escaped_key = parse_path(R"(/a[k\=1=v])");
  ASSERT_TRUE(escaped_key);
  EXPECT_EQ(escaped_key->elements[0].keys.at("k=1"), "v");
}

TEST(GnmiPath, WildcardsAreKeptAndReported) {
  // Given a wildcard key, then the path says it has a wildcard; a concrete one does not.
  EXPECT_TRUE(parse_path("/interfaces/interface[name=*]/state")->has_wildcard());
  EXPECT_FALSE(parse_path("/interfaces/interface[name=e1]/state")->has_wildcard());
}

TEST(GnmiPath, ErrorsNameTheCharacterAndTheReason) {
  // Given malformed paths, then each error names the 1-based character position and why.
  EXPECT_EQ(parse_error("interfaces/interface"),
            "invalid gNMI path 'interfaces/interface': at character 1: a path starts with '/' "
            "or with an origin such as 'openconfig:/'");
  EXPECT_EQ(parse_error("/interfaces//state"),
            "invalid gNMI path '/interfaces//state': at character 13: empty element name (two "
            "'/' in a row or a trailing '/')");
  EXPECT_EQ(parse_error("/interfaces/interface[name=eth1/state"),
            "invalid gNMI path '/interfaces/interface[name=eth1/state': at character 22: '[' "
            "opens a key that is never closed");
  EXPECT_EQ(parse_error("/a/b[name]"),
            "invalid gNMI path '/a/b[name]': at character 10: key 'name' has no '=value'");
  EXPECT_EQ(parse_error("/a/b[=x]"),
            "invalid gNMI path '/a/b[=x]': at character 6: empty key name before '='");
  EXPECT_EQ(parse_error("/a/b[k=]"),
            "invalid gNMI path '/a/b[k=]': at character 5: key 'k' has an empty value (use '*' "
            "for any)");
  EXPECT_EQ(parse_error("/a/b[k=1][k=2]"),
            "invalid gNMI path '/a/b[k=1][k=2]': at character 10: key 'k' appears twice in 'b'");
  EXPECT_EQ(parse_error("/a/b[k=1]x"),
            "invalid gNMI path '/a/b[k=1]x': at character 10: unexpected 'x' after a key; "
            "expected '/', '[' or the end");
  EXPECT_EQ(parse_error("/a/[k=1]"),
            "invalid gNMI path '/a/[k=1]': at character 4: a key '[...]' needs an element name "
            "before it");
  EXPECT_EQ(parse_error(R"(/a[k=v\)"),
            R"(invalid gNMI path '/a[k=v\': at character 8: '\' at the end escapes nothing)");
  EXPECT_EQ(parse_error("oc:interfaces"),
            "invalid gNMI path 'oc:interfaces': at character 4: expected '/' after the origin "
            "'oc:'");
  EXPECT_EQ(parse_error(""),
            "invalid gNMI path '': at character 1: empty path; a path starts "
            "with '/'");
  EXPECT_EQ(parse_error("/a/"),
            "invalid gNMI path '/a/': at character 4: empty element name (two '/' in a row or "
            "a trailing '/')");
}

TEST(GnmiPath, JoinKeepsThePrefixOrigin) {
  // Given a prefix and a relative path, then joining appends elements and keeps the origin.
  auto joined =
      join_paths(*parse_path("openconfig:/interfaces"), *parse_path("/interface[name=e1]/state"));
  EXPECT_EQ(joined.to_string(), "openconfig:/interfaces/interface[name=e1]/state");
}

}  // namespace
}  // namespace fabgate::gnmi
