// The OpenSSL client context a TlsOptions asks for: trusted CAs, the client certificate and key,
// verification on or off. Building one reads files (tls_files.hpp), so contexts are shared by every
// connection with the same options, and rebuilt once a minute so that renewed certificates and CA
// bundles on disk are picked up without a restart; one built from a file that is not a regular
// file (a pipe, bash's <(...)), which cannot be read twice, is kept for the process's life.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "lockbridge/client.hpp"
#include "transport/transport_error.hpp"

namespace lockbridge::detail {

using SslContextPtr = std::shared_ptr<SSL_CTX>;

// Throws TransportError(tls) naming the file (and its option) that cannot be read by `deadline`
// or does not hold what it should.
// `now` decides whether a cached context is still fresh (a test may pass a later time).
SslContextPtr tls_context(const TlsOptions& options, Deadline deadline,
                          std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

// The reason of the oldest error on this thread's OpenSSL error queue ("certificate verify failed"),
// or `fallback` when it is empty; clears the queue.
std::string openssl_reason(const std::string& fallback);

}  // namespace lockbridge::detail
