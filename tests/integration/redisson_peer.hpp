// The Java side of Redisson's RLock protocol, played by raw commands written from Redisson's
// public source (RedissonLock.java in redisson/redisson; not from lockbridge's scripts), for tests that check
// lockbridge's redisson strategy against it: Redisson's lock and unlock scripts, its channel name,
// and a subscriber such as a Redisson waiter opens.
#pragma once

#include <hiredis/hiredis.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockbridge::testing {

// A Java holder's field: <client uuid>:<thread id>.
inline constexpr char kJavaField[] = "8b0c2a1e-0000-4000-8000-000000000000:57";

// redisson_lock__channel:{key} (the key has no hash tag in these tests).
std::string redisson_channel(std::string_view key);

// tryLockInnerAsync as an EVAL command: nil = acquired, else the holder's PTTL.
std::vector<std::string> redisson_lock_command(std::string_view key, std::string_view field = kJavaField,
                                               std::string_view lease_ms = "60000");
// unlockInnerAsync (3.22 layout) as an EVAL command, announcing with `publish`: "publish" as on one
// server, "spublish" as Redisson >= 3.22 does on a Redis Cluster. nil = not held by `field`,
// 0 = re-entries remain, 1 = deleted and announced.
std::vector<std::string> redisson_unlock_command(std::string_view key, std::string_view field = kJavaField,
                                                 std::string_view publish = "publish");

// One subscriber connection: `subscribe` ("SUBSCRIBE" or "SSUBSCRIBE") to `channel`, on a unix
// socket path or a 127.0.0.1 TCP port. Reads time out after 10 s.
class PeerSubscriber {
 public:
  PeerSubscriber(const std::string& unix_path, std::string_view subscribe, const std::string& channel);
  PeerSubscriber(int tcp_port, std::string_view subscribe, const std::string& channel);
  ~PeerSubscriber();
  PeerSubscriber(const PeerSubscriber&) = delete;
  PeerSubscriber& operator=(const PeerSubscriber&) = delete;

  // Whether the subscription was confirmed.
  bool subscribed() const { return subscribed_; }
  // The next message's payload, or nullopt after the 10 s timeout.
  std::optional<std::string> next_message();

 private:
  void subscribe(std::string_view command, const std::string& channel);
  redisContext* context_ = nullptr;
  bool subscribed_ = false;
};

}  // namespace lockbridge::testing
