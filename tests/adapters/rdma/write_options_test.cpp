#include "adapters/rdma/write_options.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabgate::rdma {
namespace {

RdmaWriteOptions client() {
  RdmaWriteOptions options;
  options.connect_host = "10.0.0.2";
  return options;
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& problem) {
    return problem.find(text) != std::string::npos;
  });
}

TEST(WriteOptions, DefaultsMakeAnIterationBoundedClientRun) {
  // Given only --connect HOST, then the plan is a client run of the default iteration count
  // with the documented deadlines.
  auto plan = validate_write_options(client());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->role, Role::connect);
  EXPECT_EQ(plan->iterations, kDefaultIterations);
  EXPECT_FALSE(plan->duration.has_value());
  EXPECT_EQ(plan->resolve_timeout, std::chrono::seconds(2));
  EXPECT_EQ(plan->completion_timeout, std::chrono::seconds(5));
}

TEST(WriteOptions, ListenAndConnectAreExclusiveAndOneIsRequired) {
  // Given both or neither of --listen/--connect, then validation refuses with one clear line.
  auto both = client();
  both.listen = true;
  auto neither = RdmaWriteOptions{};
  for (const auto& options : {both, neither}) {
    auto plan = validate_write_options(options);
    ASSERT_FALSE(plan.ok());
    EXPECT_TRUE(mentions(plan.error(), "exactly one of --listen or --connect"));
  }
}

TEST(WriteOptions, EveryProblemIsReportedAtOnce) {
  // Given several invalid values, then every one is named, not only the first.
  auto options = client();
  options.message_size = 0;
  options.outstanding = 0;
  options.qps = 65;
  options.iterations = 10;
  options.duration = "5s";
  options.connect_timeout = "soon";
  auto plan = validate_write_options(options);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(mentions(plan.error(), "--size 0"));
  EXPECT_TRUE(mentions(plan.error(), "--outstanding 0"));
  EXPECT_TRUE(mentions(plan.error(), "--qps 65"));
  EXPECT_TRUE(mentions(plan.error(), "not both"));
  EXPECT_TRUE(mentions(plan.error(), "--connect-timeout 'soon' is not a duration"));
}

TEST(WriteOptions, SignalIntervalMustFitTheOutstandingWindow) {
  // Given --signal-every larger than --outstanding, then it is refused (the send queue would
  // fill with unsignaled requests); equal is fine.
  auto options = client();
  options.outstanding = 8;
  options.signal_every = 9;
  EXPECT_TRUE(mentions(validate_write_options(options).error(),
                       "--signal-every 9 exceeds --outstanding 8"));
  options.signal_every = 8;
  EXPECT_TRUE(validate_write_options(options).ok());
  options.signal_every = 0;
  EXPECT_FALSE(validate_write_options(options).ok());
}

TEST(WriteOptions, SizesAndDeadlinesAreBounded) {
  // Given a message over 1 GiB, a zero deadline or an hour-long timeout, then each is refused.
  auto options = client();
  options.message_size = kMaxMessageSize + 1;
  options.completion_timeout = "0s";
  options.resolve_timeout = "1h";
  auto plan = validate_write_options(options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().size(), 3u);
}

TEST(WriteOptions, DurationModeIsParsed) {
  // Given --duration 1m30s, then the plan runs for 90 s with no iteration count.
  auto options = client();
  options.duration = "1m30s";
  auto plan = validate_write_options(options);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->duration, std::chrono::seconds(90));
  EXPECT_FALSE(plan->iterations.has_value());
}

}  // namespace
}  // namespace fabgate::rdma
