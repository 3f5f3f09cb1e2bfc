#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "adapters/core/duration.h"
#include "adapters/core/time.h"
#include "adapters/ssh/ssh_target.h"

namespace fabgate::snapshot {

// Everything known about one command fabgate meant to send: what, where, with which login,
// when, and what came back. The lead writes these to evidence/commands.jsonl and the raw
// outputs next to it; the snapshot's `sources` carry the metadata without the output.
struct CommandRecord {
  std::string device;
  ssh::CredentialRole role = ssh::CredentialRole::read;
  std::string category;  // the snapshot source it served
  std::string command;
  bool sent = false;  // false: not sent (the session could not be opened)
  TimePoint started_at;
  Duration duration{0};
  std::optional<int> exit_status;  // set when the command ran to completion
  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::string failure;  // "timeout: timed out after 10 s"; empty when it completed
  // What was sent when it was not `command` itself: the one vtysh invocation this command was
  // part of (`vtysh_commands: together`); its output is this command's part of that
  // invocation's, and started_at/duration are the whole invocation's.
  std::string sent_as;
  std::string parse;    // "ok", "skipped" or "error: ..."
};

// The metadata kept in a snapshot's sources.<category>.commands[].
nlohmann::json source_entry(const CommandRecord& record);
// A commands.jsonl line: the metadata plus role, device and the (already capped) output.
// Whether the entry carries `stdout` (omitted: the caller writes it into the line itself,
// EvidenceBundle::append_command_with_output, so a 150 MB output is not copied into the entry).
enum class Output { included, omitted };
nlohmann::json evidence_entry(const CommandRecord& record, Output output = Output::included);

}  // namespace fabgate::snapshot
