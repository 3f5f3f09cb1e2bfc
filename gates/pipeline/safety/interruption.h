#pragma once

// SIGINT (Ctrl-C), SIGTERM (a CI job cancelled) and SIGHUP (the terminal closed) during a run.
// The handler only counts (and writes one prepared line): the run controller reads the count
// between gates and in every wait, so a signal never kills the process with a change on the
// devices.
//
// - The first signal means "stop the run": before the first step it is refused; after it, the
//   change is rolled back and the restore verified, as for any failed gate. The handler prints
//   at once the `fabgate recover` command of the run (set_recover_command), because what comes
//   next may be a SIGKILL: a CI runner cancels with SIGINT or SIGTERM, sends another signal a
//   few seconds later, then SIGKILL. The controller journals the same command when it notices
//   the signal.
// - The second means "finish now": the rollback steps still go out (each within its own bound:
//   undoing the change matters more than proving it), but nothing waits after them; the restore
//   verification is skipped, the evidence sealed, and the run exits 5 naming `fabgate recover`.
// - From the third on the default action applies again (the journal is then recover's to read).

#include <string>

#include "adapters/core/duration.h"

namespace fabgate::pipeline {

class Interruption {
 public:
  // Installs the handler for SIGINT, SIGTERM and SIGHUP and clears the count and the recover
  // command; the previous dispositions come back when the returned guard ends.
  class Installed {
   public:
    Installed();
    ~Installed();
    Installed(const Installed&) = delete;
    Installed& operator=(const Installed&) = delete;
  };

  // For the whole life of the process: a write to a pipe or socket whose reader is gone (a
  // dropped SSH or gRPC peer, `fabgate apply | head`) fails with EPIPE, a value the caller
  // handles, instead of SIGPIPE killing fabgate mid-change with no rollback. Call once at the
  // start of main(), before any thread exists. Children get the default disposition back
  // (gates/approval/child_process.cpp and adapters/gnmi/target/process.cpp reset it on spawn).
  static void ignore_broken_pipes();

  // The command that finishes this run if the process is killed ("fabgate recover DIR"): the
  // handler prints it at the first and the second signal. Empty: nothing is named.
  static void set_recover_command(const std::string& command);
  static std::string recover_command();

  // Signals received since the handler was installed.
  static int count();
  // The first of them ("SIGTERM"); empty when none arrived.
  static std::string first_name();
  // A signal arrived: the run must stop.
  static bool requested() { return count() > 0; }
  // A second signal arrived: the run finishes its rollback steps and then nothing more (no
  // restore verification, no wait).
  static bool abandoned() { return count() > 1; }

  // Sleeps for `wait`, in short slices, unless more than `signals_allowed` signals arrive
  // first. True when the whole wait passed.
  static bool sleep_unless(Duration wait, int signals_allowed);

  // For tests of the controller: behave as if `signal_number` had arrived (without one).
  static void simulate(int signal_number);
  static void reset();
};

// "SIGTERM", "SIGINT", "SIGHUP", else "signal N".
std::string signal_name(int signal_number);

}  // namespace fabgate::pipeline
