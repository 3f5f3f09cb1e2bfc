#pragma once

#include <string_view>

#include "gates/hostfacts/facts_failure.h"

namespace fabgate::hostfacts {

// The nvidia-smi query the collector profile should run; the parser reads the header, so a
// driver that spells a field differently (clocks_event_reasons vs clocks_throttle_reasons) or
// a profile that asks for fewer fields still parses. Documented in docs/rdma.md.
inline constexpr std::string_view kNvidiaSmiQuery =
    "nvidia-smi --query-gpu=index,pci.bus_id,uuid,name,driver_version,temperature.gpu,"
    "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
    "ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,"
    "retired_pages.double_bit.count,retired_pages.pending,remapped_rows.correctable,"
    "remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure,"
    "clocks_throttle_reasons.active --format=csv,nounits";

// `nvidia-smi --query-gpu=... --format=csv,nounits` (with its header line) -> the `gpu` category:
//   {"driver_version": "550.54.15",
//    "gpus": {"00000000:3B:00.0": {"index": 0, "name": ..., "temperature_c": 41,
//             "ecc_uncorrected_volatile": 0, "retired_pages_pending": false,
//             "throttle_reasons": {"mask": 4, "active": ["sw_power_cap"]}, ...}}}
// "[N/A]" and "[Not Supported]" become null (known to be unavailable), never 0. nvidia-smi's
// own failure text ("NVIDIA-SMI has failed ...") -> unavailable; ragged rows or a header
// without pci.bus_id/index -> unparsable.
Facts parse_nvidia_smi_csv(std::string_view text);

// Kernel log text (`dmesg` or `journalctl -k`) -> {"total": 2, "by_code": {"79": 1, "13": 1},
// "events": [{"pci": "0000:3b:00", "xid": 79, "detail": "pid=..., GPU has fallen off the bus."}]}.
// No Xid lines in a readable log is evidence of none (total 0). dmesg's "read kernel buffer
// failed" text -> unavailable: an unreadable log is not a clean one.
Facts parse_xid_events(std::string_view kernel_log);

// NVML clock throttle reason bits -> names, lowest bit first.
nlohmann::json throttle_reason_names(std::uint64_t mask);

}  // namespace fabgate::hostfacts
