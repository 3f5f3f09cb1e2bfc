#include "adapters/ssh/fan_out.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>

#include "adapters/core/thread_entry.h"

namespace fabgate::ssh {

std::vector<ItemFailure> for_each_bounded(std::size_t count, int parallelism,
                                          const std::function<void(std::size_t)>& work) {
  std::vector<ItemFailure> failures;
  if (count == 0) return failures;
  std::size_t workers = std::min(count, static_cast<std::size_t>(std::max(1, parallelism)));
  std::atomic<std::size_t> next{0};
  std::mutex failures_mutex;

  // Each thread's entry: nothing escapes it.
  auto worker = [&]() noexcept {
    for (std::size_t index = next++; index < count; index = next++) {
      if (auto what = what_escaped([&] { work(index); })) {
        std::lock_guard lock(failures_mutex);
        failures.push_back({index, std::move(*what)});
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  // A thread that cannot be created (std::system_error: the process is at its limit) is not
  // a reason to stop half way through a wave: the threads already running and this one share
  // the items, so every item still runs exactly once, just with less parallelism.
  try {
    for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  } catch (const std::system_error&) {
  }
  if (threads.size() < workers) worker();
  for (auto& thread : threads) thread.join();
  std::sort(failures.begin(), failures.end(),
            [](const ItemFailure& a, const ItemFailure& b) { return a.index < b.index; });
  return failures;
}

}  // namespace fabgate::ssh
