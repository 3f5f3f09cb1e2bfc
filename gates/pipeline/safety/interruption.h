#pragma once

// SIGINT (Ctrl-C), SIGTERM (a CI job cancelled) and SIGHUP (the terminal closed) during a run.
// The handler only counts: the run controller reads the count between gates and in every wait,
// so a signal never kills the process with a change on the devices. The first signal means
// "stop the run": before the first step it is refused; after it, the change is rolled back and
// the restore verified, as for any failed gate. The second means "stop now": no further
// rollback step is sent, the evidence is sealed and the run exits 5 naming `fabgate recover`.
// From the third on the default action applies again (the journal is then recover's to read).

#include <string>

#include "adapters/core/duration.h"

namespace fabgate::pipeline {

class Interruption {
 public:
  // Installs the handler for SIGINT, SIGTERM and SIGHUP and clears the count; the previous
  // dispositions come back when the returned guard ends.
  class Installed {
   public:
    Installed();
    ~Installed();
    Installed(const Installed&) = delete;
    Installed& operator=(const Installed&) = delete;
  };

  // Signals received since the handler was installed.
  static int count();
  // The first of them ("SIGTERM"); empty when none arrived.
  static std::string first_name();
  // A signal arrived: the run must stop.
  static bool requested() { return count() > 0; }
  // A second signal arrived: even the rollback must stop.
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
