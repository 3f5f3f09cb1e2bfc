// A TypedValue a target sent, as the JSON text the rest of fabgate reads: JSON values are the
// target's data, so one nested deeper than fabgate reads is refused before it is dumped.

#include "adapters/gnmi/proto_convert.h"

#include <gtest/gtest.h>

namespace fabgate::gnmi {
namespace {

TEST(ProtoConvert, AJsonValueNestedTooDeeplyIsRefusedNotDumped) {
  // Given a json_ietf_val of 300,000 levels of nesting, then the conversion fails saying so
  // (the Get or Subscribe then fails naming the update), without overflowing the stack.
  ::gnmi::TypedValue value;
  value.set_json_ietf_val(std::string(300'000, '[') + std::string(300'000, ']'));
  auto converted = typed_value_to_json(value);
  ASSERT_FALSE(converted);
  EXPECT_EQ(converted.error().reason, "value is nested deeper than 64 levels");
}

TEST(ProtoConvert, AShallowJsonValueAndNonJsonTextKeepTheirMeaning) {
  // Given a well-formed JSON value and text that is not JSON, then the first comes back as
  // compact JSON and the second fails quoting its start.
  ::gnmi::TypedValue value;
  value.set_json_val(R"({"mtu": 9000})");
  auto converted = typed_value_to_json(value);
  ASSERT_TRUE(converted) << converted.error().reason;
  EXPECT_EQ(*converted, R"({"mtu":9000})");
  value.set_json_val("{\"mtu\":");
  auto broken = typed_value_to_json(value);
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().reason, "value is not valid JSON: {\"mtu\":");
}

}  // namespace
}  // namespace fabgate::gnmi
