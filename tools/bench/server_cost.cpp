#include "server_cost.hpp"

#include <array>
#include <charconv>

#include "replies.hpp"

namespace lockbridge::tools::bench {
namespace {
constexpr std::string_view kPrefix = "cmdstat_";
// The bench's own commands, and the cluster map reads (topology, not locking).
constexpr std::array<std::string_view, 8> kBenchOwn{"incr",          "decr",         "incrby", "decrby",
                                                   "info",          "ping",         "cluster|nodes",
                                                   "cluster|slots"};

// Calls `visit` with the text of INFO `section` of every master `client` reaches: on a cluster
// the lock key lives on its slot's master, which INFO (a node command) would not reach; on Redlock
// every master serves every lock.
template <typename Visit>
void for_each_master_info(const Client& client, const char* section, Visit visit) {
  for (const Client& master : client.masters()) visit(string_reply(master.command({"INFO", section}), {"INFO"}));
}
}  // namespace

CommandCounts parse_commandstats(std::string_view info) {
  CommandCounts counts;
  for_each_info_field(info, [&counts](std::string_view field, std::string_view value) {
    const std::size_t calls = value.find("calls=");
    if (!field.starts_with(kPrefix) || calls == std::string_view::npos) return;
    std::uint64_t number = 0;
    if (std::from_chars(value.data() + calls + 6, value.data() + value.size(), number).ec != std::errc()) return;
    counts[std::string(field.substr(kPrefix.size()))] = number;
  });
  return counts;
}

CommandCounts read_commandstats(const Client& client) {
  CommandCounts sum;
  for_each_master_info(client, "commandstats", [&sum](const std::string& info) {
    for (const auto& [name, calls] : parse_commandstats(info)) sum[name] += calls;
  });
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

std::optional<double> parse_cpu_seconds(std::string_view info) {
  std::optional<double> user;
  std::optional<double> system;
  for_each_info_field(info, [&](std::string_view field, std::string_view value) {
    double seconds = 0;
    if (std::from_chars(value.data(), value.data() + value.size(), seconds).ec != std::errc() || seconds < 0) return;
    if (field == "used_cpu_user") user = seconds;
    if (field == "used_cpu_sys") system = seconds;
  });
  if (!user || !system) return std::nullopt;
  return *user + *system;
}

std::optional<double> read_cpu_seconds(const Client& client) {
  std::optional<double> sum = 0.0;
  for_each_master_info(client, "cpu", [&sum](const std::string& info) {
    const auto seconds = parse_cpu_seconds(info);
    sum = sum && seconds ? std::optional<double>(*sum + *seconds) : std::nullopt;
  });
  return sum;
}

std::uint64_t total(const CommandCounts& counts) {
  std::uint64_t sum = 0;
  for (const auto& [name, calls] : counts) sum += calls;
  return sum;
}

}  // namespace lockbridge::tools::bench
