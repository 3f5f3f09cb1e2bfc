#include "adapters/ssh/fan_out.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace fabgate::ssh {

void for_each_bounded(std::size_t count, int parallelism,
                      const std::function<void(std::size_t)>& work) {
  if (count == 0) return;
  std::size_t workers = std::min(count, static_cast<std::size_t>(std::max(1, parallelism)));
  std::atomic<std::size_t> next{0};
  std::exception_ptr first_exception;
  std::mutex exception_mutex;

  auto worker = [&] {
    for (std::size_t index = next++; index < count; index = next++) {
      try {
        work(index);
      } catch (...) {
        std::lock_guard lock(exception_mutex);
        if (!first_exception) first_exception = std::current_exception();
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
  if (first_exception) std::rethrow_exception(first_exception);
}

}  // namespace fabgate::ssh
