// Redis commands per acquisition, from the server's own count: INFO commandstats before and after
// a run. Redis counts the commands that scripts run as well as the EVALSHA that ran them.
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

}  // namespace lockbridge::tools::bench
