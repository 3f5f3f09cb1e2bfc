#include <algorithm>

#include "adapters/core/shorten.h"
#include "gates/pipeline/reporting/report_html_parts.h"
#include "gates/pipeline/reporting/reports.h"

namespace fabgate::pipeline {

std::string html_escape(std::string_view text) {
  return escape_markup(text, "&#39;");  // HTML 4 has no &apos;
}

namespace html_parts {

std::string Text::cut(std::string_view value, std::size_t chars) const {
  std::string text = redactor_.redact(value);
  if (chars != std::string::npos) text = shorten(text, chars);
  return html_escape(text);
}

std::string Text::json(const nlohmann::json& value) const {
  if (value.is_null()) return "<em>(absent)</em>";
  if (value.is_string()) return (*this)(value.get<std::string>());
  return (*this)(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string fixed(double value, int precision) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(precision);
  out << value;
  return out.str();
}

std::string seconds(Duration duration) {
  return fixed(duration.count() / 1000.0, 2) + " s";
}

std::string clock_of(TimePoint when) {
  return format_utc(when).substr(11, 12);
}

std::string verdict_class(std::string_view verdict) {
  if (verdict == "pass" || verdict == "waived") return "pass";
  if (verdict == "fail") return "fail";
  if (verdict == "skipped") return "skip";
  return "noev";
}

std::string verdict_label(std::string_view verdict) {
  if (verdict == "fail") return "FAIL";
  if (verdict == "no-evidence") return "NO EVIDENCE";
  return std::string(verdict);
}

std::string badge(std::string_view verdict) {
  return "<span class=\"badge " + verdict_class(verdict) + "\">" +
         html_escape(verdict_label(verdict)) + "</span>";
}

double Axis::x(TimePoint when) const {
  double span = std::max<double>(1, static_cast<double>((end - start).count()));
  double offset = static_cast<double>((when - start).count());
  return kLabel + std::clamp(offset / span, 0.0, 1.0) * (kWidth - kLabel - kRight);
}

std::string Axis::relative(TimePoint when) const {
  return "+" + fixed(static_cast<double>((when - start).count()) / 1000.0, 2) + " s";
}

std::string svg_open(double height, const std::string& label) {
  return "<svg class=\"timeline\" viewBox=\"0 0 " + fixed(kWidth, 0) + " " + fixed(height, 0) +
         "\" width=\"100%\" role=\"img\" aria-label=\"" + html_escape(label) + "\">";
}

std::string ticks(const Axis& axis, double bottom) {
  double span = std::max<double>(1, static_cast<double>((axis.end - axis.start).count()));
  double step = 1;
  for (double scale = 1; step * 10 < span; scale *= 10)
    for (double factor : {1.0, 2.0, 5.0}) {
      step = factor * scale;
      if (span / step <= 10) break;
    }
  std::ostringstream svg;
  for (double t = 0; t <= span + 0.5; t += step) {
    double x = kLabel + t / span * (kWidth - kLabel - kRight);
    svg << "<line class=\"grid\" x1=\"" << fixed(x, 1) << "\" y1=\"" << kTop - 6 << "\" x2=\""
        << fixed(x, 1) << "\" y2=\"" << fixed(bottom, 1) << "\"/>";
    bool at_edge = x > kWidth - kRight - 20;  // keep the last label inside the drawing
    svg << "<text class=\"tick" << (at_edge ? " left" : "") << "\" x=\"" << fixed(x, 1) << "\" y=\""
        << kTop - 10 << "\">+"
        << (step >= 1000 ? fixed(t / 1000.0, step >= 10000 ? 0 : 1) + " s" : fixed(t, 0) + " ms")
        << "</text>";
  }
  return svg.str();
}

}  // namespace html_parts
}  // namespace fabgate::pipeline
