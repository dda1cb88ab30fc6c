// What `lockbridge watch` reads of each lock key in a frame: the key's own read (audit's sample and
// class), its waiters (subscribers of its release channels, waiters queued in Redis, starving
// ones) and its fence. Read batch by batch: a frame of a million keys is never held in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/classify.hpp"
#include "lockbridge/client.hpp"

namespace lockbridge::tools::watch {

// One lock key in a frame.
struct KeyView {
  audit::KeySample sample;
  audit::Classification found;
  std::int64_t server_now_ms = 0;
  std::int64_t subscribers = 0;  // connections subscribed to its release channel(s): waiting processes
  std::int64_t queued = 0;       // waiters in its Redis queues (notify's waiter queue, fair mode's)
  std::int64_t starving = 0;     // queued waiters whose starving time has passed (never more than queued)
  std::optional<std::int64_t> fence;

  // A Redisson fair lock's queue counts its own waiters (its length); lockbridge's locks count
  // those subscribed or queued in their companion keys.
  std::int64_t waiters() const {
    if (found.lock_class == audit::LockClass::redisson_fair_queue) return std::max<std::int64_t>(0, sample.size);
    return std::max(subscribers, queued);
  }
};

// The preset a legacy key was written by ("hardened" sets a safety TTL, jedis-lock never does);
// empty for other classes.
std::string_view preset_of(const KeyView& view);

// Every lock key matching `pattern` on every master, SCAN batch by SCAN batch (`batch_size` keys
// each): `each_batch` gets the batch's lock keys (companion keys and other keys left out), read
// in two pipelined round trips. Stops early when interrupted().
void for_each_batch(const std::vector<Client>& masters, const std::string& pattern, int batch_size,
                    const std::function<void(std::vector<KeyView>&)>& each_batch);

// The JSON line of a key in frame `frame` (README.md documents its fields).
nlohmann::ordered_json json_of(const KeyView& view, std::uint64_t frame);

}  // namespace lockbridge::tools::watch
