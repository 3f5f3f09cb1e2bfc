#pragma once

// Hosts for run_probes tests with a scripted remote: a name and the data address a probe
// targets (the device that owns it runs the responder).

#include <string>

#include "gates/intent/model.h"

namespace fabgate::pipeline {

inline intent::Device probe_host(const std::string& name, const std::string& address) {
  intent::Device device;
  device.name = name;
  device.role = "host";
  device.data_addresses = {address};
  return device;
}

}  // namespace fabgate::pipeline
