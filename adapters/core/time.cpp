#include "adapters/core/time.h"

#include <cctype>
#include <cstdio>

namespace fabgate {
namespace {

bool read_digits(std::string_view text, std::size_t& pos, int count, int& out) {
  if (pos + count > text.size()) return false;
  out = 0;
  for (int i = 0; i < count; ++i) {
    char c = text[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  pos += count;
  return true;
}

bool expect(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<TimePoint> parse_iso8601(std::string_view text) {
  using namespace std::chrono;
  std::size_t pos = 0;
  int y, mo, d, h, mi, s;
  if (!read_digits(text, pos, 4, y) || !expect(text, pos, '-') || !read_digits(text, pos, 2, mo) ||
      !expect(text, pos, '-') || !read_digits(text, pos, 2, d))
    return std::nullopt;
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' '))
    return std::nullopt;
  ++pos;
  if (!read_digits(text, pos, 2, h) || !expect(text, pos, ':') || !read_digits(text, pos, 2, mi) ||
      !expect(text, pos, ':') || !read_digits(text, pos, 2, s))
    return std::nullopt;
  int millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (digits < 3) millis = millis * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 3; ++i) millis *= 10;
  }
  int offset_minutes = 0;
  if (pos >= text.size()) return std::nullopt;  // zone required
  if (text[pos] == 'Z' || text[pos] == 'z') {
    ++pos;
  } else if (text[pos] == '+' || text[pos] == '-') {
    int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om;
    if (!read_digits(text, pos, 2, oh)) return std::nullopt;
    expect(text, pos, ':');
    if (!read_digits(text, pos, 2, om)) return std::nullopt;
    if (oh > 23 || om > 59) return std::nullopt;
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} + milliseconds{millis} -
            minutes{offset_minutes};
  return time_point_cast<milliseconds>(tp);
}

std::string format_utc(TimePoint when) {
  using namespace std::chrono;
  auto day_point = floor<days>(when);
  year_month_day ymd{day_point};
  hh_mm_ss<milliseconds> tod{when - day_point};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), int(tod.hours().count()),
                int(tod.minutes().count()), int(tod.seconds().count()),
                int(tod.subseconds().count()));
  return buf;
}

std::string format_utc_compact(TimePoint when) {
  using namespace std::chrono;
  auto day_point = floor<days>(when);
  year_month_day ymd{day_point};
  hh_mm_ss<milliseconds> tod{when - day_point};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d%02u%02uT%02d%02d%02dZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), int(tod.hours().count()),
                int(tod.minutes().count()), int(tod.seconds().count()));
  return buf;
}

TimePoint now_utc() {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
}

}  // namespace fabgate
