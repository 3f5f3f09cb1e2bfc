#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/gnmi/client.h"
#include "gates/intent/model.h"
#include "gates/pipeline/safety/lease_fence.h"

namespace fabgate::pipeline {

class EvidenceBundle;

// Sends the operations of one gNMI step (or rollback step) to one device as a single Set, so
// the target applies all of them or none. The seam exists so the executor's gNMI path can be
// unit-tested with a scripted fake; GrpcGnmiSteps is the real one. `purpose` ("step",
// "rollback") goes into commands.jsonl.
class GnmiSteps {
 public:
  virtual ~GnmiSteps() = default;
  virtual gnmi::GnmiResult<gnmi::SetResult> apply(
      const intent::Device& device, const std::vector<intent::GnmiSetOperation>& operations,
      Duration deadline, std::string_view purpose) = 0;
};

// The text a gNMI step stands for in the journal, commands.jsonl and reports:
// "gnmi set replace /interfaces/interface[name=to-host1]/config/mtu = 1500; update ...".
std::string describe_gnmi_set(const std::vector<intent::GnmiSetOperation>& operations);

// Client options for a device's gNMI endpoint: address, TLS files, and the login read from
// the environment prefix the inventory names. Fails (auth) when that prefix's variables are
// unset, and (rejected) when the device has no gnmi endpoint.
gnmi::GnmiResult<gnmi::GnmiClientOptions> client_options_for(const intent::Device& device);

// A gRPC client to the device's gNMI endpoint (client_options_for(), then gnmi::connect()).
gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> connect_gnmi(const intent::Device& device);

// The real GnmiSteps: one gRPC channel per call (a change sends few Sets; a cached channel
// would outlive a device restart between step and rollback for no gain).
class GrpcGnmiSteps final : public GnmiSteps {
 public:
  gnmi::GnmiResult<gnmi::SetResult> apply(const intent::Device& device,
                                          const std::vector<intent::GnmiSetOperation>& operations,
                                          Duration deadline, std::string_view purpose) override;
};

// Writes every Set sent (device, purpose, operations, start, duration, what the target
// applied or the failure) to the evidence's commands.jsonl, then returns the result: gNMI
// steps leave the same trail as SSH commands.
class RecordingGnmiSteps final : public GnmiSteps {
 public:
  RecordingGnmiSteps(GnmiSteps& inner, EvidenceBundle& evidence)
      : inner_(inner), evidence_(evidence) {}
  gnmi::GnmiResult<gnmi::SetResult> apply(const intent::Device& device,
                                          const std::vector<intent::GnmiSetOperation>& operations,
                                          Duration deadline, std::string_view purpose) override;

 private:
  GnmiSteps& inner_;
  EvidenceBundle& evidence_;
};

// Sends no Set once the run's lease fence has closed (lease_fence.h): the step fails as
// `rejected` naming why.
class FencedGnmiSteps final : public GnmiSteps {
 public:
  FencedGnmiSteps(GnmiSteps& inner, const LeaseFence& fence) : inner_(inner), fence_(fence) {}
  gnmi::GnmiResult<gnmi::SetResult> apply(const intent::Device& device,
                                          const std::vector<intent::GnmiSetOperation>& operations,
                                          Duration deadline, std::string_view purpose) override;

 private:
  GnmiSteps& inner_;
  const LeaseFence& fence_;
};

}  // namespace fabgate::pipeline
