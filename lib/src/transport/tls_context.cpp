#include "transport/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <sys/stat.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "transport/tls_files.hpp"

namespace lockbridge::detail {
namespace {

// OpenSSL decodes a certificate's extensions (key identifiers, constraints) the first time it is
// checked, and caches them in the certificate: done here, while the context is built on one
// thread, so that the handshakes that share the context only read them (concurrent first checks
// of one certificate race inside OpenSSL: ThreadSanitizer saw ASN1_STRING_set beside
// ASN1_STRING_cmp on a shared CA).
void cache_extensions(X509* certificate) { (void)X509_check_purpose(certificate, -1, 0); }

constexpr auto kContextLifetime = std::chrono::minutes(1);

// An encrypted key file would make OpenSSL prompt on the terminal for its pass phrase, blocking
// a service; lockbridge never asks: such a key fails to load.
int no_passphrase(char* /*buffer*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return 0; }

struct BioDeleter {
  void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr memory_bio(const TlsFile& file) {
  BioPtr bio(BIO_new_mem_buf(file.bytes.data(), static_cast<int>(file.bytes.size())));
  if (!bio) throw TransportError(Errc::tls, "cannot read '" + file.path + "': " + openssl_reason("out of memory"));
  return bio;
}

// Adds every certificate (and CRL) of a PEM file to the trusted store, as OpenSSL's own
// X509_load_cert_crl_file does.
void trust_certificates(X509_STORE* store, const TlsFile& file, const TlsInput& input) {
  const BioPtr bio = memory_bio(file);
  const std::unique_ptr<STACK_OF(X509_INFO), void (*)(STACK_OF(X509_INFO)*)> infos(
      PEM_X509_INFO_read_bio(bio.get(), nullptr, no_passphrase, nullptr),
      [](STACK_OF(X509_INFO) * stack) { sk_X509_INFO_pop_free(stack, X509_INFO_free); });
  if (!infos) tls_file_failure(input, file.path, openssl_reason("it holds no PEM certificate"));
  int certificates = 0;
  for (int i = 0; i < sk_X509_INFO_num(infos.get()); ++i) {
    const X509_INFO* info = sk_X509_INFO_value(infos.get(), i);
    if (info->x509 != nullptr) {
      cache_extensions(info->x509);
      if (X509_STORE_add_cert(store, info->x509) != 1) {
        tls_file_failure(input, file.path, openssl_reason("cannot trust its certificates"));
      }
      ++certificates;
    }
    if (info->crl != nullptr && X509_STORE_add_crl(store, info->crl) != 1) {
      tls_file_failure(input, file.path, openssl_reason("cannot use its CRL"));
    }
  }
  if (certificates == 0) tls_file_failure(input, file.path, "it holds no PEM certificate");
}

// The client certificate, then the rest of its chain, as SSL_CTX_use_certificate_chain_file reads them.
void use_certificate_chain(SSL_CTX* ctx, const TlsFile& file) {
  const BioPtr bio = memory_bio(file);
  X509* leaf = PEM_read_bio_X509_AUX(bio.get(), nullptr, no_passphrase, nullptr);
  if (leaf == nullptr) tls_file_failure(kCertificate, file.path, "it holds no PEM certificate");
  cache_extensions(leaf);
  const int used = SSL_CTX_use_certificate(ctx, leaf);
  X509_free(leaf);
  if (used != 1) tls_file_failure(kCertificate, file.path, openssl_reason("unusable"));
  SSL_CTX_clear_chain_certs(ctx);
  for (;;) {
    ERR_set_mark();
    X509* issuer = PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr);
    if (issuer == nullptr) {
      if (ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE) {
        ERR_pop_to_mark();
        return;
      }
      ERR_clear_last_mark();
      tls_file_failure(kCertificate, file.path, openssl_reason("a certificate of its chain does not parse"));
    }
    ERR_clear_last_mark();
    cache_extensions(issuer);
    if (SSL_CTX_add0_chain_cert(ctx, issuer) != 1) {  // takes the certificate on success only
      X509_free(issuer);
      tls_file_failure(kCertificate, file.path, openssl_reason("unusable chain"));
    }
  }
}

void use_key(SSL_CTX* ctx, const TlsFile& file) {
  const BioPtr bio = memory_bio(file);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr);
  if (key == nullptr) {
    tls_file_failure(kKey, file.path,
                     "it holds no PEM private key that is not encrypted (" + openssl_reason("unusable") + ")");
  }
  const int used = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (used != 1) tls_file_failure(kKey, file.path, openssl_reason("unusable"));
}

struct Built {
  SslContextPtr context;
  bool files_regular = true;  // every file read may be read again (a pipe may not)
};

Built build(const TlsOptions& options, Deadline deadline) {
  ERR_clear_error();
  Built built{SslContextPtr(SSL_CTX_new(TLS_client_method()), SSL_CTX_free)};
  if (!built.context)
    throw TransportError(Errc::tls, "cannot create a TLS context: " + openssl_reason("out of memory"));
  SSL_CTX* ctx = built.context.get();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
  const auto read = [&](const TlsInput& input, const std::string& path) {
    TlsFile file = read_tls_file(input, path, deadline);
    built.files_regular = built.files_regular && file.regular;
    return file;
  };
  // The files are read here, with their bounds, and handed to OpenSSL from memory: OpenSSL's own
  // file functions would wait on a FIFO for ever.
  if (!options.ca_file.empty())
    trust_certificates(SSL_CTX_get_cert_store(ctx), read(kCaFile, options.ca_file), kCaFile);
  if (!options.ca_dir.empty()) {
    for (const TlsFile& file : read_ca_directory(options.ca_dir, deadline)) {
      built.files_regular = built.files_regular && file.regular;
      trust_certificates(SSL_CTX_get_cert_store(ctx), file, kCaDirectory);
    }
  }
  if (options.ca_file.empty() && options.ca_dir.empty() && options.verify &&
      SSL_CTX_set_default_verify_paths(ctx) != 1) {
    throw TransportError(Errc::tls, "cannot load the system's trusted CAs: " + openssl_reason("unknown reason"));
  }
  if (!options.cert_file.empty()) {
    use_certificate_chain(ctx, read(kCertificate, options.cert_file));
    use_key(ctx, read(kKey, options.key_file));
    if (SSL_CTX_check_private_key(ctx) != 1) {
      throw TransportError(Errc::tls, "the client key '" + options.key_file + "' does not match the certificate '" +
                                          options.cert_file + "'");
    }
  }
  SSL_CTX_set_verify(ctx, options.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  return built;
}

// One set of options' context. Built by one connect at a time (`building`): a pipe can be read
// only once, so two connects that both found no context must not both read it.
struct CachedContext {
  std::mutex building;
  std::optional<Built> built;  // guarded by `building`
  std::chrono::steady_clock::time_point at{};
};

// The options' files, as names; a file that is not a regular file also by its device and inode:
// /dev/fd/63 names another pipe in a later bash <(...), which must not find this one's context.
std::string cache_key(const TlsOptions& options) {
  const char separator = '\0';  // cannot occur in a path
  std::string key;
  for (const std::string* path : {&options.ca_file, &options.ca_dir, &options.cert_file, &options.key_file}) {
    key += *path;
    struct stat status {};
    if (!path->empty() && ::stat(path->c_str(), &status) == 0 && !S_ISREG(status.st_mode) && !S_ISDIR(status.st_mode)) {
      key += "@" + std::to_string(status.st_dev) + ":" + std::to_string(status.st_ino);
    }
    key += separator;
  }
  return key + (options.verify ? "v" : "-");
}

}  // namespace

std::string openssl_reason(const std::string& fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : fallback;
}

SslContextPtr tls_context(const TlsOptions& options, Deadline deadline, std::chrono::steady_clock::time_point now) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<CachedContext>> cache;
  std::shared_ptr<CachedContext> cached;
  {
    const std::lock_guard lock(mutex);
    auto& entry = cache[cache_key(options)];
    if (!entry) entry = std::make_shared<CachedContext>();
    cached = entry;
  }
  // Under the entry's own lock: reading files must not hold up connections with other options.
  const std::lock_guard building(cached->building);
  // A context built from a pipe is kept: the pipe cannot be read again.
  if (cached->built && (!cached->built->files_regular || now - cached->at < kContextLifetime)) {
    return cached->built->context;
  }
  cached->built = build(options, deadline);
  cached->at = now;
  return cached->built->context;
}

}  // namespace lockbridge::detail
