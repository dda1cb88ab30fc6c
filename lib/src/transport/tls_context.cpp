#include "tls_context.hpp"

#include <openssl/err.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <map>
#include <mutex>

#include "transport_error.hpp"

namespace lockbridge::detail {
namespace {

constexpr auto kContextLifetime = std::chrono::minutes(1);

// An encrypted key file would make OpenSSL prompt on the terminal for its pass phrase, blocking
// a service; lockbridge never asks: such a key fails to load.
int no_passphrase(char* /*buffer*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return 0; }

[[noreturn]] void file_failure(const std::string& what, const std::string& path) {
  // The file system's reason first (a missing file, permissions): OpenSSL's would be vaguer.
  const std::string reason = ::access(path.c_str(), R_OK) != 0 ? std::strerror(errno) : openssl_reason("unusable");
  ERR_clear_error();
  throw TransportError(Errc::tls, "cannot use " + what + " '" + path + "': " + reason);
}

SslContextPtr build(const TlsOptions& options) {
  ERR_clear_error();
  SslContextPtr context(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (!context) throw TransportError(Errc::tls, "cannot create a TLS context: " + openssl_reason("out of memory"));
  SSL_CTX* ctx = context.get();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
  if (!options.ca_file.empty() || !options.ca_dir.empty()) {
    const char* file = options.ca_file.empty() ? nullptr : options.ca_file.c_str();
    const char* dir = options.ca_dir.empty() ? nullptr : options.ca_dir.c_str();
    if (SSL_CTX_load_verify_locations(ctx, file, dir) != 1) {
      file_failure(file != nullptr ? "the CA file" : "the CA directory",
                   file != nullptr ? options.ca_file : options.ca_dir);
    }
  } else if (options.verify && SSL_CTX_set_default_verify_paths(ctx) != 1) {
    throw TransportError(Errc::tls, "cannot load the system's trusted CAs: " + openssl_reason("unknown reason"));
  }
  if (!options.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) != 1) {
      file_failure("the client certificate", options.cert_file);
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      file_failure("the client key (PEM, not encrypted)", options.key_file);
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      throw TransportError(Errc::tls, "the client key '" + options.key_file + "' does not match the certificate '" +
                                          options.cert_file + "'");
    }
  }
  SSL_CTX_set_verify(ctx, options.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  return context;
}

struct CachedContext {
  SslContextPtr context;
  std::chrono::steady_clock::time_point built;
};

std::string cache_key(const TlsOptions& options) {
  const char separator = '\0';  // cannot occur in a path
  return options.ca_file + separator + options.ca_dir + separator + options.cert_file + separator + options.key_file +
         separator + (options.verify ? "v" : "-");
}

}  // namespace

std::string openssl_reason(const std::string& fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : fallback;
}

SslContextPtr tls_context(const TlsOptions& options) {
  static std::mutex mutex;
  static std::map<std::string, CachedContext> cache;
  const std::string key = cache_key(options);
  const auto now = std::chrono::steady_clock::now();
  {
    const std::lock_guard lock(mutex);
    const auto found = cache.find(key);
    if (found != cache.end() && now - found->second.built < kContextLifetime) return found->second.context;
  }
  // Built outside the lock: reading files must not hold up connections with other options.
  SslContextPtr context = build(options);
  const std::lock_guard lock(mutex);
  cache[key] = CachedContext{context, now};
  return context;
}

}  // namespace lockbridge::detail
