// lockbridge convert: rewrites live lock keys from one format to the other (legacy timestamp <->
// token) without losing a lock, with a write-ahead journal and --rollback. docs/migration.md.
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include "audit/scanner.hpp"
#include "cli_common.hpp"
#include "convert/converter.hpp"
#include "key_text.hpp"
#include "lockbridge/identity.hpp"  // the token strategy's own token format
#include "output_file.hpp"
#include "scan_progress.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge convert --to token|legacy [--format ms|seconds|uuid-ms] [--match PATTERN] [--batch N] [--far-future "
    "MS]\n"
    "                   [--dry-run] [--delete-stale] [--details FILE] [--json] --journal FILE [--url URL]\n"
    "lockbridge convert --rollback JOURNAL [--details FILE] [--json] [--url URL]\n\n"
    "Rewrites the lock keys matching PATTERN: live legacy timestamp locks become token locks whose lease\n"
    "ends at their stamp's expiry (--to token), token locks become stamps of their lease's end, keeping\n"
    "the TTL (--to legacy). Each key is rewritten by a compare-and-set: a key changed since it was read\n"
    "is skipped and reported. Redisson, python-redis-lock and other keys are never touched. Every write\n"
    "is journalled (and synced) before it is sent; --rollback restores the keys that still hold what\n"
    "convert wrote. --dry-run writes nothing and prints one JSON line per lock key.\n"
    "After an error or an interrupt the summary says \"incomplete\" and has the counts so far.";
constexpr ExitMeanings kExits{
    .ok = "every lock key converted or already in the target format",
    .usage_detail = "(--rollback: another database than the journal's)",
    .findings = "some were skipped and reported (--rollback: nothing restored, as none of the keys held what "
                "convert wrote)",
    .files = "journal, details, stdout",
    .interrupt_detail = "(after the batch in flight)"};

convert::FreshIdentities kernel_random() { return {random_token, random_uuid}; }

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

// The summary: one JSON object with --json, else text. One cut short by an error or an interrupt
// says so ("incomplete"), with the counts so far.
void print_summary(const po::variables_map& vm, nlohmann::ordered_json summary, bool complete,
                   const std::function<void(std::ostream&)>& print_text) {
  if (!complete) summary["incomplete"] = true;
  if (vm.count("json")) {
    std::cout << dump_line(summary) << std::endl;
    return;
  }
  if (!complete) std::cout << "incomplete: the run stopped early; the counts so far:\n";
  print_text(std::cout);
}

std::optional<NamedFile> details_file(const po::variables_map& vm) {
  if (!vm.count("details")) return std::nullopt;
  return NamedFile{"--details", vm["details"].as<std::string>()};
}

int run_rollback(const po::variables_map& vm, const Client& client) {
  // Options of a conversion mean nothing here; taking them silently would suggest, say, that
  // --match limits what is rolled back.
  refuse_given(vm, {"to", "journal", "dry-run", "delete-stale", "format", "match", "batch", "far-future"},
               "is a conversion's: --rollback undoes the whole journal");
  const NamedFile journal_file{"--rollback", vm["rollback"].as<std::string>()};
  const std::optional<NamedFile> details_name = details_file(vm);
  check_files({journal_file}, details_name ? std::vector{*details_name} : std::vector<NamedFile>{});
  convert::JournalReader journal(journal_file.path);
  // The keys are the journal's database's: the same names in another are other keys. (A journal
  // of an older version names no database.)
  const nlohmann::json& header = journal.header();
  const std::string written_on = header.value("server", std::string("the server convert ran on"));
  if (const auto db = header.find("db");
      db != header.end() && db->is_number_integer() && db->get<std::int64_t>() != client.url().db) {
    throw Error(Errc::bad_option, "the journal '" + journal_file.path + "' was written on database " +
                                      std::to_string(db->get<std::int64_t>()) + " (" + written_on +
                                      "), and this rollback would write to database " +
                                      std::to_string(client.url().db) +
                                      ": give --url the journal's server and database");
  }
  std::optional<OutputFile> details;
  if (details_name) details.emplace(*details_name, kOwnerOnly);
  const ScanProgress clock("rollback", 0);
  convert::RollbackTally tally;
  const auto print = [&](bool complete) {
    print_summary(vm, tally.to_json(clock.seconds()), complete,
                  [&](std::ostream& out) { tally.print(out, clock.seconds()); });
  };
  bool complete = false;
  try {
    // A --details line that could not be written stops rollback before the next batch is sent.
    complete = convert::rollback(client, journal, details ? &details->stream() : nullptr, tally, [&] {
      if (details) details->check();
    });
  } catch (...) {
    print(false);
    throw;
  }
  print(complete);
  if (details) details->finish(complete, "convert");
  if (!complete) return kExitInterrupted;
  const auto count = [&tally](const char* outcome) {
    const auto found = tally.outcomes.find(outcome);
    return found == tally.outcomes.end() ? std::uint64_t{0} : found->second;
  };
  if (count("restored") == 0 && count("not_restored") > 0) {
    // Not a silent success: the likeliest cause of "not one key holds what convert wrote" is
    // another server or database than the journal's.
    const std::uint64_t keys = count("not_restored");
    std::cerr << "lockbridge convert: nothing was restored: " << (keys == 1 ? "the key" : "none of the keys")
              << " convert wrote (" << keys << ") " << (keys == 1 ? "no longer holds" : "holds")
              << " what it wrote. A rollback already ran, their holders changed them, or this is not the server the "
                 "journal was written on ("
              << terminal_text(written_on) << ")\n";
    return kExitFindings;
  }
  return kExitOk;
}

