// lockbridge: the command-line tool. Dispatches to one subcommand per file.
#include <array>
#include <csignal>
#include <iostream>
#include <string_view>

#include "cli_common.hpp"
#include "key_text.hpp"
#include "subcommands.hpp"

namespace {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

constexpr std::array kSubcommands{
    Subcommand{"compare", "the main job: every strategy side by side over fixed workloads (table, JSON, chart)",
               lockbridge::tools::run_compare},
    Subcommand{"bench", "N clients on one key: latency, throughput, cost and safety of one strategy",
               lockbridge::tools::run_bench},
    Subcommand{"audit", "what lock keys sit in a Redis: classes, stale leftovers, locks that never free themselves",
               lockbridge::tools::run_audit},
    Subcommand{"inspect", "one key: its lock class, holder, and remaining lease by Redis TIME and by this clock",
               lockbridge::tools::run_inspect},
    Subcommand{"watch", "a live view of the lock keys matching a pattern: holders, leases, waiters, fences",
               lockbridge::tools::run_watch},
    Subcommand{"convert", "rewrite live lock keys legacy <-> token, journalled, with --rollback",
               lockbridge::tools::run_convert},
    Subcommand{"hold", "acquire a lock, hold it, release it (for scripts and interop tests)",
               lockbridge::tools::run_hold},
    Subcommand{"demo", "lock and unlock with every strategy, showing what each writes", lockbridge::tools::run_demo},
};

void print_help(std::ostream& out) {
  out << "Usage: lockbridge <command> [options]   (lockbridge <command> --help for its options)\n\n"
         "Redis distributed locks: legacy SETNX+GETSET (jedis-lock compatible) and token strategies.\n\nCommands:\n";
  for (const auto& command : kSubcommands) out << "  " << command.name << "\t" << command.summary << "\n";
  out << "\nWithout --url and LOCKBRIDGE_URL, commands start a private redis-server for their own use.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (e.g. `lockbridge hold ... | head -1`) must not kill us before we release; a
  // file-size limit (ulimit -f) must fail the write (EFBIG, exit 5) rather than kill us mid-run.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    print_help(std::cerr);
    return lockbridge::tools::kExitUsage;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_help(std::cout);
    return lockbridge::tools::kExitOk;
  }
  if (first == "--version") {
    std::cout << "lockbridge " << lockbridge::tools::version() << "\n";
    return lockbridge::tools::kExitOk;
  }
  for (const auto& command : kSubcommands) {
    // Every subcommand runs inside the one error guard: its exceptions become a message and an
    // exit code, and a stdout that could not be written is an error too.
    if (command.name == first)
      return lockbridge::tools::guarded(command.name, [&] { return command.run(argc - 1, argv + 1); });
  }
  std::cerr << "lockbridge: unknown command '" << lockbridge::tools::terminal_text(first) << "'\n\n";
  print_help(std::cerr);
  return lockbridge::tools::kExitUsage;
}
