#pragma once

#include <string>

namespace fabgate::testing {

// A port on `address` (a loopback address) that a test may hand to a child to bind, free for
// both TCP and UDP, and kept out of every other fabgate test process's hands until this process
// exits; 0 when none was found.
//
// Why not "bind port 0, read it back, close": that port comes from the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), so any process on the machine may be handed it again between
// the close and the child's bind, for an outgoing connection or its own port-0 bind; under a
// parallel suite that happened (a responder failing with "Address already in use"). Ports
// outside the ephemeral range are never handed out by the kernel, so only another test could
// take one; each pick is claimed with an abstract unix socket named after the port, which the
// kernel releases when the process ends, however it ends: no lock files, no leftovers.
int reserve_test_port(const std::string& address = "127.0.0.1");

// A close-on-exec TCP socket listening on 127.0.0.1, on a port the kernel picked when it bound
// it (so no other process can take the port first), for a server inside the test process. The
// caller owns `fd`; -1 when it could not be made.
struct LoopbackListener {
  int fd = -1;
  int port = 0;
};
LoopbackListener listen_on_loopback(int backlog = 16);

}  // namespace fabgate::testing
