#include "adapters/rdma/completion_error.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

namespace fabgate::rdma {
namespace {

TEST(CompletionError, RetryExceededIsNamedWithNumberAndHexSyndrome) {
  // Given a completion with status 12 and vendor_err 0x81, then the record carries the number,
  // rdma-core's own name for it and the syndrome in hex.
  auto error = describe_completion(2, 0x1234, 77, IBV_WC_RETRY_EXC_ERR, 0x81);
  EXPECT_EQ(error.status, 12);
  EXPECT_EQ(error.status_name, "transport retry counter exceeded");
  auto json = to_json(error);
  EXPECT_EQ(json["vendor_err"], "0x81");
  EXPECT_EQ(json["qp"], 2);
  EXPECT_EQ(json["wr_id"], 77);
  EXPECT_EQ(json["status_name"], "transport retry counter exceeded");
}

TEST(CompletionError, FlushAndRemoteAccessErrorsHaveTheirOwnNames) {
  // Given the flush status (5) and a remote access error (10), then each gets its distinct name.
  EXPECT_EQ(describe_completion(0, 1, 1, IBV_WC_WR_FLUSH_ERR, 0).status_name,
            "Work Request Flushed Error");
  EXPECT_EQ(describe_completion(0, 1, 1, IBV_WC_REM_ACCESS_ERR, 0x88).status_name,
            "remote access error");
  EXPECT_EQ(hex(0), "0x0");
}

}  // namespace
}  // namespace fabgate::rdma
