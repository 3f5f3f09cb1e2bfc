#pragma once

// The fabgate process's own signal setup, done once in main() before any thread exists (the
// disposition is per process; a thread created later could take a SIGPIPE first).

#include "gates/pipeline/safety/interruption.h"

namespace fabgate::app {

// A closed pipe or socket (a dropped SSH or gRPC peer, `fabgate apply | head`) becomes an EPIPE
// the code handles, never a SIGPIPE that ends the process mid-change. The run's SIGINT, SIGTERM
// and SIGHUP handling is installed later, around the run (pipeline::Interruption::Installed).
inline void prepare_process_signals() { pipeline::Interruption::ignore_broken_pipes(); }

}  // namespace fabgate::app
