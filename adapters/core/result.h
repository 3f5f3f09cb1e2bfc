#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "adapters/core/exit_code.h"

namespace fabgate {

// An expected failure, carried as a value up to the one place (cmd/fabgate/main.cpp) that
// prints it and turns it into an exit code. `message` names the operation and its object
// ("git: resolve ref 'main~99' in /repo: ..."); `details` are further lines, e.g. one per
// validation problem.
struct Error {
  ExitCode exit_code = ExitCode::internal_error;
  std::string message;
  std::vector<std::string> details;

  static Error invalid_input(std::string message, std::vector<std::string> details = {}) {
    return Error{ExitCode::invalid_input, std::move(message), std::move(details)};
  }
  static Error refused(std::string message, std::vector<std::string> details = {}) {
    return Error{ExitCode::refused, std::move(message), std::move(details)};
  }
  static Error internal(std::string message, std::vector<std::string> details = {}) {
    return Error{ExitCode::internal_error, std::move(message), std::move(details)};
  }
};

// A value or a failure of type E. A minimal stand-in for std::expected (C++23), which this
// C++20 code base cannot use yet. Adapters use their own typed failures
// (Expected<CommandResult, SshFailure>); gates and commands use Result<T> = Expected<T, Error>.
template <class T, class E>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(E failure) : state_(std::in_place_index<1>, std::move(failure)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const& { return std::get<1>(state_); }
  E&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, E> state_;
};

template <class T>
using Result = Expected<T, Error>;

// Result<void>: success carries nothing.
struct Ok {};
using Status = Result<Ok>;

}  // namespace fabgate
