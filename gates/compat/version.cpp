#include "gates/compat/version.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "adapters/core/text.h"

namespace fabgate::compat {
namespace {

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool joins_numbers(char c) {
  return c == '.' || c == '-' || c == '_' || c == '+';
}

std::string without_leading_zeros(std::string_view digits) {
  auto first = digits.find_first_not_of('0');
  return first == std::string_view::npos ? "0" : std::string(digits.substr(first));
}

// Numbers of any length compare exactly: by length without leading zeros, then digit by digit.
std::strong_ordering compare_number(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() <=> b.size();
  int c = a.compare(b);
  return c < 0 ? std::strong_ordering::less
               : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

std::size_t digits_from(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && is_digit(text[end])) ++end;
  return end;
}

// A marker such as "rc1", "-beta2", ".dev" at the start of the suffix; anything else ("-generic",
// "~deb12u2", "-amd64", "-preempt") is not one: the letters must be exactly a marker word and be
// followed only by digits up to the next non-alphanumeric character.
std::optional<PreRelease> pre_release_at(std::string_view suffix) {
  static constexpr std::array<std::string_view, 5> kLabels = {"dev", "alpha", "beta", "pre", "rc"};
  std::size_t at = 0;
  if (at < suffix.size() && (joins_numbers(suffix[at]) || suffix[at] == '~')) ++at;
  std::size_t letters_end = at;
  while (letters_end < suffix.size() && is_alpha(suffix[letters_end])) ++letters_end;
  std::string label(suffix.substr(at, letters_end - at));
  std::transform(label.begin(), label.end(), label.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (std::find(kLabels.begin(), kLabels.end(), label) == kLabels.end()) return std::nullopt;
  std::size_t digits_end = digits_from(suffix, letters_end);
  if (digits_end < suffix.size() && std::isalnum(static_cast<unsigned char>(suffix[digits_end])))
    return std::nullopt;
  PreRelease marker{label, ""};
  if (digits_end > letters_end)
    marker.number = without_leading_zeros(suffix.substr(letters_end, digits_end - letters_end));
  return marker;
}

// Pads the shorter list with zeros: 8.4 matches 8.4.0.
bool numbers_start_with(const std::vector<std::string>& numbers,
                        const std::vector<std::string>& prefix) {
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const std::string& number = i < numbers.size() ? numbers[i] : std::string("0");
    if (number != prefix[i]) return false;
  }
  return true;
}

bool holds(const Condition& condition, const Version& version) {
  if (condition.kind == Condition::Kind::prefix)
    return version.epoch == condition.prefix_epoch &&
           numbers_start_with(version.numbers, condition.prefix);
  auto order = compare_numbers(version, condition.bound);
  switch (condition.op) {
    case Operator::equal:
      return order == 0 && version.pre_release == condition.bound.pre_release;
    case Operator::not_equal:
      return !(order == 0 && version.pre_release == condition.bound.pre_release);
    case Operator::less:
      return order < 0;
    case Operator::less_or_equal:
      return order <= 0;
    case Operator::greater:
      return order > 0;
    case Operator::greater_or_equal:
      return order >= 0;
  }
  return false;
}

// Splits ">=8.4 <9" into tokens, joining a lone operator with the version after it (">= 8.4").
std::vector<std::string> tokens_of(std::string_view text) {
  std::vector<std::string> words;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    std::size_t end = at;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end > at) words.emplace_back(text.substr(at, end - at));
    at = end;
  }
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < words.size(); ++i) {
    bool lone_operator = words[i].find_first_not_of("<>=!") == std::string::npos;
    if (lone_operator && i + 1 < words.size()) {
      tokens.push_back(words[i] + words[i + 1]);
      ++i;
    } else {
      tokens.push_back(words[i]);
    }
  }
  return tokens;
}

