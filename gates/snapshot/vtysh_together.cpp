#include "gates/snapshot/vtysh_together.h"

namespace fabgate::snapshot {

std::optional<std::string> vtysh_show_command(std::string_view run) {
  constexpr std::string_view prefix = "vtysh -c '";
  if (run.size() <= prefix.size() + 1 || run.substr(0, prefix.size()) != prefix ||
      run.back() != '\'')
    return std::nullopt;
  std::string_view show = run.substr(prefix.size(), run.size() - prefix.size() - 1);
  if (show.empty() || show.find_first_of("'\n\r") != std::string_view::npos) return std::nullopt;
  return std::string(show);
}

std::string vtysh_together_invocation(const std::vector<std::string>& show_commands) {
  std::string invocation = "vtysh -E";
  for (const auto& show : show_commands) invocation += " -c '" + show + "'";
  return invocation;
}

std::optional<std::vector<std::string>> split_vtysh_together(
    std::string_view output, const std::vector<std::string>& show_commands) {
  if (show_commands.empty()) return std::nullopt;
  // Lines, each with its own end ("\n" kept), so each part is its command's output byte for byte.
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < output.size();) {
    std::size_t end = output.find('\n', at);
    std::size_t next = end == std::string_view::npos ? output.size() : end + 1;
    lines.push_back(output.substr(at, next - at));
    at = next;
  }
  auto text_of = [](std::string_view line) {
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  if (lines.empty()) return std::nullopt;
  // The prompt, from the first line: "PROMPT# " followed by the first command.
  std::string_view first = text_of(lines.front());
  const std::string& first_show = show_commands.front();
  if (first.size() < first_show.size() + 2 ||
      first.substr(first.size() - first_show.size()) != first_show)
    return std::nullopt;
  std::string_view prompt = first.substr(0, first.size() - first_show.size());
  if (prompt.size() < 2 || prompt.substr(prompt.size() - 2) != "# " ||
      prompt.find_first_of(" \t") != prompt.size() - 1)
    return std::nullopt;
  std::vector<std::string> parts(show_commands.size());
  std::size_t command = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = text_of(lines[i]);
    if (command + 1 < show_commands.size() && line.size() == prompt.size() + show_commands[command + 1].size() &&
        line.substr(0, prompt.size()) == prompt &&
        line.substr(prompt.size()) == show_commands[command + 1]) {
      ++command;
      continue;
    }
    parts[command] += lines[i];
  }
  if (command + 1 != show_commands.size()) return std::nullopt;
  return parts;
}

}  // namespace fabgate::snapshot
