#pragma once

// gNMI Set on fabgate-gnmid: all or nothing. Every operation is checked before anything is
// touched; then the changes are applied in gNMI's order (deletes, replaces, updates) and, if
// one fails, those already applied are undone in reverse order before the RPC fails.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/result.h"
#include "adapters/gnmi/path.h"
#include "adapters/gnmi/target/node.h"

namespace fabgate::gnmi::target {

struct SetChange {
  enum class Kind { remove, replace, update };
  Kind kind = Kind::update;
  GnmiPath path;  // full path, module prefixes stripped
  nlohmann::json value;
};

struct SetFailure {
  enum class Kind {
    invalid,        // a path or value fabgate-gnmid cannot set; nothing was touched
    not_found,      // the interface does not exist; earlier changes were undone
    rejected,       // the kernel refused a value; earlier changes were undone
    unimplemented,  // an operation it does not support (delete); nothing was touched
    undo_failed,    // a change failed AND undoing an earlier one failed: node left changed
  };
  Kind kind = Kind::invalid;
  std::string message;
};

// One applied change, for the SetResponse.
struct AppliedChange {
  SetChange::Kind kind;
  GnmiPath path;
};

Expected<std::vector<AppliedChange>, SetFailure> apply_set(Node& node,
                                                           const std::vector<SetChange>& changes);

}  // namespace fabgate::gnmi::target