struct OperatorSpelling {
  std::string_view text;
  Operator op;
};
// Longest spellings first so ">=" is not read as ">".
constexpr std::array<OperatorSpelling, 7> kOperators = {{{">=", Operator::greater_or_equal},
                                                         {"<=", Operator::less_or_equal},
                                                         {"==", Operator::equal},
                                                         {"!=", Operator::not_equal},
                                                         {">", Operator::greater},
                                                         {"<", Operator::less},
                                                         {"=", Operator::equal}}};

Expected<Condition, std::string> parse_wildcard(const std::string& token, std::string_view body,
                                                bool has_operator) {
  if (has_operator)
    return "'" + token + "': a wildcard takes no operator (write 8.4.* or >=8.4 <8.5)";
  Condition condition;
  condition.kind = Condition::Kind::prefix;
  if (body == "*") return condition;
  if (body.size() < 3 || body.substr(body.size() - 2) != ".*" ||
      body.substr(0, body.size() - 2).find('*') != std::string_view::npos)
    return "'" + token + "': '*' may only stand for the last numbers, after a dot (8.4.*)";
  auto stem = parse_version(body.substr(0, body.size() - 2));
  if (!stem || stem->text.empty() || !is_digit(stem->text.front()) || !stem->suffix.empty() ||
      stem->text.find_first_not_of("0123456789.:") != std::string::npos)
    return "'" + token + "': a wildcard is dotted numbers followed by .* (8.4.*)";
  condition.prefix = stem->numbers;
  condition.prefix_epoch = stem->epoch;
  return condition;
}

Expected<Condition, std::string> parse_condition(const std::string& token) {
  Condition condition;
  std::string_view body = token;
  bool has_operator = false;
  for (const auto& spelling : kOperators) {
    if (starts_with(body, spelling.text)) {
      condition.op = spelling.op;
      body.remove_prefix(spelling.text.size());
      has_operator = true;
      break;
    }
  }
  if (body.empty()) return "'" + token + "': an operator needs a version after it";
  if (body.find('*') != std::string_view::npos) return parse_wildcard(token, body, has_operator);
  if (!is_digit(body.front()))
    return "'" + token + "': expected a version starting with a digit" +
           (has_operator ? std::string() : std::string(" or an operator (>=, >, <=, <, =, !=)"));
  auto bound = parse_version(body);
  if (!bound) return "'" + token + "': not a version";
  bool exact = condition.op == Operator::equal || condition.op == Operator::not_equal;
  if (bound->pre_release && !exact)
    return "'" + token + "': a range bound cannot be a pre-release; name the pre-release " +
           "exactly (=" + std::string(body) + ") if it is allowed";
  if (!bound->pre_release && !bound->suffix.empty())
    return "'" + token + "': '" + bound->suffix +
           "' would be ignored when comparing; write the numbers only";
  condition.bound = std::move(*bound);
  return condition;
}

// Rejects alternatives whose lower bound is above their upper bound: the gate would refuse
// every device, which is a typo in the matrix, not a policy.
std::optional<std::string> empty_range_problem(const Alternative& alternative) {
  const Condition* lower = nullptr;
  const Condition* upper = nullptr;
  for (const auto& condition : alternative.conditions) {
    if (condition.kind != Condition::Kind::compare) continue;
    bool is_lower = condition.op == Operator::greater || condition.op == Operator::greater_or_equal;
    bool is_upper = condition.op == Operator::less || condition.op == Operator::less_or_equal;
    if (is_lower && (!lower || compare_numbers(condition.bound, lower->bound) > 0 ||
                     (compare_numbers(condition.bound, lower->bound) == 0 &&
                      condition.op == Operator::greater)))
      lower = &condition;
    if (is_upper &&
        (!upper || compare_numbers(condition.bound, upper->bound) < 0 ||
         (compare_numbers(condition.bound, upper->bound) == 0 && condition.op == Operator::less)))
      upper = &condition;
  }
  if (!lower || !upper) return std::nullopt;
  auto order = compare_numbers(lower->bound, upper->bound);
  bool both_inclusive =
      lower->op == Operator::greater_or_equal && upper->op == Operator::less_or_equal;
  if (order > 0 || (order == 0 && !both_inclusive))
    return "'" + alternative.text + "' admits no version: the lower bound " + lower->bound.text +
           " is not below the upper bound " + upper->bound.text;
  return std::nullopt;
}

}  // namespace

