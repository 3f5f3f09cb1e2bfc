#pragma once

namespace fabgate::testing {

// The exit status of a test executable whose every test skipped (the autotools convention);
// tests/CMakeLists.txt registers it as SKIP_RETURN_CODE.
inline constexpr int kSkippedExitCode = 77;

}  // namespace fabgate::testing
