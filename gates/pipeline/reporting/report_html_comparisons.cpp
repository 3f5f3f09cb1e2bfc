#include <algorithm>
#include <map>
#include <vector>

#include "adapters/core/foreign_json.h"
#include "adapters/core/text.h"
#include "gates/compare/exception_register.h"
#include "gates/pipeline/reporting/change_listing.h"
#include "gates/pipeline/reporting/report_html_parts.h"

// report.html's comparisons (and `fabgate diff --html`): unexpected differences first, then
// the folded rest, and the exceptions that waived any of them.

namespace fabgate::pipeline::html_parts {
namespace {

// What changed, named: per category its counts and first entries, as report.md lists them
// (change_listing.h), with a link to the full list the run wrote next to the comparison.
void changed_entries(std::ostringstream& html, const ComparisonInput& comparison,
                     const Text& text) {
  auto categories = changes_of(*comparison.document);
  if (categories.empty()) return;
  std::string full_list;
  const std::string& json = comparison.json_link;
  if (json.size() > 5 && json.compare(json.size() - 5, 5, ".json") == 0)
    full_list = json.substr(0, json.size() - 5) + "-changes.txt";
  html << "<h4>What changed</h4>\n";
  for (const auto& category : categories) {
    html << "<p><strong>" << text(category.name)
         << "</strong>: " << html_escape(change_counts(category)) << "</p>\n<ul>";
    std::size_t shown = 0;
    for (const auto& entry : category.entries) {
      if (shown++ == kChangesShownPerCategory) break;
      html << "<li><code>" << text(entry) << "</code></li>";
    }
    if (category.total() > std::min(shown, kChangesShownPerCategory)) {
      html << "<li class=\"muted\">and "
           << category.total() - std::min(shown, kChangesShownPerCategory) << " more";
      if (!full_list.empty())
        html << ", full list in <a href=\"" << text.whole(full_list) << "\">"
             << text.whole(full_list) << "</a>";
      html << "</li>";
    }
    html << "</ul>\n";
  }
}

}  // namespace

// One comparison: unexpected differences first (fail, then no-evidence), grouped by rule with
// the first entries of each; waived, expected and passing checks folded, as counts.
void comparison_body(std::ostringstream& html, const ComparisonInput& comparison,
                     const Text& text) {
  const auto& limits = text.limits();
  const nlohmann::json& doc = *comparison.document;
  const auto& counts = doc.contains("counts") ? doc["counts"] : nlohmann::json::object();
  std::string verdict = member_text(doc, "verdict");
  html << "<p>" << badge(verdict.empty() ? "no-evidence" : verdict) << " "
       << text(member_text(counts, "total")) << " checks: " << text(member_text(counts, "pass"))
       << " pass, " << text(member_text(counts, "fail")) << " fail, "
       << text(member_text(counts, "no_evidence")) << " no evidence, "
       << text(member_text(counts, "waived")) << " waived";
  if (doc.contains("pre") && doc.contains("post"))
    html << " <span class=\"muted\">(pre taken " << text(member_text(doc["pre"], "taken_at"))
         << ", post taken " << text(member_text(doc["post"], "taken_at")) << ")</span>";
  html << "</p>\n";
  std::vector<std::string> links;
  for (const auto* link : {&comparison.json_link, &comparison.text_link})
    if (!link->empty())
      links.push_back("<a href=\"" + text.whole(*link) + "\">" + text.whole(*link) + "</a>");
  if (!links.empty()) html << "<p class=\"muted\">Every result: " << join(links, ", ") << "</p>\n";
  if (doc.contains("first_disproven") && doc["first_disproven"].is_object()) {
    const auto& first = doc["first_disproven"];
    html << "<p><strong>First disproven:</strong> " << text(member_text(first, "rule")) << " on "
         << text(member_text(first, "device")) << " at <code>" << text(member_text(first, "path"))
         << "</code>: " << text(member_text(first, "reason")) << "</p>\n";
  }

  struct Group {
    std::size_t count = 0;
    std::vector<const nlohmann::json*> first;
  };
  // kind -> rule -> group, rules in order of first appearance.
  std::map<std::string, std::vector<std::pair<std::string, Group>>> kinds;
  auto group_of = [&](const std::string& kind, const std::string& rule) -> Group& {
    auto& groups = kinds[kind];
    for (auto& [name, group] : groups)
      if (name == rule) return group;
    groups.emplace_back(rule, Group{});
    return groups.back().second;
  };
  if (doc.contains("results") && doc["results"].is_array())
    for (const auto& result : doc["results"]) {
      std::string result_verdict = member_text(result, "verdict");
      std::string kind = result_verdict == "fail"                               ? "fail"
                         : result_verdict == "no-evidence"                      ? "no-evidence"
                         : result_verdict == "waived"                           ? "waived"
                         : member_text(result, "rule") == "expected-difference" ? "expected"
                                                                                : "pass";
      std::string rule = member_text(result, "rule_set") + "/" + member_text(result, "rule");
      Group& group = group_of(kind, rule);
      ++group.count;
      if (kind != "pass" && group.first.size() < limits.entries_per_rule)
        group.first.push_back(&result);
    }

  auto entries = [&](const std::string& kind, bool folded, const std::string& heading) {
    auto found = kinds.find(kind);
    if (found == kinds.end()) return;
    std::size_t total = 0;
    for (const auto& [rule, group] : found->second) total += group.count;
    html << (folded ? "<details><summary>" : "<h3>") << html_escape(heading) << " (" << total << ")"
         << (folded ? "</summary>" : "</h3>") << "\n";
    std::size_t rules_shown = 0;
    for (const auto& [rule, group] : found->second) {
      if (++rules_shown > limits.rules) {
        html << "<p class=\"muted\">… " << found->second.size() - limits.rules
             << " more rules in the raw files</p>";
        break;
      }
      html << "<p><code>" << text(rule) << "</code>: " << group.count << " element"
           << (group.count == 1 ? "" : "s") << "</p>";
      if (group.first.empty()) continue;
      html << "<table><tr><th>device</th><th>path</th><th>pre</th><th>post</th><th>reason</th>"
              "</tr>";
      for (const auto* result : group.first) {
        html << "<tr><td>" << text(member_text(*result, "device")) << "</td><td class=\"mono\">"
             << text(member_text(*result, "path")) << "</td><td class=\"mono\">"
             << text.json(result->value("pre", nlohmann::json())) << "</td><td class=\"mono\">"
             << text.json(result->value("post", nlohmann::json())) << "</td><td>"
             << text(member_text(*result, "reason"));
        if (result->contains("exception"))
          html << " (waived by " << text(member_text(*result, "exception")) << ")";
        if (result->contains("details") && (*result)["details"].is_array()) {
          const auto& details = (*result)["details"];
          html << "<ul class=\"mono\">";
          std::size_t shown = 0;
          for (const auto& line : details) {
            if (++shown > limits.details_per_entry) {
              html << "<li class=\"muted\">… " << details.size() - limits.details_per_entry
                   << " more</li>";
              break;
            }
            html << "<li>" << text.json(line) << "</li>";
          }
          html << "</ul>";
        }
        html << "</td></tr>";
      }
      html << "</table>";
      if (group.count > group.first.size())
        html << "<p class=\"muted\">… " << group.count - group.first.size() << " more"
             << (comparison.json_link.empty()
                     ? std::string()
                     : " in <a href=\"" + text.whole(comparison.json_link) + "\">" +
                           text.whole(comparison.json_link) + "</a>")
             << "</p>";
    }
    html << (folded ? "</details>\n" : "\n");
  };
  changed_entries(html, comparison, text);
  entries("fail", false, "Unexpected differences");
  entries("no-evidence", false, "Without evidence");
  entries("waived", true, "Waived by an exception");
  entries("expected", true, "Expected differences, as the change declared");
  entries("pass", true, "Held");
}

void comparisons_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text) {
  html << "<h2>Comparison</h2>\n";
  if (input.comparisons.empty()) {
    html << "<p class=\"muted\">No comparison ran in this run.</p>\n";
    return;
  }
  for (const auto& comparison : input.comparisons) {
    html << "<h3>" << text(comparison.title) << "</h3>\n";
    comparison_body(html, comparison, text);
  }
}

