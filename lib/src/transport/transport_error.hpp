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
  // Whether the server is known to have run nothing sent on the connection: it refused the TLS
  // session with an alert that says so. A guess at the cause (a reset) never is.
  enum class Session { maybe_ran, refused };

  TransportError(Errc code, const std::string& reason, Session session = Session::maybe_ran)
      : std::runtime_error(reason), code_(code), session_(session) {}
  Errc code() const noexcept { return code_; }
  bool session_refused() const noexcept { return session_ == Session::refused; }

 private:
  Errc code_;
  Session session_;
};

// The peer ended the connection (EOF, or TLS's close_notify).
inline TransportError closed_by_server() { return TransportError(Errc::io, "the server closed the connection"); }

}  // namespace lockbridge::detail
