#include "transport/tls_session.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <array>

namespace lockbridge::detail {
namespace {

constexpr std::size_t kChunk = 16 * 1024;  // one TLS record at most

bool is_ip_address(const std::string& host) {
  std::array<unsigned char, sizeof(in6_addr)> scratch{};
  return inet_pton(AF_INET, host.c_str(), scratch.data()) == 1 ||
         inet_pton(AF_INET6, host.c_str(), scratch.data()) == 1;
}

// An unknown CA, said with the CAs the client trusts.
std::string unknown_ca(const TlsOptions& options) {
  std::string trusted;
  if (!options.ca_file.empty()) trusted = "in --cacert '" + options.ca_file + "'";
  if (!options.ca_dir.empty()) trusted += (trusted.empty() ? "in " : " or ") + ("--cacertdir '" + options.ca_dir + "'");
  if (trusted.empty())
    return "unknown CA: no CA the system trusts signed the server's certificate (--cacert names the CA)";
  return "unknown CA: no CA " + trusted + " signed the server's certificate";
}

// A failed verification, in words a person can act on.
std::string verify_failure(long result, const std::string& name, const std::string& unknown_ca) {
  switch (result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
      return "host name mismatch: the server's certificate is not for '" + name + "'";
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "host name mismatch: the server's certificate is not for the address " + name;
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet (check this host's clock)";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return unknown_ca;
    default:
      return std::string("the server's certificate failed verification: ") + X509_verify_cert_error_string(result);
  }
}

bool is_resp_start(char byte) { return byte == '-' || byte == '+' || byte == '$' || byte == '*' || byte == ':'; }

constexpr std::string_view kWantsCertificate =
    "the server wants a client certificate (--cert and --key; tls-auth-clients)";

// What the server's alert `reason` says of the client certificate (given or not); empty for
// another alert.
std::string_view refusal(int reason, bool certificate_given) {
  if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
      (!certificate_given &&
       (reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE || reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE))) {
    return kWantsCertificate;
  }
  if (!certificate_given) return {};
  switch (reason) {
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      return "the server refused the client certificate (is it signed by a CA the server trusts, tls-ca-cert-file?)";
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
      return "the server refused the client certificate: it has expired (or is not valid yet: check the clocks)";
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
      return "the server refused the client certificate: it has been revoked";
    default:
      return {};
  }
}

}  // namespace

// Remembered, and the handshake goes on, with the configured certificate or without one (a server
// with tls-auth-clients optional accepts that).
int TlsSession::on_certificate_request(SSL* /*ssl*/, void* session) {
  static_cast<TlsSession*>(session)->certificate_requested_ = true;
  return 1;
}

TlsSession::TlsSession(const TlsOptions& options, const std::string& host, Deadline deadline)
    : context_(tls_context(options, deadline)),
      name_(options.server_name.empty() ? host : options.server_name),
      unknown_ca_(unknown_ca(options)),
      client_certificate_(!options.cert_file.empty()) {
  ERR_clear_error();
  ssl_.reset(SSL_new(context_.get()));
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  if (!ssl_ || in_ == nullptr || out_ == nullptr) {
    BIO_free(in_);
    BIO_free(out_);
    throw TransportError(Errc::tls, "cannot create a TLS session: " + openssl_reason("out of memory"));
  }
  BIO_ctrl(in_, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nullptr);  // empty means "wait for more", not end of stream
  SSL_set_bio(ssl_.get(), in_, out_);
  SSL_set_cert_cb(ssl_.get(), on_certificate_request, this);  // never moved: it lives behind a unique_ptr
  const bool ip = is_ip_address(name_);
  // SNI carries host names only (RFC 6066); an address is checked against the certificate's IP SANs.
  if (!ip) SSL_ctrl(ssl_.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, name_.data());
  if (options.verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_.get());
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const int set = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name_.c_str()) : SSL_set1_host(ssl_.get(), name_.c_str());
    if (set != 1) throw TransportError(Errc::tls, "cannot check the certificate against '" + name_ + "'");
  }
  SSL_set_connect_state(ssl_.get());
}

void TlsSession::feed(std::span<const char> bytes) {
  if (!got_any_ && !bytes.empty()) {
    got_any_ = true;
    first_byte_ = bytes.front();
  }
  BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
}

