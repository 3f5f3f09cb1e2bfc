// changes/*.yaml: each change file with its targets, steps, rollback, probes and acceptance.
// The other half of the Loader (loader_internal.h): fabgate.yaml, the inventory and policies/ are
// read in loader.cpp.

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "adapters/core/text.h"
#include "adapters/core/yaml_reader.h"
#include "gates/intent/loader_internal.h"

namespace fabgate::intent::loading {
namespace {

constexpr std::string_view kLayers[] = {"link",      "control-plane", "forwarding",
                                        "transport", "workload",      "telemetry"};
// A probe may also say it proves the overlay (forwarding across VXLAN): reports keep it apart,
// so EVPN routes being present is never read as the overlay forwarding.
constexpr std::string_view kProbeLayers[] = {"link",      "control-plane", "forwarding", "overlay",
                                             "transport", "workload",      "telemetry"};

std::string yaml_to_json_text(const YAML::Node& node) {
  // Values of gNMI Set operations travel as JSON; YAML scalars that look like numbers or
  // booleans become JSON numbers/booleans, everything else strings.
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    static const std::regex number("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
    if (node.Tag() != "!" && (text == "true" || text == "false" || std::regex_match(text, number)))
      return text;
    std::string out = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  if (node.IsSequence()) {
    std::string out = "[";
    bool first = true;
    for (const auto& item : node) {
      if (!first) out += ",";
      out += yaml_to_json_text(item);
      first = false;
    }
    return out + "]";
  }
  if (node.IsMap()) {
    std::string out = "{";
    bool first = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!first) out += ",";
      out += "\"" + it->first.Scalar() + "\":" + yaml_to_json_text(it->second);
      first = false;
    }
    return out + "}";
  }
  return "null";
}

// YAML reads a leading '!' as a tag, so `run: ! grep -q x f` silently becomes
// `grep -q x f`, the opposite test. Commands must say what they mean.
// yaml-cpp gives quoted scalars the same "!" tag, so the source character decides.
bool starts_with_tag(const std::string& text, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size())
    return false;
  return text[static_cast<std::size_t>(mark.pos)] == '!';
}

void check_command_tag(YamlReader& reader, const std::string& source, const YAML::Node& map,
                       std::string_view key) {
  const YAML::Node value = map[std::string(key)];
  if (value.IsDefined() && value.IsScalar() && starts_with_tag(source, value.Mark())) {
    reader.error(value,
                 "'" + std::string(key) + "' starts with a YAML tag ('" + value.Tag() +
                     "'), which YAML removes from the command",
                 "quote the command: " + std::string(key) + ": \"! ...\"");
  }
}

// acceptance.expected_flaps: "DEVICE:INTERFACE" or "DEVICE:bgp ADDRESS", the device in the
// inventory. Each entry is checked where it stands, so a typo names its line and column.
std::vector<std::string> expected_flaps(YamlReader& reader, const YAML::Node& acceptance,
                                        const Inventory& inventory) {
  std::vector<std::string> out;
  auto list = reader.child(acceptance, "expected_flaps", Need::optional, "acceptance");
  if (!list || !reader.expect_sequence(*list, "acceptance.expected_flaps")) return out;
  for (const auto& item : *list) {
    const std::string text = item.IsScalar() ? item.as<std::string>() : std::string();
    const auto colon = text.find(':');
    const std::string device = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string subject = colon == std::string::npos ? "" : text.substr(colon + 1);
    if (device.empty() || subject.empty() || subject == "bgp" || subject == "bgp ") {
      reader.error(item,
                   "acceptance.expected_flaps entry '" + text +
                       "' is not DEVICE:INTERFACE or DEVICE:bgp ADDRESS",
                   "e.g. 'leaf1:to-host2' or 'spine1:bgp 10.0.1.1'");
      continue;
    }
    if (!inventory.find(device)) {
      std::vector<std::string> names;
      for (const auto& known : inventory.devices) names.push_back(known.name);
      std::string hint = "add it to the inventory or fix the name";
      if (auto near = nearest_word(device, names)) hint = "did you mean '" + *near + "'?";
      reader.error(
          item,
          "acceptance.expected_flaps names device '" + device + "', which is not in the inventory",
          hint);
      continue;
    }
    out.push_back(text);
  }
  return out;
}

}  // namespace

