#include "lockbridge/compat/simple_lock.hpp"

namespace lockbridge::compat {

SimpleLock::SimpleLock(Client client, std::string key, std::chrono::milliseconds timeoutMsecs,
                       std::chrono::milliseconds expireMsecs)
    : lock_(std::move(client), std::move(key), timeoutMsecs, expireMsecs) {}

}  // namespace lockbridge::compat