void TlsSession::flush(Socket& socket, Deadline deadline) {
  char* data = nullptr;
  const long pending = BIO_ctrl(out_, BIO_CTRL_INFO, 0, static_cast<void*>(&data));  // BIO_get_mem_data
  if (pending <= 0) return;
  if (outbox_ != nullptr) {
    outbox_->append(data, static_cast<std::size_t>(pending));
    BIO_ctrl(out_, BIO_CTRL_RESET, 0, nullptr);
    return;
  }
  try {
    socket.write_all(std::string_view(data, static_cast<std::size_t>(pending)), deadline);
  } catch (const TransportError& error) {
    BIO_ctrl(out_, BIO_CTRL_RESET, 0, nullptr);  // never sent again by the alert's read below
    if (error.code() == Errc::io && !got_data_) read_alert(socket);
    socket_failed(error);
  }
  BIO_ctrl(out_, BIO_CTRL_RESET, 0, nullptr);  // BIO_reset
}

void TlsSession::read_alert(Socket& socket) {
  // TLS 1.3 tells a client that its certificate was refused only after the client's side of the
  // handshake is done: the server sends its alert and closes with our first request unread, which
  // the kernel answers with a reset. A write after that reset fails, but the alert came before it
  // and still waits in the receive queue: read it, so the error says why.
  std::array<char, kChunk> buffer{};
  try {
    while (const auto arrived = socket.read_now(buffer)) {
      if (*arrived == 0) break;
      feed(std::span<const char>(buffer.data(), *arrived));
    }
  } catch (const TransportError&) {
    // The reset, once the queue is read: what it held is all there is.
  }
  ERR_clear_error();
  char plain[1];
  const int got = SSL_read(ssl_.get(), plain, sizeof plain);
  if (got <= 0 && SSL_get_error(ssl_.get(), got) == SSL_ERROR_SSL) refused_certificate();
  ERR_clear_error();
}

void TlsSession::fail(bool handshaking) {
  const long verified = SSL_get_verify_result(ssl_.get());
  if (handshaking && verified != X509_V_OK) {
    ERR_clear_error();
    throw TransportError(Errc::tls, verify_failure(verified, name_, unknown_ca_));
  }
  const unsigned long code = ERR_peek_error();
  const int reason = ERR_GET_REASON(code);
  if (got_any_ && is_resp_start(first_byte_) && handshaking) {
    ERR_clear_error();
    throw TransportError(Errc::tls,
                         "the server answered in plain text: the port does not speak TLS (use redis:// "
                         "without --tls, or the server's tls-port)");
  }
  refused_certificate();
  if (!handshaking) {
    // An established session that broke (a record that does not decrypt, plain text amid the
    // records, an unexpected alert) is a broken connection like a reset: a request already
    // written may have run.
    throw TransportError(Errc::io, openssl_reason("the TLS session failed"));
  }
  if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
    ERR_clear_error();
    throw TransportError(Errc::tls,
                         "the server does not speak TLS on this port (use redis:// without --tls, or the "
                         "server's tls-port)");
  }
  throw TransportError(Errc::tls, "handshake failed: " + openssl_reason("the TLS session failed"));
}

void TlsSession::refused_certificate() {
  // The server's alerts refusing our certificate (or its absence). TLS 1.3 may send them after the
  // client's side of the handshake is done and its first request is out; the server runs nothing
  // on a session it refused. Once a reply came, the session was accepted, and an alert then (a
  // renegotiation, a proxy in front of Redis) proves nothing about what ran.
  const std::string_view why = refusal(ERR_GET_REASON(ERR_peek_error()), client_certificate_);
  if (why.empty()) return;
  ERR_clear_error();
  throw TransportError(Errc::tls, std::string(why),
                       got_data_ ? TransportError::Session::maybe_ran : TransportError::Session::refused);
}

void TlsSession::socket_failed(const TransportError& error) {
  // A reset where the certificate alert was expected (TLS 1.3's alert overtaken by it) names the
  // likely cause, but it is a guess: a server with tls-auth-clients optional asks for a
  // certificate too, accepts the session without one, and may have run a request before a reset
  // for another reason. So nothing is promised about what ran.
  if (error.code() == Errc::io && certificate_requested_ && !client_certificate_ && !got_data_) {
    throw TransportError(Errc::tls,
                         "the server closed the connection after asking for a client certificate, and none was "
                         "given: it may require one (--cert and --key; tls-auth-clients) (" +
                             std::string(error.what()) + ")");
  }
  throw error;
}