bool Loader::check_device(YamlReader& reader, const YAML::Node& where, const std::string& name,
                          const Inventory& inventory, std::string_view what) {
  if (inventory.find(name)) return true;
  std::vector<std::string> names;
  for (const auto& device : inventory.devices) names.push_back(device.name);
  std::string hint = "add it to the inventory or fix the name";
  if (auto s = nearest_word(name, names)) hint = "did you mean '" + *s + "'?";
  reader.error(where,
               std::string(what) + " names device '" + name + "', which is not in the inventory",
               hint);
  return false;
}

std::vector<std::string> Loader::resolve_targets(YamlReader& reader, const YAML::Node& list,
                                                 const Inventory& inventory) {
  std::vector<std::string> targets;
  auto add = [&](const std::string& name) {
    if (std::find(targets.begin(), targets.end(), name) == targets.end()) targets.push_back(name);
  };
  for (const auto& item : list) {
    if (!item.IsScalar()) {
      reader.error(item, "targets must be device names or role:ROLE");
      continue;
    }
    const std::string& text = item.Scalar();
    if (text.rfind("role:", 0) == 0) {
      std::string role = text.substr(5);
      std::size_t before = targets.size();
      for (const auto& device : inventory.devices)
        if (device.role == role) add(device.name);
      if (targets.size() == before)
        reader.error(item, "target '" + text + "' matches no device in the inventory");
      continue;
    }
    if (check_device(reader, item, text, inventory, "targets")) add(text);
  }
  return targets;
}

std::vector<Step> Loader::steps(YamlReader& reader, const YAML::Node& list, std::string_view what,
                                const std::vector<std::string>& targets,
                                const Inventory& inventory) {
  std::vector<Step> out;
  if (!reader.expect_sequence(list, what)) return out;
  int index = 0;
  for (const auto& node : list) {
    ++index;
    std::string label = std::string(what) + " #" + std::to_string(index);
    if (!reader.expect_map(node, label)) continue;
    reader.check_keys(node, {"device", "run", "gnmi", "description", "timeout"}, label);
    Step step;
    step.where = reader.at(node);
    auto device = reader.string(node, "device", Need::required, label);
    if (device) {
      step.device = *device;
      if (check_device(reader, node["device"], *device, inventory, label) &&
          std::find(targets.begin(), targets.end(), *device) == targets.end()) {
        reader.error(node["device"],
                     label + " acts on '" + *device + "', which is not a target of this change",
                     "add it to targets so bounds and waves cover it");
      }
    }
    if (auto v = reader.string(node, "description", Need::optional, label)) step.description = *v;
    if (auto v = reader.duration(node, "timeout", Need::optional, label)) step.timeout = *v;
    bool has_run = node["run"].IsDefined();
    bool has_gnmi = node["gnmi"].IsDefined();
    if (has_run == has_gnmi) {
      reader.error(node, label +
                             " must have exactly one of 'run' (a command over SSH) or "
                             "'gnmi' (a list of Set operations)");
    } else if (has_run) {
      check_command_tag(reader, source_, node, "run");
      if (auto v = reader.string(node, "run", Need::required, label)) step.run = *v;
    } else {
      const YAML::Node operations = node["gnmi"];
      if (reader.expect_sequence(operations, label + " gnmi")) {
        for (const auto& op_node : operations) {
          if (!reader.expect_map(op_node, label + " gnmi operation")) continue;
          reader.check_keys(op_node, {"op", "path", "value"}, label + " gnmi operation");
          GnmiSetOperation op;
          if (auto v = reader.choice(op_node, "op", Need::required, label + " gnmi operation",
                                     {"update", "replace", "delete"}))
            op.op = *v;
          if (auto v = reader.string(op_node, "path", Need::required, label + " gnmi operation"))
            op.path = *v;
          if (op_node["value"].IsDefined()) op.value = yaml_to_json_text(op_node["value"]);
          if (op.op == "delete" && !op.value.empty())
            reader.error(op_node["value"], "a gNMI delete takes no value");
          if ((op.op == "update" || op.op == "replace") && op.value.empty())
            reader.error(op_node, "a gNMI " + op.op + " needs a value");
          step.gnmi_set.push_back(std::move(op));
        }
      }
      if (device) {
        const Device* target = inventory.find(*device);
        if (target && !target->gnmi)
          reader.error(node["gnmi"], label + " uses gNMI but device '" + *device +
                                         "' has no gnmi endpoint in the inventory");
      }
    }
    out.push_back(std::move(step));
  }
  return out;
}

