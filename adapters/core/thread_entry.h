#pragma once

// What every thread fabgate starts runs its body through. An exception that reaches a thread's
// entry function calls std::terminate: the process would die mid-change, with no rollback and
// no hand-off. Caught here instead, it becomes a value the thread's owner turns into that
// worker's typed failure (a device without evidence, a stream that ended, a probe that failed).

#include <exception>
#include <optional>
#include <string>

namespace fabgate {

// Runs body(). Nothing when it returned; otherwise what escaped it: the exception's what(), or
// "an exception of unknown type".
template <class Body>
std::optional<std::string> what_escaped(Body&& body) noexcept {
  try {
    body();
    return std::nullopt;
  } catch (const std::exception& error) {
    return std::string(error.what());
  } catch (...) {
    return std::string("an exception of unknown type");
  }
}

}  // namespace fabgate
