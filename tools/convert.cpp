// lockbridge convert: rewrites live lock keys from one format to the other (legacy timestamp <->
// token) without losing a lock, with a write-ahead journal and --rollback. docs/migration.md.
#include <fstream>
#include <iostream>
#include <memory>

#include "audit/scanner.hpp"
#include "cli_common.hpp"
#include "convert/converter.hpp"
#include "random.hpp"  // the token strategy's own token format (lib/src, see CMakeLists.txt)
#include "scan_progress.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge convert --to token|legacy [--format ms|seconds|uuid-ms] [--match PATTERN] [--batch N] [--far-future MS]\n"
    "                   [--dry-run] [--delete-stale] [--details FILE] [--json] --journal FILE [--url URL]\n"
    "lockbridge convert --rollback JOURNAL [--details FILE] [--json] [--url URL]\n\n"
    "Rewrites the lock keys matching PATTERN: live legacy timestamp locks become token locks expiring\n"
    "when their stamp does (--to token), token locks become stamps of their expiry, keeping the TTL\n"
    "(--to legacy). Each key is rewritten by a compare-and-set: a key changed since it was read is\n"
    "skipped and reported. Redisson, python-redis-lock and other keys are never touched. Every write\n"
    "is journalled (and synced) before it is sent; --rollback restores the keys that still hold what\n"
    "convert wrote. --dry-run writes nothing and prints one JSON line per lock key.\n"
    "Exit status: 0 every lock key converted or already in the target format, 4 some were skipped\n"
    "and reported, 2 bad usage, 3 Redis error, 130 interrupted (after the batch in flight).";

convert::FreshIdentities kernel_random() { return {detail::random_token, detail::random_uuid}; }

convert::ConvertOptions convert_options_from(const po::variables_map& vm) {
  convert::ConvertOptions options;
  const std::string to = vm["to"].as<std::string>();
  if (to == "token") {
    options.to = convert::Target::token;
    if (!vm["format"].defaulted()) throw Error(Errc::bad_option, "--format names the stamp written by --to legacy");
  } else if (to == "legacy") {
    options.to = convert::Target::legacy;
  } else {
    throw Error(Errc::bad_option, "--to must be token or legacy");
  }
  const auto format = legacy_format_from_string(vm["format"].as<std::string>());
  if (!format) throw Error(Errc::bad_option, "--format must be ms, seconds or uuid-ms");
  options.format = *format;
  options.delete_stale = vm.count("delete-stale") > 0;
  options.classify.far_future = far_future_option(vm);
  return options;
}

std::unique_ptr<std::ofstream> open_details(const po::variables_map& vm) {
  if (!vm.count("details")) return nullptr;
  auto file = std::make_unique<std::ofstream>(vm["details"].as<std::string>());
  if (!*file) throw Error(Errc::bad_option, "cannot write --details file '" + vm["details"].as<std::string>() + "'");
  return file;
}

void close_details(std::ofstream* details) {
  if (details == nullptr) return;
  details->flush();
  if (!*details) throw Error(Errc::io, "writing the --details file failed");
}

int run_rollback(const po::variables_map& vm, const Client& client) {
  for (const char* option : {"to", "journal", "dry-run", "delete-stale"}) {
    if (vm.count(option) && !vm[option].defaulted()) {
      throw Error(Errc::bad_option, std::string("--rollback takes no --") + option);
    }
  }
  convert::JournalReader journal(vm["rollback"].as<std::string>());
  const auto details = open_details(vm);
  const ScanProgress clock("rollback", 0);
  const convert::RollbackTally tally = convert::rollback(client, journal, details.get());
  close_details(details.get());
  if (vm.count("json")) {
    std::cout << dump_line(tally.to_json(clock.seconds())) << std::endl;
  } else {
    tally.print(std::cout, clock.seconds());
  }
  return kExitOk;
}

int run_convert(const po::variables_map& vm, const Client& client) {
  if (!vm.count("to")) throw po::error("missing --to token|legacy (or --rollback JOURNAL)");
  const convert::ConvertOptions options = convert_options_from(vm);
  const bool dry_run = vm.count("dry-run") > 0;
  std::unique_ptr<convert::JournalWriter> journal;
  if (!dry_run) {
    if (!vm.count("journal")) throw Error(Errc::bad_option, "--journal FILE is required (or --dry-run)");
    journal = std::make_unique<convert::JournalWriter>(
        vm["journal"].as<std::string>(),
        nlohmann::ordered_json{{"lockbridge_version", version()},
                               {"to", vm["to"].as<std::string>()},
                               {"format", vm["format"].as<std::string>()},
                               {"match", vm["match"].as<std::string>()},
                               {"delete_stale", options.delete_stale}});
  }
  const auto details = open_details(vm);
  // A dry run prints what it would do: to --details FILE if given, else to stdout.
  std::ostream* plan_out = details ? static_cast<std::ostream*>(details.get()) : (dry_run ? &std::cout : nullptr);

  // Every master of a cluster is scanned in turn; the writes go through `client`, which sends
  // each to the master serving its key.
  const std::vector<Client> masters = client.masters();
  ScanProgress progress("convert", total_keys(masters));
  convert::Converter converter(client, options, journal.get(), plan_out, kernel_random());
  std::vector<audit::KeySample> batch;
  std::int64_t server_now_ms = 0;
  for (const Client& master : masters) {
    audit::KeyScanner scanner(master, vm["match"].as<std::string>(), vm["batch"].as<int>(), /*expire_time=*/true);
    while (!interrupted() && scanner.next(batch, server_now_ms)) {
      converter.convert_batch(batch, server_now_ms);
      progress.update(converter.tally().scanned);
    }
  }
  close_details(details.get());
  nlohmann::ordered_json summary = converter.tally().to_json(progress.seconds());
  summary["dry_run"] = dry_run;
  if (vm.count("json")) {
    std::cout << dump_line(summary) << std::endl;
  } else {
    if (dry_run) std::cout << "dry run: nothing was written\n";
    converter.tally().print(std::cout, progress.seconds());
  }
  if (interrupted()) return kExitInterrupted;
  return converter.tally().any_reported() ? kExitFindings : kExitOk;
}

int convert_command(int argc, char** argv) {
  po::options_description options("convert options");
  add_url_option(options);
  add_far_future_option(options);
  options.add_options()
      ("to", po::value<std::string>(), "token or legacy: the format to convert lock keys to")
      ("format", po::value<std::string>()->default_value("ms"), "--to legacy: the stamp written (ms, seconds, uuid-ms)")
      ("match", po::value<std::string>()->default_value("*"), "SCAN MATCH pattern")
      ("batch", po::value<int>()->default_value(1000), "SCAN COUNT: keys per batch (one journal sync, one round trip of writes)")
      ("dry-run", "write nothing; print one JSON line per lock key with what would be done")
      ("delete-stale", "--to token: delete legacy locks whose expiry has passed (otherwise reported)")
      ("journal", po::value<std::string>(), "the write-ahead journal to create (required unless --dry-run)")
      ("rollback", po::value<std::string>(), "restore the keys in this journal that still hold what convert wrote")
      ("details", po::value<std::string>(), "write one JSON line per lock key (or journalled write) to FILE")
      ("json", "print one JSON summary object");
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, options, {}, vm)) return *done;
  install_interrupt_handlers();
  const RedisTarget target(url_option(vm));
  const Client client(target.url());
  return vm.count("rollback") ? run_rollback(vm, client) : run_convert(vm, client);
}

}  // namespace

int run_convert(int argc, char** argv) {
  return guarded("convert", [&] { return convert_command(argc, argv); });
}

}  // namespace lockbridge::tools
