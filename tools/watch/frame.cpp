#include "frame.hpp"

#include <algorithm>

#include "audit/scanner.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "lock_view.hpp"
#include "lockbridge/lock_keys.hpp"

namespace lockbridge::tools::watch {
namespace {

// "<deadline> <starving at> [<grant spec>]" entries whose starving time has passed by `now_ms`.
std::int64_t count_starving(const Reply& times, std::int64_t now_ms) {
  std::int64_t starving = 0;
  for (const Reply& entry : times.elements) {
    const std::string_view text = entry.str;
    const auto space = text.find(' ');
    if (space == std::string::npos) continue;  // an entry without a starving time
    const auto end = text.find(' ', space + 1);
    const auto at = whole_number(text.substr(space + 1, end == std::string_view::npos ? end : end - space - 1));
    if (at && *at <= now_ms) ++starving;  // anything else is not ours to judge
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
  constexpr std::size_t kPerKey = 7;
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
    // Each waiting Client listens on its own channel, the release channel + ":<tag>" (one
    // subscriber each): docs/design.md §10.2.
    commands.push_back({"PUBSUB", "SHARDCHANNELS", names.waiter_channels});
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
    // The waiters' times outlive waiters that died (they are cleared lazily, by the scripts): a
    // starving entry counts only as far as there are waiters queued.
    if (reply[4].kind == Reply::Kind::array) {
      view.starving = std::min(count_starving(reply[4], view.server_now_ms), view.queued);
    }
    if (reply[5].kind == Reply::Kind::string) view.fence = whole_number(reply[5].str);
    if (reply[6].kind == Reply::Kind::array) view.subscribers += static_cast<std::int64_t>(reply[6].elements.size());
  }
}

}  // namespace

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

void for_each_batch(const std::vector<Client>& masters, const std::string& pattern, int batch_size,
                    const std::function<void(std::vector<KeyView>&)>& each_batch) {
  std::vector<audit::KeySample> batch;
  std::vector<KeyView> views;
  for (const Client& master : masters) {
    audit::KeyScanner scanner(master, pattern, batch_size);
    std::int64_t server_now_ms = 0;
    while (!interrupted() && scanner.next(batch, server_now_ms)) {
      views.clear();
      for (audit::KeySample& sample : batch) {
        const audit::Classification found = audit::classify(sample, server_now_ms, {});
        if (found.lock_class == audit::LockClass::other) continue;  // companions, and everything else
        KeyView& view = views.emplace_back();
        view.sample = std::move(sample);
        view.found = found;
        view.server_now_ms = server_now_ms;
      }
      read_companions(master, views);
      if (!views.empty()) each_batch(views);
    }
  }
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

}  // namespace lockbridge::tools::watch
