#include "adapters/flows/wire.h"

#include <gtest/gtest.h>

namespace fabgate::flows {
namespace {

TEST(WatchProbeWire, TheResponderAnswersTheResidenceQuestionInPlace) {
  // Given a watch probe, then a responder that knows the question writes its residence into
  // the echo, the prober reads it back, and the probe's own sequence and send time are intact.
  auto probe = encode_watch_probe(ProbeMessage{42, 123456789});
  ASSERT_TRUE(answer_residence(probe, 7'000'000));
  EXPECT_EQ(read_residence(probe), std::optional<std::uint64_t>(7'000'000));
  auto message = ProbeMessage::decode(std::span(probe).first(ProbeMessage::kSize));
  ASSERT_TRUE(message);
  EXPECT_EQ(message->sequence, 42u);
  EXPECT_EQ(message->sent_ns, 123456789u);
}

TEST(WatchProbeWire, AnEchoFromAnOlderResponderHasNoResidence) {
  // Given a watch probe echoed verbatim (a responder that does not know the question), then
  // the prober reads no residence: its whole round trip is the path's, never a residence of 0
  // read from the question's empty field.
  auto probe = encode_watch_probe(ProbeMessage{1, 2});
  EXPECT_FALSE(read_residence(probe));
}

TEST(WatchProbeWire, OtherDatagramsAreEchoedAsTheyCame) {
  // Given a flows probe (16 bytes) and a 32-byte datagram that is not a watch probe, then the
  // responder writes nothing into either.
  auto flows_probe = ProbeMessage{3, 4}.encode();
  const auto before = flows_probe;
  EXPECT_FALSE(answer_residence(flows_probe, 5));
  EXPECT_EQ(flows_probe, before);
  std::array<std::byte, kWatchProbeSize> other{};
  EXPECT_FALSE(answer_residence(other, 5));
  EXPECT_EQ(other, (std::array<std::byte, kWatchProbeSize>{}));
}

}  // namespace
}  // namespace fabgate::flows
