#include "gates/compare/report.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace fabgate::compare {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::no_evidence:
      return "no-evidence";
    case Verdict::waived:
      return "waived";
  }
  return "fail";
}

void Report::recount() {
  passed = failed = no_evidence = waived = 0;
  first_disproven.reset();
  for (std::size_t i = 0; i < results.size(); ++i) {
    switch (results[i].verdict) {
      case Verdict::pass:
        ++passed;
        break;
      case Verdict::fail:
        ++failed;
        if (!first_disproven) first_disproven = i;
        break;
      case Verdict::no_evidence:
        ++no_evidence;
        break;
      case Verdict::waived:
        ++waived;
        break;
    }
  }
}

Verdict Report::verdict() const {
  if (failed > 0) return Verdict::fail;
  // A waived check was excused, not observed: with every check waived nothing real passed.
  if (no_evidence > 0 || passed == 0 || !stale.empty()) return Verdict::no_evidence;
  return Verdict::pass;
}

namespace {

nlohmann::json optional_text(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  return *text;
}

nlohmann::json result_json(const CheckResult& result) {
  nlohmann::json out = {
      {"rule", result.rule},
      {"rule_set", result.rule_set},
      {"layer", to_string(result.layer)},
      {"device", result.device},
      {"path", result.path},
      {"pre", optional_text(result.pre)},
      {"post", optional_text(result.post)},
      {"verdict", to_string(result.verdict)},
      {"reason", result.reason},
  };
  if (!result.exception_id.empty()) out["exception"] = result.exception_id;
  if (result.waived_verdict) out["waived_verdict"] = to_string(*result.waived_verdict);
  if (!result.details.empty()) out["details"] = result.details;
  if (result.expected_difference) out["expected_difference"] = true;
  if (result.route_counts)
    out["route_counts"] = {{"added", result.route_counts->added},
                           {"removed", result.route_counts->removed},
                           {"changed", result.route_counts->changed}};
  return out;
}

std::string first_disproven_text(const Report& report) {
  const auto& r = report.results[*report.first_disproven];
  return r.rule + " on " + r.device + " at " + r.path + ": " + r.reason;
}

}  // namespace

nlohmann::json to_json(const Report& report) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& result : report.results) results.push_back(result_json(result));
  nlohmann::json ignored = nlohmann::json::array();
  for (const auto& item : report.ignored)
    ignored.push_back(
        {{"pattern", item.pattern}, {"rule_set", item.rule_set}, {"elements", item.elements}});
  nlohmann::json expired = nlohmann::json::array();
  for (const auto& item : report.expired_exceptions)
    expired.push_back({{"id", item.id},
                       {"owner", item.owner},
                       {"reason", item.reason},
                       {"expiry", format_utc(item.expiry)},
                       {"where", item.where.to_string()},
                       {"would_match", item.would_match}});
  nlohmann::json first = nullptr;
  if (report.first_disproven) {
    first = result_json(report.results[*report.first_disproven]);
    first["index"] = *report.first_disproven;
  }
  nlohmann::json stale = nlohmann::json::array();
  for (const auto& item : report.stale)
    stale.push_back({{"side", item.side},
                     {"taken_at", format_utc(item.taken_at)},
                     {"age", format_age(item.age)},
                     {"age_ms", item.age.count()},
                     {"max_age", format_duration(report.max_age)}});
  nlohmann::json document = {
      {"pre", {{"file", report.pre_file}, {"taken_at", format_utc(report.pre_taken_at)}}},
      {"post", {{"file", report.post_file}, {"taken_at", format_utc(report.post_taken_at)}}},
      {"verdict", to_string(report.verdict())},
      {"counts",
       {{"total", report.results.size()},
        {"pass", report.passed},
        {"fail", report.failed},
        {"no_evidence", report.no_evidence},
        {"waived", report.waived}}},
      {"first_disproven", first},
      {"ignored", ignored},
      {"expired_exceptions", expired},
      {"exceptions_used", report.exceptions_used},
      {"results", results},
  };
  if (!stale.empty()) document["stale"] = std::move(stale);
  return document;
}

std::string format_age(Duration age) {
  auto minutes = std::chrono::duration_cast<std::chrono::minutes>(age).count();
  if (minutes < 1)
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(age).count()) + "s";
  if (minutes < 60) return std::to_string(minutes) + "m";
  return std::to_string(minutes / 60) + "h" +
         (minutes % 60 ? std::to_string(minutes % 60) + "m" : "");
}

