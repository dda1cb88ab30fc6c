// What the locks of one Client share: the connection pool and the loaded scripts.
#pragma once

#include "connection_pool.hpp"
#include "script_runner.hpp"

namespace lockbridge::detail {

struct ClientState {
  ClientState(RedisUrl url, ClientOptions options) : pool(std::move(url), options) {}
  ConnectionPool pool;
  ScriptCache scripts;
};

}  // namespace lockbridge::detail
