#include "adapters/ssh/batch_frames.h"

#include <sys/random.h>

#include <array>
#include <charconv>

#include "adapters/core/text.h"

namespace fabgate::ssh {

namespace {

// Longest end-frame tail after "E <i>": " 255\n" on stdout; anything longer is not ours.
constexpr std::size_t kMaxFrameTail = 8;

}  // namespace

std::string batch_nonce() {
  std::array<unsigned char, 16> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    ssize_t n = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (n > 0) filled += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string nonce;
  for (unsigned char b : bytes) {
    nonce += kHex[b >> 4];
    nonce += kHex[b & 0xf];
  }
  return nonce;
}

namespace {

// Builtins and reserved words of the shells /bin/sh may be (dash, bash, ksh, busybox ash,
// zsh's sh mode), harmless ones included: a plain command must name a program.
bool is_shell_word(std::string_view word) {
  static constexpr std::string_view kWords[] = {
      ".", ":", "[", "[[", "]]", "!", "{", "}", "alias", "autoload", "bg", "bind", "break",
      "builtin", "caller", "case", "cd", "chdir", "command", "compgen", "complete", "compopt",
      "continue", "coproc", "declare", "dirs", "disown", "do", "done", "echo", "elif", "else",
      "emulate", "enable", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg", "fi",
      "for", "function", "getopts", "hash", "help", "history", "if", "in", "integer", "jobs",
      "kill", "let", "local", "logout", "mapfile", "popd", "print", "printf", "pushd", "pwd",
      "read", "readarray", "readonly", "return", "select", "set", "setopt", "shift", "shopt",
      "source", "suspend", "test", "then", "time", "times", "trap", "true", "type", "typeset",
      "ulimit", "umask", "unalias", "unfunction", "unset", "unsetopt", "until", "wait",
      "whence", "while"};
  for (std::string_view known : kWords) {
    if (word == known) return true;
  }
  return false;
}

bool is_plain_character(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("_./:,+@%=-").find(c) != std::string_view::npos;
}

}  // namespace

bool runs_without_subshell(std::string_view command) {
  // One pass over the text: words separated by blanks, elements by single `|`, single quotes
  // taken as they are (no expansion inside). `first` is the current element's first word while
  // it is read; `first_done` once a blank or quote ended or interrupted it.
  std::string first;
  bool in_element_word = false, first_done = false, element_empty = true;
  auto end_element = [&]() {
    if (element_empty || is_shell_word(first) || first.find('=') != std::string::npos) {
      return false;
    }
    first.clear();
    in_element_word = first_done = false;
    element_empty = true;
    return true;
  };
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t') {
      if (in_element_word) first_done = true;
      in_element_word = false;
      continue;
    }
    if (c == '|') {
      if (i + 1 < command.size() && command[i + 1] == '|') return false;  // `||` is a list
      if (!end_element()) return false;
      continue;
    }
    if (c == '\'') {
      // A quoted first word could spell a builtin in pieces ('c'd): not plain.
      if (!first_done) return false;
      const std::size_t close = command.find('\'', i + 1);
      if (close == std::string_view::npos) return false;
      i = close;
      element_empty = false;
      in_element_word = true;
      continue;
    }
    if (!is_plain_character(c)) return false;
    if (!first_done) first += c;
    element_empty = false;
    in_element_word = true;
  }
  return end_element();
}

std::string batch_script(const std::vector<std::string>& commands, const std::string& nonce) {
  std::string script = "{\n";
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const std::string index = std::to_string(i);
    // The nonce is hex, so it is safe inside printf's format.
    script += "printf '\\n" + nonce + " B " + index + "\\n'\n";
    script += "printf '\\n" + nonce + " B " + index + "\\n' >&2\n";
    // eval in a subshell: a syntax error or `exit` in one command is that command's exit
    // status, and nothing it changes (directory, options, variables) reaches the next. A plain
    // command can change nothing, so it is spared the subshell's fork.
    if (runs_without_subshell(commands[i])) {
      script += "eval " + shell_quote(commands[i]) + "\n";
    } else {
      script += "(eval " + shell_quote(commands[i]) + "\n)\n";
    }
    script += "printf '\\n" + nonce + " E " + index + " %d\\n' \"$?\"\n";
    script += "printf '\\n" + nonce + " E " + index + "\\n' >&2\n";
  }
  script += "} </dev/null\n";
  return script;
}

FrameReader::FrameReader(const std::string& nonce, std::size_t commands, Stream stream,
                         std::size_t cap)
    : nonce_(nonce), stream_(stream), caps_(commands, cap), outputs_(commands) {}

void FrameReader::append_body(std::string_view bytes) {
  FramedOutput& out = outputs_[next_];
  const std::size_t cap = caps_[next_];
  out.seen += bytes.size();
  if (out.text.size() < cap) out.text.append(bytes.substr(0, cap - out.text.size()));
  if (out.seen > cap) out.truncated = true;
}

std::vector<FrameReader::Event> FrameReader::feed(std::string_view bytes) {
  std::vector<Event> events;
  if (malformed() || next_ >= outputs_.size()) return events;  // after the last frame: noise
  pending_.append(bytes);
  while (!malformed() && next_ < outputs_.size()) {
    const std::string index = std::to_string(next_);
    if (!in_body_) {
      const std::string begin = "\n" + nonce_ + " B " + index + "\n";
      auto at = pending_.find(begin);
      if (at == std::string::npos) {
        // Keep only what could be the start of the frame; the rest is not any command's output.
        if (pending_.size() >= begin.size()) pending_.erase(0, pending_.size() - begin.size() + 1);
        break;
      }
      pending_.erase(0, at + begin.size());
      in_body_ = true;
      outputs_[next_].begun = true;
      events.push_back({true, next_});
      continue;
    }
    // The index is followed by a space (stdout, then the status) or the newline (stderr), so
    // command 1's frame is never taken for command 10's.
    const std::string end = "\n" + nonce_ + " E " + index +
                            (stream_ == Stream::stdout_stream ? " " : "\n");
    auto at = pending_.find(end);
    if (at == std::string::npos) {
      if (pending_.size() >= end.size()) {
        const std::size_t keep = end.size() - 1;
        append_body(std::string_view(pending_).substr(0, pending_.size() - keep));
        pending_.erase(0, pending_.size() - keep);
      }
      break;
    }
    std::optional<int> status;
    std::size_t consumed = at + end.size();
    if (stream_ == Stream::stdout_stream) {
      auto newline = pending_.find('\n', consumed);
      if (newline == std::string::npos) {
        if (pending_.size() - consumed > kMaxFrameTail) {
          problem_ = "command " + index + "'s end frame has no end of line";
          break;
        }
        append_body(std::string_view(pending_).substr(0, at));
        pending_.erase(0, at);
        break;  // the rest of the frame line is still on its way
      }
      int value = -1;
      const char* first = pending_.data() + consumed;
      const char* last = pending_.data() + newline;
      auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || ptr != last || first == last || value < 0 || value > 255) {
        problem_ = "command " + index + "'s end frame carries no exit status";
        break;
      }
      status = value;
      consumed = newline + 1;
    }
    append_body(std::string_view(pending_).substr(0, at));
    pending_.erase(0, consumed);
    outputs_[next_].ended = true;
    outputs_[next_].exit_status = status;
    events.push_back({false, next_});
    in_body_ = false;
    ++next_;
  }
  return events;
}

}  // namespace fabgate::ssh
