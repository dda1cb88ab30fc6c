// What the transport throws: a code and the reason, without the server's address. Connection adds
// what it was doing and where ("read reply on rediss://...: <reason>") and throws lockbridge::Error.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "lockbridge/error.hpp"

namespace lockbridge::detail {

using Deadline = std::chrono::steady_clock::time_point;

class TransportError : public std::runtime_error {
 public:
  TransportError(Errc code, const std::string& reason) : std::runtime_error(reason), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

// The peer ended the connection (EOF, or TLS's close_notify).
inline TransportError closed_by_server() { return TransportError(Errc::io, "the server closed the connection"); }

}  // namespace lockbridge::detail
