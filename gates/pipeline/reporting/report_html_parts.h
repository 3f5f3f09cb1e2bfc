#pragma once

// Internal to report.html (report_html*.cpp): the helpers its sections share and the sections
// themselves, one file per group (timelines, probes, comparisons). Not for other callers.

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapters/core/duration.h"
#include "adapters/core/redact.h"
#include "adapters/core/time.h"
#include "gates/pipeline/reporting/layer_recovery.h"
#include "gates/pipeline/reporting/report_html.h"

namespace fabgate::pipeline::html_parts {

// ---- values (report_html_values.cpp) -------------------------------------------------------

// Turns a value into page text: redacted first (a secret cut in half or escaped would no longer
// match), then shortened at a phrase or word boundary (shorten()), then escaped.
class Text {
 public:
  Text(const Redactor& redactor, const ReportHtmlLimits& limits)
      : redactor_(redactor), limits_(limits) {}
  std::string operator()(std::string_view value) const { return cut(value, limits_.value_chars); }
  std::string whole(std::string_view value) const { return cut(value, std::string::npos); }
  std::string cut(std::string_view value, std::size_t chars) const;
  // A JSON value as one line: strings as they are, anything else serialised.
  std::string json(const nlohmann::json& value) const;
  const ReportHtmlLimits& limits() const { return limits_; }

 private:
  const Redactor& redactor_;
  const ReportHtmlLimits& limits_;
};

std::string fixed(double value, int precision);
std::string seconds(Duration duration);
// "02:14:05.123" of an ISO time: the page's axis is one run, so the date is said once.
std::string clock_of(TimePoint when);
std::string verdict_class(std::string_view verdict);
std::string verdict_label(std::string_view verdict);
std::string badge(std::string_view verdict);

// ---- the time axis (report_html_values.cpp) ------------------------------------------------

inline constexpr double kWidth = 1000;
inline constexpr double kLabel = 190;  // left column for row names
inline constexpr double kRight = 20;
inline constexpr double kRow = 22;
inline constexpr double kTop = 40;  // room for the first-failure label and the tick labels

struct Axis {
  TimePoint start;
  TimePoint end;
  double x(TimePoint when) const;
  std::string relative(TimePoint when) const;
};

std::string svg_open(double height, const std::string& label);
// Vertical grid lines with "+N s" labels at a step of 1, 2 or 5 times a power of ten.
std::string ticks(const Axis& axis, double bottom);

// ---- gates and layers on the time axis (report_html_timelines.cpp) -------------------------

// From the first to the last thing the run timed: gates, probes, layer observations.
Axis axis_of(const RunOutcome& outcome, const LayerRecovery& layers);
void gate_timeline(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis);
void gate_table(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis,
                const Text& text);
void layer_section(std::ostringstream& html, const LayerRecovery& layers, const Axis& axis);

// ---- probes and telemetry (report_html_probes.cpp) -----------------------------------------

void disruption_section(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis,
                        const Text& text);
void telemetry_section(std::ostringstream& html, const std::optional<TelemetryOutcome>& window,
                       const Text& text);
void probes_section(std::ostringstream& html, const RunOutcome& outcome, const Axis& axis,
                    const Text& text);

// ---- comparisons and exceptions (report_html_comparisons.cpp) ------------------------------

void comparison_body(std::ostringstream& html, const ComparisonInput& comparison, const Text& text);
void comparisons_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text);
void exceptions_section(std::ostringstream& html, const ReportHtmlInput& input, const Text& text);

}  // namespace fabgate::pipeline::html_parts
