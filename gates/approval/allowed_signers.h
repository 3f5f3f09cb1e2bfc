#pragma once

// The allowed_signers file as the approval gate reads it (OpenSSH format, ssh-keygen(1) ALLOWED
// SIGNERS). Approvals need each reviewer listed by an exact principal: a line whose principal
// pattern holds a wildcard (`*`, `?`) or a negation (`!`) lets one key speak for names nobody
// reviewed one by one, so such lines are refused for approvals and never reach ssh-keygen.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabgate::approval {

// A line refused for approvals, with its 1-based line number and its principals field as written.
struct WildcardLine {
  int line = 0;
  std::string principals;
};

class AllowedSigners {
 public:
  // Splits `text` (the file's content at the intent commit) into usable and refused lines.
  explicit AllowedSigners(std::string_view text);

  // The file with every refused line blanked, so ssh-keygen verifies only against exact
  // principals and its messages still carry the original line numbers.
  const std::string& usable_text() const { return usable_text_; }

  // True when a usable line lists `principal` exactly (OpenSSH compares principals
  // case-sensitively).
  bool lists(const std::string& principal) const;

  // Every principal usable lines list, in file order, each once.
  const std::vector<std::string>& principals() const { return principals_; }

  // The first refused line whose pattern would have matched `principal` under OpenSSH's
  // matching rules, so the refusal can name it.
  std::optional<WildcardLine> wildcard_line_for(const std::string& principal) const;

 private:
  std::string usable_text_;
  std::vector<std::string> principals_;
  std::vector<WildcardLine> refused_;
};

}  // namespace fabgate::approval
