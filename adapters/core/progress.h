#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace fabgate {

// How far a long operation has come, for the people waiting on it ("6/8 devices"). The seam
// keeps printing out of the code doing the work: a gate and its collaborators update a sink,
// and the terminal side (gates/app/gate_printer.h) decides what to show and when. Called from
// worker threads (devices are collected in parallel): implementations must be thread-safe.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // `done` of `total` `unit` (a plural noun: "devices", "probes") are finished.
  virtual void progress(std::size_t done, std::size_t total, std::string_view unit) = 0;
};

// Counts the finished items of a fan-out for a sink; null sink: nobody is watching. Reports
// 0/total when made, so a watcher knows the total before the first item ends.
class ProgressCounter {
 public:
  ProgressCounter(ProgressSink* sink, std::size_t total, std::string unit)
      : sink_(sink), total_(total), unit_(std::move(unit)) {
    if (sink_) sink_->progress(0, total_, unit_);
  }
  // Under a lock, so a watcher hears the counts in order (never 3/3 before 2/3).
  void one_done() {
    std::lock_guard lock(mutex_);
    ++done_;
    if (sink_) sink_->progress(done_, total_, unit_);
  }

 private:
  ProgressSink* sink_;
  std::size_t total_;
  std::string unit_;
  std::mutex mutex_;
  std::size_t done_ = 0;
};

}  // namespace fabgate
