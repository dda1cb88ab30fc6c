#include "scan_progress.hpp"

#include <iostream>

#include "replies.hpp"

namespace lockbridge::tools {

long long total_keys(const std::vector<Client>& masters) {
  long long total = 0;
  for (const Client& master : masters) total += integer_reply(master.command({"DBSIZE"}), {"DBSIZE"});
  return total;
}

double ScanProgress::seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void ScanProgress::update(std::uint64_t scanned) {
  const auto now = Clock::now();
  if (now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  const double rate = static_cast<double>(scanned) / seconds();
  std::cerr << command_ << ": " << scanned << " keys scanned (" << static_cast<long long>(rate) << "/s)";
  if (rate > 0 && dbsize_ > static_cast<long long>(scanned)) {
    std::cerr << ", at most "
              << static_cast<long long>((static_cast<double>(dbsize_) - static_cast<double>(scanned)) / rate) + 1
              << " s left";
  }
  std::cerr << std::endl;
}

}  // namespace lockbridge::tools
