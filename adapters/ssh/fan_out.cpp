#include "adapters/ssh/fan_out.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
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
  for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (auto& thread : threads) thread.join();
  if (first_exception) std::rethrow_exception(first_exception);
}

}  // namespace fabgate::ssh
