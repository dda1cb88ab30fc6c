// Progress of a keyspace walk (audit, convert), once a second on stderr: keys scanned, rate and,
// from DBSIZE, a rough ETA (DBSIZE counts every key, MATCH or not, so the ETA is an upper bound).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "lockbridge/client.hpp"

namespace lockbridge::tools {

// DBSIZE summed over `masters` (Client::masters(): every master of a cluster).
long long total_keys(const std::vector<Client>& masters);

class ScanProgress {
 public:
  using Clock = std::chrono::steady_clock;
  ScanProgress(std::string command, long long dbsize) : command_(std::move(command)), dbsize_(dbsize) {}
  void update(std::uint64_t scanned);
  double seconds() const;

 private:
  const std::string command_;
  const long long dbsize_;
  const Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = Clock::now();
};

}  // namespace lockbridge::tools
