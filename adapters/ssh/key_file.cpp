#include "adapters/ssh/key_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fabgate::ssh {

Expected<Ok, SshFailure> check_key_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return SshFailure{SshFailure::Kind::auth, "key file " + path + ": " + std::strerror(errno)};
  }
  if (!S_ISREG(info.st_mode)) {
    return SshFailure{SshFailure::Kind::auth, "key file " + path + " is not a regular file"};
  }
  unsigned permissions = info.st_mode & 07777u;
  if ((permissions & 077u) != 0) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", permissions);
    return SshFailure{SshFailure::Kind::auth,
                      "key file " + path + " has permissions " + octal +
                          "; a private key must be readable by its owner only (chmod 600 " + path +
                          ")"};
  }
  return Ok{};
}

}  // namespace fabgate::ssh
