#pragma once

// The compatibility matrix (policies/compat.yaml at the intent commit): per platform, the
// versions each component may run. docs/compat.md describes the file for users.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/result.h"
#include "gates/compat/version.h"

namespace fabgate::compat {

// The components a matrix can constrain, each read from one place in a device's snapshot
// identity (docs/snapshot-format.md):
//   os           identity.os              "Debian GNU/Linux 12 (bookworm)" (compares as 12)
//   kernel       identity.kernel          "5.15.0-91-generic"
//   frr          identity.frr_version     "8.4.4"
//   gpu_driver   identity.gpu_driver      "535.129.03"
//   nic_driver   identity.nics.*.driver_version, per NIC driver name
//   nic_firmware identity.nics.*.firmware,       per NIC driver name
enum class Component { os, kernel, frr, gpu_driver, nic_driver, nic_firmware };

std::string_view to_string(Component component);     // the matrix key: "frr", "nic_firmware"
bool is_per_driver(Component component);             // nic_driver, nic_firmware
std::string_view identity_key(Component component);  // "frr_version"; "nics" for NIC ones

// One line of the matrix: what `component` may be on a platform. For NIC components `driver`
// names the NIC driver (ethtool's "driver": mlx5_core, bnxt_en) whose NICs it applies to.
struct Requirement {
  Component component = Component::kernel;
  std::string driver;
  Constraint allowed;
  SourceLocation where;  // the constraint's value in the matrix file
};

struct PlatformRequirements {
  std::string platform;  // as in inventory.yaml (frr, linux, rdma-host, ...)
  std::vector<Requirement> requirements;
  SourceLocation where;
};

struct Matrix {
  std::string file;
  std::vector<PlatformRequirements> platforms;
  // nullptr when the matrix does not list `platform`: nothing is required of it.
  const PlatformRequirements* find(const std::string& platform) const;
};

// Parses compat.yaml. Every problem (schema, unknown component, bad constraint, duplicate
// key) is reported with file:line:column in one invalid-input Error.
Result<Matrix> load_matrix(std::string_view yaml_text, const std::string& file_name);

}  // namespace fabgate::compat
