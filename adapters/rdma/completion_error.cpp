#include "adapters/rdma/completion_error.h"

#include <infiniband/verbs.h>

#include <cstdio>

namespace fabgate::rdma {

CompletionError describe_completion(int qp_index, std::uint32_t qp_num, std::uint64_t wr_id,
                                    int status, std::uint32_t vendor_err) {
  CompletionError error;
  error.qp_index = qp_index;
  error.qp_num = qp_num;
  error.wr_id = wr_id;
  error.status = status;
  error.status_name = ibv_wc_status_str(static_cast<ibv_wc_status>(status));
  error.vendor_err = vendor_err;
  return error;
}

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", value);
  return text;
}

nlohmann::ordered_json to_json(const CompletionError& error) {
  return {{"qp", error.qp_index},
          {"qp_num", error.qp_num},
          {"wr_id", error.wr_id},
          {"status", error.status},
          {"status_name", error.status_name},
          {"vendor_err", hex(error.vendor_err)}};
}

}  // namespace fabgate::rdma
