#include "adapters/gnmi/target/set_transaction.h"

#include <algorithm>
#include <optional>

namespace fabgate::gnmi::target {

namespace {

using nlohmann::json;

enum class Field { mtu, enabled };

// One leaf to change on one interface, with the value it had before, for the undo.
struct LeafAction {
  std::string interface;
  Field field = Field::mtu;
  int mtu = 0;
  bool enabled = false;
  std::string described;  // "/interfaces/interface[name=eth1]/config/mtu = 9000"
};

SetFailure invalid(const GnmiPath& path, const std::string& why) {
  return {SetFailure::Kind::invalid, path.to_string() + ": " + why};
}

// A leaf value may come bare (9000) or wrapped in its container member ({"mtu": 9000}).
const json& unwrap(const json& value, const char* leaf) {
  if (value.is_object() && value.size() == 1 && value.contains(leaf)) return value.at(leaf);
  return value;
}

Expected<int, SetFailure> mtu_value(const GnmiPath& path, const json& raw) {
  const json& value = unwrap(raw, "mtu");
  std::int64_t mtu = -1;
  if (value.is_number_integer())
    mtu = value.get<std::int64_t>();
  else if (value.is_string()) {
    try {
      std::size_t used = 0;
      mtu = std::stoll(value.get<std::string>(), &used);
      if (used != value.get<std::string>().size()) mtu = -1;
    } catch (const std::exception&) {
      mtu = -1;
    }
  }
  if (mtu < 1 || mtu > 65535) {
    return invalid(path, "mtu must be an integer from 1 to 65535 (uint16), got " + raw.dump());
  }
  return static_cast<int>(mtu);
}

Expected<bool, SetFailure> enabled_value(const GnmiPath& path, const json& raw) {
  const json& value = unwrap(raw, "enabled");
  if (!value.is_boolean()) return invalid(path, "enabled must be true or false, got " + raw.dump());
  return value.get<bool>();
}

// Checks one change and turns it into leaf actions; nothing is touched here.
Expected<std::vector<LeafAction>, SetFailure> plan_change(const SetChange& change) {
  const auto& elements = change.path.elements;
  bool shape = elements.size() >= 3 && elements.size() <= 4 && elements[0].name == "interfaces" &&
               elements[0].keys.empty() && elements[1].name == "interface" &&
               elements[1].keys.size() == 1 && elements[1].keys.contains("name") &&
               elements[2].name == "config" && elements[2].keys.empty() &&
               (elements.size() == 3 || elements[3].keys.empty());
  if (!shape) {
    return invalid(change.path,
                   "not settable; fabgate-gnmid sets /interfaces/interface[name=NAME]/config, "
                   "config/mtu and config/enabled");
  }
  const std::string& name = elements[1].keys.at("name");
  if (name == "*") return invalid(change.path, "Set needs a concrete interface name, not '*'");
  if (change.kind == SetChange::Kind::remove) {
    return SetFailure{SetFailure::Kind::unimplemented,
                      change.path.to_string() +
                          ": delete is not supported (mtu and enabled have no absent state "
                          "here); use update or replace with a value"};
  }
  std::string base = change.path.to_string();
  auto mtu_action = [&](int mtu) {
    return LeafAction{name, Field::mtu, mtu, false, base + " mtu=" + std::to_string(mtu)};
  };
  auto enabled_action = [&](bool enabled) {
    return LeafAction{name, Field::enabled, 0, enabled,
                      base + " enabled=" + (enabled ? "true" : "false")};
  };
  std::vector<LeafAction> actions;
  if (elements.size() == 4) {
    if (elements[3].name == "mtu") {
      auto mtu = mtu_value(change.path, change.value);
      if (!mtu) return mtu.error();
      actions.push_back(mtu_action(*mtu));
    } else if (elements[3].name == "enabled") {
      auto enabled = enabled_value(change.path, change.value);
      if (!enabled) return enabled.error();
      actions.push_back(enabled_action(*enabled));
    } else {
      return invalid(change.path, "leaf '" + elements[3].name +
                                      "' is not settable; settable leaves: mtu, enabled");
    }
    return actions;
  }
  if (!change.value.is_object()) {
    return invalid(change.path,
                   "a config container needs a JSON object, got " + change.value.dump());
  }
  for (const auto& [member, value] : change.value.items()) {
    if (member == "name") {
      if (!value.is_string() || value.get<std::string>() != name) {
        return invalid(change.path, "config/name must equal the list key '" + name + "'");
      }
    } else if (member == "mtu") {
      auto mtu = mtu_value(change.path, value);
      if (!mtu) return mtu.error();
      actions.push_back(mtu_action(*mtu));
    } else if (member == "enabled") {
      auto enabled = enabled_value(change.path, value);
      if (!enabled) return enabled.error();
      actions.push_back(enabled_action(*enabled));
    } else {
      return invalid(change.path,
                     "leaf '" + member + "' is not settable; settable leaves: mtu, enabled");
    }
  }
  // replace: leaves left out take their defaults; OpenConfig's enabled defaults to true,
  // mtu has no default and keeps its value.
  if (change.kind == SetChange::Kind::replace && !change.value.contains("enabled")) {
    actions.push_back(enabled_action(true));
  }
  return actions;
}

NodeResult<Ok> apply(Node& node, const LeafAction& action) {
  return action.field == Field::mtu ? node.set_mtu(action.interface, action.mtu)
                                    : node.set_enabled(action.interface, action.enabled);
}

}  // namespace

Expected<std::vector<AppliedChange>, SetFailure> apply_set(Node& node,
                                                           const std::vector<SetChange>& changes) {
  // gNMI order: all deletes, then replaces, then updates; stable within each kind.
  std::vector<const SetChange*> ordered;
  for (const auto& change : changes) ordered.push_back(&change);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const SetChange* a, const SetChange* b) { return a->kind < b->kind; });

  std::vector<LeafAction> actions;
  std::vector<AppliedChange> applied;
  for (const SetChange* change : ordered) {
    auto planned = plan_change(*change);
    if (!planned) return planned.error();
    actions.insert(actions.end(), planned->begin(), planned->end());
    applied.push_back({change->kind, change->path});
  }

  std::vector<LeafAction> undo;
  for (const auto& action : actions) {
    auto before = node.interface(action.interface);
    NodeResult<Ok> result = before ? apply(node, action) : NodeResult<Ok>(before.error());
    if (result) {
      LeafAction restore = action;
      restore.mtu = before->mtu;
      restore.enabled = before->admin_up;
      restore.described = "undo " + action.described;
      undo.push_back(restore);
      continue;
    }
    std::string message = action.described + ": " + result.error().message;
    std::vector<std::string> undo_errors;
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (auto undone = apply(node, *it); !undone) {
        undo_errors.push_back(it->described + ": " + undone.error().message);
      }
    }
    if (!undo_errors.empty()) {
      std::string all;
      for (const auto& error : undo_errors) all += "; " + error;
      return SetFailure{SetFailure::Kind::undo_failed,
                        message + "; undoing earlier changes FAILED, node left changed" + all};
    }
    std::string undone_note =
        undo.empty() ? "" : "; " + std::to_string(undo.size()) + " earlier change(s) undone";
    SetFailure::Kind kind = result.error().kind == NodeFailure::Kind::not_found
                                ? SetFailure::Kind::not_found
                                : SetFailure::Kind::rejected;
    return SetFailure{kind, message + undone_note};
  }
  return applied;
}

}  // namespace fabgate::gnmi::target
