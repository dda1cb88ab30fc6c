// Golden command transcripts (compat/golden/<dir>/<name>.txt): what a lock sends, as recorded by
// MONITOR (CommandRecorder), compared with the file. One command per line, arguments separated by
// spaces; '#' lines are comments. An argument "{name}" is a placeholder: the test says what it
// accepts (the key, a stamp within a time window, a token of the right shape, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "redis_test_support.hpp"

namespace lockbridge::testing {

using Transcript = std::vector<std::vector<std::string>>;
using Accepts = std::function<bool(const std::string&)>;
using Placeholders = std::map<std::string, Accepts>;

Transcript load_golden(const std::string& dir, const std::string& name);
std::string show(const Transcript& transcript);

// `value` exactly.
Accepts exactly(std::string value);
// The whole argument matches the regular expression.
Accepts matching(std::string pattern);
// "<prefix><ms>", where ms is a legacy stamp now + lease + 1 for a `now` in [before, after].
Accepts stamp_between(std::int64_t before, std::int64_t after, std::int64_t lease, std::string prefix = "");

// Every command and argument of `recorded` as `golden` says, placeholders by `placeholders`.
void expect_matches(const Transcript& golden, const Transcript& recorded, const Placeholders& placeholders);

// A script's SHA1, as EVALSHA names it.
inline const Accepts kSha = matching("[0-9a-f]{40}");

// Loads every lockbridge script into the fixture server's script cache, as any server in use has
// them: a transcript shows the steady state. (On a server that has not seen a script, its first
// EVALSHA is answered NOSCRIPT and sent again as EVAL: LeaseLoss.ALostScriptCache... tests that.)
void preload_scripts();

// Runs `operation` between wall-clock readings and checks what it sent against the golden file;
// `placeholders(before, after)` says what the file's placeholders accept.
template <class Operation, class MakePlaceholders>
void expect_wire(const std::string& dir, const std::string& name, const std::string& key, Operation&& operation,
                 MakePlaceholders&& placeholders) {
  preload_scripts();
  CommandRecorder recorder(key);
  recorder.start();
  const std::int64_t before = wall_ms();
  operation();
  const std::int64_t after = wall_ms();
  expect_matches(load_golden(dir, name), recorder.stop(), placeholders(before, after));
}

}  // namespace lockbridge::testing
