#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace fabgate::ssh {

// The parallelism used when fabgate.yaml says nothing: enough to keep hundreds of targets
// moving (most of an SSH command's time is waiting on the network and the remote side) while
// staying well below the default process and descriptor limits.
inline constexpr int kDefaultParallelism = 64;

// An item whose work threw: what escaped it, caught on its own thread.
struct ItemFailure {
  std::size_t index = 0;
  std::string what;
};

// Calls work(i) for every i in [0, count) on at most `parallelism` threads and returns when all
// are done. Items are started in index order and each runs start to finish on one thread, so
// when one item is one device its commands stay in order. `work` should not throw; an item whose
// work throws anyway ends there, every other item still runs to its end, and the thrower is
// returned (in index order) so that the caller makes its result a typed failure of that item:
// an exception never reaches a thread's entry (std::terminate) nor loses the others' results.
[[nodiscard]] std::vector<ItemFailure> for_each_bounded(
    std::size_t count, int parallelism, const std::function<void(std::size_t)>& work);

}  // namespace fabgate::ssh
