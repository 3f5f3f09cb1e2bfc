#pragma once

#include <string_view>

#include "gates/hostfacts/facts_failure.h"

namespace fabgate::hostfacts {

// The `congestion` facts of one interface from `ethtool -S IFACE`, using mlx5 counter names
// (Linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst):
//   {"priorities": {"3": {"rx_pause": 0, "rx_pause_duration": 0, "rx_pause_transition": 0,
//                         "tx_pause": 0, "tx_pause_duration": 0, "rx_bytes": ..., ...}},
//    "global_pause": {"rx_pause": ..., ...},
//    "pause_storm": {"warning_events": 0, "error_events": 0},
//    "port": {"rx_discards_phy": 0, "rx_out_of_buffer": 0, "rx_ecn_mark": 0, ...}}
// Every rx_prio<N>_* / tx_prio<N>_* counter lands under priorities.N. Output without a
// "NIC statistics:" header -> unparsable; statistics without any rx_prio<N>_pause counter
// (not mlx5 naming) -> unsupported, because an empty PFC table would read as "no pauses".
Facts parse_ethtool_congestion(std::string_view text);

// `ethtool -i IFACE` -> identity.nics.<iface>: {"driver": "mlx5_core", "driver_version":
// "...", "firmware": "16.35.2000 (MT_0000000012)", "bus_info": "0000:3b:00.0"}.
Facts parse_ethtool_driver_info(std::string_view text);

}  // namespace fabgate::hostfacts
