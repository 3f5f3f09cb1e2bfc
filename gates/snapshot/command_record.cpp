#include "gates/snapshot/command_record.h"

namespace fabgate::snapshot {

nlohmann::json source_entry(const CommandRecord& record) {
  nlohmann::json entry = {{"command", record.command}};
  if (record.exit_status)
    entry["exit_status"] = *record.exit_status;
  else
    entry["exit_status"] = nullptr;
  if (record.sent) {
    entry["started_at"] = format_utc(record.started_at);
    entry["duration_ms"] = record.duration.count();
  }
  if (!record.failure.empty()) entry["failure"] = record.failure;
  if (!record.sent_as.empty()) entry["sent_as"] = record.sent_as;
  if (record.stdout_truncated || record.stderr_truncated) entry["truncated"] = true;
  entry["parse"] = record.parse;
  return entry;
}

nlohmann::json evidence_entry(const CommandRecord& record, Output output) {
  nlohmann::json entry = source_entry(record);
  entry["device"] = record.device;
  entry["role"] = std::string(ssh::to_string(record.role));
  entry["category"] = record.category;
  entry["sent"] = record.sent;
  if (output == Output::included) entry["stdout"] = record.stdout_text;
  entry["stderr"] = record.stderr_text;
  entry["stdout_truncated"] = record.stdout_truncated;
  entry["stderr_truncated"] = record.stderr_truncated;
  return entry;
}

}  // namespace fabgate::snapshot
