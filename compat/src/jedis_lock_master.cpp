#include "lockbridge/compat/jedis_lock_master.hpp"

#include <utility>

#include "lockbridge/identity.hpp"
#include "lockbridge/legacy_value.hpp"

namespace lockbridge::compat {

namespace {
MutexOptions master_options(std::chrono::milliseconds timeout, std::chrono::milliseconds lease, std::string uuid) {
  MutexOptions options = MutexOptions::jedis_lock_1_0();  // SETNX / GET / GETSET / DEL, polled every 100 ms
  options.legacy.format = LegacyFormat::uuid_ms;
  options.legacy.jedis_lock_master = true;
  // Fixed here, not per Mutex: every acquisition of this object (see HeldLock) is the same owner.
  options.legacy.owner = uuid.empty() ? random_uuid() : to_lower(uuid);
  options.lease = lease;
  if (timeout >= std::chrono::milliseconds::zero()) options.acquire_timeout = timeout;
  return options;
}
}  // namespace

JedisLockMaster::JedisLockMaster(Client client, std::string lockKey, std::chrono::milliseconds acquireTimeoutMillis,
                                 std::chrono::milliseconds expiryTimeMillis, std::string uuid)
    : client_(std::move(client)),
      timeout_(acquireTimeoutMillis),
      held_(std::move(lockKey), master_options(acquireTimeoutMillis, expiryTimeMillis, std::move(uuid))) {}

bool JedisLockMaster::acquire() { return held_.acquire(client_, timeout_); }

bool JedisLockMaster::renew() {
  const Reply current = client_.command({"GET", held_.key()});
  std::optional<std::string_view> value;
  if (!current.is_nil()) value = current.str;
  // Master judges expiry by this host's wall clock, as the strategy's attempts do.
  if (!jedis_lock_master_may_take(value, getLockUUID(), wall_clock_ms())) return false;
  return acquire();
}

void JedisLockMaster::release() noexcept { (void)held_.release(); }

std::int64_t JedisLockMaster::getLockExpiryTimeInMillis() const {
  if (!held_.held()) throw Error(Errc::bad_option, "JedisLockMaster '" + held_.key() + "' is not locked");
  return parse_legacy_value(held_.mutex()->value(), LegacyFormat::uuid_ms)->expiry_ms;
}

}  // namespace lockbridge::compat