std::optional<Version> parse_version(std::string_view raw) {
  std::string_view text = trim(raw);
  std::size_t first_digit = 0;
  while (first_digit < text.size() && !is_digit(text[first_digit])) ++first_digit;
  if (first_digit == text.size()) return std::nullopt;

  Version version;
  version.text = std::string(text);
  std::size_t at = first_digit;
  std::size_t end = digits_from(text, at);
  if (end < text.size() && text[end] == ':' && end + 1 < text.size() && is_digit(text[end + 1])) {
    version.epoch = without_leading_zeros(text.substr(at, end - at));
    at = end + 1;
    end = digits_from(text, at);
  }
  version.numbers.push_back(without_leading_zeros(text.substr(at, end - at)));
  at = end;
  while (at + 1 < text.size() && joins_numbers(text[at]) && is_digit(text[at + 1])) {
    end = digits_from(text, at + 1);
    version.numbers.push_back(without_leading_zeros(text.substr(at + 1, end - at - 1)));
    at = end;
  }
  version.suffix = std::string(text.substr(at));
  version.pre_release = pre_release_at(version.suffix);
  return version;
}

std::strong_ordering compare_numbers(const Version& a, const Version& b) {
  if (auto order = compare_number(a.epoch, b.epoch); order != 0) return order;
  std::size_t count = std::max(a.numbers.size(), b.numbers.size());
  static const std::string kZero = "0";
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& x = i < a.numbers.size() ? a.numbers[i] : kZero;
    const std::string& y = i < b.numbers.size() ? b.numbers[i] : kZero;
    if (auto order = compare_number(x, y); order != 0) return order;
  }
  return std::strong_ordering::equal;
}

std::string_view to_string(Operator op) {
  switch (op) {
    case Operator::equal:
      return "=";
    case Operator::not_equal:
      return "!=";
    case Operator::less:
      return "<";
    case Operator::less_or_equal:
      return "<=";
    case Operator::greater:
      return ">";
    case Operator::greater_or_equal:
      return ">=";
  }
  return "=";
}

Expected<Alternative, std::string> parse_alternative(std::string_view text) {
  Alternative alternative;
  alternative.text = std::string(trim(text));
  auto tokens = tokens_of(alternative.text);
  if (tokens.empty())
    return std::string("an empty constraint allows nothing; write \"*\" to allow any version");
  for (const auto& token : tokens) {
    auto condition = parse_condition(token);
    if (!condition.ok()) return condition.error();
    alternative.conditions.push_back(std::move(condition.value()));
  }
  if (auto problem = empty_range_problem(alternative)) return *problem;
  return alternative;
}

std::string Constraint::describe() const {
  std::vector<std::string> texts;
  for (const auto& alternative : alternatives) texts.push_back(alternative.text);
  if (!listed && texts.size() == 1) return texts.front();
  return "[" + join(texts, ", ") + "]";
}

Admission admits(const Constraint& constraint, const Version& version) {
  bool pre_release_refused = false;
  for (const auto& alternative : constraint.alternatives) {
    // A pre-release passes only an alternative that names it exactly.
    bool names_pre_release = false;
    for (const auto& condition : alternative.conditions)
      names_pre_release = names_pre_release || (condition.kind == Condition::Kind::compare &&
                                                condition.op == Operator::equal &&
                                                condition.bound.pre_release.has_value());
    if (version.pre_release && !names_pre_release) {
      pre_release_refused = true;
      continue;
    }
    if (std::all_of(alternative.conditions.begin(), alternative.conditions.end(),
                    [&](const Condition& condition) { return holds(condition, version); }))
      return Admission{true, ""};
  }
  if (pre_release_refused)
    return Admission{false, "a pre-release is admitted only by an exact entry naming it"};
  return Admission{false, ""};
}

}  // namespace fabgate::compat
