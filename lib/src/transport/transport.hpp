// Bytes to and from one Redis server: a Socket, with a TlsSession on it when the URL or the options
// ask for TLS. Connection puts RESP on top (hiredis's writer and reader); this file knows nothing
// of Redis.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"
#include "lockbridge/url.hpp"
#include "transport/socket.hpp"
#include "transport/tls_session.hpp"

namespace lockbridge::detail {

// Whether connections to `url` use TLS: a rediss scheme, or TlsOptions::enabled.
inline bool uses_tls(const RedisUrl& url, const ClientOptions& options) noexcept {
  return url.tls || options.tls.enabled;
}

class Transport {
 public:
  // Connects (and shakes hands) by `deadline`. Throws TransportError: io, timeout, tls.
  Transport(const RedisUrl& url, const ClientOptions& options, Deadline deadline);

  int fd() const noexcept { return socket_.fd(); }
  bool tls() const noexcept { return tls_ != nullptr; }

  void write_all(std::string_view bytes, Deadline deadline);
  // At least one byte, waiting up to `deadline`; the view lives until the next read.
  std::string_view read_some(Deadline deadline);
  // What has arrived, without waiting (possibly nothing). Throws io when the peer closed.
  std::string_view read_now(Deadline write_deadline);
  // For a connection with no reply due: whether the server closed it or sent what nobody asked
  // for. Either way it is unusable. Over TLS, records that carry no data (TLS 1.3 session
  // tickets, which arrive after the handshake) are consumed and do not count.
  bool unusable_when_idle() noexcept;

  // For a connection driven by readiness events: nothing waits. Bytes to send are queued in an
  // outbox (over TLS, as the records OpenSSL makes of them, together with what reads must answer)
  // and written as the socket takes them. The Transport must not move once this is called.
  void drive_by_events();
  // Queues `bytes` and writes what the socket takes now; true when nothing is left unwritten
  // (false: wait until the socket is writable, then write_pending()). Throws TransportError.
  bool write_now(std::string_view bytes);
  // Writes what is left, as far as the socket takes it; true when nothing is left.
  bool write_pending();

 private:
  Socket socket_;
  std::unique_ptr<TlsSession> tls_;
  std::string outbox_;  // drive_by_events(): bytes for the server, not yet written
  std::size_t outbox_sent_ = 0;
  std::unique_ptr<std::array<char, 16 * 1024>> buffer_ = std::make_unique<std::array<char, 16 * 1024>>();
};

}  // namespace lockbridge::detail
