#pragma once

#include <string>

#include "adapters/core/result.h"
#include "adapters/core/text.h"  // expand_home
#include "adapters/ssh/ssh_failure.h"

namespace fabgate::ssh {

// A private key file named in the inventory must exist, be a regular file and be readable by
// its owner only (no group or other permission bits, i.e. 0600 or 0400). A key others can read
// is a leaked credential; fabgate refuses it like OpenSSH does, with the fix in the message.
Expected<Ok, SshFailure> check_key_file(const std::string& path);

}  // namespace fabgate::ssh
