// lockbridge: a connection to one Redis server.
//
// A Client owns a small thread-safe pool of connections to the server named by its URL, and the
// state its locks share (loaded script hashes). It is cheap to share between threads; Mutex objects
// keep the Client's state alive, so a Client may be destroyed before its locks. A moved-from
// Client may only be destroyed or assigned to.
//
// A write to a connection the server closed never raises SIGPIPE: lockbridge writes with
// MSG_NOSIGNAL and reports Errc::io instead.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/export.hpp"
#include "lockbridge/observer.hpp"
#include "lockbridge/url.hpp"

namespace lockbridge {

namespace detail {
struct ClientState;
}

// TLS for every connection of a Client: its pool, its release subscriber, its watchdog, and the
// sentinels, cluster nodes and Redlock masters it reaches. The names follow redis-cli's flags.
// Verification is on unless turned off: the server's chain must lead to a trusted CA (ca_file /
// ca_dir, or the system's default store when both are empty), and the certificate must be for the
// host the URL names (DNS name or IP address), or for server_name when it is set.
struct LOCKBRIDGE_API TlsOptions {
  bool enabled = false;       // TLS for a redis:// URL too (redis-cli --tls); rediss:// URLs always use it
  std::string ca_file{};      // PEM bundle of trusted CAs (--cacert)
  std::string ca_dir{};       // directory of hashed CA certificates, as c_rehash makes (--cacertdir)
  std::string cert_file{};    // client certificate chain (PEM), for tls-auth-clients servers (--cert)
  std::string key_file{};     // its private key (PEM, not encrypted) (--key)
  std::string server_name{};  // sent as SNI and checked against the certificate (--sni); empty: the URL's host
  bool verify =
      true;  // false: no chain and no host check (--insecure): anyone on the path can read and change the traffic

  // Both a certificate and its key, or neither. Throws Error{Errc::bad_option}.
  void validate() const;
  // The same, and: settings that only TLS uses (files, server name, verify off) need a connection
  // that uses TLS (a rediss URL, or `enabled`); without one they would be ignored and the password
  // sent in plain text. Over a unix socket TLS is refused. Throws Error{Errc::bad_option}.
  void validate(const RedisUrl& url) const;
  // The settings given that only TLS uses, by the CLI's names ("--cacert, --sni"); empty when none.
  std::string settings_given() const;
};

struct LOCKBRIDGE_API ClientOptions {
  static constexpr std::size_t kMaxPoolSize = 10000;
  std::chrono::milliseconds connect_timeout{1000};  // per connect and TLS handshake, then AUTH and SELECT; <= 365 days
  std::chrono::milliseconds command_timeout{1000};  // per reply; after it the outcome is unknown; <= 365 days
  std::size_t pool_size = 8;                        // connections kept open (1 to kMaxPoolSize); callers beyond wait
  // After a failed connect, further connects fail fast until this much time (doubling per failure,
  // up to 16x) has passed, so a down server is not hammered by every waiting lock. <= 365 days.
  std::chrono::milliseconds reconnect_backoff{50};
  TlsOptions tls{};
  // Told what every lock of this Client does (lockbridge/observer.hpp), unless the lock has an
  // observer of its own (MutexOptions::observer). Null: nothing is observed, at no cost.
  std::shared_ptr<Observer> observer{};
  // Told, once, when the Client works round something the server refuses, in words for a log: a
  // release subscription an ACL denies (waiters then poll by their retry policy). Called on a
  // thread of the library, or on one waiting in lock(): it must be quick, must not use the Client,
  // and what it throws is dropped. Empty: not told.
  std::function<void(const std::string&)> on_notice{};

