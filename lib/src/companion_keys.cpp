#include "companion_keys.hpp"

namespace lockbridge::detail {

std::string_view hash_tag(std::string_view key) noexcept {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::string companion_name(std::string_view key, std::string_view suffix) {
  std::string name;
  if (hash_tag(key).size() != key.size() || key.find('}') != std::string_view::npos) {
    name.reserve(key.size() + suffix.size());
    name.append(key);
  } else {
    name.reserve(key.size() + suffix.size() + 2);
    name.append("{").append(key).append("}");
  }
  return name.append(suffix);
}

std::string release_channel(std::string_view key) { return companion_name(key, ":lockbridge:released"); }
std::string fence_counter(std::string_view key) { return companion_name(key, ":lockbridge:fence"); }
std::string fair_queue(std::string_view key) { return companion_name(key, ":lockbridge:queue"); }
std::string fair_deadlines(std::string_view key) { return companion_name(key, ":lockbridge:queue-deadlines"); }

}  // namespace lockbridge::detail
