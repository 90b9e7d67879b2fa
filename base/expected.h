// Expected<T>: a value or an Error, returned by module APIs that read user input.
// (std::expected is C++23; this is the small subset we need.)
#pragma once

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/error.h"

namespace trainsim {

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Runs `body` (which may throw InputError deep inside a loader) and returns its result
// or the error as a value: the one place where loader exceptions become Error values.
template <class Body>
auto catchInputErrors(Body&& body) -> Expected<std::invoke_result_t<Body>> {
  try {
    return std::forward<Body>(body)();
  } catch (const InputError& e) {
    return e.error();
  }
}

// Inside a loader: unwraps a value from another module's API, or rethrows its error so
// that it propagates to this module's own catchInputErrors. A function that returns
// Expected itself uses TRAINSIM_ASSIGN_OR_RETURN instead, so the error stays a value.
template <class T>
T valueOrThrow(Expected<T> result) {
  if (!result.ok()) throw InputError(result.error());
  return std::move(result).value();
}

}  // namespace trainsim

#define TRAINSIM_EXPECTED_CONCAT_INNER(a, b) a##b
#define TRAINSIM_EXPECTED_CONCAT(a, b) TRAINSIM_EXPECTED_CONCAT_INNER(a, b)

// In a function that returns some Expected<U>: evaluates `expression` (an Expected<T>),
// returns its Error unchanged, else initializes or assigns `lhs` with the moved value:
//   TRAINSIM_ASSIGN_OR_RETURN(const auto cluster, topology::Cluster::build(spec));
//   TRAINSIM_ASSIGN_OR_RETURN(options.compute, perf::defaultComputeParameters(paths));
// A statement, not an expression: it declares a uniquely named temporary in the enclosing
// scope, so it cannot be the body of an unbraced if or loop. The expression is variadic so
// that commas in template arguments need no parentheses.
#define TRAINSIM_ASSIGN_OR_RETURN(lhs, ...) \
  TRAINSIM_ASSIGN_OR_RETURN_IMPL(TRAINSIM_EXPECTED_CONCAT(trainsim_expected_, __COUNTER__), lhs, __VA_ARGS__)
#define TRAINSIM_ASSIGN_OR_RETURN_IMPL(temporary, lhs, ...) \
  auto temporary = (__VA_ARGS__);                           \
  if (!temporary.ok()) return temporary.error();            \
  lhs = std::move(temporary).value()