// Probe keys that only one kind reads (docs/probes.md, docs/monitoring.md).
constexpr const char* kCollectiveOnlyKeys[] = {"hosts",      "role",      "pattern",
                                               "iterations", "transport", "max_tail_ratio",
                                               "max_p99",    "tail_floor"};
constexpr const char* kPromqlOnlyKeys[] = {"query", "expect", "range", "empty_is_zero"};

// kind: collective — N ranks on N hosts (docs/probes.md). Keys of the other kinds are refused
// rather than ignored.
void Loader::collective_probe(YamlReader& reader, const YAML::Node& node, const std::string& label,
                              const Inventory& inventory, Probe& probe) {
  for (const char* key : {"host", "run", "target", "flows", "source"})
    if (node[key])
      reader.error(node[key], label + " (collective) does not take '" + key + "'",
                   "name the ranks with 'hosts' or 'role'");
  for (const char* key : kPromqlOnlyKeys)
    if (node[key])
      reader.error(node[key], label + " (collective) does not take '" + key + "'",
                   "'" + std::string(key) + "' is for promql probes");
  const bool has_hosts = static_cast<bool>(node["hosts"]);
  const bool has_role = static_cast<bool>(node["role"]);
  if (has_hosts == has_role) {
    reader.error(node, label + " (collective) needs exactly one of 'hosts' or 'role'",
                 "hosts: [host1, host2, ...] or role: host");
  } else if (has_hosts) {
    if (auto v = reader.string_list(node, "hosts", Need::required, label)) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < v->size(); ++i) {
        const std::string& host = (*v)[i];
        check_device(reader, node["hosts"][i], host, inventory, label);
        if (!seen.insert(host).second)
          reader.error(node["hosts"][i], label + " names host '" + host + "' twice",
                       "one rank per host");
        probe.hosts.push_back(host);
      }
    }
  } else if (auto role = reader.string(node, "role", Need::required, label)) {
    for (const auto& device : inventory.devices)
      if (device.role == *role) probe.hosts.push_back(device.name);
    if (probe.hosts.empty())
      reader.error(node["role"], label + ": no device in the inventory has role '" + *role + "'");
  }
  if (!probe.hosts.empty() && probe.hosts.size() < 2)
    reader.error(has_hosts ? node["hosts"] : node["role"],
                 label + " (collective) needs at least 2 ranks",
                 "one rank has no tail to compare: its p99 would be its own reference");
  if (!probe.hosts.empty()) probe.host = probe.hosts.front();
  if (auto v = reader.choice(node, "pattern", Need::optional, label, {"ring", "all-to-all"}))
    probe.pattern = *v;
  if (auto v = reader.integer(node, "size", Need::optional, label, 1, 256LL << 20))
    probe.collective_size = *v;
  if (auto v = reader.integer(node, "iterations", Need::optional, label, 1, 100000))
    probe.iterations = static_cast<int>(*v);
  if (auto v = reader.choice(node, "transport", Need::optional, label, {"tcp", "rdma"}))
    probe.transport = *v;
  if (auto v = reader.number(node, "max_tail_ratio", Need::optional, label)) {
    // Each rank's p99 is judged against the median p99 of the faster half (docs/probes.md): at
    // 1 or below, every rank at or above that reference fails on noise alone, which is at least
    // half of a healthy fabric. Above 1 any rank count from 2 on can fail: the reference stays
    // with the faster half however slow the others are.
    if (*v <= 1.0)
      reader.error(node["max_tail_ratio"], label + ": max_tail_ratio must be greater than 1",
                   "each rank's p99 over the median p99 of the faster half of the ranks; at 1 "
                   "half of a healthy fabric fails; 3 is a usual bound");
    else
      probe.max_tail_ratio = *v;
  }
  if (auto v = reader.duration(node, "max_p99", Need::optional, label)) probe.max_p99 = *v;
  if (auto v = reader.duration(node, "tail_floor", Need::optional, label)) probe.tail_floor = *v;
  if (auto v = reader.duration(node, "timeout", Need::optional, label)) probe.timeout = *v;
  if (!node["layer"]) probe.layer = "workload";
}

