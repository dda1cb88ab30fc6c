// lockbridge demo: both strategies, lock and unlock through std::unique_lock, showing what each
// leaves in Redis and that a second owner is kept out. The README's first command runs it.
#include <iomanip>
#include <iostream>
#include <mutex>

#include "cli_common.hpp"
#include "key_text.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage = "lockbridge demo [--url URL]";
constexpr ExitMeanings kExits{.ok = "every strategy locked and unlocked"};

}  // namespace

int run_demo(int argc, char** argv) {
  po::options_description options("demo options", kHelpColumns, kHelpColumns / 2);
  add_url_option(options);
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, {}, vm)) return *done;
  const SubcommandRedis redis(vm);
  const Client client = redis.client();
  std::cout << "lockbridge " << version() << " demo on " << terminal_text(client.url().redacted())
            << (redis.embedded() ? " (embedded redis-server)" : "") << "\n\n";
  std::cout << std::left << std::setw(36) << "strategy" << std::setw(40) << "value in Redis while held" << std::setw(12)
            << "Redis TTL" << std::setw(14) << "2nd owner"
            << "after unlock\n";
  int failures = 0;
  for (const auto& variant : every_strategy()) {
    const std::string key = "lockbridge:demo:" + std::string(to_string(variant.options.strategy));
    Mutex first(client, key, variant.options);
    Mutex second(client, key, variant.options);
    LockInfo info;
    bool second_got_it = false;
    {
      std::unique_lock guard(first);
      info = first.inspect();
      second_got_it = second.try_lock();
    }
    const bool free_after = second.try_lock();
    if (free_after) second.unlock();
    failures += (second_got_it || !free_after || !info.held_by_me) ? 1 : 0;
    const std::string label =
        variant.peer.empty() ? variant.name : variant.name + " (" + std::string(variant.peer) + ")";
    std::cout << std::setw(36) << label << std::setw(40) << info.value << std::setw(12)
              << (info.ttl ? std::to_string(info.ttl->count()) + " ms" : std::string("none")) << std::setw(14)
              << (second_got_it ? "GOT IT (bug)" : "kept out") << (free_after ? "free" : "STILL HELD (bug)") << "\n";
  }
  std::cout << "\nNext: `lockbridge hold KEY --strategy legacy --preset faithful --for 5000 --json` "
               "holds a lock that Java jedis-lock 1.0 services respect.\n";
  return failures == 0 ? kExitOk : kExitRedis;
}

}  // namespace lockbridge::tools
