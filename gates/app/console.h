#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "adapters/core/redact.h"

namespace fabgate::app {

// Where commands write for people. Everything printed passes through the run's one Redactor,
// owned by main and shared with the error printer and the evidence bundle: device output and
// error text can carry secrets, and terminals end up in CI logs. Colour only on a terminal and
// never when NO_COLOR is set; in --json mode human lines go to stderr so stdout stays one JSON
// document.
class Console {
 public:
  Console(std::FILE* out, std::FILE* err, bool json_mode, Redactor& redactor);
  static Console standard(bool json_mode, Redactor& redactor);
  // Human lines on this console's stderr, through the same redactor: for a command whose
  // stdout carries a document (`fabgate snapshot` without --output).
  Console on_stderr() const { return Console(err_, err_, false, redactor_); }

  bool json_mode() const { return json_mode_; }
  bool interactive() const { return interactive_; }
  // Human lines go to a terminal that can redraw a line in place (not TERM=dumb).
  bool terminal() const { return terminal_; }

  void line(std::string_view text);  // human output
  // A line redrawn in place on a terminal (a running gate's elapsed time): carriage return, the
  // text, clear to the end of the line, no newline. The next line() or clear_live() replaces it.
  void live(std::string_view text);
  void clear_live();
  void warn(std::string_view text);  // "fabgate: warning: ..." on stderr
  // The one JSON document (stdout), its values redacted before it is serialised. Takes the
  // document, not text: redacting serialised JSON breaks it (a pattern swallows the quote after
  // a secret) and misses secrets whose characters were escaped.
  void json(const nlohmann::json& document);
  void json(std::string_view) = delete;

  // A configured secret value (fabgate.yaml `secrets.env`): redacted from everything printed
  // and from everything written with redactor() from now on.
  void add_secret(std::string value) { redactor_.add_secret(std::move(value)); }
  const Redactor& redactor() const { return redactor_; }

  std::string green(std::string_view text) const { return paint("32", text); }
  std::string red(std::string_view text) const { return paint("31", text); }
  std::string yellow(std::string_view text) const { return paint("33", text); }
  std::string bold(std::string_view text) const { return paint("1", text); }

 private:
  std::string paint(const char* code, std::string_view text) const;

  Redactor& redactor_;
  std::FILE* out_;
  std::FILE* err_;
  bool json_mode_;
  bool colour_;
  bool interactive_;
  bool terminal_;
};

}  // namespace fabgate::app