std::string summary_line(const Report& report) {
  std::string headline(to_string(report.verdict()));
  std::transform(headline.begin(), headline.end(), headline.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::string line = headline + ": " + std::to_string(report.results.size()) +
                     " checks: " + std::to_string(report.passed) + " pass, " +
                     std::to_string(report.failed) + " fail, " +
                     std::to_string(report.no_evidence) + " no-evidence, " +
                     std::to_string(report.waived) + " waived";
  if (report.results.empty())
    line += "; no rule reached any element, so nothing was compared";
  else if (report.passed == 0 && report.failed == 0 && report.no_evidence == 0)
    line += "; every check was waived, so no real check passed";
  if (!report.stale.empty())
    line += "; " +
            std::string(report.stale.size() == 2
                            ? "both snapshots are"
                            : "the " + report.stale.front().side + " snapshot is") +
            " older than max age " + format_duration(report.max_age) + ", so no check can pass";
  if (report.first_disproven)
    line += "; first disproven hypothesis: " + first_disproven_text(report);
  return line;
}

std::vector<std::string> render_human(const Report& report, const Painter& paint) {
  auto word = [&](Verdict verdict) {
    std::string text(to_string(verdict));
    return paint ? paint(verdict, text) : text;
  };
  auto rank = [](Verdict verdict) {
    switch (verdict) {
      case Verdict::fail:
        return 0;
      case Verdict::no_evidence:
        return 1;
      case Verdict::waived:
        return 2;
      case Verdict::pass:
        return 3;
    }
    return 3;
  };
  auto value = [](const std::optional<std::string>& text) {
    return text ? *text : std::string("(missing)");
  };

  std::vector<std::string> lines;
  lines.push_back("compare " + report.pre_file + " (" + format_utc(report.pre_taken_at) + ") -> " +
                  report.post_file + " (" + format_utc(report.post_taken_at) + ")");
  for (auto layer : kLayers) {
    // device -> indices, keeping collection order inside each verdict group.
    std::map<std::string, std::vector<std::size_t>> by_device;
    for (std::size_t i = 0; i < report.results.size(); ++i)
      if (report.results[i].layer == layer) by_device[report.results[i].device].push_back(i);
    if (by_device.empty()) continue;
    lines.push_back("");
    lines.push_back(std::string(to_string(layer)));
    for (auto& [device, indices] : by_device) {
      std::stable_sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
        return rank(report.results[a].verdict) < rank(report.results[b].verdict);
      });
      std::size_t passes = 0;
      lines.push_back("  " + device);
      for (auto i : indices) {
        const auto& r = report.results[i];
        if (r.verdict == Verdict::pass) {
          ++passes;
          continue;
        }
        std::string line = "    " + word(r.verdict) + "  " + r.rule + "  " + r.path + "  " +
                           value(r.pre) + " -> " + value(r.post) + "  " + r.reason;
        if (!r.exception_id.empty()) line += " [exception " + r.exception_id + "]";
        lines.push_back(line);
        for (const auto& detail : r.details) lines.push_back("        " + detail);
      }
      if (passes > 0)
        lines.push_back("    " + word(Verdict::pass) + "  " + std::to_string(passes) +
                        (passes == 1 ? " check" : " checks"));
    }
  }
  if (!report.ignored.empty()) {
    lines.push_back("");
    lines.push_back("ignored (volatile, not compared unless a rule names them):");
    for (const auto& item : report.ignored)
      lines.push_back("  " + item.pattern + "  (" + item.rule_set + ", " +
                      std::to_string(item.elements) + " elements)");
  }
  if (!report.expired_exceptions.empty()) {
    lines.push_back("");
    lines.push_back("expired exceptions (waive nothing):");
    for (const auto& item : report.expired_exceptions)
      lines.push_back("  " + item.id + "  owner " + item.owner + "  expired " +
                      format_utc(item.expiry) + "  " + item.where.to_string() +
                      (item.would_match
                           ? "  (would match " + std::to_string(item.would_match) + " results)"
                           : ""));
  }
  lines.push_back("");
  lines.push_back(summary_line(report));
  return lines;
}

}  // namespace fabgate::compare
