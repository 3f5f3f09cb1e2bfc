#include "gates/pipeline/reporting/config_diff.h"

#include <algorithm>
#include <sstream>

#include "adapters/core/text.h"

namespace fabgate::pipeline {

namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// One line of an edit script: ' ' kept, '-' only before, '+' only after.
struct Edit {
  char kind;
  std::size_t before_line;  // 0-based index into before (for ' ' and '-')
  std::size_t after_line;   // 0-based index into after (for ' ' and '+')
};

// Longest-common-subsequence edit script of the part between the common head and tail. A
// middle larger than kLimit cells is written as all removed then all added: configurations
// differ in small regions, and a reviewer still sees every changed line.
std::vector<Edit> edit_script(const std::vector<std::string>& a,
                              const std::vector<std::string>& b) {
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
    ++tail;
  std::vector<Edit> edits;
  for (std::size_t i = 0; i < head; ++i) edits.push_back({' ', i, i});
  const std::size_t n = a.size() - head - tail;
  const std::size_t m = b.size() - head - tail;
  constexpr std::size_t kLimit = 4'000'000;
  if (n * m <= kLimit && n > 0 && m > 0) {
    std::vector<std::vector<std::uint32_t>> lcs(n + 1, std::vector<std::uint32_t>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t j = m; j-- > 0;)
        lcs[i][j] = a[head + i] == b[head + j] ? lcs[i + 1][j + 1] + 1
                                               : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[head + i] == b[head + j]) {
        edits.push_back({' ', head + i++, head + j++});
      } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
        edits.push_back({'-', head + i++, head + j});  // removals first, as diff(1) writes
      } else {
        edits.push_back({'+', head + i, head + j++});
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) edits.push_back({'-', head + i, head});
    for (std::size_t j = 0; j < m; ++j) edits.push_back({'+', head + n, head + j});
  }
  for (std::size_t k = 0; k < tail; ++k) {
    edits.push_back({' ', a.size() - tail + k, b.size() - tail + k});
  }
  return edits;
}

std::string range(std::size_t start, std::size_t count) {
  // Unified diff ranges are 1-based; an empty range names the line before it.
  std::size_t first = count == 0 ? start : start + 1;
  return std::to_string(first) + (count == 1 ? "" : "," + std::to_string(count));
}

}  // namespace

std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& before_name, const std::string& after_name,
                         int context) {
  const auto a = lines_of(before);
  const auto b = lines_of(after);
  const auto edits = edit_script(a, b);
  const std::size_t reach = static_cast<std::size_t>(std::max(context, 0));
  std::ostringstream out;
  std::size_t k = 0;
  std::size_t printed = 0;  // edits before this index are in an earlier hunk
  bool any = false;
  while (k < edits.size()) {
    if (edits[k].kind == ' ') {
      ++k;
      continue;
    }
    // A hunk: from `reach` kept lines before this change to `reach` kept lines after the last
    // change that lies within 2*reach kept lines of the previous one.
    std::size_t start = std::max(printed, k >= reach ? k - reach : 0);
    std::size_t end = k;
    std::size_t kept_run = 0;
    for (std::size_t x = k; x < edits.size(); ++x) {
      if (edits[x].kind == ' ') {
        if (++kept_run > 2 * reach) break;
      } else {
        kept_run = 0;
        end = x;
      }
    }
    std::size_t stop = std::min(edits.size(), end + 1 + reach);
    std::size_t before_count = 0, after_count = 0;
    for (std::size_t x = start; x < stop; ++x) {
      if (edits[x].kind != '+') ++before_count;
      if (edits[x].kind != '-') ++after_count;
    }
    if (!any) out << "--- " << before_name << "\n+++ " << after_name << "\n";
    any = true;
    out << "@@ -" << range(edits[start].before_line, before_count) << " +"
        << range(edits[start].after_line, after_count) << " @@\n";
    for (std::size_t x = start; x < stop; ++x) {
      const Edit& edit = edits[x];
      out << edit.kind << (edit.kind == '+' ? b[edit.after_line] : a[edit.before_line]) << "\n";
    }
    k = stop;
    printed = stop;
  }
  return out.str();
}

std::vector<ConfigDelta> config_deltas(const json& pre, const json& later, const std::string& phase,
                                       const Redactor& redactor) {
  std::vector<ConfigDelta> deltas;
  if (!pre.is_object() || !pre.contains("devices") || !pre["devices"].is_object()) return deltas;
  for (const auto& [device, facts] : pre["devices"].items()) {
    if (!facts.is_object() || !facts.contains("config")) continue;
    const json& before = facts["config"];
    ConfigDelta delta{device, phase + " vs pre", "", ""};
    const json* after = nullptr;
    if (later.is_object() && later.contains("devices") && later["devices"].contains(device) &&
        later["devices"][device].contains("config")) {
      after = &later["devices"][device]["config"];
    }
    if (after == nullptr) {
      delta.missing = "the " + phase + " snapshot has no configuration of " + device;
      if (later.is_object() && later.contains("devices") && later["devices"].contains(device)) {
        const json& source = later["devices"][device]["sources"]["config"];
        if (source.is_object() && source.contains("reason")) {
          delta.missing += ": " + redactor.redact(source["reason"].get<std::string>());
        }
      }
      deltas.push_back(std::move(delta));
      continue;
    }
    // Redacted before the diff: a secret that changed shows as an unchanged "<redacted>".
    std::string text_before = redactor.redact(before.value("text", std::string()));
    std::string text_after = redactor.redact(after->value("text", std::string()));
    delta.diff =
        unified_diff(text_before, text_after, device + " (pre)", device + " (" + phase + ")");
    deltas.push_back(std::move(delta));
  }
  return deltas;
}

std::vector<std::string> captured_configs(const json& snapshot) {
  std::vector<std::string> out;
  if (!snapshot.is_object() || !snapshot.contains("devices") || !snapshot["devices"].is_object())
    return out;
  for (const auto& [device, facts] : snapshot["devices"].items()) {
    if (!facts.is_object() || !facts.contains("config")) continue;
    std::string text = facts["config"].value("text", std::string());
    std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    if (!text.empty() && text.back() != '\n') ++lines;
    out.push_back(device + " (" + std::to_string(lines) + " lines)");
  }
  return out;
}

std::string config_capture_markdown(const std::vector<std::string>& captured) {
  if (captured.empty()) return "";
  return "## Running configuration\n\nCaptured in `snapshots/pre.json` for " +
         join(captured, ", ") +
         ". A rehearse or apply run shows its unified diffs (post vs pre, restored vs pre, "
         "secrets redacted) in report.md.\n";
}

std::string config_diff_markdown(const std::vector<ConfigDelta>& deltas) {
  if (deltas.empty()) return "";
  std::ostringstream md;
  md << "## Configuration changes\n\nRunning configuration captured in each snapshot, as "
        "unified diffs (secrets redacted).\n\n";
  for (const auto& delta : deltas) {
    md << "### " << delta.device << ": " << delta.compared << "\n\n";
    if (!delta.missing.empty()) {
      md << "No diff: " << delta.missing << ".\n\n";
    } else if (delta.diff.empty()) {
      md << "Unchanged.\n\n";
    } else {
      // A fence longer than any run of backticks in the diff keeps it one block.
      std::size_t longest = 0, run = 0;
      for (char c : delta.diff) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
      }
      std::string fence(std::max<std::size_t>(3, longest + 1), '`');
      md << fence << "diff\n" << delta.diff << fence << "\n\n";
    }
  }
  return md.str();
}

}  // namespace fabgate::pipeline
