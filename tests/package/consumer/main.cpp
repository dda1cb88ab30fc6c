// Uses the installed headers and libraries: a malformed URL must be a lockbridge::Error, from the
// library and through the compat layer (lockbridge::compat) alike. Needs no Redis: nothing
// connects before the first command.
#include <lockbridge/compat/jedis_lock.hpp>
#include <lockbridge/lockbridge.hpp>
#ifdef LOCKBRIDGE_CONSUMER_PROMETHEUS
#include <lockbridge/prometheus.hpp>
#endif

#include <iostream>

int main() {
  try {
    lockbridge::Client client("redis://host:notaport");
  } catch (const lockbridge::Error& error) {
    std::cout << "lockbridge " << LOCKBRIDGE_VERSION << ": " << error.what() << "\n";
    if (error.errc() != lockbridge::Errc::bad_option) return 1;
    const lockbridge::Client unused("redis://127.0.0.1:1");
    const lockbridge::compat::JedisLock lock(unused, "consumer-lock");
    std::cout << "compat: JedisLock on '" << lock.getLockKey() << "'\n";
#ifdef LOCKBRIDGE_CONSUMER_PROMETHEUS
    lockbridge::PrometheusMetrics metrics;
    lockbridge::ClientOptions observed;
    observed.observer = metrics.observer();
    metrics.watch(lockbridge::Client("redis://127.0.0.1:1", observed));
    std::cout << "prometheus: metrics registry ready\n";
#endif
    return lock.getLockKey() == "consumer-lock" ? 0 : 1;
  }
  return 1;
}
