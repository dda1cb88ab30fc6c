#include "core/lock_target.hpp"

namespace lockbridge::detail {

std::string lock_line_name(const RedisUrl& url, std::span<const std::string> keys) {
  // Sentinel, Redlock and Cluster Clients are named by their node lists (and master name).
  std::string name = url.topology != RedisUrl::Topology::single          ? url.redacted()
                     : url.transport == RedisUrl::Transport::unix_socket ? "unix:" + url.socket_path
                                                                         : url.host + ":" + std::to_string(url.port);
  name.append("/").append(std::to_string(url.db));
  // Each key with its length: no two key lists give one name, whatever bytes the keys hold.
  for (const std::string& key : keys) name.append("\n").append(std::to_string(key.size())).append(":").append(key);
  return name;
}

}  // namespace lockbridge::detail
