// What a run cost the server, from its own accounts read before and after the run: the commands
// (INFO commandstats; Redis counts the commands that scripts run as well as the EVALSHA that ran
// them) and the CPU time (INFO cpu). Both are the server's totals: on a server others use, their
// work counts too.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "lockbridge/client.hpp"

namespace lockbridge::tools::bench {

using CommandCounts = std::map<std::string, std::uint64_t>;  // lower-case name ("script|load") -> calls

// Parses the text of INFO commandstats; lines it does not understand are skipped.
CommandCounts parse_commandstats(std::string_view info);
// The counts of every master `client` reaches (Client::masters()), added up.
CommandCounts read_commandstats(const Client& client);

// Calls made between `before` and `after`, less the bench's own commands (INCR and DECR of the
// check key, INFO, PING). nullopt when the counters went backwards (the server restarted).
std::optional<CommandCounts> lock_commands_between(const CommandCounts& before, const CommandCounts& after);

std::uint64_t total(const CommandCounts& counts);

// The CPU time a server has used, user and system, in seconds, from the text of INFO cpu
// (used_cpu_user + used_cpu_sys: every thread of the server process, not the children it forks to
// save). nullopt when either field is missing (a server that does not report them).
std::optional<double> parse_cpu_seconds(std::string_view info);
// The CPU time of every master `client` reaches, added up; nullopt when one does not report it.
std::optional<double> read_cpu_seconds(const Client& client);

}  // namespace lockbridge::tools::bench
