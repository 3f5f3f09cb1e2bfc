#include "gates/app/snapshot_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "adapters/core/text.h"
#include "adapters/ssh/connection_cache.h"
#include "gates/app/intent_loading.h"
#include "gates/app/run_collaborators.h"
#include "gates/pipeline/families/collector_snapshotter.h"
#include "gates/snapshot/snapshot.h"

namespace fabgate::app {

namespace {

// Resolves names and role:ROLE selectors to devices, in inventory order, without duplicates.
Result<std::vector<const intent::Device*>> select_devices(
    const intent::Inventory& inventory, const std::vector<std::string>& selectors) {
  if (selectors.empty()) {
    std::vector<const intent::Device*> all;
    for (const auto& device : inventory.devices) all.push_back(&device);
    return all;
  }
  std::vector<std::string> names, roles, problems;
  for (const auto& device : inventory.devices) {
    names.push_back(device.name);
    if (std::find(roles.begin(), roles.end(), device.role) == roles.end())
      roles.push_back(device.role);
  }
  std::set<std::string> chosen;
  for (const auto& selector : selectors) {
    bool by_role = starts_with(selector, "role:");
    std::string wanted = by_role ? selector.substr(5) : selector;
    const auto& candidates = by_role ? roles : names;
    if (std::find(candidates.begin(), candidates.end(), wanted) == candidates.end()) {
      auto nearest = nearest_word(wanted, candidates);
      problems.push_back(
          std::string(by_role ? "no device has role '" : "no device named '") + wanted +
          "' in the inventory" +
          (nearest ? " (did you mean '" + std::string(by_role ? "role:" : "") + *nearest + "'?)"
                   : ""));
      continue;
    }
    for (const auto& device : inventory.devices) {
      if ((by_role ? device.role : device.name) == wanted) chosen.insert(device.name);
    }
  }
  if (!problems.empty()) return Error::invalid_input("snapshot: unknown targets", problems);
  std::vector<const intent::Device*> selected;
  for (const auto& device : inventory.devices) {
    if (chosen.count(device.name)) selected.push_back(&device);
  }
  return selected;
}

ssh::SshLogin to_login(const intent::Credential& credential) {
  return ssh::SshLogin{credential.user, credential.identity_file, credential.use_agent};
}

void print_table(Console& out, const snapshot::Snapshot& taken) {
  std::size_t width = 6;
  for (const auto& device : taken.devices) width = std::max(width, device.device.size());
  auto pad = [](std::string text, std::size_t to) {
    if (text.size() < to) text.append(to - text.size(), ' ');
    return text;
  };
  out.line(out.bold(pad("DEVICE", width) + "  REACHABLE  COLLECTED / MISSING"));
  for (const auto& device : taken.devices) {
    std::vector<std::string> missing;
    for (const auto& item : device.missing) missing.push_back(item.category);
    std::string collected = device.collected.empty() ? "-" : join(device.collected, ",");
    std::string row = pad(device.device, width) + "  " + pad(device.reachable ? "yes" : "no", 9) +
                      "  " + out.green(collected);
    if (!missing.empty()) row += " / " + out.red("missing " + join(missing, ","));
    out.line(row);
  }
  for (const auto& device : taken.devices) {
    if (!device.reachable && !device.missing.empty()) {
      // One cause per transport (SSH, gNMI) for every category it served: say each once.
      std::vector<std::string> said;
      for (const auto& item : device.missing) {
        if (std::find(said.begin(), said.end(), item.reason) != said.end()) continue;
        said.push_back(item.reason);
        out.line("snapshot: " + device.device + ": " + item.reason);
      }
      continue;
    }
    for (const auto& item : device.missing) {
      out.line("snapshot: " + device.device + ": " + item.category + ": " + item.reason);
    }
  }
}

}  // namespace

Result<ExitCode> run_snapshot(const CommonOptions& common, const SnapshotOptions& options,
                              Console& console) {
  auto intent = load_intent(common, console);
  if (!intent) return std::move(intent).error();
  const auto& settings = intent->settings;
  // The configured secret values join the run's redactor before anything quotes a device.
  const Redactor redactor = run_redactor(intent.value(), console);

  auto selected = select_devices(intent->inventory, options.targets);
  if (!selected) return std::move(selected).error();

  // An intent repository may ship its own collector profile per platform.
  std::map<std::string, std::string> overrides;
  const std::string prefix = settings.policies_dir + "/collectors/";
  for (const auto& [path, text] : intent->policy_texts) {
    if (starts_with(path, prefix) && path.size() > prefix.size() + 5 &&
        path.compare(path.size() - 5, 5, ".yaml") == 0) {
      overrides[path.substr(prefix.size(), path.size() - prefix.size() - 5)] = text;
    }
  }
  auto profiles = snapshot::load_profiles(overrides);
  if (!profiles) return std::move(profiles).error();

  std::vector<snapshot::SnapshotTarget> targets;
  std::vector<std::string> problems;
  for (const intent::Device* device : selected.value()) {
    auto profile = profiles->find(device->platform);
    if (profile == profiles->end()) {
      problems.push_back(device->name + ": no collector profile for platform '" + device->platform +
                         "' (add " + prefix + device->platform + ".yaml)");
      continue;
    }
    targets.push_back({ssh::SshDevice{device->name, device->ssh.host, device->ssh.port,
                                      to_login(device->read), to_login(device->change)},
                       &profile->second});
  }
  if (!problems.empty())
    return Error::invalid_input("snapshot: devices without a collector profile", problems);

  ssh::SshOptions ssh_options;
  ssh_options.known_hosts_file = settings.ssh.known_hosts;
  ssh_options.config_file = settings.ssh.config;
  ssh_options.connect_timeout = settings.ssh.connect_timeout;
  ssh_options.shell_startup_timeout = settings.ssh.shell_startup_timeout;
  ssh_options.slow_shell_startup = settings.ssh.slow_shell_startup;
  // A snapshot's first use of a session is its device's batch, which times the shell's
  // start-up itself: one exec per device instead of two.
  ssh_options.shell_startup_check = ssh::ShellStartupCheck::on_first_use;
  ssh_options.unknown_host_keys = options.accept_new_host_keys
                                      ? ssh::UnknownHostKeys::accept_and_record
                                      : ssh::UnknownHostKeys::refuse;
  ssh::LibsshConnector connector(ssh_options);
  const int parallelism = options.parallel > 0 ? options.parallel : settings.ssh.parallelism;
  snapshot::Snapshot taken;
  {
    ssh::ConnectionCache cache(connector);
    // gNMI sources ask the same endpoints, with the same clients, as a gated run does.
    pipeline::EndpointGnmiFetcher gnmi(selected.value());
    // Each device's session is closed as soon as the device is done.
    // Route tables stay compact and are written from the tables (write_snapshot).
    taken = snapshot::take_snapshot(targets, cache, parallelism, intent->commit.id, &gnmi,
                                    snapshot::SessionsAfter::close, nullptr,
                                    snapshot::RouteLists::apart);
  }
  for (const auto& startup : connector.shell_startups())
    if (startup.slow) console.warn(startup.note());

  auto accepted = connector.accepted_host_keys();
  if (!accepted.empty()) {
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& key : accepted) {
      keys.push_back({{"device", key.device},
                      {"host", key.host},
                      {"key_type", key.key_type},
                      {"fingerprint", key.fingerprint},
                      {"known_hosts", key.known_hosts_file},
                      {"saved", key.saved}});
      console.warn("accepted new host key for " + key.device + " (" + key.host +
                   "): " + key.key_type + " " + key.fingerprint +
                   (key.saved ? ", saved to " + key.known_hosts_file : ", NOT saved"));
    }
    taken.document["accepted_host_keys"] = std::move(keys);
  }

  if (!options.output.empty()) {
    std::ofstream file(options.output, std::ios::binary | std::ios::trunc);
    auto to_file = [&file](std::string_view piece) {
      return static_cast<bool>(file.write(piece.data(), static_cast<std::streamsize>(piece.size())));
    };
    if (!file || !snapshot::write_snapshot(taken, redactor, to_file) || !to_file("\n") ||
        !file.flush())
      return Error::internal("snapshot: cannot write " + options.output);
    print_table(console, taken);
  } else {
    // stdout carries the document; people read the table on stderr.
    auto to_stdout = [](std::string_view piece) {
      return std::fwrite(piece.data(), 1, piece.size(), stdout) == piece.size();
    };
    if (!snapshot::write_snapshot(taken, redactor, to_stdout) || !to_stdout("\n") ||
        std::fflush(stdout) != 0)
      return Error::internal("snapshot: cannot write the snapshot to standard output");
    Console table = console.on_stderr();
    print_table(table, taken);
  }
  return taken.complete() ? ExitCode::accepted : ExitCode::refused;
}

}  // namespace fabgate::app
