#include "commandstats.hpp"

#include <array>
#include <charconv>

#include "replies.hpp"

namespace lockbridge::tools::bench {
namespace {
constexpr std::string_view kPrefix = "cmdstat_";
// The bench's own commands, and the cluster map reads (topology, not locking).
constexpr std::array<std::string_view, 6> kBenchOwn{"incr", "decr", "info", "ping", "cluster|nodes", "cluster|slots"};
}  // namespace

CommandCounts parse_commandstats(std::string_view info) {
  CommandCounts counts;
  while (!info.empty()) {
    const std::size_t eol = info.find('\n');
    std::string_view line = info.substr(0, eol);
    info = eol == std::string_view::npos ? std::string_view() : info.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.starts_with(kPrefix)) continue;
    const std::size_t colon = line.find(':');
    const std::size_t calls = line.find("calls=", colon);
    if (colon == std::string_view::npos || calls == std::string_view::npos) continue;
    std::uint64_t value = 0;
    const char* first = line.data() + calls + 6;
    if (std::from_chars(first, line.data() + line.size(), value).ec != std::errc()) continue;
    counts[std::string(line.substr(kPrefix.size(), colon - kPrefix.size()))] = value;
  }
  return counts;
}

CommandCounts read_commandstats(const Client& client) {
  // Every master's counts added up: on a cluster the lock key lives on its slot's master, which
  // INFO (a node command) would not reach; on Redlock every master serves every lock.
  CommandCounts sum;
  for (const Client& master : client.masters()) {
    for (const auto& [name, calls] :
         parse_commandstats(string_reply(master.command({"INFO", "commandstats"}), {"INFO"})))
      sum[name] += calls;
  }
  return sum;
}

std::optional<CommandCounts> lock_commands_between(const CommandCounts& before, const CommandCounts& after) {
  for (const auto& [name, calls] : before) {
    if (!after.contains(name)) return std::nullopt;
  }
  CommandCounts delta;
  for (const auto& [name, calls] : after) {
    const auto old = before.find(name);
    const std::uint64_t previous = old == before.end() ? 0 : old->second;
    if (calls < previous) return std::nullopt;
    bool own = false;
    for (const auto bench_command : kBenchOwn) own = own || name == bench_command;
    if (!own && calls > previous) delta[name] = calls - previous;
  }
  return delta;
}

std::uint64_t total(const CommandCounts& counts) {
  std::uint64_t sum = 0;
  for (const auto& [name, calls] : counts) sum += calls;
  return sum;
}

}  // namespace lockbridge::tools::bench
