#include "gates/inventory/ansible_import.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "adapters/core/text.h"
#include "adapters/core/yaml_reader.h"

namespace fabgate::inventory {
namespace {

struct Variable {
  std::string value;
  SourceLocation where;
};
using Variables = std::map<std::string, Variable>;

struct Group {
  std::vector<std::string> hosts;
  std::vector<std::string> children;
  Variables vars;
};

struct Host {
  std::vector<std::string> groups;  // that list it directly, in file order
  Variables vars;
  SourceLocation where;  // first mention
};

// An inventory in the form both syntaxes read into.
struct Inventory {
  std::map<std::string, Group> groups;
  std::map<std::string, Host> hosts;
  std::vector<std::string> order;  // host names, first mention first

  Host& host(const std::string& name, const SourceLocation& where) {
    auto [it, added] = hosts.try_emplace(name);
    if (added) {
      it->second.where = where;
      order.push_back(name);
    }
    return it->second;
  }
  void add_to_group(const std::string& group, const std::string& name,
                    const SourceLocation& where) {
    auto& member = host(name, where);
    auto& listed = groups[group].hosts;
    if (std::find(listed.begin(), listed.end(), name) == listed.end()) listed.push_back(name);
    if (std::find(member.groups.begin(), member.groups.end(), group) == member.groups.end())
      member.groups.push_back(group);
  }

