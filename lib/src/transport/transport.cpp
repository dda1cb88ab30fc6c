#include "transport/transport.hpp"

namespace lockbridge::detail {
namespace {

Socket connect_socket(const RedisUrl& url, Deadline deadline) {
  return url.transport == RedisUrl::Transport::unix_socket ? Socket::connect_unix(url.socket_path, deadline)
                                                           : Socket::connect_tcp(url.host, url.port, deadline);
}

}  // namespace

Transport::Transport(const RedisUrl& url, const ClientOptions& options, Deadline deadline)
    : socket_(connect_socket(url, deadline)) {
  if (!uses_tls(url, options)) return;
  tls_ = std::make_unique<TlsSession>(options.tls, url.host, deadline);
  tls_->handshake(socket_, deadline);
}

void Transport::write_all(std::string_view bytes, Deadline deadline) {
  if (tls_) {
    tls_->write_all(socket_, bytes, deadline);
  } else {
    socket_.write_all(bytes, deadline);
  }
}

std::string_view Transport::read_some(Deadline deadline) {
  const std::size_t got = tls_ ? tls_->read_some(socket_, *buffer_, deadline) : socket_.read_some(*buffer_, deadline);
  return {buffer_->data(), got};
}

std::string_view Transport::read_now(Deadline write_deadline) {
  if (tls_) return {buffer_->data(), tls_->read_now(socket_, *buffer_, write_deadline)};
  const auto got = socket_.read_now(*buffer_);
  if (got && *got == 0) throw closed_by_server();
  return {buffer_->data(), got.value_or(0)};
}

void Transport::drive_by_events() {
  if (tls_) tls_->queue_output_in(&outbox_);
}

bool Transport::write_now(std::string_view bytes) {
  if (tls_) {
    tls_->write_now(socket_, bytes);
  } else if (outbox_sent_ == outbox_.size()) {
    // Nothing queued ahead of it: straight to the socket, copying only what it did not take.
    bytes.remove_prefix(socket_.write_now(bytes));
    if (bytes.empty()) return true;
    outbox_.assign(bytes);
    outbox_sent_ = 0;
    return false;
  } else {
    outbox_.append(bytes);
  }
  return write_pending();
}

bool Transport::write_pending() {
  while (outbox_sent_ < outbox_.size()) {
    const std::size_t taken = socket_.write_now(std::string_view(outbox_).substr(outbox_sent_));
    if (taken == 0) return false;
    outbox_sent_ += taken;
  }
  outbox_.clear();
  outbox_sent_ = 0;
  return true;
}

bool Transport::unusable_when_idle() noexcept {
  if (!socket_.readable_now()) return false;
  if (!tls_) return true;
  try {
    // Records without data are OpenSSL's business; application data nobody asked for is not.
    return !read_now(std::chrono::steady_clock::now()).empty() || socket_.readable_now();
  } catch (const TransportError&) {
    return true;
  }
}

}  // namespace lockbridge::detail
