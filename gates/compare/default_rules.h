#pragma once

#include <string_view>

namespace fabgate::compare {

// policies/compare/fabric-default.yaml, compiled into the binary so that `fabgate diff`
// without --rules does not depend on where the source tree happens to be installed.
std::string_view default_rule_set_text();
inline constexpr const char* kDefaultRuleSetName = "policies/compare/fabric-default.yaml";

// policies/compare/rdma-default.yaml: RDMA port, PFC/ECN, GPU and Xid checks for rdma-host
// devices (docs/rdma.md), applied when fabgate.yaml or a change names it.
std::string_view rdma_rule_set_text();
inline constexpr const char* kRdmaRuleSetName = "policies/compare/rdma-default.yaml";

}  // namespace fabgate::compare
