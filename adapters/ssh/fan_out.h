#pragma once

#include <cstddef>
#include <functional>

namespace fabgate::ssh {

// The parallelism used when fabgate.yaml says nothing: enough to keep hundreds of targets
// moving (most of an SSH command's time is waiting on the network and the remote side) while
// staying well below the default process and descriptor limits.
inline constexpr int kDefaultParallelism = 64;

// Calls work(i) for every i in [0, count) on at most `parallelism` threads and returns when all
// are done. Items are started in index order and each runs start to finish on one thread, so
// when one item is one device its commands stay in order. `work` must not throw; an exception
// that escapes anyway is rethrown here after every thread has joined.
void for_each_bounded(std::size_t count, int parallelism,
                      const std::function<void(std::size_t)>& work);

}  // namespace fabgate::ssh
