#include "adapters/gnmi/proto_convert.h"

#include <nlohmann/json.hpp>

#include "adapters/core/foreign_json.h"

namespace fabgate::gnmi {

namespace {

Expected<nlohmann::json, ValueError> typed_value_to_dom(const ::gnmi::TypedValue& value) {
  using nlohmann::json;
  using V = ::gnmi::TypedValue;
  switch (value.value_case()) {
    case V::kStringVal:
      return json(value.string_val());
    case V::kAsciiVal:
      return json(value.ascii_val());
    case V::kIntVal:
      return json(value.int_val());
    case V::kUintVal:
      return json(value.uint_val());
    case V::kBoolVal:
      return json(value.bool_val());
    case V::kFloatVal:
      return json(static_cast<double>(value.float_val()));
    case V::kDoubleVal:
      return json(value.double_val());
    case V::kDecimalVal: {
      double scaled = static_cast<double>(value.decimal_val().digits());
      for (std::uint32_t i = 0; i < value.decimal_val().precision(); ++i) scaled /= 10.0;
      return json(scaled);
    }
    case V::kJsonVal:
    case V::kJsonIetfVal: {
      const std::string& text =
          value.value_case() == V::kJsonVal ? value.json_val() : value.json_ietf_val();
      // Depth-limited: the DOM is dumped (recursively) into the update's JSON text.
      auto parsed = parse_foreign_json(text);
      if (parsed.ok()) return std::move(parsed.document);
      if (parsed.too_deep) return ValueError{"value is " + parsed.problem};
      return ValueError{"value is not valid JSON: " + text.substr(0, 80)};
    }
    case V::kLeaflistVal: {
      json list = json::array();
      for (const auto& element : value.leaflist_val().element()) {
        auto item = typed_value_to_dom(element);
        if (!item) return item.error();
        list.push_back(std::move(item.value()));
      }
      return list;
    }
    case V::kBytesVal:
      return ValueError{"BYTES values are not supported; ask for JSON or JSON_IETF"};
    case V::kProtoBytes:
      return ValueError{"PROTO values are not supported; ask for JSON or JSON_IETF"};
    case V::kAnyVal:
      return ValueError{"Any values are not supported; ask for JSON or JSON_IETF"};
    case V::VALUE_NOT_SET:
      return ValueError{"update carries no value"};
  }
  return ValueError{"unknown TypedValue kind"};
}

}  // namespace

Expected<std::string, ValueError> take_typed_value_json(::gnmi::TypedValue& value) {
  using V = ::gnmi::TypedValue;
  if (value.value_case() != V::kJsonVal && value.value_case() != V::kJsonIetfVal)
    return typed_value_to_json(value);
  std::string& text = value.value_case() == V::kJsonVal ? *value.mutable_json_val()
                                                        : *value.mutable_json_ietf_val();
  if (json_nesting_depth(text) > kForeignJsonMaxDepth)
    return ValueError{"value is nested deeper than " + std::to_string(kForeignJsonMaxDepth) +
                      " levels"};
  if (!nlohmann::json::accept(text))
    return ValueError{"value is not valid JSON: " + text.substr(0, 80)};
  return std::move(text);
}

::gnmi::Path to_proto(const GnmiPath& path) {
  ::gnmi::Path out;
  out.set_origin(path.origin);
  for (const auto& element : path.elements) {
    ::gnmi::PathElem* elem = out.add_elem();
    elem->set_name(element.name);
    for (const auto& [key, value] : element.keys) (*elem->mutable_key())[key] = value;
  }
  return out;
}

GnmiPath from_proto(const ::gnmi::Path& path) {
  GnmiPath out;
  out.origin = path.origin();
  for (const auto& elem : path.elem()) {
    PathElement element{elem.name(), {}};
    for (const auto& [key, value] : elem.key()) element.keys[key] = value;
    out.elements.push_back(std::move(element));
  }
  return out;
}

Expected<std::string, ValueError> typed_value_to_json(const ::gnmi::TypedValue& value) {
  auto dom = typed_value_to_dom(value);
  if (!dom) return dom.error();
  return dom->dump();
}

}  // namespace fabgate::gnmi
