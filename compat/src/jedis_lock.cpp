#include "lockbridge/compat/jedis_lock.hpp"

#include <utility>

namespace lockbridge::compat {

namespace {
MutexOptions jedis_lock_options(std::chrono::milliseconds timeout, std::chrono::milliseconds lease) {
  MutexOptions options = MutexOptions::jedis_lock_1_0();
  options.lease = lease;
  if (timeout >= std::chrono::milliseconds::zero()) options.acquire_timeout = timeout;
  return options;
}
}  // namespace

JedisLock::JedisLock(Client client, std::string lockKey, std::chrono::milliseconds timeoutMsecs,
                     std::chrono::milliseconds expireMsecs)
    : client_(std::move(client)),
      timeout_(timeoutMsecs),
      held_(std::move(lockKey), jedis_lock_options(timeoutMsecs, expireMsecs)) {}

JedisLock::JedisLock(std::string lockKey, std::chrono::milliseconds timeoutMsecs, std::chrono::milliseconds expireMsecs)
    : timeout_(timeoutMsecs), held_(std::move(lockKey), jedis_lock_options(timeoutMsecs, expireMsecs)) {}

bool JedisLock::acquire() {
  if (!client_) throw Error(Errc::bad_option, "JedisLock '" + held_.key() + "' has no client: use acquire(client)");
  return acquire(*client_);
}

bool JedisLock::acquire(const Client& client) { return held_.acquire(client, timeout_); }

void JedisLock::release() noexcept { (void)held_.release(); }

void JedisLock::release(const Client& /*client: the acquiring Client's server*/) noexcept { (void)held_.release(); }

}  // namespace lockbridge::compat
