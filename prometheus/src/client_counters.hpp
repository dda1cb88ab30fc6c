// The counters a Client keeps itself (ClientStats), read at each scrape: Redis round trips,
// renewal round trips and dropped observer events, summed over the watched Clients.
#pragma once

#include <mutex>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "lockbridge/client.hpp"

namespace lockbridge::detail {

class ClientCounters final : public prometheus::Collectable {
 public:
  void watch(const Client& client);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable std::mutex mutex_;
  std::vector<Client> clients_;  // copies share the watched Client's state
};

}  // namespace lockbridge::detail
