#include "gates/approval/child_process.h"

#include <gtest/gtest.h>

#include <chrono>

namespace fabgate::approval {
namespace {

TEST(ChildProcess, AChildThatExitsWithoutReadingItsInputIsAResultNotASignal) {
  // Given a child that closes its stdin unread and lives on a moment (a broken or hostile
  // ssh-keygen) while fabgate still has a megabyte to write, then the write fails with EPIPE
  // inside run_child and the caller gets the child's exit status: SIGPIPE must not kill
  // fabgate (it did, at random, in the approval judge tests).
  ChildRequest request;
  request.argv = {"/bin/sh", "-c", "exec 0<&-; sleep 0.3; exit 7"};
  request.input.assign(1 << 20, 'x');
  request.deadline = Duration{10'000};
  auto result = run_child(request);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_FALSE(result.value().timed_out);
  EXPECT_EQ(result.value().exit_status, 7);
}

TEST(ChildProcess, InputIsDeliveredWhole) {
  // Given a child that reads its stdin, then every byte arrives (the SIGPIPE guard does not cut
  // a normal write short).
  ChildRequest request;
  request.argv = {"/bin/sh", "-c", "wc -c"};
  request.input.assign(300'000, 'y');
  auto result = run_child(request);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result.value().exit_status, 0);
  EXPECT_NE(result.value().out.find("300000"), std::string::npos) << result.value().out;
}

TEST(ChildProcess, AChildWritingPastTheOutputLimitIsStoppedAndSaidSo) {
  // Given a child that would print forever and a 1 MiB limit, then it is killed well before its
  // deadline, the result says the output was too large, and at most the limit was kept.
  ChildRequest request;
  request.argv = {"/bin/sh", "-c", "yes fabgate"};
  request.deadline = Duration{60'000};
  request.max_output = std::size_t{1} << 20;
  const auto started = std::chrono::steady_clock::now();
  auto result = run_child(request);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_TRUE(result.value().output_too_large);
  EXPECT_FALSE(result.value().timed_out);
  EXPECT_EQ(result.value().out.size(), request.max_output);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

}  // namespace
}  // namespace fabgate::approval
