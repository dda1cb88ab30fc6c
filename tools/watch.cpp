// lockbridge watch PATTERN: a live view, like top, of the lock keys matching PATTERN: class,
// holder, remaining lease by Redis TIME, waiters, queue, starving waiters, fence. Every master of
// a cluster; read-only (SCAN, reads, PUBSUB NUMSUB/SHARDNUMSUB: never a write).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "audit/classify.hpp"
#include "audit/scanner.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "lock_view.hpp"
#include "lockbridge/lock_keys.hpp"
#include "replies.hpp"
#include "subcommands.hpp"

namespace lockbridge::tools {
namespace {

constexpr std::string_view kUsage =
    "lockbridge watch PATTERN [--url URL] [--interval MS] [--once] [--json] [--batch N]\n\n"
    "A live view of the lock keys matching PATTERN (SCAN's MATCH), refreshed every --interval:\n"
    "class, holder, remaining lease by Redis TIME, waiters (subscribers of the key's release\n"
    "channel, and waiters queued in Redis), starving waiters and the fence. Sorted by waiters.\n"
    "Every master of a cluster. Never writes. --once prints one frame; --json prints one JSON line\n"
    "per key per frame. --batch: keys per SCAN (larger: fewer round trips in a large keyspace).\n"
    "Exit status: 0, 2 bad usage, 3 Redis error, 5 stdout could not be written, 130 interrupted.";

// One lock key in a frame.
struct KeyView {
  audit::KeySample sample;
  audit::Classification found;
  std::int64_t server_now_ms = 0;
  std::int64_t subscribers = 0;  // connections subscribed to its release channel(s): waiting processes
  std::int64_t queued = 0;       // waiters in its Redis queues (notify's waiter queue, fair mode's)
  std::int64_t starving = 0;     // queued waiters whose starving time has passed
  std::optional<std::int64_t> fence;

