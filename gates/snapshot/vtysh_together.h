#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// FRR's show commands of one device in one vtysh invocation (collector profile
// `vtysh_commands: together`, docs/ssh.md). Each `vtysh -c '…'` is otherwise its own process,
// which connects to every FRR daemon before it asks one of them anything: on the lab's switches
// nine such commands took 547 ms where one vtysh with the nine -c took 73 ms. The invocation
// runs with -E, so vtysh echoes each command as "PROMPT# COMMAND" before its output, and the
// output is split at those echoes.

namespace fabgate::snapshot {

// The show command X of a profile command written exactly `vtysh -c 'X'` (one -c, single
// quotes, no quote or line break inside), or nothing: any other command is sent as written.
std::optional<std::string> vtysh_show_command(std::string_view run);

// `vtysh -E -c 'A' -c 'B' …` for the show commands, in order.
std::string vtysh_together_invocation(const std::vector<std::string>& show_commands);

// Splits the output of vtysh_together_invocation(show_commands) into each command's output,
// or nothing when it cannot be split safely: the first line must be an echo of the first
// command after a prompt ending in "# ", and each later command's echo must be a whole line
// equal to that same prompt followed by the command, in order. A line of output that merely
// ends like an echo (a description in a running configuration) is not taken for one, and any
// echo missing (vtysh stopped at a failing command) makes the whole output unsplittable: the
// caller then runs each command on its own.
std::optional<std::vector<std::string>> split_vtysh_together(
    std::string_view output, const std::vector<std::string>& show_commands);

}  // namespace fabgate::snapshot
