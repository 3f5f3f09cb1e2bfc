#pragma once

// Conversions between fabgate's path and value types and the generated gnmi messages. Only the
// gRPC client and fabgate-gnmid include this (it pulls in generated protobuf headers).

#include <string>

#include "adapters/core/result.h"
#include "adapters/gnmi/path.h"
#include "adapters/gnmi/proto/gnmi.pb.h"

namespace fabgate::gnmi {

::gnmi::Path to_proto(const GnmiPath& path);
GnmiPath from_proto(const ::gnmi::Path& path);

// The value as JSON text: json_val / json_ietf_val as sent, scalars as JSON scalars, leaf
// lists as arrays. Fails for kinds fabgate cannot express as JSON (proto bytes, Any).
struct ValueError {
  std::string reason;
};
Expected<std::string, ValueError> typed_value_to_json(const ::gnmi::TypedValue& value);
// The same for a message the caller owns, without a second copy of a large value: json_val /
// json_ietf_val text is checked (depth-limited, then a parse that builds no document) and moved
// out of `value`, as sent rather than re-serialised. One Get of a route table is one such value
// of hundreds of MB; typed_value_to_json() would hold it as text, document and text again.
Expected<std::string, ValueError> take_typed_value_json(::gnmi::TypedValue& value);

}  // namespace fabgate::gnmi