  // The host's own value, else its groups' (direct first, then their parents, breadth first),
  // else all's.
  const Variable* lookup(const std::string& name, const std::string& key) const {
    const Host& host = hosts.at(name);
    if (auto found = host.vars.find(key); found != host.vars.end()) return &found->second;
    std::vector<std::string> queue = host.groups;
    std::set<std::string> seen(queue.begin(), queue.end());
    for (std::size_t i = 0; i < queue.size(); ++i) {
      if (auto group = groups.find(queue[i]); group != groups.end())
        if (auto found = group->second.vars.find(key); found != group->second.vars.end())
          return &found->second;
      for (const auto& [parent, definition] : groups)
        if (std::find(definition.children.begin(), definition.children.end(), queue[i]) !=
                definition.children.end() &&
            seen.insert(parent).second)
          queue.push_back(parent);
    }
    if (auto all = groups.find("all"); all != groups.end())
      if (auto found = all->second.vars.find(key); found != all->second.vars.end())
        return &found->second;
    return nullptr;
  }
};

// "leaf[01:04]" -> leaf01 .. leaf04, "rack[a:c]-tor" -> racka-tor .. rackc-tor, with an
// optional step ("[1:9:2]"); a name without brackets is itself. Empty with `problem` set
// when the pattern is malformed.
std::vector<std::string> expand_hosts(const std::string& pattern, std::string& problem) {
  auto open = pattern.find('[');
  if (open == std::string::npos) return {pattern};
  auto close = pattern.find(']', open);
  if (close == std::string::npos) {
    problem = "host pattern '" + pattern + "' has '[' without ']'";
    return {};
  }
  std::string head = pattern.substr(0, open), tail = pattern.substr(close + 1);
  auto parts = std::vector<std::string>{};
  std::string inside = pattern.substr(open + 1, close - open - 1);
  for (std::size_t start = 0;;) {
    auto colon = inside.find(':', start);
    parts.push_back(inside.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  auto bad = [&] {
    problem = "host pattern '" + pattern + "': expected [FIRST:LAST] or [FIRST:LAST:STEP]";
    return std::vector<std::string>{};
  };
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty()) return bad();
  int step = 1;
  if (parts.size() == 3) {
    if (parts[2].empty() || parts[2].find_first_not_of("0123456789") != std::string::npos)
      return bad();
    step = std::stoi(parts[2]);
    if (step < 1) return bad();
  }
  std::vector<std::string> names;
  auto digits = [](const std::string& s) {
    return s.size() <= 6 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (digits(parts[0]) && digits(parts[1])) {
    int first = std::stoi(parts[0]), last = std::stoi(parts[1]);
    if (first > last || last - first > 100'000) return bad();
    std::size_t width = parts[0].size() > 1 && parts[0][0] == '0' ? parts[0].size() : 0;
    for (int n = first; n <= last; n += step) {
      std::string number = std::to_string(n);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      for (auto& rest : expand_hosts(tail, problem)) names.push_back(head + number + rest);
    }
  } else if (parts[0].size() == 1 && parts[1].size() == 1 && std::isalpha(parts[0][0]) &&
             std::isalpha(parts[1][0]) && parts[0][0] <= parts[1][0]) {
    for (char c = parts[0][0]; c <= parts[1][0]; c = static_cast<char>(c + step))
      for (auto& rest : expand_hosts(tail, problem)) names.push_back(head + c + rest);
  } else {
    return bad();
  }
  return problem.empty() ? names : std::vector<std::string>{};
}

// ---- INI ------------------------------------------------------------------------------------

// Splits "a b='c d' e" at blanks outside quotes; quotes are removed.
std::vector<std::string> split_words(std::string_view line, bool& unbalanced) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  bool in_word = false;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  unbalanced = quote != 0;
  if (in_word) words.push_back(std::move(word));
  return words;
}

void read_ini(std::string_view text, const std::string& file, Inventory& inventory,
              Diagnostics& problems) {
  enum class Section { hosts, vars, children };
  std::string group = "ungrouped";
  Section section = Section::hosts;
  auto lines = split_lines(text);
  for (std::size_t index = 0; index < lines.size(); ++index) {
    SourceLocation where{file, static_cast<int>(index + 1), 1};
    std::string_view line = trim(lines[index]);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) {
        problems.error(where, "section header '" + std::string(line) +
                                  "' is not [NAME], "
                                  "[NAME:vars] or [NAME:children]");
        continue;
      }
      std::string header(line.substr(1, line.size() - 2));
      auto colon = header.find(':');
      group = header.substr(0, colon);
      std::string kind = colon == std::string::npos ? "" : header.substr(colon + 1);
      if (kind.empty()) {
        section = Section::hosts;
      } else if (kind == "vars") {
        section = Section::vars;
      } else if (kind == "children") {
        section = Section::children;
      } else {
        problems.error(where, "section '[" + header + "]': unknown suffix ':" + kind + "'",
                       "use [" + group + "], [" + group + ":vars] or [" + group + ":children]");
        section = Section::hosts;
      }
      inventory.groups[group];
      continue;
    }
    bool unbalanced = false;
    if (section == Section::vars) {
      auto equals = line.find('=');
      if (equals == std::string_view::npos || trim(line.substr(0, equals)).empty()) {
        problems.error(
            where, "expected KEY=VALUE in [" + group + ":vars], got '" + std::string(line) + "'");
        continue;
      }
      auto words = split_words(trim(line.substr(equals + 1)), unbalanced);
      if (unbalanced) problems.error(where, "unbalanced quote in '" + std::string(line) + "'");
      inventory.groups[group].vars[std::string(trim(line.substr(0, equals)))] = {
          words.empty() ? "" : join(words, " "), where};
      continue;
    }
    if (section == Section::children) {
      auto& children = inventory.groups[group].children;
      children.emplace_back(line);
      inventory.groups[std::string(line)];
      continue;
    }
    auto words = split_words(line, unbalanced);
    if (unbalanced) {
      problems.error(where, "unbalanced quote in '" + std::string(line) + "'");
      continue;
    }
    std::string pattern = words.front();
    std::optional<Variable> port;
    // "host:2222" is a host with its ssh port (but "[a:b]" ranges hold colons too).
    if (auto colon = pattern.rfind(':');
        colon != std::string::npos && pattern.find(']', colon) == std::string::npos) {
      port = Variable{pattern.substr(colon + 1), where};
      pattern.erase(colon);
    }
    std::string problem;
    auto names = expand_hosts(pattern, problem);
    if (!problem.empty()) {
      problems.error(where, problem);
      continue;
    }
    Variables vars;
    if (port) vars["ansible_port"] = *port;
    bool good = true;
    for (std::size_t w = 1; w < words.size(); ++w) {
      auto equals = words[w].find('=');
      if (equals == std::string::npos || equals == 0) {
        problems.error(where, "host " + pattern + ": expected KEY=VALUE, got '" + words[w] + "'");
        good = false;
        continue;
      }
      vars[words[w].substr(0, equals)] = {words[w].substr(equals + 1), where};
    }
    if (!good) continue;
    for (const auto& name : names) {
      inventory.add_to_group(group, name, where);
      for (const auto& [key, value] : vars) inventory.hosts[name].vars[key] = value;
    }
  }
}

// ---- YAML -----------------------------------------------------------------------------------

void read_yaml_vars(YamlReader& reader, const YAML::Node& map, Variables& into,
                    const std::string& what) {
  if (!reader.expect_map(map, what)) return;
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = it->first.as<std::string>();
    if (!it->second.IsScalar()) continue;  // lists and maps are nothing fabgate reads
    into[key] = {it->second.Scalar(), reader.at(it->second)};
  }
}

void read_yaml_group(YamlReader& reader, const std::string& name, const YAML::Node& group,
                     Inventory& inventory, int depth) {
  inventory.groups[name];
  if (!group || group.IsNull()) return;
  if (depth > 32) {
    reader.error(group, "group '" + name + "' is nested more than 32 deep");
    return;
  }
  std::string what = "group '" + name + "'";
  if (!reader.expect_map(group, what)) return;
  reader.check_keys(group, {"hosts", "vars", "children"}, what);
  if (auto vars = group["vars"]; vars && !vars.IsNull())
    read_yaml_vars(reader, vars, inventory.groups[name].vars, what + " vars");
  if (auto hosts = group["hosts"];
      hosts && !hosts.IsNull() && reader.expect_map(hosts, what + " hosts")) {
    for (auto it = hosts.begin(); it != hosts.end(); ++it) {
      std::string pattern = it->first.as<std::string>();
      std::string problem;
      auto names = expand_hosts(pattern, problem);
      if (!problem.empty()) {
        reader.error(it->first, problem);
        continue;
      }
      Variables vars;
      if (it->second && !it->second.IsNull())
        read_yaml_vars(reader, it->second, vars, "host '" + pattern + "'");
      for (const auto& host : names) {
        inventory.add_to_group(name, host, reader.at(it->first));
        for (const auto& [key, value] : vars) inventory.hosts[host].vars[key] = value;
      }
    }
  }
  if (auto children = group["children"];
      children && !children.IsNull() && reader.expect_map(children, what + " children")) {
    for (auto it = children.begin(); it != children.end(); ++it) {
      std::string child = it->first.as<std::string>();
      auto& listed = inventory.groups[name].children;
      if (std::find(listed.begin(), listed.end(), child) == listed.end()) listed.push_back(child);
      read_yaml_group(reader, child, it->second, inventory, depth + 1);
    }
  }
}

bool is_yaml_file(const std::string& file) {
  for (std::string_view suffix : {".yml", ".yaml", ".json"})
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  return false;
}

// ansible_network_os -> fabgate platform, by its last dotted part.
std::optional<std::string> platform_of_network_os(std::string_view network_os) {
  auto dot = network_os.rfind('.');
  std::string_view last = dot == std::string_view::npos ? network_os : network_os.substr(dot + 1);
  if (last == "frr") return "frr";
  if (last == "eos") return "eos";
  if (last == "nxos") return "nxos";
  if (last == "junos") return "junos";
  if (last == "srlinux") return "srlinux";
  if (last == "sonic") return "sonic";
  if (last == "linux") return "linux";
  return std::nullopt;
}

}  // namespace

