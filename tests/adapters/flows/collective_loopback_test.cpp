// The collective exchange with every rank as a thread on loopback addresses (127.0.0.x): real
// TCP sockets, real deadlines. The ranks' ports are picked free before the table is built, as
// fabgate picks them from its probes port.

#include "adapters/flows/collective.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "adapters/flows/report_json.h"
#include "tests/support/test_port.h"

namespace fabgate::flows {
namespace {

using namespace std::chrono_literals;

std::uint16_t free_port(const std::string& address) {
  return static_cast<std::uint16_t>(testing::reserve_test_port(address));
}

std::vector<RankEndpoint> rank_table(int ranks) {
  std::vector<RankEndpoint> table;
  for (int i = 0; i < ranks; ++i) {
    const std::string address = "127.0.0." + std::to_string(i + 1);
    table.push_back({address, free_port(address)});
  }
  return table;
}

CollectiveOptions options_for(const std::vector<RankEndpoint>& table, CollectivePattern pattern) {
  CollectiveOptions options;
  options.ranks = table;
  options.pattern = pattern;
  options.size = 64 * 1024;
  options.iterations = 20;
  options.op_timeout = 1000ms;
  options.setup_timeout = 3000ms;
  return options;
}

// Runs ranks `running` of the table (the others never start), each in its own thread.
std::vector<std::optional<CollectiveReport>> run_ranks(const CollectiveOptions& base,
                                                       const std::vector<int>& running,
                                                       std::atomic<bool>& stop) {
  std::vector<std::optional<CollectiveReport>> reports(base.ranks.size());
  std::vector<std::thread> threads;
  for (int rank : running) {
    threads.emplace_back([&, rank] {
      CollectiveOptions options = base;
      options.rank = rank;
      auto report = run_collective(options, stop);
      if (report) reports[static_cast<std::size_t>(rank)] = *report;
    });
  }
  for (auto& thread : threads) thread.join();
  return reports;
}

TEST(CollectiveLoopback, RingOfThreeRanksCompletesEveryIteration) {
  // Given three ranks in a ring, then each completes all 20 iterations without errors and the
  // JSON carries one timing per iteration.
  auto table = rank_table(3);
  std::atomic<bool> stop{false};
  auto reports = run_ranks(options_for(table, CollectivePattern::ring), {0, 1, 2}, stop);
  for (const auto& report : reports) {
    ASSERT_TRUE(report);
    EXPECT_TRUE(report->errors.empty()) << report->errors.front();
    EXPECT_EQ(report->iteration_ms.size(), 20u);
    auto document = to_json(*report);
    EXPECT_EQ(document["verdict"], "pass");
    EXPECT_EQ(document["iteration_ms"].size(), 20u);
    EXPECT_EQ(document["chunk"], (64 * 1024 + 2) / 3);
  }
}

TEST(CollectiveLoopback, AllToAllOfFourRanksCompletesEveryIteration) {
  // Given four ranks exchanging all-to-all, then each completes all iterations without errors.
  auto table = rank_table(4);
  std::atomic<bool> stop{false};
  auto reports = run_ranks(options_for(table, CollectivePattern::all_to_all), {0, 1, 2, 3}, stop);
  for (const auto& report : reports) {
    ASSERT_TRUE(report);
    EXPECT_TRUE(report->errors.empty()) << report->errors.front();
    EXPECT_EQ(report->iteration_ms.size(), 20u);
  }
}

TEST(CollectiveLoopback, ARankThatNeverStartsIsAnErrorOnItsPeersWithinTheSetupDeadline) {
  // Given rank 2 of 3 never started, then ranks 0 and 1 stop with a setup error naming rank 2
  // within the 3 s setup deadline (plus one op timeout), and complete no iteration.
  auto table = rank_table(3);
  std::atomic<bool> stop{false};
  const auto started = std::chrono::steady_clock::now();
  auto reports = run_ranks(options_for(table, CollectivePattern::ring), {0, 1}, stop);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  for (int rank : {0, 1}) {
    ASSERT_TRUE(reports[rank]);
    ASSERT_FALSE(reports[rank]->errors.empty());
    EXPECT_NE(reports[rank]->errors.front().find("rank 2"), std::string::npos)
        << reports[rank]->errors.front();
    EXPECT_TRUE(reports[rank]->iteration_ms.empty());
    EXPECT_EQ(to_json(*reports[rank])["verdict"], "fail");
  }
}

TEST(CollectiveLoopback, OptionsOutOfRangeAreAllReported) {
  // Given one rank, a rank index outside the table, no size, no iterations and a 1 ms op
  // timeout, then each problem is listed.
  CollectiveOptions options;
  options.ranks = {{"127.0.0.1", 7000}};
  options.rank = 3;
  options.size = 0;
  options.iterations = 0;
  options.op_timeout = 1ms;
  EXPECT_EQ(validate(options).size(), 5u);
}

}  // namespace
}  // namespace fabgate::flows