void exceptions_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text) {
  std::vector<std::string> ids = input.outcome.exceptions_used;
  for (const auto& comparison : input.comparisons)
    if (const nlohmann::json* used =
            comparison.document ? array_member(*comparison.document, "exceptions_used") : nullptr)
      for (const auto& id : *used)
        if (id.is_string() && std::find(ids.begin(), ids.end(), id.get<std::string>()) == ids.end())
          ids.push_back(id.get<std::string>());
  html << "<h2>Exceptions used</h2>\n";
  if (ids.empty()) {
    html << "<p>None: nothing was waived.</p>\n";
    return;
  }
  const auto& repository = input.context.repository;
  std::optional<compare::ExceptionRegister> entries;
  auto register_text = repository.exceptions_register();
  if (register_text) {
    auto loaded = compare::load_exception_register(register_text->second, register_text->first);
    if (loaded.ok()) entries = std::move(loaded.value());
  }
  html << "<table><tr><th>exception</th><th>owner</th><th>expiry</th><th>scope</th>"
          "<th>reason</th></tr>";
  for (const auto& id : ids) {
    const compare::ExceptionEntry* entry = nullptr;
    if (entries)
      for (const auto& candidate : entries->entries)
        if (candidate.id == id) entry = &candidate;
    if (!entry) {
      html << "<tr><td>" << text(id)
           << "</td><td colspan=\"4\">not found in the register at the "
              "intent commit</td></tr>";
      continue;
    }
    html << "<tr><td>" << text(id) << "</td><td>" << text(entry->owner) << "</td><td>"
         << html_escape(format_utc(entry->expiry)) << "</td><td>device <code>"
         << text(entry->device) << "</code>, rule <code>" << text(entry->rule) << "</code>"
         << (entry->path ? ", path <code>" + text(entry->path->text()) + "</code>" : "")
         << "</td><td>" << text(entry->reason) << "</td></tr>";
  }
  html << "</table>\n";
}

}  // namespace fabgate::pipeline::html_parts
