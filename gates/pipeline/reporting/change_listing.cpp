#include "gates/pipeline/reporting/change_listing.h"

#include <algorithm>
#include <sstream>

namespace fabgate::pipeline {
namespace {

std::string text_of(const nlohmann::json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return {};
  return object[key].is_string() ? object[key].get<std::string>() : object[key].dump();
}

// "bgp.peers.x.state" of "devices.leaf1.bgp.peers.x.state".
std::string relative_path(const std::string& path, const std::string& device) {
  const std::string prefix = "devices." + device + ".";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : path;
}

// An entry inside `code` on one list item: no newline, and no backtick that would end the code.
std::string md_code(const Redactor& redactor, const std::string& entry) {
  std::string text = redactor.redact(entry);
  for (auto& c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
    else if (c == '`')
      c = '\'';
  return text;
}

}  // namespace

std::vector<ChangeCategory> changes_of(const nlohmann::json& comparison) {
  std::vector<ChangeCategory> categories;
  auto category_named = [&](const std::string& name) -> ChangeCategory& {
    for (auto& category : categories)
      if (category.name == name) return category;
    categories.push_back(ChangeCategory{name, 0, 0, 0, {}});
    return categories.back();
  };
  if (!comparison.is_object() || !comparison.contains("results") ||
      !comparison["results"].is_array())
    return categories;
  for (const auto& result : comparison["results"]) {
    if (!result.is_object()) continue;
    const std::string device = text_of(result, "device");
    const std::string relative = relative_path(text_of(result, "path"), device);
    const std::string name = relative.substr(0, relative.find('.'));
    const std::string verdict = text_of(result, "verdict");
    bool route_lines = false;
    std::size_t named = 0;
    if (result.contains("details") && result["details"].is_array()) {
      for (const auto& detail : result["details"]) {
        if (!detail.is_string()) continue;
        const std::string line = detail.get<std::string>();
        if (line.size() < 3 || line[1] != ' ' ||
            (line[0] != '+' && line[0] != '-' && line[0] != '~'))
          continue;
        route_lines = true;
        ++named;
        auto& category = category_named(name);
        (line[0] == '+' ? category.added : line[0] == '-' ? category.removed : category.changed)++;
        category.entries.push_back(line.substr(0, 2) + device + " " + relative + ": " +
                                   line.substr(2));
      }
    }
    // Exact counts of a route table replace the counted lines, which may be only the first few.
    if (result.contains("route_counts") && result["route_counts"].is_object()) {
      const auto& counts = result["route_counts"];
      const std::size_t added = counts.value("added", std::size_t{0});
      const std::size_t removed = counts.value("removed", std::size_t{0});
      const std::size_t changed = counts.value("changed", std::size_t{0});
      if (added + removed + changed > 0) {
        auto& category = category_named(name);
        std::size_t lines_added = 0, lines_removed = 0, lines_changed = 0;
        for (const auto& detail : result["details"]) {
          if (!detail.is_string()) continue;
          const std::string line = detail.get<std::string>();
          if (line.size() < 3 || line[1] != ' ') continue;
          lines_added += line[0] == '+';
          lines_removed += line[0] == '-';
          lines_changed += line[0] == '~';
        }
        category.added += added - std::min(added, lines_added);
        category.removed += removed - std::min(removed, lines_removed);
        category.changed += changed - std::min(changed, lines_changed);
        const std::size_t total = added + removed + changed;
        category.unnamed += total - std::min(total, named);
      }
      continue;
    }
    if (route_lines) continue;
    const bool has_pre = result.contains("pre") && !result["pre"].is_null();
    const bool has_post = result.contains("post") && !result["post"].is_null();
    if (!has_pre && !has_post) continue;
    if (has_pre && has_post && result["pre"] == result["post"]) continue;
    const bool expected = result.value("expected_difference", false);
    if (verdict == "pass" && !expected) continue;
    auto& category = category_named(name);
    char mark = !has_pre ? '+' : !has_post ? '-' : '~';
    (mark == '+' ? category.added : mark == '-' ? category.removed : category.changed)++;
    std::string values = !has_pre    ? text_of(result, "post")
                         : !has_post ? text_of(result, "pre") + " -> (absent)"
                                     : text_of(result, "pre") + " -> " + text_of(result, "post");
    category.entries.push_back(std::string(1, mark) + " " + device + " " + relative + ": " +
                               values + " (" + (expected ? "expected" : verdict) + ")");
  }
  return categories;
}

std::string change_counts(const ChangeCategory& category) {
  std::vector<std::string> parts;
  if (category.added) parts.push_back(std::to_string(category.added) + " added");
  if (category.removed) parts.push_back(std::to_string(category.removed) + " removed");
  if (category.changed) parts.push_back(std::to_string(category.changed) + " changed");
  if (parts.empty()) return "no change";
  std::string out = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) out += ", " + parts[i];
  return out;
}

std::string change_listing_text(const ChangeListing& listing) {
  std::ostringstream out;
  out << "# What changed, " << listing.label
      << ": every entry ('+' added, '-' removed, '~' changed)\n";
  if (listing.categories.empty()) out << "\nnothing listed: no element named a change\n";
  for (const auto& category : listing.categories) {
    out << "\n## " << category.name << ": " << change_counts(category) << "\n";
    for (const auto& entry : category.entries) out << entry << "\n";
    if (category.unnamed > 0)
      out << "… " << category.unnamed
          << " more counted by the comparison but not named in it (it names at most 100,000 "
             "routes per table and direction)\n";
  }
  return out.str();
}

std::string change_listing_markdown(const std::vector<ChangeListing>& listings,
                                    const Redactor& redactor) {
  if (listings.empty()) return {};
  std::ostringstream md;
  md << "## What changed\n\nEvery route added, removed or changed, and every other element whose "
        "value differs and that failed, had no evidence, was waived or was an expected "
        "difference ('+' added, '-' removed, '~' changed).\n\n";
  for (const auto& listing : listings) {
    md << "### " << listing.label << "\n\n";
    if (listing.categories.empty()) {
      md << "Nothing changed that the comparison names.\n\n";
      continue;
    }
    for (const auto& category : listing.categories) {
      md << "- **" << category.name << "**: " << change_counts(category) << "\n";
      std::size_t shown = 0;
      for (const auto& entry : category.entries) {
        if (shown++ == kChangesShownPerCategory) break;
        md << "  - `" << md_code(redactor, entry) << "`\n";
      }
      if (category.total() > std::min(shown, kChangesShownPerCategory))
        md << "  - and " << category.total() - std::min(shown, kChangesShownPerCategory)
           << " more, full list in `" << listing.file << "`\n";
    }
    md << "\n";
  }
  return md.str();
}

}  // namespace fabgate::pipeline
