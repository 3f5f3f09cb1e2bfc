#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/gnmi/client.h"

namespace fabgate::snapshot {

// What to run on one platform (policies/collectors/<platform>.yaml). Each source fills one
// category ("identity" or a fact category) from one or more commands, each with a normalizer,
// or from one gNMI Get to the device's inventory `gnmi` endpoint.
struct CollectorCommand {
  std::string run;    // the shell command, sent as written
  std::string parse;  // normalizer name (normalizers.h)
};

// A gNMI source: one Get of `paths` (validated with the adapter's parser), normalized by
// gnmi::snapshot_facts(), which fills only identity, interfaces and bgp.
struct CollectorGnmiGet {
  std::vector<std::string> paths;
  gnmi::Encoding encoding = gnmi::Encoding::json_ietf;
  // GetRequest.type; `type: config` in the profile (the default for category config).
  gnmi::DataType type = gnmi::DataType::all;
};

// The most a source's `max_output` may be: its output is held in memory while it is read.
inline constexpr std::uint64_t kMaxSourceOutput = std::uint64_t{1} << 30;

struct CollectorSource {
  std::string category;
  Duration timeout{10'000};                // per command, or the deadline of the gNMI Get
  // Standard output kept per command (`max_output`) instead of the SSH session's 4 MiB: `ip -j
  // route` is ~150 bytes a route. 0: the session's. Output past it makes the source
  // no-evidence (cut short, or stopped where it also passes the session's hard limit).
  std::size_t max_output = 0;
  std::vector<CollectorCommand> commands;  // empty when `gnmi` is set
  std::optional<CollectorGnmiGet> gnmi;
};

// The categories a gNMI source may fill: those gnmi::snapshot_facts() produces.
const std::vector<std::string>& gnmi_categories();

// How a device's SSH commands are sent (`ssh_commands` in the profile, docs/ssh.md).
enum class SshCommands {
  // One exec per device: a POSIX sh script that frames each command's output, exit status and
  // timing (RemoteShell::run_batch). Costs the device one channel and one shell.
  one_exec,
  // Every command on its own concurrent channel (RemoteShell::run_each): for login shells that
  // cannot run `/bin/sh -s` (a vendor CLI) or commands that must not wait for one another.
  channel_each,
};

// How a device's FRR show commands are sent (`vtysh_commands` in the profile, docs/ssh.md).
enum class VtyshCommands {
  separate,  // each `vtysh -c '…'` as written: one vtysh process each
  // Every command written `vtysh -c 'X'` in one vtysh invocation per device and snapshot
  // (vtysh_together.h), each still recorded and parsed as its own; if that invocation fails or
  // its output cannot be split, each is run on its own as written.
  together,
};

struct CollectorProfile {
  std::string platform;
  std::string file;  // where it came from, for messages
  SshCommands ssh_commands = SshCommands::one_exec;
  VtyshCommands vtysh_commands = VtyshCommands::separate;
  std::vector<CollectorSource> sources;
};

// Parses and validates one profile; every problem is listed with file:line:column.
Result<CollectorProfile> parse_collector_profile(std::string_view text, const std::string& file);

// The profiles shipped in the binary (generated from policies/collectors/*.yaml at build time),
// keyed by platform.
const std::map<std::string, std::string_view>& shipped_profile_texts();

// Shipped profiles with `overrides` (platform -> YAML text, e.g. an intent repository's own
// policies/collectors/<platform>.yaml) taking the place of the shipped one of that platform.
using ProfileSet = std::map<std::string, CollectorProfile>;
Result<ProfileSet> load_profiles(const std::map<std::string, std::string>& overrides = {});

}  // namespace fabgate::snapshot
