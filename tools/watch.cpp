// lockbridge watch PATTERN: a live view, like top, of the lock keys matching PATTERN: class,
// holder, remaining lease by Redis TIME, waiters, queue, starving waiters, fence. Every master of
// a cluster; read-only (SCAN, reads, PUBSUB NUMSUB/SHARDNUMSUB: never a write).
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "audit/classify.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "subcommands.hpp"
#include "watch/frame.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge watch PATTERN [--url URL] [--interval MS | --once] [--top N | --json] [--batch N]\n\n"
    "A live view of the lock keys matching PATTERN (SCAN's MATCH), refreshed every --interval:\n"
    "class, holder, remaining lease by Redis TIME, waiters (subscribers of the key's release\n"
    "channel, and waiters queued in Redis), starving waiters and the fence. The table shows the\n"
    "--top keys with the most waiters. Every master of a cluster. Never writes. --once prints one\n"
    "frame; --json prints one JSON line per key per frame, every key, in SCAN order. Memory is one\n"
    "batch, whatever the keyspace. --batch: keys per SCAN (larger: fewer round trips in a large keyspace).";
constexpr ExitMeanings kExits{.ok = "--once printed its frame"};

// `text` in at most `width` bytes: cut with ".." at a character's start, never inside one.
std::string cut(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  std::size_t end = width - 2;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // a continuation byte
  return text.substr(0, end) + "..";
}

// The holder as a short cell: a token's first 12 characters, a UUID, Redisson's first field;
// terminal-safe (a holder is bytes from Redis), without JSON's quotes.
std::string holder_cell(const nlohmann::ordered_json& holder) {
  nlohmann::ordered_json text;
  if (holder.is_string()) text = holder;
  if (holder.is_array() && !holder.empty()) text = holder.front()["client_thread"];
  if (!text.is_string() || text.get<std::string>().empty()) return "-";
  const std::string shown = terminal_json(text);
  const std::string unquoted = shown.substr(1, shown.size() - 2);
  return cut(unquoted, 14);
}

// The display order: most waiters first, then by key.
bool shown_before(std::int64_t waiters_a, const std::string& key_a, std::int64_t waiters_b, const std::string& key_b) {
  return waiters_a != waiters_b ? waiters_a > waiters_b : key_a < key_b;
}

// The table's line for a key.
std::string row_of(const watch::KeyView& view) {
  const nlohmann::ordered_json json = watch::json_of(view, 0);
  std::string lease = json["lease_ms"].is_null() ? "-" : std::to_string(json["lease_ms"].get<std::int64_t>());
  if (view.found.has(audit::Flag::stale)) lease += " stale";
  const std::string_view preset = watch::preset_of(view);
  std::ostringstream row;
  row << std::left << std::setw(40) << cut(quoted_key(view.sample.key), 38) << std::setw(16)
      << json["class"].get<std::string>() << std::setw(10) << (preset.empty() ? "-" : std::string(preset))
      << std::setw(16) << holder_cell(json["holder"]) << std::right << std::setw(10) << lease << std::setw(8)
      << view.waiters() << std::setw(7) << view.queued << std::setw(9) << view.starving << std::setw(8)
      << (view.fence ? std::to_string(*view.fence) : "-") << "\n";
  return row.str();
}

// The `limit` keys a frame shows, of however many it has: a heap whose top is the first to go, so
// memory is `limit` rows, not the keyspace.
class TopRows {
 public:
  explicit TopRows(std::size_t limit) : limit_(limit) {}

  void offer(const watch::KeyView& view) {
    ++total_;
    const std::int64_t waiters = view.waiters();
    if (rows_.size() == limit_) {
      const Row& last = rows_.front();
      if (!shown_before(waiters, view.sample.key, last.waiters, last.key)) return;
      std::pop_heap(rows_.begin(), rows_.end(), order);
      rows_.pop_back();
    }
    rows_.push_back(Row{waiters, view.sample.key, row_of(view)});
    std::push_heap(rows_.begin(), rows_.end(), order);
  }

  std::uint64_t total() const noexcept { return total_; }
  // The rows in display order (once, at the frame's end).
  std::vector<std::string> take_lines() {
    std::sort_heap(rows_.begin(), rows_.end(), order);
    std::vector<std::string> lines;
    lines.reserve(rows_.size());
    for (Row& row : rows_) lines.push_back(std::move(row.line));
    rows_.clear();
    return lines;
  }

 private:
  struct Row {
    std::int64_t waiters;
    std::string key;
    std::string line;
  };
  static bool order(const Row& a, const Row& b) { return shown_before(a.waiters, a.key, b.waiters, b.key); }
  std::size_t limit_;
  std::uint64_t total_ = 0;
  std::vector<Row> rows_;
};

