#pragma once

// A twin built on the controller (docs/twin.md, "How it is built"): each node a network, mount
// and UTS namespace held by an anchor process, each link a veth pair created directly in its
// two namespaces, each switch FRR's daemons with the captured running configuration. Nothing
// is made in the controller's own namespaces; everything is torn down when the TwinFabric goes
// (every process in a node's network namespace is killed, then its anchor), and a twin left
// behind by a controller that died is swept by the next one built under the same state root.

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/ssh/connection_cache.h"
#include "gates/pipeline/twin/twin_plan.h"

namespace fabgate::pipeline::twin {

struct FabricSettings {
  std::filesystem::path state_root{"/run/fabgate-twin"};
  std::filesystem::path frr_daemons{"/usr/lib/frr"};
  Duration command_timeout{10'000};    // each ip, mount or nsenter command while building
  Duration frr_start_timeout{15'000};  // a node's daemons up and its configuration loaded
};

class TwinFabric {
 public:
  // Builds every node and link of `plan`; on any failure what was made is torn down and the
  // reason returned (one line naming the node and the command).
  static Expected<std::unique_ptr<TwinFabric>, std::string> build(const TwinPlan& plan,
                                                                 const FabricSettings& settings);
  ~TwinFabric();
  TwinFabric(const TwinFabric&) = delete;
  TwinFabric& operator=(const TwinFabric&) = delete;

  // The anchor of a node (its namespaces are /proc/<pid>/ns/*); 0 for a node not in the twin.
  pid_t anchor_of(const std::string& node) const;
  const std::filesystem::path& dir() const { return dir_; }
  // What the build could not reproduce as captured without failing the twin (an nftables rule
  // the controller's nft refuses), one line each, for the report's fidelity gaps.
  const std::vector<std::string>& build_gaps() const { return build_gaps_; }
  // What the twin's processes (daemons, and whatever runs in its nodes now) have used so far:
  // {"processes", "cpu_s", "rss_mib"} from /proc.
  nlohmann::json usage() const;
  // Kills every process in the twin's namespaces and removes its folder. Idempotent; returns
  // what could not be cleaned (nothing when all went).
  std::vector<std::string> tear_down();

  // Removes twins under `state_root` whose controller is gone (its pid file names a dead or
  // other process). Returns one line per twin swept.
  static std::vector<std::string> sweep_abandoned(const std::filesystem::path& state_root);

 private:
  struct Node {
    std::string name;
    pid_t anchor = 0;
    ino_t netns = 0;
    std::filesystem::path dir;
  };
  explicit TwinFabric(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::filesystem::path dir_;
  std::vector<Node> nodes_;
  std::vector<std::string> build_gaps_;
  bool torn_down_ = false;
};

// The table the twin adds to a node with VXLAN devices, whose egress hooks mark every packet
// they send with kVxlanRouteMark so the driver routes each one (twin_fabric.cpp, 3c); twin-made,
// so left out of the twin's snapshots before they are compared.
inline constexpr std::string_view kVxlanSpreadTable = "fabgate_twin_vxlan";
inline constexpr unsigned kVxlanRouteMark = 0x7477;

// The names of the far ends the twin gives a node's interfaces with nothing behind them (veth
// peers left in the node, `tw-u1`, `tw-u2`..., in interface order, skipping any name the node
// itself has): twin-made, never production's, so exactly these are left out of the node's
// snapshots before they are compared (a step deleting the interface takes its peer along).
inline constexpr std::string_view kUnconnectedPeerPrefix = "tw-u";
std::vector<std::string> unconnected_peer_names(const TwinNode& node);

// A RemoteShell that runs commands inside a twin node, as an SSH login there would: in the
// node's network, mount and UTS namespaces (so `vtysh` reaches the node's own FRR), through
// /bin/sh with a clean environment, with the deadline enforced by killing the command.
class NamespaceConnector final : public ssh::ShellConnector {
 public:
  explicit NamespaceConnector(const TwinFabric& fabric) : fabric_(fabric) {}
  Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> connect(
      const ssh::SshDevice& device, ssh::CredentialRole role) override;

 private:
  const TwinFabric& fabric_;
};

}  // namespace fabgate::pipeline::twin