int run_convert(const po::variables_map& vm, const Client& client) {
  if (!vm.count("to")) throw po::error("missing --to token|legacy (or --rollback JOURNAL)");
  const convert::ConvertOptions options = convert_options_from(vm);
  const int batch_size = batch_option(vm);
  const bool dry_run = vm.count("dry-run") > 0;
  const std::string pattern = scan_pattern(vm, "match", "--match");
  if (!dry_run && !vm.count("journal")) throw Error(Errc::bad_option, "--journal FILE is required (or --dry-run)");
  if (dry_run) refuse_given(vm, {"journal"}, "is never written by --dry-run, which writes nothing");
  std::vector<NamedFile> outputs;
  if (!dry_run) outputs.push_back({"--journal", vm["journal"].as<std::string>()});
  const std::optional<NamedFile> details_name = details_file(vm);
  if (details_name) outputs.push_back(*details_name);
  check_files({}, outputs);
  std::optional<OutputFile> details;
  if (details_name) details.emplace(*details_name, kOwnerOnly);  // lock values: as private as the journal
  std::unique_ptr<convert::JournalWriter> journal;
  if (!dry_run) {
    journal = std::make_unique<convert::JournalWriter>(
        vm["journal"].as<std::string>(), nlohmann::ordered_json{{"lockbridge_version", version()},
                                                                {"to", vm["to"].as<std::string>()},
                                                                {"format", vm["format"].as<std::string>()},
                                                                {"match", pattern},
                                                                {"delete_stale", options.delete_stale},
                                                                {"server", client.url().redacted()},
                                                                {"db", client.url().db}});
  }
  // A dry run prints what it would do: to --details FILE if given, else to stdout.
  std::ostream* plan_out = details ? &details->stream() : (dry_run ? &std::cout : nullptr);

  // Every master of a cluster is scanned in turn; the writes go through `client`, which sends
  // each to the master serving its key.
  const std::vector<Client> masters = client.masters();
  ScanProgress progress("convert", total_keys(masters));
  convert::Converter converter(client, options, journal.get(), plan_out, kernel_random());
  const auto print = [&](bool complete) {
    nlohmann::ordered_json summary = converter.tally().to_json(progress.seconds());
    summary["dry_run"] = dry_run;
    print_summary(vm, summary, complete, [&](std::ostream& out) {
      if (dry_run) out << "dry run: nothing was written\n";
      converter.tally().print(out, progress.seconds());
    });
  };
  try {
    std::vector<audit::KeySample> batch;
    std::int64_t server_now_ms = 0;
    for (const Client& master : masters) {
      audit::KeyScanner scanner(master, pattern, batch_size, /*expire_time=*/true);
      while (!interrupted() && scanner.next(batch, server_now_ms)) {
        // A --details line that could not be written stops convert here, before this batch's
        // writes are journalled or sent.
        if (details) details->check();
        converter.convert_batch(batch, server_now_ms);
        progress.update(converter.tally().scanned);
      }
    }
  } catch (...) {
    print(false);
    throw;
  }
  print(!interrupted());
  if (details) details->finish(!interrupted(), "convert");
  if (interrupted()) return kExitInterrupted;
  return converter.tally().any_reported() ? kExitFindings : kExitOk;
}

}  // namespace

int run_convert(int argc, char** argv) {
  po::options_description options("convert options", kHelpColumns, kHelpColumns / 2);
  add_url_option(options);
  add_far_future_option(options);
  add_batch_option(options, "one journal sync, one round trip of writes");
  options.add_options()("to", po::value<std::string>(), "token or legacy: the format to convert lock keys to")(
      "format", po::value<std::string>()->default_value("ms"), "--to legacy: the stamp written (ms, seconds, uuid-ms)")(
      "match", po::value<std::string>()->default_value("*"), "SCAN MATCH pattern")(
      "dry-run", "write nothing; print one JSON line per lock key with what would be done")(
      "delete-stale", "--to token: delete legacy locks whose expiry has passed (otherwise reported)")(
      "journal", po::value<std::string>(), "the write-ahead journal to create (required unless --dry-run)")(
      "rollback", po::value<std::string>(), "restore the keys in this journal that still hold what convert wrote")(
      "details", po::value<std::string>(), "write one JSON line per lock key (or journalled write) to FILE");
  add_json_option(options, "one JSON summary object");
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, {}, vm)) return *done;
  const SubcommandRedis redis(vm);
  const Client client = redis.client();
  return vm.count("rollback") ? run_rollback(vm, client) : run_convert(vm, client);
}

}  // namespace lockbridge::tools
