#include "tests/support/shell.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace fabgate::testing {

CommandOutput run_shell(const std::string& command_line) {
  CommandOutput result;
  std::string wrapped = "( " + command_line + " ) 2>&1 </dev/null";
  FILE* pipe = ::popen(wrapped.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

}  // namespace fabgate::testing
