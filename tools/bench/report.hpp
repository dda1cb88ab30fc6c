// A bench result as JSON (the contract README.md documents) and as a readable table.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "runner.hpp"

namespace lockbridge::tools::bench {

// "token", "legacy faithful", "legacy hardened".
std::string strategy_label(const BenchConfig& config);

nlohmann::ordered_json to_json(const BenchResult& result);
void print_table(std::ostream& out, const BenchResult& result);

double acquisitions_per_s(const BenchResult& result) noexcept;
// `value` with `decimals` digits after the point; "-" for none.
std::string fixed(double value, int decimals);
std::string fixed(const std::optional<double>& value, int decimals);

// A figure a run may not have (no samples): the number, or null.
nlohmann::ordered_json optional_number(const std::optional<double>& value);

// "123.4 us (4.1x)": a latency and its multiple of the round trip; "-" when there is none.
std::string latency_cell(const std::optional<double>& us, double rtt_us);
// "12.3 us": a duration that is not a wait (so no multiple of the round trip); "-" when there is none.
std::string micros_cell(const std::optional<double>& us);

}  // namespace lockbridge::tools::bench
