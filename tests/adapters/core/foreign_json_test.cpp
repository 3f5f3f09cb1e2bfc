#include "adapters/core/foreign_json.h"

#include <gtest/gtest.h>

namespace fabgate {
namespace {

TEST(ForeignJson, AFieldOfAnotherTypeIsAbsentNeverAThrow) {
  // Given a probe-like report whose fields have unexpected types, then each typed lookup is
  // empty and says what the field held, so the caller can name it in a no-evidence reason.
  auto report = nlohmann::json::parse(
      R"({"verdict":3,"summary":"all good","flows":{"a":1},"sent":-4,"big":18446744073709551615,
          "ok":true,"ratio":0.5})");
  EXPECT_FALSE(string_member(report, "verdict"));
  EXPECT_EQ(member_kind(report, "verdict"), "an integer");
  EXPECT_EQ(string_member(report, "summary"), "all good");
  EXPECT_FALSE(object_member(report, "summary"));
  EXPECT_EQ(member_kind(report, "summary"), "a string");
  EXPECT_FALSE(array_member(report, "flows"));
  EXPECT_NE(object_member(report, "flows"), nullptr);
  EXPECT_FALSE(unsigned_member(report, "sent"));
  EXPECT_EQ(integer_member(report, "sent"), -4);
  EXPECT_FALSE(integer_member(report, "big"));  // does not fit in int64
  EXPECT_EQ(unsigned_member(report, "big"), 18446744073709551615ULL);
  EXPECT_FALSE(integer_member(report, "ratio"));
  EXPECT_EQ(number_member(report, "ratio"), 0.5);
  EXPECT_EQ(bool_member(report, "ok"), true);
  EXPECT_EQ(member_kind(report, "absent"), "missing");
  EXPECT_FALSE(string_member(nlohmann::json::array(), "verdict"));  // not an object at all
  EXPECT_EQ(json_kind(nlohmann::json::array()), "an array");        // a value, not a member
  EXPECT_EQ(json_kind(report["ratio"]), "a number");
  EXPECT_EQ(wrong_member(report, "verdict", "a string"),
            "field 'verdict' is an integer, not a string");
  EXPECT_EQ(wrong_member(report, "absent", "a string", "summary.absent"),
            "field 'summary.absent' is missing");
}

TEST(ForeignJson, DeepNestingIsRefusedBeforeItIsParsed) {
  // Given 300,000 levels of nesting (a hostile or broken probe host), then the parse is refused
  // with the reason, without recursion; brackets inside strings do not count.
  std::string deep(300'000, '[');
  deep += std::string(300'000, ']');
  auto parsed = parse_foreign_json(deep);
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.problem, "nested deeper than 64 levels");
  EXPECT_TRUE(parsed.too_deep);
  EXPECT_TRUE(parsed.document.is_discarded());

  EXPECT_EQ(json_nesting_depth(R"({"a":"[[[[[[","b":[{"c":"\"]]"}]})"), 3);
  auto shallow = parse_foreign_json(R"({"a":"[[[[[[[[","b":[1,2]})", 2);
  EXPECT_TRUE(shallow.ok()) << shallow.problem;
  EXPECT_EQ(parse_foreign_json("{\"a\":").problem, "not JSON");
  EXPECT_FALSE(parse_foreign_json("{\"a\":").too_deep);
}

}  // namespace
}  // namespace fabgate
