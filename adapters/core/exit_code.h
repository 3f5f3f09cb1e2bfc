#pragma once

namespace fabgate {

// The exit codes of the CLI contract (DESIGN.md). CI systems branch on these numbers, so they
// never change meaning.
enum class ExitCode : int {
  accepted = 0,        // accepted / plan ready / all checks pass
  internal_error = 1,  // a bug or an environment fault fabgate could not classify
  invalid_input = 2,   // usage, schema, intent not committed, unresolvable ref
  refused = 3,         // a pre-change gate failed or had no evidence; nothing was touched
  rolled_back = 4,     // the change failed and was rolled back; baseline verified
  not_restored = 5,    // rollback failed or baseline not verified: a human must act now
};

constexpr int to_int(ExitCode code) {
  return static_cast<int>(code);
}

}  // namespace fabgate