void print_frame(std::ostream& out, TopRows& top, const std::string& pattern, std::chrono::milliseconds interval,
                 bool once) {
  const std::vector<std::string> lines = top.take_lines();
  out << "lockbridge watch " << terminal_text(pattern) << ": " << top.total() << " lock key"
      << (top.total() == 1 ? "" : "s");
  if (lines.size() < top.total()) out << " (the " << lines.size() << " with the most waiters shown: --top N)";
  if (!once) out << ", every " << interval.count() << " ms (Ctrl-C stops)";
  out << "\n";
  if (lines.empty()) return;
  out << std::left << std::setw(40) << "KEY" << std::setw(16) << "CLASS" << std::setw(10) << "PRESET" << std::setw(16)
      << "HOLDER" << std::right << std::setw(10) << "LEASE_MS" << std::setw(8) << "WAITERS" << std::setw(7) << "QUEUED"
      << std::setw(9) << "STARVING" << std::setw(8) << "FENCE"
      << "\n";
  for (const std::string& line : lines) out << line;
}

// Rows a frame shows without --top: what fits the terminal, else kDefaultTop.
constexpr std::int64_t kDefaultTop = 100;
constexpr std::int64_t kMaxTop = 100000;
std::size_t default_top() {
  winsize size{};
  if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) {
    return std::max<std::size_t>(size.ws_row > 3 ? size.ws_row - 3 : 1, 5);
  }
  return kDefaultTop;
}

}  // namespace

int run_watch(int argc, char** argv) {
  po::options_description options("watch options", kHelpColumns, kHelpColumns / 2);
  add_url_option(options);
  options.add_options()("pattern", po::value<std::string>(), "SCAN MATCH pattern (positional)")(
      "interval", number_value("1000"), "ms between frames (10 to 1 day)")("once", "print one frame and exit")(
      "top", number_value(),
      "the table shows the N keys (1 to 100000) with the most waiters (default: what fits the terminal, else 100)");
  add_json_option(options, "one JSON line per key per frame, every key, in SCAN order");
  add_batch_option(options, "one SCAN round trip each");
  po::positional_options_description positional;
  positional.add("pattern", 1);
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, kExits, options, positional, vm)) return *done;
  if (!vm.count("pattern")) throw po::error("missing PATTERN");
  const std::string pattern = scan_pattern(vm, "pattern", "PATTERN");
  const auto interval =
      milliseconds_option(vm, "interval", std::chrono::milliseconds(10), std::chrono::milliseconds(24LL * 3600 * 1000));
  const bool once = vm.count("once") > 0;
  const bool json = vm.count("json") > 0;
  if (json && vm.count("top")) {
    throw Error(Errc::bad_option, "--top is the table's: --json prints every key (filter its lines instead)");
  }
  if (once && !vm["interval"].defaulted())
    throw Error(Errc::bad_option, "--interval is between frames: --once prints one");
  const std::size_t top =
      vm.count("top") ? static_cast<std::size_t>(count_option(vm, "top", 1, kMaxTop)) : default_top();
  const int batch_size = batch_option(vm);
  // A terminal gets one frame in place of the last; a pipe or a file gets every frame in turn.
  const bool redraw = !once && !json && isatty(STDOUT_FILENO) == 1;

  const SubcommandRedis redis(vm);
  const Client client = redis.client();
  for (std::uint64_t frame_number = 1; !interrupted(); ++frame_number) {
    // Masters asked afresh each frame: a cluster may have failed over or resharded meanwhile.
    const std::vector<Client> masters = client.masters();
    if (json) {
      // Streamed batch by batch: however many keys match, memory is one batch.
      watch::for_each_batch(masters, pattern, batch_size, [&](std::vector<watch::KeyView>& views) {
        std::string lines;
        for (const watch::KeyView& view : views) lines += dump_line(watch::json_of(view, frame_number)) + "\n";
        std::cout << lines;
      });
      std::cout << std::flush;
    } else {
      TopRows rows(top);
      watch::for_each_batch(masters, pattern, batch_size, [&](std::vector<watch::KeyView>& views) {
        for (const watch::KeyView& view : views) rows.offer(view);
      });
      if (interrupted()) break;
      std::ostringstream text;
      if (redraw) text << "\x1b[H\x1b[2J";
      print_frame(text, rows, pattern, interval, once);
      if (!redraw && !once) text << "\n";
      std::cout << text.str() << std::flush;
    }
    if (!std::cout) return kExitFile;
    if (interrupted()) break;
    if (once) return kExitOk;
    const auto wake = std::chrono::steady_clock::now() + interval;
    while (!interrupted() && std::chrono::steady_clock::now() < wake) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), wake - std::chrono::steady_clock::now()));
    }
  }
  return kExitInterrupted;
}

}  // namespace lockbridge::tools
