// lockbridge audit: what lock keys sit in a live Redis (docs/audit.md). Read-only: it never
// changes a key.
#include <chrono>
#include <iostream>
#include <optional>
#include <sstream>

#include "audit/eviction.hpp"
#include "audit/scanner.hpp"
#include "audit/tally.hpp"
#include "cli_common.hpp"
#include "output_file.hpp"
#include "scan_progress.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge audit [--url URL] [--match PATTERN] [--type-hint "
    "none|legacy-ms|legacy-seconds|legacy-uuid-ms|token|redisson|semaphore|latch]\n"
    "                 [--batch N] [--far-future MS] [--json] [--details FILE] [--fail-on "
    "stale,no-ttl,bad-value,eviction,...]\n\n"
    "Walks the keys matching PATTERN with SCAN and classifies each: legacy_ms, legacy_seconds,\n"
    "legacy_uuid_ms, legacy_forever, token, redisson, redisson_rwlock, redisson_fair_queue,\n"
    "redisson_semaphore, redisson_latch, python_redis_lock or other; flags stale, no_ttl,\n"
    "far_future, bad_value, wrong_type. Says whether each server's maxmemory-policy may evict lock\n"
    "keys (--fail-on eviction: it may, or INFO cannot tell). Changes nothing. Progress goes to stderr.";
constexpr ExitMeanings kExits{
    .ok = "nothing named by --fail-on found", .findings = "something was", .files = "details, stdout"};

// What --fail-on names: key flags, and "eviction" (a server that may evict lock keys, or cannot
// tell).
struct FailOn {
  unsigned flags = 0;
  bool eviction = false;
};

FailOn fail_on_from(const std::string& list) {
  FailOn fail_on;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) continue;
    if (name == "eviction") {
      fail_on.eviction = true;
      continue;
    }
    const auto flag = audit::flag_from_string(name);
    if (!flag) {
      throw Error(Errc::bad_option, "--fail-on: unknown flag '" + name +
                                        "' (stale, no-ttl, far-future, bad-value, wrong-type, eviction)");
    }
    fail_on.flags |= static_cast<unsigned>(*flag);
  }
  return fail_on;
}

}  // namespace

int run_audit(int argc, char** argv) {
  po::options_description options("audit options", kHelpColumns, kHelpColumns / 2);
  add_url_option(options);
  add_far_future_option(options);
  add_batch_option(options, "one pipelined round trip each");
  options.add_options()("match", po::value<std::string>()->default_value("*"), "SCAN MATCH pattern")(
      "type-hint", po::value<std::string>()->default_value("none"),
      "the keys matched are locks of this kind: a value that does not parse is bad_value, another type wrong_type")(
      "details", po::value<std::string>(), "write one JSON line per lock key to FILE")(
      "fail-on", po::value<std::string>()->default_value(""), "comma-separated flags that make the exit status 4");
  add_json_option(options, "one JSON summary object");
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, {}, vm)) return *done;
  audit::ClassifyOptions classify_options;
  classify_options.hint = choice_option(audit::kTypeHintNames, "type-hint", vm["type-hint"].as<std::string>());
  classify_options.far_future = far_future_option(vm);
  const FailOn fail_on = fail_on_from(vm["fail-on"].as<std::string>());
  const int batch_size = batch_option(vm);
  const std::string pattern = scan_pattern(vm, "match", "--match");
  std::optional<OutputFile> details;
  if (vm.count("details")) {
    const NamedFile file{"--details", vm["details"].as<std::string>()};
    check_files({}, {file});
    details.emplace(file, kOwnerOnly);  // lock values (tokens), as convert's
  }

  const SubcommandRedis redis(vm);
  // Every master of a cluster (SCAN sees one server's keys), only masters: a replica's keys are
  // its master's.
  const std::vector<Client> masters = redis.client().masters();
  std::vector<audit::Eviction> eviction;
  for (const Client& master : masters) eviction.push_back(audit::read_eviction(master));
  ScanProgress progress("audit", total_keys(masters));
  audit::Tally tally;
  std::vector<audit::KeySample> batch;
  std::int64_t server_now_ms = 0;
  for (const Client& master : masters) {
    audit::KeyScanner scanner(master, pattern, batch_size);
    while (!interrupted() && scanner.next(batch, server_now_ms)) {
      for (const audit::KeySample& sample : batch) {
        const audit::Classification found = audit::classify(sample, server_now_ms, classify_options);
        tally.add(sample, found, server_now_ms);
        if (details && found.lock_class != audit::LockClass::other) {
          details->stream() << dump_line(audit::details_line(sample, found)) << '\n';
        }
      }
      // A --details line that could not be written stops the scan here, not at its end.
      if (details) details->check();
      progress.update(tally.total());
    }
  }
  const double seconds = progress.seconds();
  if (vm.count("json")) {
    nlohmann::ordered_json summary = tally.to_json(seconds);
    summary["eviction"] = audit::to_json(eviction);
    std::cout << dump_line(summary) << std::endl;
  } else {
    tally.print(std::cout, seconds);
    audit::print(std::cout, eviction);
  }
  // A partial listing would read as keys gone when compared with the last run's: an interrupted
  // run leaves the file as it was.
  if (details) details->finish(!interrupted(), "audit");
  if (interrupted()) return kExitInterrupted;
  const bool found = tally.any(fail_on.flags) || (fail_on.eviction && audit::any_not_known_safe(eviction));
  return found ? kExitFindings : kExitOk;
}

}  // namespace lockbridge::tools
