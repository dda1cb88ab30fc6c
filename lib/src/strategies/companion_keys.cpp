#include "strategies/companion_keys.hpp"

#include "cluster/key_slot.hpp"
#include "lockbridge/lock_keys.hpp"
#include "strategies/redisson.hpp"

namespace lockbridge::detail {

std::string companion_name(std::string_view key, std::string_view suffix) {
  std::string name;
  if (hashed_part(key).size() != key.size() || key.find('}') != std::string_view::npos) {
    name.reserve(key.size() + suffix.size());
    name.append(key);
  } else {
    name.reserve(key.size() + suffix.size() + 2);
    name.append("{").append(key).append("}");
  }
  return name.append(suffix);
}

std::string release_channel(std::string_view key) { return companion_name(key, ":lockbridge:released"); }

std::string prefix_pattern(std::string_view prefix) {
  std::string pattern;
  for (const char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern + "*";
}
std::string fence_counter(std::string_view key) { return companion_name(key, ":lockbridge:fence"); }
std::string fair_queue(std::string_view key) { return companion_name(key, ":lockbridge:queue"); }
std::string fair_deadlines(std::string_view key) { return companion_name(key, ":lockbridge:queue-deadlines"); }
std::string waiter_queue(std::string_view key) { return companion_name(key, ":lockbridge:waiters"); }
std::string waiter_times(std::string_view key) { return companion_name(key, ":lockbridge:waiter-times"); }
std::string grant_record(std::string_view key) { return companion_name(key, ":lockbridge:grant"); }

}  // namespace lockbridge::detail

namespace lockbridge {

LockKeyNames lock_key_names(std::string_view key) {
  return LockKeyNames{detail::release_channel(key), detail::RedissonStrategy::channel_name(key),
                      detail::waiter_queue(key),    detail::waiter_times(key),
                      detail::fair_queue(key),      detail::fence_counter(key),
                      detail::fair_deadlines(key),  detail::grant_record(key),
                      detail::prefix_pattern(detail::release_channel(key) + ":")};
}

}  // namespace lockbridge