std::vector<Probe> Loader::probes(YamlReader& reader, const YAML::Node& list,
                                  const Inventory& inventory) {
  std::vector<Probe> out;
  if (!reader.expect_sequence(list, "acceptance.probes")) return out;
  std::set<std::string> names;
  int index = 0;
  for (const auto& node : list) {
    ++index;
    std::string label = "probe #" + std::to_string(index);
    if (!reader.expect_map(node, label)) continue;
    reader.check_keys(
        node, {"name",    "layer",      "host",      "kind",           "run",     "target",
               "flows",   "size",       "source",    "timeout",        "hosts",   "role",
               "pattern", "iterations", "transport", "max_tail_ratio", "max_p99", "tail_floor",
               "query",   "expect",     "range",     "empty_is_zero",  "proto"},
        label);
    Probe probe;
    probe.where = reader.at(node);
    if (auto v = reader.string(node, "name", Need::required, label)) {
      probe.name = *v;
      label = "probe '" + *v + "'";
      if (!names.insert(*v).second) reader.error(node["name"], "duplicate probe name '" + *v + "'");
    }
    if (auto v = reader.string(node, "layer", Need::optional, label)) {
      if (std::find(std::begin(kProbeLayers), std::end(kProbeLayers), *v) ==
          std::end(kProbeLayers)) {
        std::string hint =
            "layers: link, control-plane, forwarding, overlay, transport, workload, telemetry";
        if (auto s = nearest_word(*v, kProbeLayers)) hint = "did you mean '" + *s + "'? " + hint;
        reader.error(node["layer"], label + " has unknown layer '" + *v + "'", hint);
      } else {
        probe.layer = *v;
      }
    }
    if (auto v = reader.choice(node, "kind", Need::optional, label,
                               {"command", "flows", "rdma", "collective", "promql"}))
      probe.kind = *v;
    if (probe.kind == "collective") {
      collective_probe(reader, node, label, inventory, probe);
      out.push_back(std::move(probe));
      continue;
    }
    // Keys of the collective kind are refused rather than ignored: a rank list or a tail bound
    // written on a flows probe would otherwise read as checked while nothing uses it.
    for (const char* key : kCollectiveOnlyKeys)
      if (node[key].IsDefined())
        reader.error(node[key], label + " (" + probe.kind + ") does not take '" + key + "'",
                     "'" + std::string(key) + "' is for collective probes");
    if (auto v = reader.string(node, "host", Need::required, label)) {
      probe.host = *v;
      check_device(reader, node["host"], *v, inventory, label);
    }
    if (auto v = reader.string(node, "query", Need::optional, label)) probe.query = *v;
    if (auto v = reader.string(node, "expect", Need::optional, label)) probe.expect = *v;
    if (auto v = reader.boolean(node, "range", Need::optional, label)) probe.range = *v;
    if (auto v = reader.boolean(node, "empty_is_zero", Need::optional, label))
      probe.empty_is_zero = *v;
    if (probe.kind == "promql") {
      static const std::regex comparison(
          "\\s*(<|<=|==|!=|>=|>)\\s*-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?\\s*");
      if (probe.query.empty())
        reader.error(node, label + " is a promql probe without 'query'",
                     "a PromQL expression; {{series}} stands for the host's label matcher");
      if (!std::regex_match(probe.expect, comparison))
        reader.error(node["expect"].IsDefined() ? node["expect"] : node,
                     label + " needs 'expect', a comparison such as '< 5' or '== 0'",
                     "operators: < <= == != >= >, then a number");
      if (!has_prometheus_)
        reader.error(node, label +
                               " is a promql probe but fabgate.yaml has no "
                               "monitoring.prometheus");
    } else {
      for (auto key : kPromqlOnlyKeys)
        if (node[key].IsDefined())
          reader.error(node[key], label + ": '" + std::string(key) + "' is for promql probes");
    }
    check_command_tag(reader, source_, node, "run");
    if (auto v = reader.string(node, "run", Need::optional, label)) probe.run = *v;
    if (auto v = reader.string(node, "target", Need::optional, label)) probe.target = *v;
    if (auto v = reader.integer(node, "flows", Need::optional, label, 1, 1024))
      probe.flows = static_cast<int>(*v);
    if (auto v = reader.integer(node, "size", Need::optional, label, 16, 65507))
      probe.size = static_cast<int>(*v);
    if (auto v = reader.string(node, "source", Need::optional, label)) {
      probe.source = *v;
      const Device* host = inventory.find(probe.host);
      if (host && std::find(host->data_addresses.begin(), host->data_addresses.end(), *v) ==
                      host->data_addresses.end())
        reader.error(node["source"],
                     label + " sends from " + *v + ", which is not a data address of " + probe.host,
                     "list it in the host's data_addresses in the inventory");
    }
    if ((probe.size != 0 || !probe.source.empty()) && probe.kind != "flows")
      reader.error(node, label + ": size and source apply to flows probes only");
    if (auto v = reader.choice(node, "proto", Need::optional, label, {"udp", "tcp", "icmp"})) {
      probe.protocol = *v;
      if (probe.kind != "flows")
        reader.error(node["proto"], label + ": proto applies to flows probes only");
      // TCP re-segments the stream: a size would read as a frame size that nothing enforces.
      if (*v == "tcp" && probe.size != 0)
        reader.error(node["size"], label + ": size applies to udp and icmp flows, not tcp",
                     "TCP re-segments what it sends, so no frame size can be asked of it");
    }
    if (auto v = reader.duration(node, "timeout", Need::optional, label)) probe.timeout = *v;
    if (probe.kind == "command" && probe.run.empty())
      reader.error(node, label + " is a command probe without 'run'",
                   "give the command whose exit status is the verdict");
    if (probe.kind != "command" && probe.kind != "promql" && probe.target.empty())
      reader.error(node, label + " (" + probe.kind + ") needs a 'target' to send to");
    if (probe.kind == "flows" && probe.flows == 0) probe.flows = 16;
    out.push_back(std::move(probe));
  }
  return out;
}

