#pragma once

namespace fabgate::probe {

// Exit codes of fabgate-probe. fabgate runs the probe on hosts over SSH and reads both the
// JSON document on stdout and this code; the JSON is authoritative, the code is for humans and
// scripts. no_evidence is distinct from fail: the probe could not observe (no RDMA device, no
// responder), which is never a pass.
enum class ProbeExit : int {
  pass = 0,
  internal_error = 1,
  invalid_usage = 2,
  fail = 3,
  no_evidence = 4,
};

}  // namespace fabgate::probe
