#include "gates/app/usage.h"

#include "adapters/core/text.h"
#include "gates/app/intent_loading.h"

namespace fabgate::app {

std::string unknown_command_message(std::string_view word,
                                    const std::vector<std::string>& commands) {
  std::string message = "unknown command '" + std::string(word) + "'";
  if (auto suggestion = nearest_word(word, commands))
    message += "; did you mean '" + *suggestion + "'?";
  else
    message += "; commands: " + join(commands, ", ");
  return message;
}

const std::vector<CommonOptionHelp>& common_option_help() {
  static const std::vector<CommonOptionHelp> options = {
      {"--repo", "DIR", "Intent repository, or a folder inside one (default .)"},
      {"--ref", "REF", "Commit the intent is read from (default HEAD)"},
      {"--evidence", "DIR", "Evidence directory (default: evidence_dir in fabgate.yaml)"},
      {"--json", "", "Print one JSON document on stdout"},
      {"--junit", "FILE", "Write a JUnit XML report to FILE"},
  };
  return options;
}

const std::vector<ExitCodeHelp>& exit_code_help() {
  static const std::vector<ExitCodeHelp> codes = {
      {0, "accepted / plan ready"},
      {1, "internal error"},
      {2, "invalid input (usage, schema, intent not committed)"},
      {3, "refused before any change (a pre-change gate failed or had no evidence)"},
      {4, "change failed and was rolled back, baseline verified"},
      {5, "rollback failed or baseline not verified: a human must act now"},
  };
  return codes;
}

std::string common_help_footer() {
  std::string text = "Common options (before or after the command):\n";
  for (const auto& option : common_option_help()) {
    std::string left = std::string(option.flag);
    if (*option.value) left += std::string(" ") + option.value;
    left.resize(18, ' ');
    text += "  " + left + option.help + "\n";
  }
  text += "\nExit codes:\n";
  for (const auto& code : exit_code_help())
    text += "  " + std::to_string(code.code) + "  " + code.meaning + "\n";
  return text;
}

std::vector<std::string> change_ids_at(const CommonOptions& common) {
  std::vector<std::string> ids;
  auto loaded = read_intent(common);
  if (!loaded.ok() || !loaded->outcome.repository) return ids;
  for (const auto& change : loaded->outcome.repository->changes) ids.push_back(change.id);
  return ids;
}

}  // namespace fabgate::app