  std::int64_t waiters() const { return std::max(subscribers, queued); }
};

// The preset a legacy key was written by: the hardened one sets a safety TTL, jedis-lock never does.
std::string_view preset_of(const KeyView& view) {
  switch (view.found.lock_class) {
    case audit::LockClass::legacy_ms:
    case audit::LockClass::legacy_seconds:
    case audit::LockClass::legacy_uuid_ms:
      return view.sample.pttl_ms >= 0 ? "hardened" : "faithful";
    default:
      return "";
  }
}

// "<deadline> <starving at>" entries whose starving time has passed by `now_ms`.
std::int64_t count_starving(const Reply& times, std::int64_t now_ms) {
  std::int64_t starving = 0;
  for (const Reply& entry : times.elements) {
    const auto space = entry.str.find(' ');
    if (space == std::string::npos) continue;  // fair mode's entries: no starving time
    try {
      if (std::stoll(entry.str.substr(space + 1)) <= now_ms) ++starving;
    } catch (const std::exception&) {  // not ours to judge
    }
  }
  return starving;
}

std::int64_t subscriber_count(const Reply& reply) {
  // PUBSUB NUMSUB / SHARDNUMSUB: [channel, count, channel, count ...]
  std::int64_t total = 0;
  for (std::size_t i = 1; i < reply.elements.size(); i += 2) total += reply.elements[i].integer;
  return total;
}

// The waiters, queue and fence of each key, read from `master` in one pipelined round trip.
void read_companions(const Client& master, std::vector<KeyView>& views) {
  if (views.empty()) return;
  constexpr std::size_t kPerKey = 6;
  std::vector<std::vector<std::string>> commands;
  commands.reserve(views.size() * kPerKey);
  for (const KeyView& view : views) {
    const LockKeyNames names = lock_key_names(view.sample.key);
    commands.push_back({"PUBSUB", "SHARDNUMSUB", names.release_channel, names.redisson_channel});
    commands.push_back({"PUBSUB", "NUMSUB", names.redisson_channel});
    commands.push_back({"LLEN", names.waiter_queue});
    commands.push_back({"LLEN", names.fair_queue});
    commands.push_back({"HVALS", names.waiter_times});
    commands.push_back({"GET", names.fence_counter});
  }
  const std::vector<Reply> replies = master.pipeline(commands);
  for (std::size_t i = 0; i < views.size(); ++i) {
    KeyView& view = views[i];
    const Reply* reply = &replies[i * kPerKey];
    // A companion of another type (someone else's key) is not ours to count: left at zero.
    if (reply[0].kind == Reply::Kind::array) view.subscribers += subscriber_count(reply[0]);
    if (reply[1].kind == Reply::Kind::array) view.subscribers += subscriber_count(reply[1]);
    if (reply[2].kind == Reply::Kind::integer) view.queued += reply[2].integer;
    if (reply[3].kind == Reply::Kind::integer) view.queued += reply[3].integer;
    if (reply[4].kind == Reply::Kind::array) view.starving = count_starving(reply[4], view.server_now_ms);
    if (reply[5].kind == Reply::Kind::string) {
      try {
        view.fence = std::stoll(reply[5].str);
      } catch (const std::exception&) {
      }
    }
  }
}

// One frame: every lock key matching `pattern` on every master, most waiters first.
std::vector<KeyView> read_frame(const std::vector<Client>& masters, const std::string& pattern, int batch_size) {
  std::vector<KeyView> frame;
  for (const Client& master : masters) {
    std::vector<KeyView> views;
    audit::KeyScanner scanner(master, pattern, batch_size);
    std::vector<audit::KeySample> batch;
    std::int64_t server_now_ms = 0;
    while (!interrupted() && scanner.next(batch, server_now_ms)) {
      for (audit::KeySample& sample : batch) {
        const audit::Classification found = audit::classify(sample, server_now_ms, {});
        if (found.lock_class == audit::LockClass::other) continue;  // companions, and everything else
        KeyView view;
        view.sample = std::move(sample);
        view.found = found;
        view.server_now_ms = server_now_ms;
        views.push_back(std::move(view));
      }
    }
    read_companions(master, views);
    frame.insert(frame.end(), std::make_move_iterator(views.begin()), std::make_move_iterator(views.end()));
  }
  std::sort(frame.begin(), frame.end(), [](const KeyView& a, const KeyView& b) {
    return a.waiters() != b.waiters() ? a.waiters() > b.waiters() : a.sample.key < b.sample.key;
  });
  return frame;
}

nlohmann::ordered_json json_of(const KeyView& view, std::uint64_t frame) {
  const std::optional<std::int64_t> end = lease_end_of(view.sample, view.found, view.server_now_ms);
  nlohmann::ordered_json out;
  out["frame"] = frame;
  put_key(out, view.sample.key);  // binary-safe: key_b64 when not UTF-8
  out["class"] = to_string(view.found.lock_class);
  out["preset"] = preset_of(view).empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(preset_of(view));
  out["stale"] = view.found.has(audit::Flag::stale);
  put_holder(out, view.sample, view.found);
  out["lease_ms"] = end ? nlohmann::ordered_json(*end - view.server_now_ms) : nlohmann::ordered_json(nullptr);
  out["waiters"] = view.waiters();
  out["subscribers"] = view.subscribers;
  out["queued"] = view.queued;
  out["starving"] = view.starving;
  out["fence"] = view.fence ? nlohmann::ordered_json(*view.fence) : nlohmann::ordered_json(nullptr);
  return out;
}

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

void print_frame(std::ostream& out, const std::vector<KeyView>& frame, const std::string& pattern,
                 std::chrono::milliseconds interval, bool once) {
  out << "lockbridge watch " << pattern << ": " << frame.size() << " lock key" << (frame.size() == 1 ? "" : "s");
  if (!once) out << ", every " << interval.count() << " ms (Ctrl-C stops)";
  out << "\n";
  if (frame.empty()) return;
  out << std::left << std::setw(40) << "KEY" << std::setw(16) << "CLASS" << std::setw(10) << "PRESET" << std::setw(16)
      << "HOLDER" << std::right << std::setw(10) << "LEASE_MS" << std::setw(8) << "WAITERS" << std::setw(7) << "QUEUED"
      << std::setw(9) << "STARVING" << std::setw(8) << "FENCE"
      << "\n";
  for (const KeyView& view : frame) {
    const nlohmann::ordered_json json = json_of(view, 0);
    std::string key = quoted_key(view.sample.key);
    key = cut(key, 38);
    std::string lease = json["lease_ms"].is_null() ? "-" : std::to_string(json["lease_ms"].get<std::int64_t>());
    if (view.found.has(audit::Flag::stale)) lease += " stale";
    out << std::left << std::setw(40) << key << std::setw(16) << json["class"].get<std::string>() << std::setw(10)
        << (preset_of(view).empty() ? "-" : std::string(preset_of(view))) << std::setw(16)
        << holder_cell(json["holder"]) << std::right << std::setw(10) << lease << std::setw(8) << view.waiters()
        << std::setw(7) << view.queued << std::setw(9) << view.starving << std::setw(8)
        << (view.fence ? std::to_string(*view.fence) : "-") << "\n";
  }
}

}  // namespace

int run_watch(int argc, char** argv) {
  po::options_description options("watch options");
  add_url_option(options);
  options.add_options()("pattern", po::value<std::string>(), "SCAN MATCH pattern (positional)")(
      "interval", number_value("1000"), "ms between frames (10 to 1 day)")("once", "print one frame and exit")(
      "json", "one JSON line per key per frame");
  add_batch_option(options, "one SCAN round trip each");
  po::positional_options_description positional;
  positional.add("pattern", 1);
  po::variables_map vm;
  if (const auto done = parse_command_line(argc, argv, kUsage, options, positional, vm)) return *done;
  if (!vm.count("pattern")) throw po::error("missing PATTERN");
  const std::string pattern = vm["pattern"].as<std::string>();
  const auto interval =
      milliseconds_option(vm, "interval", std::chrono::milliseconds(10), std::chrono::milliseconds(24LL * 3600 * 1000));
  const bool once = vm.count("once") > 0;
  const bool json = vm.count("json") > 0;
  const int batch_size = batch_option(vm);
  // A terminal gets one frame in place of the last; a pipe or a file gets every frame in turn.
  const bool redraw = !once && !json && isatty(STDOUT_FILENO) == 1;

  const RedisTarget target(vm);
  const Client client = target.client();
  for (std::uint64_t frame_number = 1; !interrupted(); ++frame_number) {
    // Masters asked afresh each frame: a cluster may have failed over or resharded meanwhile.
    const std::vector<KeyView> frame = read_frame(client.masters(), pattern, batch_size);
    if (interrupted()) break;
    std::ostringstream text;
    if (json) {
      for (const KeyView& view : frame) text << dump_line(json_of(view, frame_number)) << "\n";
    } else {
      if (redraw) text << "\x1b[H\x1b[2J";
      print_frame(text, frame, pattern, interval, once);
      if (!redraw && !once) text << "\n";
    }
    std::cout << text.str() << std::flush;
    if (!std::cout) return kExitFile;
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