TlsSession::Step TlsSession::after(int result, Socket& socket, Deadline deadline, bool handshaking) {
  const int error = SSL_get_error(ssl_.get(), result);
  flush(socket, deadline);  // whatever the call produced: handshake messages, alerts, key updates
  if (result > 0) return Step::done;
  switch (error) {
    case SSL_ERROR_WANT_READ:
      return Step::want_read;
    case SSL_ERROR_ZERO_RETURN:
      socket_failed(closed_by_server());
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) socket_failed(closed_by_server());
      fail(handshaking);
    default:
      fail(handshaking);
  }
}

void TlsSession::handshake(Socket& socket, Deadline deadline) {
  for (;;) {
    ERR_clear_error();
    if (after(SSL_do_handshake(ssl_.get()), socket, deadline, true) == Step::done) return;
    try {
      receive(socket, deadline);
    } catch (const TransportError& error) {
      if (error.code() == Errc::timeout) {
        throw TransportError(Errc::timeout, "no TLS handshake within the connect timeout (is the port a TLS port?)");
      }
      if (error.code() != Errc::io) throw;  // receive() found the likely cause (socket_failed)
      throw TransportError(Errc::io, std::string(error.what()) +
                                         " during the TLS handshake (a plain port, or the server refused the "
                                         "handshake: its log says why)");
    }
  }
}

void TlsSession::write_all(Socket& socket, std::string_view plain, Deadline deadline) {
  while (!plain.empty()) {
    ERR_clear_error();
    const int written = SSL_write(ssl_.get(), plain.data(), static_cast<int>(std::min(plain.size(), kChunk * 4)));
    if (after(written, socket, deadline, false) == Step::done) {
      plain.remove_prefix(static_cast<std::size_t>(written));
    } else {
      // Memory buffers never block a write; a renegotiation would want input first.
      receive(socket, deadline);
    }
  }
}

void TlsSession::receive(Socket& socket, Deadline deadline) {
  std::array<char, kChunk> buffer{};
  try {
    feed(std::span<const char>(buffer.data(), socket.read_some(buffer, deadline)));
  } catch (const TransportError& error) {
    socket_failed(error);
  }
}

void TlsSession::write_now(Socket& socket, std::string_view plain) {
  while (!plain.empty()) {
    ERR_clear_error();
    const int written = SSL_write(ssl_.get(), plain.data(), static_cast<int>(std::min(plain.size(), kChunk * 4)));
    // With the outbox, after() writes nothing to the socket: it queues what the call produced.
    if (after(written, socket, Deadline::max(), false) == Step::want_read) {
      // A memory buffer never blocks a write: only a renegotiation wants input first, and Redis
      // speaks TLS 1.2 and 1.3 without one.
      throw TransportError(Errc::tls, "the server asked for a renegotiation in the middle of a write");
    }
    plain.remove_prefix(static_cast<std::size_t>(written));
  }
}

std::optional<std::size_t> TlsSession::decrypt(Socket& socket, std::span<char> plain, Deadline write_deadline) {
  ERR_clear_error();
  const int got = SSL_read(ssl_.get(), plain.data(), static_cast<int>(plain.size()));
  if (after(got, socket, write_deadline, false) == Step::want_read) return std::nullopt;
  got_data_ = true;
  return static_cast<std::size_t>(got);
}

std::size_t TlsSession::read_some(Socket& socket, std::span<char> plain, Deadline deadline) {
  for (;;) {
    if (const auto got = decrypt(socket, plain, deadline)) return *got;
    receive(socket, deadline);
  }
}

std::size_t TlsSession::read_now(Socket& socket, std::span<char> plain, Deadline write_deadline) {
  std::array<char, kChunk> buffer{};
  for (;;) {
    if (const auto got = decrypt(socket, plain, write_deadline)) return *got;
    std::optional<std::size_t> arrived;
    try {
      arrived = socket.read_now(buffer);
    } catch (const TransportError& error) {
      socket_failed(error);
    }
    if (!arrived) return 0;
    if (*arrived == 0) socket_failed(closed_by_server());
    feed(std::span<const char>(buffer.data(), *arrived));
  }
}

}  // namespace lockbridge::detail
