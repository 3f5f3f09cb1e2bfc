#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabgate::ssh {

// A device's commands as one POSIX sh script that frames each command's output, so that one
// exec per device still yields every command's output, exit status and timing (docs/ssh.md,
// "One exec per device"). Frames are lines carrying a per-run nonce that the commands never see
// in their arguments or standard input, so device output cannot forge a frame:
//
//   stdout: "\n<nonce> B <i>\n" output of command i "\n<nonce> E <i> <exit status>\n"
//   stderr: "\n<nonce> B <i>\n" errors of command i "\n<nonce> E <i>\n"
//
// The newline in front of each frame is the script's own, so output without a trailing
// newline comes back byte for byte.

// 32 hex digits from the kernel's random source.
std::string batch_nonce();

// The script for `commands` (run in order; standard input is /dev/null). It is read by `sh -s`
// in full before anything runs (one brace group). A command that could change the framing
// shell (a builtin, an assignment, a redirection, a list, anything this file cannot read as
// plain words) runs in its own subshell through `eval`, so its `cd`, `set` or `exit` does not
// reach the next and a syntax error is its own exit status; a plain one runs through `eval` in
// the framing shell itself, which starts it the way a shell starts any simple command (with
// vfork on dash) and saves the subshell's fork: about 2 ms of the device's CPU per command.
std::string batch_script(const std::vector<std::string>& commands, const std::string& nonce);

// True when `command` is one simple command or a pipeline of them made only of plain words
// (letters, digits, `_ . / : , + @ % = -`, and single-quoted text), no element starting with a
// shell builtin or keyword of dash, bash, ksh or busybox sh, and no first word with `=` (an
// assignment): nothing in it can change the shell that runs it. Errs towards false.
bool runs_without_subshell(std::string_view command);

// What one stream of one command carried between its frames.
struct FramedOutput {
  std::string text;        // up to the cap; the rest was read and discarded
  std::size_t seen = 0;    // bytes carried, kept or not
  bool truncated = false;  // seen > cap
  bool begun = false;
  bool ended = false;
  std::optional<int> exit_status;  // stdout's end frame only
};

// Reads one stream of a batch as it arrives, in bounded memory (the cap per command plus one
// frame). Anything that is not the expected next frame where a frame must be (a malformed end
// line) stops the reader: the commands not yet ended stay unended, i.e. no evidence. Bytes
// outside any command's frames (login shell noise before the first frame) are discarded.
class FrameReader {
 public:
  enum class Stream { stdout_stream, stderr_stream };

  FrameReader(const std::string& nonce, std::size_t commands, Stream stream, std::size_t cap);
  // Command `index` keeps up to `cap` bytes instead of the reader's cap.
  void set_cap(std::size_t index, std::size_t cap) { caps_.at(index) = cap; }

  // A frame seen while feeding: command `index` began or ended.
  struct Event {
    bool begin = false;
    std::size_t index = 0;
  };
  std::vector<Event> feed(std::string_view bytes);

  // Commands whose end frame was read, in order (all of 0..ended()-1).
  std::size_t ended() const { return next_; }
  // The command whose output is being read now, if any.
  std::optional<std::size_t> open() const {
    return in_body_ ? std::optional<std::size_t>(next_) : std::nullopt;
  }
  bool malformed() const { return !problem_.empty(); }
  const std::string& problem() const { return problem_; }
  FramedOutput& output(std::size_t index) { return outputs_[index]; }
  std::size_t output_count() const { return outputs_.size(); }

 private:
  void append_body(std::string_view bytes);

  std::string nonce_;
  Stream stream_;
  std::vector<std::size_t> caps_;  // per command
  std::vector<FramedOutput> outputs_;
  std::size_t next_ = 0;  // the command whose frames come next (or are open)
  bool in_body_ = false;
  std::string pending_;  // bytes that may still be the start of a frame
  std::string problem_;
};

}  // namespace fabgate::ssh
