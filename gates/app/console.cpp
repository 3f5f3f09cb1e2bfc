#include "gates/app/console.h"

#include <unistd.h>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace fabgate::app {

Console::Console(std::FILE* out, std::FILE* err, bool json_mode, Redactor& redactor)
    : redactor_(redactor), out_(out), err_(err), json_mode_(json_mode) {
  bool tty = ::isatty(::fileno(out_)) == 1;
  const char* no_color = std::getenv("NO_COLOR");
  colour_ = tty && !json_mode_ && !(no_color && *no_color);
  interactive_ = ::isatty(STDIN_FILENO) == 1 && tty;
  const char* term = std::getenv("TERM");
  bool dumb = term && std::string_view(term) == "dumb";
  std::FILE* human = json_mode_ ? err_ : out_;
  terminal_ = ::isatty(::fileno(human)) == 1 && !dumb;
}

Console Console::standard(bool json_mode, Redactor& redactor) {
  return Console(stdout, stderr, json_mode, redactor);
}

void Console::line(std::string_view raw) {
  std::string text = redactor_.redact(raw);
  std::FILE* stream = json_mode_ ? err_ : out_;
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fputc('\n', stream);
  std::fflush(stream);
}

void Console::live(std::string_view raw) {
  std::string text = "\r" + redactor_.redact(raw) + "\033[K";
  std::FILE* stream = json_mode_ ? err_ : out_;
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
}

void Console::clear_live() {
  std::FILE* stream = json_mode_ ? err_ : out_;
  std::fputs("\r\033[K", stream);
  std::fflush(stream);
}

void Console::warn(std::string_view raw) {
  std::string text = redactor_.redact(raw);
  std::fprintf(err_, "fabgate: warning: %.*s\n", static_cast<int>(text.size()), text.data());
  std::fflush(err_);
}

void Console::json(const nlohmann::json& document) {
  std::string text = redactor_.dump(document, 2);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

std::string Console::paint(const char* code, std::string_view text) const {
  if (!colour_) return std::string(text);
  return std::string("\033[") + code + "m" + std::string(text) + "\033[0m";
}

}  // namespace fabgate::app
