// The OpenSSL client context a TlsOptions asks for: trusted CAs, the client certificate and key,
// verification on or off. Building one reads files, so contexts are shared by every connection
// with the same options, and rebuilt once a minute so that renewed certificates and CA bundles on
// disk are picked up without a restart.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "lockbridge/client.hpp"

namespace lockbridge::detail {

using SslContextPtr = std::shared_ptr<SSL_CTX>;

// Throws TransportError(tls) naming the file that cannot be read or does not hold what it should.
SslContextPtr tls_context(const TlsOptions& options);

// The reason of the oldest error on this thread's OpenSSL error queue ("certificate verify failed"),
// or `fallback` when it is empty; clears the queue.
std::string openssl_reason(const std::string& fallback);

}  // namespace lockbridge::detail
