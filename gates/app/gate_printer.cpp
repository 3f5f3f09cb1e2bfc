#include "gates/app/gate_printer.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "adapters/core/thread_entry.h"
#include "gates/pipeline/reporting/folded_details.h"

namespace fabgate::app {

GatePrinter::GatePrinter(Console& console, ProgressTiming timing)
    : console_(console), timing_(timing) {
  // The clock only shows how long a gate has run: if it fails (an exception from the console
  // or a string), it stops showing that, and the run and its gate lines go on.
  if (!console_.json_mode())
    clock_ = std::thread([this] { (void)what_escaped([this] { keep_time(); }); });
}

GatePrinter::~GatePrinter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (clock_.joinable()) clock_.join();
}

void GatePrinter::gate_started(const std::string& name) {
  {
    std::lock_guard lock(mutex_);
    running_ = name;
    ++gates_started_;
    started_ = Clock::now();
    waiting_for_.clear();
  }
  changed_.notify_all();
}

void GatePrinter::progress(std::size_t done, std::size_t total, std::string_view unit) {
  std::lock_guard lock(mutex_);
  waiting_for_ = std::to_string(done) + "/" + std::to_string(total) + " " + std::string(unit);
}

std::string GatePrinter::running_line(Clock::duration elapsed) const {
  char seconds[32];
  double value = std::chrono::duration<double>(elapsed).count();
  if (console_.terminal())
    std::snprintf(seconds, sizeof seconds, "%.1f s", value);
  else
    std::snprintf(seconds, sizeof seconds, "still running after %.0f s", value);
  std::string line = "  " + running_ + " " + seconds;
  if (!waiting_for_.empty()) line += ", " + waiting_for_;
  return line;
}

void GatePrinter::keep_time() {
  std::unique_lock lock(mutex_);
  Clock::time_point next_plain{};
  std::uint64_t scheduled_for = 0;  // the gate the plain schedule belongs to
  while (!stopping_) {
    if (running_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto now = Clock::now();
    auto elapsed = now - started_;
    if (console_.terminal()) {
      if (elapsed < timing_.quiet) {
        changed_.wait_until(lock, started_ + timing_.quiet);
        continue;
      }
      console_.live(running_line(elapsed));
      live_shown_ = true;
      changed_.wait_for(lock, timing_.redraw);
      continue;
    }
    if (scheduled_for != gates_started_) {
      scheduled_for = gates_started_;
      next_plain = started_ + timing_.plain;
    }
    if (now >= next_plain) {
      console_.line(running_line(elapsed));
      next_plain += timing_.plain;
      continue;
    }
    changed_.wait_until(lock, next_plain);
  }
}

void GatePrinter::gate_finished(const pipeline::GateRecord& record) {
  std::lock_guard lock(mutex_);
  running_.clear();
  if (console_.json_mode()) return;
  if (live_shown_) {
    console_.clear_live();
    live_shown_ = false;
  }
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
  auto details = pipeline::fold_repeated_details(record.details);
  for (std::size_t i = 0; i < details.size(); ++i) {
    if (i == kShown) {
      console_.line("      … " + std::to_string(details.size() - kShown) + " more in the report");
      break;
    }
    console_.line("      " + details[i]);
  }
}

std::string default_operator() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (const passwd* entry = ::getpwuid(::getuid())) return entry->pw_name;
  return "unknown";
}

}  // namespace fabgate::app
