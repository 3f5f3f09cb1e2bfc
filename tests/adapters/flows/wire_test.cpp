#include "adapters/flows/wire.h"

#include <gtest/gtest.h>

#include <vector>

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

std::vector<std::byte> flow_message(FlowMessage::Key key, std::size_t size = 64,
                                    std::uint64_t sent_ns = 1'000'000) {
  std::vector<std::byte> bytes(size);
  FlowMessage::encode(bytes, key, sent_ns);
  return bytes;
}

TEST(FlowMessageWire, ThePatternIsTheSameForTheSameKeyAndReadsBackItsHeader) {
  // Given the same run, flow, sequence and stamp twice, then the two messages are equal byte
  // for byte, each pattern byte is pattern_byte() of its offset, and the header reads back.
  const FlowMessage::Key key{0xdecafbad, 7, 3};
  const auto first = flow_message(key, 1000, 42);
  EXPECT_EQ(first, flow_message(key, 1000, 42));
  for (std::size_t offset = FlowMessage::kHeaderSize; offset < first.size(); ++offset)
    ASSERT_EQ(first[offset], FlowMessage::pattern_byte(key, offset)) << "offset " << offset;
  auto header = FlowMessage::read_header(first);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->magic, FlowMessage::kMagic);
  EXPECT_EQ(header->sequence, 3u);
  EXPECT_EQ(header->sent_ns, 42u);
}

TEST(FlowMessageWire, ThePatternDiffersByRunFlowSequenceAndOffset) {
  // Given messages that differ only in the run's id, the flow or the sequence, then their
  // pattern bytes differ from the first pattern byte on (a message of another run or flow,
  // or another sequence's payload behind a right header, never passes as this one); and
  // within one message the pattern is no repeating fill: shifted by one byte, it differs.
  const FlowMessage::Key key{0x01020304, 5, 9};
  const auto base = flow_message(key);
  EXPECT_EQ(first_difference(flow_message({0x01020305, 5, 9}), base),
            std::optional<std::size_t>(FlowMessage::kHeaderSize));
  EXPECT_EQ(first_difference(flow_message({0x01020304, 6, 9}), base),
            std::optional<std::size_t>(FlowMessage::kHeaderSize));
  auto other_sequence = flow_message({0x01020304, 5, 10});
  // The header names the sequence too: it differs at the sequence field.
  EXPECT_EQ(first_difference(other_sequence, base), std::optional<std::size_t>(4));
  std::copy(base.begin(), base.begin() + FlowMessage::kHeaderSize, other_sequence.begin());
  EXPECT_EQ(first_difference(other_sequence, base),
            std::optional<std::size_t>(FlowMessage::kHeaderSize));
  const auto long_message = flow_message(key, 1024);
  int equal_neighbours = 0;
  for (std::size_t offset = FlowMessage::kHeaderSize; offset + 1 < long_message.size(); ++offset)
    if (long_message[offset] == long_message[offset + 1]) ++equal_neighbours;
  // Random bytes agree with their neighbour about once in 256: 1008 pairs give about 4.
  EXPECT_LT(equal_neighbours, 20);
}

TEST(FlowMessageWire, FirstDifferenceNamesTheFirstWrongByteOrTheShorterEnd) {
  // Given an echo equal to the message, one with byte 40 flipped, and one cut short by a byte,
  // then the first is no difference, the second differs at 40, the third at its own end.
  const auto sent = flow_message({1, 2, 3}, 64);
  EXPECT_FALSE(first_difference(sent, sent));
  auto flipped = sent;
  flipped[40] ^= std::byte{0x01};
  EXPECT_EQ(first_difference(flipped, sent), std::optional<std::size_t>(40));
  auto truncated = std::vector<std::byte>(sent.begin(), sent.end() - 1);
  EXPECT_EQ(first_difference(truncated, sent), std::optional<std::size_t>(63));
}

TEST(FlowMessageWire, TheResponderNeverTakesAFlowsMessageForAWatchProbe) {
  // Given flows messages of exactly a watch probe's size whose pattern starts with the
  // question's magic (written in to force it), then the responder answers nothing in them:
  // the flows message's own magic keeps its bytes from ever being rewritten.
  auto message = flow_message({11, 0, 0}, kWatchProbeSize);
  std::memcpy(message.data() + ProbeMessage::kSize, &ResidenceTrailer::kAsked, 4);
  const auto before = message;
  EXPECT_FALSE(answer_residence(message, 5));
  EXPECT_EQ(message, before);
}

}  // namespace
}  // namespace fabgate::flows