// out_of_service / back_in_service: [DEVICE, ...], each a target of the change, at most once,
// and never in both lists.
std::vector<std::string> Loader::service_devices(YamlReader& reader, const YAML::Node& list,
                                                 std::string_view what, const Change& change,
                                                 const Inventory& inventory) {
  std::vector<std::string> out;
  if (!reader.expect_sequence(list, what)) return out;
  for (const auto& item : list) {
    if (!item.IsScalar()) {
      reader.error(item, std::string(what) + " must list device names");
      continue;
    }
    const std::string& device = item.Scalar();
    if (!check_device(reader, item, device, inventory, what)) continue;
    if (std::find(change.targets.begin(), change.targets.end(), device) == change.targets.end()) {
      reader.error(item,
                   std::string(what) + " names '" + device +
                       "', which is not a target of this change",
                   "only a target's service state can change with it");
      continue;
    }
    if (std::find(out.begin(), out.end(), device) != out.end()) {
      reader.error(item, std::string(what) + " names '" + device + "' twice");
      continue;
    }
    out.push_back(device);
  }
  return out;
}

// not_wanted: {GATE: why}. A gate that makes no real check is no-evidence unless the change
// says here, with a reason the reviewer reads, that it does not want it. Only gates whose
// absence a change can justify may be named, and "probes" only when it declares none.
static std::map<std::string, std::string> gates_not_wanted(YamlReader& reader,
                                                           const YAML::Node& node,
                                                           const Change& change) {
  std::map<std::string, std::string> out;
  if (!reader.expect_map(node, "not_wanted")) return out;
  const auto& gates = not_wantable_gates();
  std::vector<std::string_view> allowed(gates.begin(), gates.end());
  reader.check_keys(node, allowed, "not_wanted");
  for (const auto& gate : gates) {
    auto why = reader.string(node, gate, Need::optional, "not_wanted");
    if (!why) continue;
    if (trim(*why).empty()) {
      reader.error(node[gate], "not_wanted." + gate + " needs a reason",
                   "say why the change needs no " + gate + " gate; the reviewer reads it");
      continue;
    }
    if (gate == "probes" && !change.acceptance.probes.empty()) {
      reader.error(node[gate], "not_wanted.probes, but the change declares acceptance.probes",
                   "remove one of the two");
      continue;
    }
    out[gate] = *why;
  }
  return out;
}