  // Throws Error{Errc::bad_option} when a value is out of range.
  void validate() const;
};

// What a Client (and its copies) has done so far.
struct LOCKBRIDGE_API ClientStats {
  // Requests written to the server by every connection of the Client, each one round trip: lock
  // attempts, releases, extends, scripts resent as EVAL, commands, pings, AUTH/SELECT at connect, and the
  // release subscriber's SSUBSCRIBE/SUNSUBSCRIBE.
  std::uint64_t round_trips = 0;
  // The watchdog's work (MutexOptions::watchdog): leases renewed, and the pipelined requests that
  // carried them (also counted in round_trips).
  std::uint64_t renewals = 0;
  std::uint64_t renewal_round_trips = 0;
  // Observer events dropped because Observer::kMaxPendingEvents were waiting for a slow observer.
  std::uint64_t observer_events_dropped = 0;
};

// A reply to Client::command, copied out of hiredis.
struct LOCKBRIDGE_API Reply {
  // error: only inside Client::pipeline's replies (command() throws instead) and nested arrays.
  enum class Kind { nil, string, status, integer, array, error };
  Kind kind = Kind::nil;
  std::string str;              // string, status and error
  std::int64_t integer = 0;     // integer
  std::vector<Reply> elements;  // array
  bool is_nil() const noexcept { return kind == Kind::nil; }
};

class LOCKBRIDGE_API Client {
 public:
  // Parses the URL (Error{bad_option} when malformed) and validates the options. Connects lazily:
  // the first command (or ping()) opens the first connection.
  explicit Client(std::string_view url, ClientOptions options = {});
  // The same from a URL already parsed (parse_redis_url).
  explicit Client(RedisUrl url, ClientOptions options = {});
  ~Client();
  Client(const Client&) = default;  // copies share the pool
  Client& operator=(const Client&) = default;
  Client(Client&&) noexcept = default;
  Client& operator=(Client&&) noexcept = default;

  const RedisUrl& url() const noexcept;
  const ClientOptions& options() const noexcept;

  // With a redis-cluster:// URL, command() and pipeline() go to the master serving the slot of the
  // command's key (the argument after its name, or an EVAL's first key) and follow MOVED/ASK; a
  // pipeline becomes one pipeline per master; commands about the node (INFO, SCRIPT, DBSIZE, TIME,
  // SCAN ...) and keyless ones go to the master of slot 0 (use masters() to reach each master).
  // Sentinel: the current master. Redlock: the first master.
  //
  // Runs one command, binary-safe. Blocks for up to the command timeout waiting for a free pooled
  // connection, a connect timeout if a new one is needed, then the command timeout for the reply.
  // Throws Error: io, timeout, protocol, wrong_type or server_reply (an error reply).
  Reply command(std::span<const std::string> args) const;
  Reply command(std::initializer_list<std::string_view> args) const;

  // Several commands in one round trip on one connection; replies in order. An error reply is
  // returned (Reply::Kind::error), not thrown: one failing command does not hide the others'
  // replies. Throws Error for transport failures, like command().
  std::vector<Reply> pipeline(std::span<const std::vector<std::string>> commands) const;

  // One run of a Lua script: its keys (the first routes it on Redis Cluster) and its arguments.
  struct LOCKBRIDGE_API EvalCall {
    std::vector<std::string> keys;
    std::vector<std::string> args;
  };
  // Runs `script` once per call, in one pipeline (one per master on Redis Cluster), as EVALSHA with
  // its SHA1 computed here (no SCRIPT LOAD, which an ACL may deny while it allows EVAL); the calls
  // a server answers NOSCRIPT (it has not seen the script yet) did not run, and go again as EVAL,
  // in one more. Replies in order, error replies returned as pipeline() returns them. Throws Error
  // for transport failures.
  std::vector<Reply> eval(std::string_view script, std::span<const EvalCall> calls) const;

  // A Client per data node, for walking every key (SCAN sees only the server it runs on): with
  // redis-cluster://, a redis:// Client for each master serving slots now (asked of the cluster);
  // with redlock://, one per master; otherwise a copy of this Client. Throws like command().
  std::vector<Client> masters() const;

  // One PING round trip. Throws like command().
  void ping() const;

  ClientStats stats() const noexcept;

  // For Mutex and the strategies; not part of the stable API.
  const std::shared_ptr<detail::ClientState>& state() const noexcept { return state_; }

 private:
  Reply command_views(std::span<const std::string_view> args) const;
  std::shared_ptr<detail::ClientState> state_;
};

// The SHA1 that Redis names a Lua script by (EVALSHA; what SCRIPT LOAD would answer): 40 lowercase
// hex digits. lockbridge never sends SCRIPT LOAD, which an ACL may deny while it allows EVALSHA:
// send EVALSHA with this, and EVAL on NOSCRIPT (Client::eval does both).
LOCKBRIDGE_API std::string script_sha1(std::string_view body);

}  // namespace lockbridge
