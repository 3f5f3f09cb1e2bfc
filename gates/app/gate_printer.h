#pragma once

#include <string>

#include "gates/app/console.h"
#include "gates/pipeline/pipeline.h"

namespace fabgate::app {

// Prints each gate as it ends: name, duration, verdict (coloured on a terminal) and summary;
// for a blocking gate also its details, the first ten (the rest are in the report). Shared by
// every command that runs gates (plan, apply, rehearse, recover) so they read the same.
class GatePrinter final : public pipeline::GateObserver {
 public:
  explicit GatePrinter(Console& console) : console_(console) {}
  void gate_finished(const pipeline::GateRecord& record) override;

 private:
  Console& console_;
};

// Who runs fabgate when --operator is not given: $USER, else the login name of this uid.
std::string default_operator();

}  // namespace fabgate::app
