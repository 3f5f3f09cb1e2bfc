#include "gates/app/gate_printer.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace fabgate::app {

void GatePrinter::gate_finished(const pipeline::GateRecord& record) {
  if (console_.json_mode()) return;
  std::string verdict(pipeline::to_string(record.verdict));
  std::string painted = record.verdict == pipeline::Verdict::pass ? console_.green(verdict)
                        : pipeline::blocks(record.verdict)        ? console_.red(verdict)
                                                                  : console_.yellow(verdict);
  char line[160];
  std::snprintf(line, sizeof line, "  %-18s %7.2fs  ", record.name.c_str(),
                record.duration.count() / 1000.0);
  console_.line(std::string(line) + painted + "  " + record.summary);
  if (!pipeline::blocks(record.verdict)) return;
  constexpr std::size_t kShown = 10;
  for (std::size_t i = 0; i < record.details.size(); ++i) {
    if (i == kShown) {
      console_.line("      … " + std::to_string(record.details.size() - kShown) +
                    " more in the report");
      break;
    }
    console_.line("      " + record.details[i]);
  }
}

std::string default_operator() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (const passwd* entry = ::getpwuid(::getuid())) return entry->pw_name;
  return "unknown";
}

}  // namespace fabgate::app
