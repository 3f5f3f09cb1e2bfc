#pragma once

namespace fabgate {

// Version of this build and the git commit it was built from ("-dirty" when the work tree had
// uncommitted changes). Generated at build time by cmake/WriteBuildInfo.cmake.
const char* tool_version();
const char* build_commit();

}  // namespace fabgate
