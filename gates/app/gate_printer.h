#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "gates/app/console.h"
#include "gates/pipeline/controller/pipeline.h"

namespace fabgate::app {

// When a running gate shows that it runs. Defaults are the CLI's; tests shorten them.
struct ProgressTiming {
  std::chrono::milliseconds quiet{2000};    // a gate ending sooner shows nothing while it runs
  std::chrono::milliseconds redraw{200};    // terminal: how often the live line is redrawn
  std::chrono::milliseconds plain{10'000};  // no terminal: one line this often
};

// Prints each gate as it ends: name, duration, verdict (coloured on a terminal) and summary;
// for a blocking gate also its details with repeated causes folded (fold_repeated_details), the
// first ten (the rest are in the report). Shared by every command that runs gates (plan, apply,
// rehearse, recover) so they read the same.
//
// While a gate runs longer than `quiet`, it shows that it runs and what it waits for (the
// progress the gate reports, "6/8 devices"): on a terminal a live line redrawn in place
// ("  snapshot-pre 12.4 s, 6/8 devices"), replaced by the gate's result line when it ends;
// otherwise (a CI log) a plain line every `plain` ("  snapshot-pre still running after 10 s,
// 6/8 devices"). Nothing in --json mode. A thread of its own keeps time, so a gate blocked in a
// device call is still shown running.
class GatePrinter final : public pipeline::GateObserver {
 public:
  explicit GatePrinter(Console& console, ProgressTiming timing = {});
  ~GatePrinter() override;
  GatePrinter(const GatePrinter&) = delete;
  GatePrinter& operator=(const GatePrinter&) = delete;

  void gate_started(const std::string& name) override;
  void gate_finished(const pipeline::GateRecord& record) override;
  void progress(std::size_t done, std::size_t total, std::string_view unit) override;

 private:
  using Clock = std::chrono::steady_clock;
  void keep_time();  // the clock thread
  std::string running_line(Clock::duration elapsed) const;

  Console& console_;
  ProgressTiming timing_;
  std::mutex mutex_;  // guards everything below and the console while a gate runs
  std::condition_variable changed_;
  std::string running_;              // the running gate; empty between gates
  std::uint64_t gates_started_ = 0;  // tells two runs of one gate name apart
  Clock::time_point started_;
  std::string waiting_for_;  // "6/8 devices"; empty until the gate reports progress
  bool live_shown_ = false;
  bool stopping_ = false;
  std::thread clock_;  // last: started once the members it reads exist
};

// Who runs fabgate when --operator is not given: $USER, else the login name of this uid.
std::string default_operator();

}  // namespace fabgate::app