std::optional<Change> Loader::change(const std::string& path, const Inventory& inventory,
                                     const Settings& settings,
                                     const std::set<std::string>& rule_set_names) {
  auto root = parse(path, Need::required);
  if (!root) return std::nullopt;
  YamlReader reader(display(path), diagnostics_);
  if (!reader.expect_map(*root, "change")) return std::nullopt;
  reader.check_keys(*root,
                    {"id", "title", "description", "targets", "window", "bounds", "confirm_timeout",
                     "steps", "rollback", "acceptance", "compare", "not_wanted", "out_of_service",
                     "back_in_service"},
                    "change");
  Change change;
  change.file = path;
  change.where = reader.at(*root);
  if (auto v = reader.string(*root, "id", Need::required, "change")) {
    change.id = *v;
    if (!is_valid_identifier(*v))
      reader.error((*root)["id"], "change id '" + *v + "' is not a valid id",
                   "use letters, digits, '.', '_' and '-'; it names the evidence folder");
  }
  if (auto v = reader.string(*root, "title", Need::required, "change")) change.title = *v;
  reader.string(*root, "description", Need::optional, "change");

  if (auto targets = reader.child(*root, "targets", Need::required, "change")) {
    if (reader.expect_sequence(*targets, "targets"))
      change.targets = resolve_targets(reader, *targets, inventory);
  }

  if (auto window = reader.child(*root, "window", Need::optional, "change")) {
    if (reader.expect_map(*window, "window")) {
      reader.check_keys(*window, {"start", "end"}, "window");
      auto start = reader.time(*window, "start", Need::required, "window");
      auto end = reader.time(*window, "end", Need::required, "window");
      if (start && end) {
        if (*end <= *start)
          reader.error((*window)["end"], "window ends before it starts",
                       "end must be later than start");
        else
          change.window = Window{*start, *end};
      }
    }
  }

  bool deadline_known = false;  // checks against the deadline only when it was readable
  const YAML::Node* bounds_node = nullptr;
  YAML::Node bounds_holder;
  if (auto bounds = reader.child(*root, "bounds", Need::required, "change")) {
    bounds_holder = *bounds;
    bounds_node = &bounds_holder;
    if (reader.expect_map(*bounds, "bounds")) {
      reader.check_keys(*bounds,
                        {"max_targets", "step_timeout", "rollback_timeout", "deadline", "waves"},
                        "bounds");
      if (auto v = reader.integer(*bounds, "max_targets", Need::required, "bounds", 1, 100000))
        change.bounds.max_targets = static_cast<int>(*v);
      if (auto v = reader.duration(*bounds, "step_timeout", Need::required, "bounds"))
        change.bounds.step_timeout = *v;
      if (auto v = reader.duration(*bounds, "deadline", Need::required, "bounds")) {
        change.bounds.deadline = *v;
        deadline_known = true;
      }
      if (deadline_known && change.bounds.step_timeout > change.bounds.deadline)
        reader.error((*bounds)["step_timeout"], "step_timeout is longer than the deadline");
      // Not bounded by the deadline: a rollback runs whatever time is left.
      if (auto v = reader.duration(*bounds, "rollback_timeout", Need::optional, "bounds")) {
        change.bounds.rollback_timeout = *v;
        if (*v < change.bounds.step_timeout)
          reader.error((*bounds)["rollback_timeout"],
                       "rollback_timeout (" + format_duration(*v) +
                           ") is shorter than step_timeout (" +
                           format_duration(change.bounds.step_timeout) +
                           "): a rollback step needs at least the patience of a change step",
                       "leave it out for the default, max(3 x step_timeout, 1m)");
      }
      if (auto waves = reader.child(*bounds, "waves", Need::optional, "bounds")) {
        if (reader.expect_sequence(*waves, "waves")) {
          std::map<std::string, int> wave_of;
          int wave_index = 0;
          for (const auto& wave : *waves) {
            ++wave_index;
            std::vector<std::string> members;
            if (!reader.expect_sequence(wave, "wave " + std::to_string(wave_index))) continue;
            for (const auto& member : wave) {
              if (!member.IsScalar()) {
                reader.error(member, "wave members must be device names");
                continue;
              }
              const std::string& name = member.Scalar();
              if (std::find(change.targets.begin(), change.targets.end(), name) ==
                  change.targets.end()) {
                reader.error(member, "wave " + std::to_string(wave_index) + " names '" + name +
                                         "', which is not a target of this change");
                continue;
              }
              if (wave_of.count(name)) {
                reader.error(member,
                             "'" + name + "' is in wave " + std::to_string(wave_of[name]) +
                                 " and wave " + std::to_string(wave_index),
                             "each target belongs to exactly one wave");
                continue;
              }
              wave_of[name] = wave_index;
              members.push_back(name);
            }
            change.bounds.waves.push_back(members);
          }
          for (const auto& target : change.targets)
            if (!wave_of.count(target))
              reader.error(*waves, "target '" + target + "' is in no wave",
                           "add it to a wave, or drop waves to change all targets at once");
        }
      }
    }
  }
  if (static_cast<int>(change.targets.size()) > change.bounds.max_targets) {
    reader.error(bounds_node ? (*bounds_node)["max_targets"] : *root,
                 "the change targets " + std::to_string(change.targets.size()) +
                     " devices but bounds.max_targets is " +
                     std::to_string(change.bounds.max_targets),
                 "narrow the targets or raise max_targets deliberately");
  }

  if (auto v = reader.duration(*root, "confirm_timeout", Need::optional, "change")) {
    change.confirm_timeout = *v;
    if (deadline_known && *v < change.bounds.deadline)
      reader.error((*root)["confirm_timeout"],
                   "confirm_timeout (" + format_duration(*v) + ") is shorter than the deadline (" +
                       format_duration(change.bounds.deadline) + ")",
                   "the device would revert a change that is still being verified");
  }

  if (auto list = reader.child(*root, "steps", Need::required, "change"))
    change.steps = steps(reader, *list, "step", change.targets, inventory);
  if (auto list = reader.child(*root, "rollback", Need::optional, "change"))
    change.rollback = steps(reader, *list, "rollback step", change.targets, inventory);
  // A device with steps but no rollback is not a schema problem: `validate` reports it, and the
  // rollback-plan gate refuses such a change (exit 3) before anything is touched.

  if (auto acceptance = reader.child(*root, "acceptance", Need::optional, "change")) {
    if (reader.expect_map(*acceptance, "acceptance")) {
      reader.check_keys(*acceptance,
                        {"settle", "probes", "during", "expected_alerts", "expected_flaps",
                         "telemetry_max_gap", "restore_dwell"},
                        "acceptance");
      if (auto v = reader.string_list(*acceptance, "expected_alerts", Need::optional, "acceptance"))
        change.acceptance.expected_alerts = *v;
      if (auto v = reader.duration(*acceptance, "telemetry_max_gap", Need::optional, "acceptance"))
        change.acceptance.telemetry_max_gap = *v;
      change.acceptance.expected_flaps = expected_flaps(reader, *acceptance, inventory);
      if (auto v = reader.duration(*acceptance, "settle", Need::optional, "acceptance"))
        change.acceptance.settle = *v;
      if (auto v = reader.duration(*acceptance, "restore_dwell", Need::optional, "acceptance")) {
        // Longer than the lock's lease would leave the devices unlocked while verifying.
        if (*v > Duration{600'000})
          reader.error((*acceptance)["restore_dwell"],
                       "acceptance.restore_dwell is longer than 10 minutes",
                       "the restored state is watched this long after the rollback; 5s to 60s "
                       "is usual");
        else
          change.acceptance.restore_dwell = *v;
      }
      if (auto list = reader.child(*acceptance, "probes", Need::optional, "acceptance"))
        change.acceptance.probes = probes(reader, *list, inventory);
      if (auto during = reader.child(*acceptance, "during", Need::optional, "acceptance")) {
        if (reader.expect_map(*during, "acceptance.during")) {
          reader.check_keys(*during, {"host", "target", "flows", "max_disruption", "interval"},
                            "acceptance.during");
          WatchProbe watch;
          watch.where = reader.at(*during);
          if (auto v = reader.string(*during, "host", Need::required, "acceptance.during")) {
            watch.host = *v;
            check_device(reader, (*during)["host"], *v, inventory, "acceptance.during");
          }
          if (auto v = reader.string(*during, "target", Need::required, "acceptance.during"))
            watch.target = *v;
          if (auto v =
                  reader.integer(*during, "flows", Need::optional, "acceptance.during", 1, 256))
            watch.flows = static_cast<int>(*v);
          if (auto v =
                  reader.duration(*during, "max_disruption", Need::required, "acceptance.during"))
            watch.max_disruption = *v;
          if (auto v = reader.duration(*during, "interval", Need::optional, "acceptance.during")) {
            if (*v < Duration{10} || *v > Duration{100})
              reader.error((*during)["interval"],
                           "interval must be 10ms-100ms (the watch's resolution; default 20ms)");
            else
              watch.interval = *v;
          }
          change.acceptance.during = watch;
        }
      }
    }
  }

  if (auto compare = reader.child(*root, "compare", Need::optional, "change")) {
    if (reader.expect_map(*compare, "compare")) {
      reader.check_keys(*compare, {"rule_sets", "expected"}, "compare");
      if (auto v = reader.string_list(*compare, "rule_sets", Need::optional, "compare")) {
        change.compare.rule_sets = *v;
        for (std::size_t i = 0; i < v->size(); ++i) {
          const std::string& name = (*v)[i];
          if (!rule_set_names.count(name)) {
            std::vector<std::string> known(rule_set_names.begin(), rule_set_names.end());
            std::string hint = "rule sets: " + join(known, ", ");
            if (auto s = nearest_word(name, known)) hint = "did you mean '" + *s + "'?";
            reader.error((*compare)["rule_sets"][i], "unknown rule set '" + name + "'", hint);
          }
        }
      }
      if (auto list = reader.child(*compare, "expected", Need::optional, "compare")) {
        if (reader.expect_sequence(*list, "compare.expected")) {
          for (const auto& node : *list) {
            if (!reader.expect_map(node, "expected difference")) continue;
            reader.check_keys(node, {"device", "path", "values", "absent"}, "expected difference");
            ExpectedDifference expected;
            expected.where = reader.at(node);
            if (auto v = reader.string(node, "device", Need::required, "expected difference")) {
              expected.device = *v;
              // A change on one device legitimately changes its neighbours (a drained
              // spine's peers lose their sessions), so any inventory device may be named.
              if (*v != "*")
                check_device(reader, node["device"], *v, inventory, "expected difference");
            }
            if (auto v = reader.string(node, "path", Need::required, "expected difference")) {
              expected.path = *v;
              if (v->rfind("devices.", 0) == 0)
                reader.error(node["path"], "expected path must be relative to the device",
                             "write 'bgp.peers.*.state', not 'devices.X.bgp...'");
            }
            if (node["values"].IsDefined()) {
              if (auto v = reader.string_list(node, "values", Need::optional, "expected difference",
                                              true))
                expected.values = *v;
            }
            if (auto v = reader.boolean(node, "absent", Need::optional, "expected difference"))
              expected.absent = *v;
            if (expected.absent && !expected.values.empty())
              reader.error(node, "an expected difference is either absent or has values, not both");
            change.compare.expected.push_back(std::move(expected));
          }
        }
      }
    }
  }
  if (auto not_wanted = reader.child(*root, "not_wanted", Need::optional, "change"))
    change.not_wanted = gates_not_wanted(reader, *not_wanted, change);
  if (auto list = reader.child(*root, "out_of_service", Need::optional, "change"))
    change.out_of_service = service_devices(reader, *list, "out_of_service", change, inventory);
  if (auto list = reader.child(*root, "back_in_service", Need::optional, "change")) {
    change.back_in_service = service_devices(reader, *list, "back_in_service", change, inventory);
    for (const auto& item : *list)
      if (item.IsScalar() && std::find(change.out_of_service.begin(), change.out_of_service.end(),
                                       item.Scalar()) != change.out_of_service.end())
        reader.error(item,
                     "'" + item.Scalar() + "' is in both out_of_service and back_in_service",
                     "a change either leaves a device out of service or returns it");
  }
  (void)settings;
  return change;
}

std::vector<Change> Loader::load_changes(const Settings& settings, const Inventory& inventory,
                                         const std::set<std::string>& rule_set_names) {
  has_prometheus_ = settings.monitoring.prometheus.has_value();
  std::vector<Change> changes;
  std::map<std::string, std::string> file_of_id;
  for (const auto& path : files_.list(settings.changes_dir)) {
    if (!is_yaml_file(path)) continue;
    auto change = this->change(path, inventory, settings, rule_set_names);
    if (!change) continue;
    if (!change->id.empty()) {
      auto [it, inserted] = file_of_id.emplace(change->id, path);
      if (!inserted) {
        diagnostics_.error(change->where, "duplicate change id '" + change->id + "'",
                           "also used by " + display(it->second) +
                               "; ids name evidence folders "
                               "and must be unique");
      }
    }
    changes.push_back(std::move(*change));
  }
  return changes;
}

}  // namespace fabgate::intent::loading
