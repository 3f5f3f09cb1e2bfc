// Normalizers for RoCE/GPU hosts: they hand command output to the fabgate_hostfacts parsers
// and place the result in the snapshot (docs/rdma.md "Snapshot layout"). A hostfacts failure
// (unavailable, unparsable, unsupported) becomes the source's no-evidence reason, so missing
// input never reads as an empty, healthy category.

#include "adapters/core/shorten.h"
#include "adapters/core/text.h"
#include "gates/hostfacts/ethtool_facts.h"
#include "gates/hostfacts/gpu_facts.h"
#include "gates/hostfacts/rdma_facts.h"
#include "gates/snapshot/normalizers.h"

namespace fabgate::snapshot {

using nlohmann::json;

namespace {

std::string failure_text(const hostfacts::FactsFailure& failure) {
  return std::string(hostfacts::to_string(failure.kind)) + ": " + failure.reason;
}

// rdma-link and ibv-devinfo add to the ports rdma-sysfs found; alone they would describe
// ports without state or counters, so they must come after it in the source.
Expected<Ok, std::string> require_sysfs_ports(const json& rdma, std::string_view normalizer) {
  if (!rdma.is_object() || !rdma.contains("devices"))
    return std::string(normalizer) + " must follow rdma-sysfs in the rdma source";
  return Ok{};
}

// One "== NAME" line per interface, then that interface's output. Text before the first
// section is an error: the command's loop did not run as written.
struct Section {
  std::string name;
  std::string text;
};

Expected<std::vector<Section>, std::string> split_sections(std::string_view output) {
  std::vector<Section> sections;
  for (const auto& line : split_lines(output)) {
    if (starts_with(line, "== ")) {
      sections.push_back({std::string(trim(std::string_view(line).substr(3))), {}});
    } else if (!sections.empty()) {
      sections.back().text += line + "\n";
    } else if (!trim(line).empty()) {
      return "output before the first '== INTERFACE' line: '" + shorten(line, 60) + "'";
    }
  }
  if (sections.empty()) return std::string("no '== INTERFACE' sections (no RDMA netdevs?)");
  return sections;
}

// nvidia-smi's "[N/A]" becomes null in hostfacts. Compare rules over wildcards skip elements
// that are absent, but fail on null ("increase needs counters"), so null fields move to a
// per-GPU "not_supported" list: a GPU without ECC reporting is named, not flagged every run.
void move_nulls_aside(json& gpus) {
  for (auto& [bus, gpu] : gpus.items()) {
    json not_supported = json::array();
    for (auto it = gpu.begin(); it != gpu.end();) {
      if (it->is_null()) {
        not_supported.push_back(it.key());
        it = gpu.erase(it);
      } else {
        ++it;
      }
    }
    if (!not_supported.empty()) gpu["not_supported"] = std::move(not_supported);
  }
}

}  // namespace

Expected<Ok, std::string> parse_rdma_sysfs(std::string_view output, json& rdma) {
  auto facts = hostfacts::read_rdma_sysfs_dump(output);
  if (!facts) return failure_text(facts.error());
  if (!rdma.is_object()) rdma = json::object();
  rdma["devices"] = std::move(facts).value()["devices"];
  return Ok{};
}

Expected<Ok, std::string> parse_rdma_link(std::string_view output, json& rdma) {
  if (auto ready = require_sysfs_ports(rdma, "rdma-link"); !ready) return ready;
  auto links = hostfacts::parse_rdma_link_json(output);
  if (!links) return failure_text(links.error());
  hostfacts::merge_rdma_link(rdma, *links);
  return Ok{};
}

Expected<Ok, std::string> parse_ibv_devinfo(std::string_view output, json& rdma) {
  if (auto ready = require_sysfs_ports(rdma, "ibv-devinfo"); !ready) return ready;
  auto devinfo = hostfacts::parse_ibv_devinfo(output);
  if (!devinfo) return failure_text(devinfo.error());
  hostfacts::merge_ibv_devinfo(rdma, *devinfo);
  return Ok{};
}

// congestion.interfaces.<netdev> per mlx5 netdev. A netdev whose statistics lack mlx5 PFC
// counters, or whose ethtool printed nothing, is named under congestion.unsupported with the
// reason instead of being dropped silently; if no netdev has PFC counters the source fails.
// Text that is not ethtool -S output fails the source outright.
Expected<Ok, std::string> parse_ethtool_stats(std::string_view output, json& congestion) {
  auto sections = split_sections(output);
  if (!sections) return sections.error();
  json interfaces = json::object();
  json unsupported = json::object();
  for (const auto& section : *sections) {
    if (trim(section.text).empty()) {
      unsupported[section.name] = "ethtool -S printed nothing";
      continue;
    }
    auto facts = hostfacts::parse_ethtool_congestion(section.text);
    if (facts) {
      interfaces[section.name] = std::move(facts).value();
    } else if (facts.error().kind == hostfacts::FactsFailureKind::unsupported) {
      unsupported[section.name] = facts.error().reason;
    } else {
      return section.name + ": " + failure_text(facts.error());
    }
  }
  if (interfaces.empty()) {
    std::string reasons;
    for (const auto& [name, reason] : unsupported.items())
      reasons += (reasons.empty() ? "" : "; ") + name + ": " + reason.get<std::string>();
    return "no interface with PFC counters (" + reasons + ")";
  }
  congestion = json{{"interfaces", std::move(interfaces)}};
  if (!unsupported.empty()) congestion["unsupported"] = std::move(unsupported);
  return Ok{};
}

Expected<Ok, std::string> parse_nvidia_smi(std::string_view output, json& gpu) {
  auto facts = hostfacts::parse_nvidia_smi_csv(output);
  if (!facts) return failure_text(facts.error());
  gpu = std::move(facts).value();
  move_nulls_aside(gpu["gpus"]);
  return Ok{};
}

// identity.gpu_driver from any nvidia-smi CSV that includes driver_version.
Expected<Ok, std::string> parse_nvidia_smi_driver(std::string_view output, json& identity) {
  auto facts = hostfacts::parse_nvidia_smi_csv(output);
  if (!facts) return failure_text(facts.error());
  if (!facts->contains("driver_version"))
    return std::string("nvidia-smi CSV has no driver_version column");
  identity["gpu_driver"] = facts->at("driver_version");
  return Ok{};
}

Expected<Ok, std::string> parse_xid(std::string_view output, json& xid) {
  auto facts = hostfacts::parse_xid_events(output);
  if (!facts) return failure_text(facts.error());
  xid = std::move(facts).value();
  return Ok{};
}

}  // namespace fabgate::snapshot
