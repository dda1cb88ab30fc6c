// lockbridge: errors.
//
// Contention is not an error (try_lock() returns false). Everything else that goes wrong throws
// lockbridge::Error, a std::system_error in lockbridge's own category with one of the codes below.
// docs/errors.md lists each code with an example message.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "lockbridge/export.hpp"

namespace lockbridge {

enum class Errc {
  io = 1,        // connection refused, reset or closed; the connection is dropped and re-made later
  timeout,       // connect, command or pool wait timed out; a command's outcome is then unknown
  protocol,      // a reply that does not have the shape the protocol promises
  server_reply,  // Redis answered with an error (NOAUTH, ERR ..., script errors)
  wrong_type,    // the key holds a value of another Redis type (WRONGTYPE), e.g. a hash
  bad_value,     // a lock value that cannot be parsed or makes no sense; the key is left as it is
  lease_lost,    // the lock was no longer ours when we released or extended it
  no_quorum,     // a multi-node operation did not reach a majority
  bad_option,    // invalid URL, option or argument (empty key, zero lease, ...)
  tls,           // TLS failed: unreadable CA/certificate/key file, untrusted or expired server certificate,
                 // host name mismatch, no client certificate where the server wants one, a plain port
};

LOCKBRIDGE_API const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(Errc e) noexcept { return {static_cast<int>(e), error_category()}; }

// The one exception type lockbridge throws. what() is "<context>: <code description>".
class LOCKBRIDGE_API Error : public std::system_error {
 public:
  Error(Errc code, const std::string& message) : std::system_error(make_error_code(code), message) {}
  Errc errc() const noexcept { return static_cast<Errc>(code().value()); }
};

// The short name of a code ("io", "wrong_type", ...), as used in JSON output and docs/errors.md,
// and back.
LOCKBRIDGE_API const char* errc_name(Errc e) noexcept;
LOCKBRIDGE_API std::optional<Errc> errc_from_string(std::string_view name) noexcept;

}  // namespace lockbridge

template <>
struct std::is_error_code_enum<lockbridge::Errc> : std::true_type {};
