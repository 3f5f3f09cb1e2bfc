// The lease fence of a run (gates/pipeline/safety/lease_fence.h): when it closes, and that it
// never opens again. The clock is the fence's own (CLOCK_BOOTTIME); instants are set relative
// to now, so nothing but the clock's own check sleeps.

#include "gates/pipeline/safety/lease_fence.h"

#include <gtest/gtest.h>

#include <time.h>

#include <thread>
#include <type_traits>

#include "gates/pipeline/families/remote.h"

namespace fabgate::pipeline {
namespace {

using namespace std::chrono_literals;
using Clock = LeaseFence::Clock;

TEST(LeaseFence, ItsClockIsBoottimeWhichNeverLagsTheMonotonicClock) {
  // Given the fence's clock, then it reads CLOCK_BOOTTIME: never behind CLOCK_MONOTONIC (the
  // two differ by the time the machine spent suspended, which a lease in etcd keeps counting)
  // and advancing with real time. A suspend itself cannot be made in a test here.
  timespec monotonic{};
  ::clock_gettime(CLOCK_MONOTONIC, &monotonic);
  const auto boot = Clock::now().time_since_epoch();
  EXPECT_GE(boot, std::chrono::seconds(monotonic.tv_sec) +
                      std::chrono::nanoseconds(monotonic.tv_nsec));
  const auto before = Clock::now();
  std::this_thread::sleep_for(20ms);
  EXPECT_GE(Clock::now() - before, 20ms);
  static_assert(std::is_same_v<Clock, BootClock>);
}

TEST(LeaseFence, AFenceWithoutALeaseNeverCloses) {
  // Given a run that took no lease (no coordination store), then nothing is ever fenced.
  LeaseFence fence;
  EXPECT_FALSE(fence.closed());
  fence.expired("whatever");
  EXPECT_FALSE(fence.closed());
}

TEST(LeaseFence, ItClosesAMarginBeforeTheTtlFromTheLastRenewalSent) {
  // Given a 15 s lease whose last renewal was sent 12 s ago and a 2 s margin, then it is still
  // open; sent 13.5 s ago, it is closed, naming the lease, the TTL and the last problem.
  LeaseFence open;
  open.arm(7, 15s, 2s, Clock::now() - 12s);
  EXPECT_FALSE(open.closed());

  LeaseFence late;
  late.arm(7, 15s, 2s, Clock::now() - 13500ms);
  late.renewal_failed("etcd timeout: POST http://10.0.0.1:2379/v3/lease/keepalive");
  auto why = late.closed();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("lease 7 of this run in the coordination store was not renewed within its "
                      "TTL of 15s"),
            std::string::npos)
      << *why;
  EXPECT_NE(why->find("last problem: etcd timeout"), std::string::npos) << *why;
}

TEST(LeaseFence, ARenewalMovesTheMarkAndAnEarlierOneNever) {
  // Given a lease granted 10 s ago (TTL 12 s, margin 1 s), when a renewal sent 1 s ago is
  // granted, then the fence stays open; a late answer to an older renewal does not move the
  // mark back.
  LeaseFence fence;
  fence.arm(7, 12s, 1s, Clock::now() - 10s);
  fence.renewed(Clock::now() - 1s);
  fence.renewed(Clock::now() - 11s);
  EXPECT_FALSE(fence.closed());
}

TEST(LeaseFence, OnceClosedItStaysClosed) {
  // Given a fence closed because etcd said the lease expired, then a renewal granted later
  // (a lease that came back proves nothing about what others did meanwhile) leaves it closed,
  // and so does disarming it.
  LeaseFence fence;
  fence.arm(7, 15s, 2s, Clock::now());
  fence.expired("the lease had expired");
  fence.renewed(Clock::now());
  fence.disarm();
  auto why = fence.closed();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("says lease 7 of this run has expired"), std::string::npos) << *why;
  auto record = fence.to_json();
  EXPECT_EQ(record.value("closed", false), true) << record.dump();
  EXPECT_TRUE(record.contains("closed_at")) << record.dump();
}

TEST(LeaseFence, AMarginLargerThanHalfTheTtlIsCappedThere) {
  // Given a 3 s lease and a 5 s margin, then the fence does not close at once (the margin is
  // capped at half the TTL): sent 1 s ago it is open, 2 s ago closed.
  LeaseFence fresh;
  fresh.arm(7, 3s, 5s, Clock::now() - 1s);
  EXPECT_FALSE(fresh.closed());
  LeaseFence old;
  old.arm(7, 3s, 5s, Clock::now() - 2s);
  EXPECT_TRUE(old.closed());
}

// A remote that counts what reaches it.
class CountingRemote final : public Remote {
 public:
  RemoteResult run(const intent::Device&, ssh::CredentialRole, const std::string&, Duration,
                   std::string_view) override {
    ++sent;
    return ssh::CommandResult{};
  }
  int sent = 0;
};

TEST(FencedRemote, NothingReachesTheDeviceOnceTheFenceClosed) {
  // Given a fenced remote, then commands pass while the lease holds; once the fence closed,
  // a step and a rollback alike are refused as `rejected`, naming the device and why, and
  // none reaches the device.
  CountingRemote device_side;
  LeaseFence fence;
  fence.arm(7, 15s, 2s, Clock::now());
  FencedRemote remote(device_side, fence);
  intent::Device leaf;
  leaf.name = "leaf1";
  EXPECT_TRUE(remote.run(leaf, ssh::CredentialRole::change, "true", 1s, "step").ok());
  fence.expired("the lease had expired");
  for (const char* purpose : {"step", "rollback"}) {
    auto refused = remote.run(leaf, ssh::CredentialRole::change, "true", 1s, purpose);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().kind, ssh::SshFailure::Kind::rejected);
    EXPECT_NE(refused.error().message.find("not sent to leaf1: the coordination store says "
                                           "lease 7 of this run has expired"),
              std::string::npos)
        << refused.error().message;
  }
  EXPECT_EQ(device_side.sent, 1);
}

}  // namespace
}  // namespace fabgate::pipeline