Result<ImportedInventory> import_ansible(std::string_view text, const std::string& file) {
  Inventory inventory;
  Diagnostics problems;
  YamlReader reader(file, problems);
  if (is_yaml_file(file)) {
    auto parsed = parse_yaml(text, file);
    if (!parsed) return parsed.error();
    if (reader.expect_map(*parsed, "Ansible inventory")) {
      reader.check_duplicate_keys(*parsed);
      for (auto it = parsed->begin(); it != parsed->end(); ++it)
        read_yaml_group(reader, it->first.as<std::string>(), it->second, inventory, 0);
    }
  } else {
    read_ini(text, file, inventory, problems);
  }

  ImportedInventory imported;
  for (const auto& name : inventory.order) {
    const Host& host = inventory.hosts.at(name);
    if (!is_device_name(name)) {
      problems.error(host.where, "host name '" + name + "' is not a fabgate device name",
                     "use letters, digits, '.', '_' and '-'");
      continue;
    }
    ImportedDevice device;
    device.name = name;
    device.where = host.where;
    if (const auto* chosen = inventory.lookup(name, "fabgate_platform")) {
      if (!is_fabgate_platform(chosen->value))
        problems.error(chosen->where,
                       "fabgate_platform '" + chosen->value + "' of host " + name +
                           " is not a fabgate platform",
                       "use one of " + fabgate_platforms());
      device.platform = chosen->value;
    } else if (const auto* os = inventory.lookup(name, "ansible_network_os")) {
      if (auto platform = platform_of_network_os(os->value)) {
        device.platform = *platform;
      } else {
        problems.error(
            os->where,
            "ansible_network_os '" + os->value + "' of host " + name + " has no fabgate platform",
            "set fabgate_platform on the host or its group to one of " + fabgate_platforms());
      }
    } else {
      device.platform = "linux";
    }
    if (const auto* role = inventory.lookup(name, "fabgate_role")) {
      device.role = role->value;
    } else {
      for (const auto& group : host.groups)
        if (group != "all" && group != "ungrouped") {
          device.role = group;
          break;
        }
      if (device.role.empty()) device.role = role_from_name(name);
    }
    const auto* address = inventory.lookup(name, "ansible_host");
    device.host = address && !address->value.empty() ? address->value : name;
    if (const auto* port = inventory.lookup(name, "ansible_port")) {
      bool digits = !port->value.empty() && port->value.size() <= 5 &&
                    port->value.find_first_not_of("0123456789") == std::string::npos;
      int number = digits ? std::stoi(port->value) : 0;
      if (number < 1 || number > 65535)
        problems.error(port->where, "ansible_port '" + port->value + "' of host " + name +
                                        " is not a port (1-65535)");
      else
        device.port = number;
    }
    imported.devices.push_back(std::move(device));
  }
  if (problems.empty() && imported.devices.empty())
    problems.error({file, 0, 0}, "no host in the inventory");
  if (!problems.empty())
    return Error::invalid_input(file + ": not an Ansible inventory fabgate can import",
                                problems.lines());
  return imported;
}

}  // namespace fabgate::inventory
