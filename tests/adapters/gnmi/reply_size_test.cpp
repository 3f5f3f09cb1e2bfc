// The client's receive limit (issue 30, item 8) against a real fabgate-gnmid on loopback that
// serves a synthetic main table (--debug-synthetic-ipv4-routes): a route table larger than
// gRPC's default 4 MiB arrives whole under the default limit, and a reply over a device's
// limit fails with a message that says what to change. 50,000 routes (about 6 MB in one
// GetResponse) keep it quick; scripts/bench-gnmi-aft reads 500,000.

#include <gtest/gtest.h>

#include <filesystem>

#include "adapters/core/time.h"
#include "adapters/gnmi/client.h"
#include "adapters/gnmi/snapshot_facts.h"
#include "adapters/gnmi/target/synthetic_routes.h"
#include "tests/adapters/gnmi/gnmid_harness.h"

namespace fabgate::gnmi {
namespace {

constexpr std::size_t kRoutes = 50'000;
constexpr const char* kAfts = "/network-instances/network-instance[name=default]/afts";

class ReplySize : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::gnmid_path()))
      GTEST_SKIP() << "fabgate-gnmid is not built at " << testing::gnmid_path();
    auto line =
        target_.start({testing::gnmid_path(), "--listen", "127.0.0.1:0", "--insecure-plaintext",
                       "--no-auth", "--hostname", "aft-node", "--vtysh", "/nonexistent/vtysh",
                       "--debug-synthetic-ipv4-routes", std::to_string(kRoutes)},
                      dir_.file("gnmid.stderr"));
    ASSERT_TRUE(line) << target_.failure;
    address_ = "127.0.0.1:" + *line;
  }

  std::unique_ptr<GnmiClient> client(std::optional<std::int64_t> limit) const {
    GnmiClientOptions options;
    options.device = "aft-node";
    options.address = address_;
    options.tls = false;
    if (limit) options.max_receive_message_size = *limit;
    auto connected = connect(options);
    EXPECT_TRUE(connected) << connected.error().message;
    return connected ? std::move(connected.value()) : nullptr;
  }

  testing::TempDir dir_;
  testing::TargetProcess target_;
  std::string address_;
};

TEST_F(ReplySize, ATableLargerThanGrpcsDefaultArrivesWholeUnderTheDefaultLimit) {
  // Given a target whose AFT holds 50,000 IPv4 routes and a client with the default limit,
  // then one Get of the AFT returns more than 4 MiB of JSON_IETF and every route is in the
  // facts read from it.
  auto gnmi = client(std::nullopt);
  ASSERT_TRUE(gnmi);

  auto reply = gnmi->get({kAfts}, Encoding::json_ietf, Duration(60'000));

  ASSERT_TRUE(reply) << reply.error().message;
  std::size_t bytes = 0;
  for (const auto& notification : *reply)
    for (const auto& update : notification.updates) bytes += update.json.size();
  EXPECT_GT(bytes, std::size_t{4} << 20) << "the table must not fit gRPC's default limit";
  auto facts = snapshot_facts(*reply, now_utc());
  ASSERT_TRUE(facts) << facts.error();
  ASSERT_TRUE(facts->routes);
  ASSERT_EQ((*facts->routes)["ipv4"].size(), kRoutes);
  EXPECT_EQ((*facts->routes)["ipv4"].back()["prefix"], target::synthetic_ipv4_prefix(kRoutes - 1));
}

TEST_F(ReplySize, AReplyOverTheLimitNamesDeviceGetBothSizesAndTheOption) {
  // Given the same target and a client limited to 1 MiB, then the Get fails as a reply fabgate
  // could not read (`internal`, which the snapshot makes no-evidence), and the message names
  // the device, the Get, the reply's size, the limit, and the inventory option to raise.
  auto gnmi = client(std::int64_t{1} << 20);
  ASSERT_TRUE(gnmi);

  auto reply = gnmi->get({kAfts}, Encoding::json_ietf, Duration(60'000));

  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, GnmiFailure::Kind::internal);
  const std::string& message = reply.error().message;
  EXPECT_EQ(message.rfind("gnmi: aft-node (" + address_ + "): Get " + kAfts + ": the reply (", 0),
            0u)
      << message;
  EXPECT_NE(message.find(" MiB) is larger than the receive limit of 1 MiB; raise "
                         "gnmi.max_receive_message_size for aft-node in the inventory"),
            std::string::npos)
      << message;
}

TEST(GnmiConnect, RefusesAReceiveLimitGrpcCannotTake) {
  // Given a limit of 0 or one above gRPC's int, then connect() refuses it, naming the device
  // and the allowed range, before any channel exists.
  GnmiClientOptions options;
  options.device = "leaf1";
  options.address = "127.0.0.1:1";
  options.tls = false;
  for (std::int64_t limit : {std::int64_t{0}, kMaxReceiveMessageSizeCeiling + 1}) {
    options.max_receive_message_size = limit;
    auto connected = connect(options);
    ASSERT_FALSE(connected) << limit;
    EXPECT_EQ(connected.error().message, "gnmi: leaf1: max_receive_message_size " +
                                             std::to_string(limit) + " is outside 1 .. " +
                                             std::to_string(kMaxReceiveMessageSizeCeiling));
  }
}

}  // namespace
}  // namespace fabgate::gnmi
