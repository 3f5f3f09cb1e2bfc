#pragma once

#include <string>

namespace fabgate::ssh {

// A host key fabgate accepted because the host was not in known_hosts and the run allowed
// accepting new keys (--accept-new-host-keys). It is reported so that it lands in the output
// and the evidence: trust-on-first-use is a decision an auditor must be able to see.
struct AcceptedHostKey {
  std::string device;
  std::string host;         // as written in known_hosts: "10.0.0.1" or "[10.0.0.1]:2222"
  std::string key_type;     // "ssh-ed25519"
  std::string fingerprint;  // "SHA256:..."
  std::string known_hosts_file;
  bool saved = false;  // appended to known_hosts so the next run checks it strictly
};

}  // namespace fabgate::ssh
