#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "adapters/core/redact.h"

namespace fabgate::app {

// Where commands write for people. Everything printed passes through a Redactor: device output
// and error text can carry secrets, and terminals end up in CI logs. Colour only on a terminal and
// never when NO_COLOR is set; in --json mode human lines go to stderr so stdout stays one JSON
// document.
class Console {
 public:
  Console(std::FILE* out, std::FILE* err, bool json_mode);
  static Console standard(bool json_mode);

  bool json_mode() const { return json_mode_; }
  bool interactive() const { return interactive_; }

  void line(std::string_view text);      // human output
  void warn(std::string_view text);      // "fabgate: warning: ..." on stderr
  void json(std::string_view document);  // the one JSON document (stdout)
  // A configured secret value (fabgate.yaml `secrets.env`), redacted from everything printed.
  void add_secret(std::string value) { redactor_.add_secret(std::move(value)); }

  std::string green(std::string_view text) const { return paint("32", text); }
  std::string red(std::string_view text) const { return paint("31", text); }
  std::string yellow(std::string_view text) const { return paint("33", text); }
  std::string bold(std::string_view text) const { return paint("1", text); }

 private:
  std::string paint(const char* code, std::string_view text) const;

  Redactor redactor_;
  std::FILE* out_;
  std::FILE* err_;
  bool json_mode_;
  bool colour_;
  bool interactive_;
};

}  // namespace fabgate::app
