#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace fabgate::rdma {

// One failed work completion, named so that an operator can act on it without a lookup table:
// status 12 is "transport retry counter exceeded" and vendor_err 0x81 is the NIC's syndrome.
struct CompletionError {
  int qp_index = 0;  // which of the probe's QPs (0-based)
  std::uint32_t qp_num = 0;
  std::uint64_t wr_id = 0;  // the work request's sequence number on that QP
  int status = 0;           // enum ibv_wc_status
  std::string status_name;  // ibv_wc_status_str(status)
  std::uint32_t vendor_err = 0;
};

// Builds the record from the raw fields of an ibv_wc (kept as plain integers so tests need no
// device). The name comes from ibv_wc_status_str, rdma-core's own table.
CompletionError describe_completion(int qp_index, std::uint32_t qp_num, std::uint64_t wr_id,
                                    int status, std::uint32_t vendor_err);

// "0x81": vendor syndromes are documented in hex by NIC vendors.
std::string hex(std::uint32_t value);

nlohmann::ordered_json to_json(const CompletionError& error);

}  // namespace fabgate::rdma
