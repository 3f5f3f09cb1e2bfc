#include "adapters/rdma/wire_format.h"

#include <gtest/gtest.h>

#include <vector>

namespace fabgate::rdma {
namespace {

TEST(WireFormat, HellosSurviveARoundTripAndZeroPadding) {
  // Given encoded hellos padded with zeros the way rdma_cm delivers private data, then they
  // decode to the same values.
  ServerHello server{0xabcdef01, 0x00007f0012345678ull, 1ull << 20};
  auto bytes = encode(server);
  std::vector<std::uint8_t> padded(bytes.begin(), bytes.end());
  padded.resize(196, 0);
  auto decoded = decode_server_hello(padded);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->rkey, server.rkey);
  EXPECT_EQ(decoded->address, server.address);
  EXPECT_EQ(decoded->size, server.size);

  auto client = decode_client_hello(encode(ClientHello{3, 4096}));
  ASSERT_TRUE(client.has_value());
  EXPECT_EQ(client->qp_index, 3u);
  EXPECT_EQ(client->message_size, 4096u);
}

TEST(WireFormat, ForeignOrShortPrivateDataIsRefused) {
  // Given private data from something that is not fabgate-probe, or truncated, then decoding
  // fails, so a listener never exposes its buffer to it.
  std::vector<std::uint8_t> foreign(16, 0x11);
  EXPECT_FALSE(decode_client_hello(foreign).has_value());
  auto bytes = encode(ServerHello{1, 2, 3});
  EXPECT_FALSE(decode_server_hello(std::span(bytes.data(), 10)).has_value());
}

}  // namespace
}  // namespace fabgate::rdma
