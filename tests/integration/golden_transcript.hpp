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

}  // namespace lockbridge::testing
