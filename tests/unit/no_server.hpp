// For unit tests that build Clients, Mutexes and stripes without any server: constructing them
// must do no I/O, and bad options must be refused with Error{bad_option}.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

#include "lockbridge/error.hpp"

namespace lockbridge::testing {

// Nothing listens on port 1, so any attempt to connect would fail: constructing must not try.
inline constexpr const char* kUnreachableUrl = "redis://127.0.0.1:1";

// The message of the Error{bad_option} that `action` throws; a test failure if it throws anything
// else or nothing.
inline std::string bad_option_message(const std::function<void()>& action) {
  try {
    action();
    ADD_FAILURE() << "no exception thrown";
  } catch (const Error& error) {
    EXPECT_EQ(error.errc(), Errc::bad_option) << error.what();
    return error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "threw something other than lockbridge::Error: " << error.what();
  }
  return {};
}

}  // namespace lockbridge::testing
