#pragma once

// Runs one fault schedule (fault_schedule.h) against real components and judges it
// (fault_checker.h): the real fabgate binary from two controllers (the intent repository and a
// `git clone` of it, each with its own evidence folder), a real three-member etcd 3.4 cluster, and
// four devices behind a real sshd (each device's configuration and own command log are files in
// the server's home). Every schedule gets a fresh fabric, torn down when it ends whatever
// happened; its processes, cgroup and nftables table go with it.

#include <optional>
#include <string>
#include <vector>

#include "tests/cmd/fabgate/coordinated_fixture.h"
#include "tests/faults/fault_checker.h"
#include "tests/faults/fault_schedule.h"

namespace fabgate::faults {

struct ScheduleResult {
  Schedule schedule;
  std::vector<RunObservation> runs;
  std::vector<Violation> violations;
  std::vector<std::string> narrative;  // what each run and recover did, and when
  std::vector<std::string> device_logs;  // "d1: <line>", every device's log
  double seconds = 0;
  std::string failure;  // the fabric could not be set up or driven: no verdict
};

// Why schedules cannot run here (not root, no sshd, etcd, etcdctl, nft or cgroup v2), or nullopt.
std::optional<std::string> fault_fabric_unavailable();

// Runs `schedule` in a fresh fabric and checks it.
ScheduleResult run_schedule(const Schedule& schedule);

// The whole report of one schedule: its description, what happened, and each violation with
// its evidence.
std::string report(const ScheduleResult& result);

}  // namespace fabgate::faults
