#include "core/announced_key.hpp"

#include "cluster/key_slot.hpp"
#include "lockbridge/error.hpp"
#include "strategies/strategy.hpp"

namespace lockbridge::detail {

AnnouncedKey announced_key(const Client& client, std::string key, std::string channel, std::string_view front,
                           ShardedSubscription sharding) {
  if (key.empty()) throw Error(Errc::bad_option, std::string(front) + ": key must not be empty");
  const std::shared_ptr<ClientState>& state = client.state();
  if (state->redlock()) throw Error(Errc::bad_option, std::string(front) + " does not run on a Redlock Client");
  const bool on_cluster = state->cluster != nullptr;
  if (on_cluster && key_slot(channel) != key_slot(key)) {
    throw Error(Errc::bad_option, describe(front, key) +
                                      ": on Redis Cluster its channel '" + channel +
                                      "' falls in another slot than the key (a key containing a brace); use a key "
                                      "without braces or with a hash tag its channel shares");
  }
  return AnnouncedKey{std::move(key),
                      ReleaseChannel{std::move(channel), sharded_on(sharding, on_cluster), /*payload_names_waiter=*/false},
                      client};
}

}  // namespace lockbridge::detail
