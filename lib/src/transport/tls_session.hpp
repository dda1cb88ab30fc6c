// One TLS session over a Socket. OpenSSL works on two memory buffers and the Socket moves the
// bytes, so every wait is the Socket's own poll(2) with its deadline (a handshake cannot outlast
// the connect timeout, a read the command timeout) and every write is MSG_NOSIGNAL. Failures
// throw TransportError: tls with a reason a person can act on (unknown CA, host name mismatch,
// expired certificate, a client certificate wanted, a plain port), io when the peer closed,
// timeout.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"
#include "transport/socket.hpp"
#include "transport/tls_context.hpp"

namespace lockbridge::detail {

class TlsSession {
 public:
  // `host` is the name or address connected to: sent as SNI (names only) and checked against the
  // certificate, unless options.server_name replaces it. The files of `options` are read by
  // `deadline` when the shared context is (re)built.
  TlsSession(const TlsOptions& options, const std::string& host, Deadline deadline);

  void handshake(Socket& socket, Deadline deadline);
  void write_all(Socket& socket, std::string_view plain, Deadline deadline);
  // At least one byte of plaintext, waiting up to `deadline`.
  std::size_t read_some(Socket& socket, std::span<char> plain, Deadline deadline);
  // The plaintext that the bytes already arrived make up, without waiting: 0 when none. Throws io
  // when the peer closed. What OpenSSL must answer meanwhile (a key update) is written by
  // `write_deadline`.
  std::size_t read_now(Socket& socket, std::span<char> plain, Deadline write_deadline);

  // For a connection driven by readiness events: from now on, every byte OpenSSL writes (records
  // of write_now(), and what reads must answer, such as a key update) is appended to `outbox` in
  // order, for the caller to write as the socket takes it, instead of being written and waited for.
  void queue_output_in(std::string* outbox) noexcept { outbox_ = outbox; }
  // Encrypts `plain` into the outbox (queue_output_in). Throws TransportError.
  void write_now(Socket& socket, std::string_view plain);

 private:
  struct SslDeleter {
    void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
  };
  enum class Step { done, want_read };
  // Runs one OpenSSL call's aftermath: sends what it wrote, then says whether it needs input.
  Step after(int result, Socket& socket, Deadline deadline, bool handshaking);
  // Moves what OpenSSL wrote into the socket.
  void flush(Socket& socket, Deadline deadline);
  void feed(std::span<const char> bytes);
  // One SSL_read: plaintext, or nullopt when OpenSSL needs more bytes from the server first.
  std::optional<std::size_t> decrypt(Socket& socket, std::span<char> plain, Deadline write_deadline);
  // Waits for bytes from the server, up to `deadline`, and gives them to OpenSSL.
  void receive(Socket& socket, Deadline deadline);
  [[noreturn]] void fail(bool handshaking);
  // Throws the tls error that an alert on OpenSSL's error queue says (a client certificate wanted,
  // or ours refused: expired, revoked, an unknown CA); returns for any other error.
  void refused_certificate();
  // After a write met a reset: reads what the server sent before it (an alert refusing our
  // certificate), and throws what it says; returns when it says nothing of the kind.
  void read_alert(Socket& socket);
  // An io failure of the socket, said better when the likely cause is known: a server that asked
  // for a client certificate, got none, and hung up (TLS 1.3 tells the client after its handshake
  // is done, often as a reset that overtakes the alert).
  [[noreturn]] void socket_failed(const TransportError& error);
  // OpenSSL's call when the server asks for a client certificate (SSL_set_cert_cb).
  static int on_certificate_request(SSL* ssl, void* session);

  SslContextPtr context_;
  std::unique_ptr<SSL, SslDeleter> ssl_;
  BIO* in_ = nullptr;       // owned by ssl_: bytes from the server, for OpenSSL to read
  BIO* out_ = nullptr;      // owned by ssl_: bytes OpenSSL wrote, for the server
  std::string name_;        // what the certificate must be for
  std::string unknown_ca_;  // the message for a server signed by a CA not trusted, naming those trusted
  bool client_certificate_ = false;
  bool certificate_requested_ = false;  // the server asked for a client certificate
  bool got_data_ = false;               // a read returned data: the server accepted the session
  char first_byte_ = 0;                 // the first byte the server sent: a RESP reply means a plain port
  bool got_any_ = false;
  std::string* outbox_ = nullptr;  // queue_output_in
};

}  // namespace lockbridge::detail
