#include "adapters/flows/priority.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace fabgate::flows {

std::string request_realtime_priority(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  // pid 0: the calling thread; threads created later inherit its policy.
  if (::sched_setscheduler(0, SCHED_RR, &param) != 0)
    return std::string("normal (") + std::strerror(errno) + ")";
  return "SCHED_RR " + std::to_string(priority);
}

}  // namespace fabgate::flows
