#include "scanner.hpp"

#include "lockbridge/error.hpp"
#include "replies.hpp"

namespace lockbridge::tools::audit {

namespace {

// A string sample: at most kValueSample bytes kept, `truncated` when there were more.
void keep_value(KeySample& sample, std::string value) {
  sample.value = std::move(value);
  if (sample.value.size() > KeySample::kValueSample) {
    sample.value.resize(KeySample::kValueSample);
    sample.truncated = true;
  }
}

}  // namespace

// Plain commands, pipelined, no Lua: a script's per-call overhead costs more than the commands.
// Round trip 1: TIME, then GETRANGE (first 257 bytes: one more than kept, to know it was longer)
// and PTTL of every key. Nearly every lock is a string; GETRANGE answers WRONGTYPE for the others,
// which round trip 2 reads with TYPE, HRANDFIELD (4 random fields with their values: enough to
// recognise Redisson's <uuid>:<thread> fields; Redis 6.2 or later) and HGET of 'mode' (Redisson's
// read/write lock); round trip 3, only when there are lists or sorted sets, reads their length (a
// fair lock's waiters). A missing key reads as '' with PTTL -2.
std::vector<KeySample> read_keys(const Client& client, const std::vector<std::string>& keys,
                                 std::int64_t& server_now_ms, bool expire_time) {
  const std::size_t per_key = expire_time ? 3 : 2;
  std::vector<std::vector<std::string>> commands;
  commands.reserve(1 + per_key * keys.size());
  commands.push_back({"TIME"});
  for (const std::string& key : keys) {
    commands.push_back({"GETRANGE", key, "0", "256"});
    commands.push_back({"PTTL", key});
    if (expire_time) commands.push_back({"PEXPIRETIME", key});
  }
  std::vector<Reply> replies = client.pipeline(commands);
  server_now_ms = time_reply_ms(replies.at(0));

  std::vector<KeySample> samples(keys.size());
  std::vector<std::size_t> not_strings;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    KeySample& sample = samples[i];
    sample.key = keys[i];
    Reply& value = replies[1 + per_key * i];
    // WRONGTYPE is the answer expected for a key that is not a string; any other error (an ACL's
    // NOPERM) is Redis's to report.
    const bool other_type = is_error_reply(value, "WRONGTYPE");
    if (!other_type) string_reply(value, {"GETRANGE", keys[i]});
    sample.pttl_ms = integer_reply(replies[2 + per_key * i], {"PTTL", keys[i]});
    if (expire_time) {
      const Reply& expire_at = replies[3 + per_key * i];
      if (is_unknown_command(expire_at)) {
        throw Error(Errc::server_reply,
                    "PEXPIRETIME is unknown to this server (" + expire_at.str + "): convert needs Redis 7.0 or later");
      }
      sample.expire_at_ms = integer_reply(expire_at, {"PEXPIRETIME", keys[i]});
    }
    if (sample.pttl_ms == -2) {
      sample.type = "none";
    } else if (!other_type) {
      sample.type = "string";
      keep_value(sample, std::move(value.str));
    } else {
      not_strings.push_back(i);
    }
  }
  if (not_strings.empty()) return samples;
  commands.clear();
  for (const std::size_t i : not_strings) {
    commands.push_back({"TYPE", keys[i]});
    commands.push_back({"HRANDFIELD", keys[i], "4", "WITHVALUES"});
    commands.push_back({"HGET", keys[i], "mode"});
  }
  replies = client.pipeline(commands);
  std::vector<std::size_t> collections;  // lists and sorted sets, whose length round trip 3 reads
  for (std::size_t j = 0; j < not_strings.size(); ++j) {
    const std::string& key = keys[not_strings[j]];
    KeySample& sample = samples[not_strings[j]];
    sample.type = string_reply(replies[3 * j], {"TYPE", key});
    if (sample.type == "list" || sample.type == "zset") collections.push_back(not_strings[j]);
    // HRANDFIELD and HGET answer WRONGTYPE for every other type: only a hash's answers mean anything.
    if (sample.type != "hash") continue;
    // The 'mode' field first: it is read on every Redis, with or without HRANDFIELD. WRONGTYPE is
    // a hash replaced since TYPE (a normal race); other errors (an ACL's NOPERM) are Redis's to report.
    const Reply& mode = replies[3 * j + 2];
    if (!is_error_reply(mode, "WRONGTYPE") && !is_unknown_command(mode)) {
      if (mode.kind != Reply::Kind::nil) sample.mode = string_reply(mode, {"HGET", key});
    }
    const Reply& sampled = replies[3 * j + 1];
    // Classified by its type (and mode) alone, without fields: a hash that another client replaced
    // between TYPE and HRANDFIELD (WRONGTYPE: a normal race on a live Redis), and any hash on a
    // Redis older than 6.2, which has no HRANDFIELD. Other errors are Redis's to report.
    const bool retyped = is_error_reply(sampled, "WRONGTYPE");
    if (retyped || is_unknown_command(sampled)) continue;
    const std::vector<Reply>& fields = array_reply(sampled, {"HRANDFIELD", key});
    for (std::size_t k = 0; k + 1 < fields.size(); k += 2) {
      sample.fields.emplace_back(string_reply(fields[k], {"HRANDFIELD", key}),
                                 string_reply(fields[k + 1], {"HRANDFIELD", key}));
    }
  }
  if (collections.empty()) return samples;
  commands.clear();
  for (const std::size_t i : collections) commands.push_back({samples[i].type == "list" ? "LLEN" : "ZCARD", keys[i]});
  replies = client.pipeline(commands);
  for (std::size_t j = 0; j < collections.size(); ++j) {
    // WRONGTYPE: retyped since TYPE, a normal race; the length stays unknown. Other errors are
    // Redis's to report.
    if (is_error_reply(replies[j], "WRONGTYPE")) continue;
    samples[collections[j]].size = integer_reply(replies[j], {commands[j][0], keys[collections[j]]});
  }
  return samples;
}

KeyScanner::KeyScanner(const Client& client, std::string pattern, int batch, bool expire_time)
    : client_(client), pattern_(std::move(pattern)), count_(std::to_string(batch)), expire_time_(expire_time) {}

bool KeyScanner::next(std::vector<KeySample>& samples, std::int64_t& server_now_ms) {
  samples.clear();
  if (done_) return false;
  const Reply scan = client_.command({"SCAN", cursor_, "MATCH", pattern_, "COUNT", count_});
  const std::vector<Reply>& parts = array_reply(scan, {"SCAN"});
  if (parts.size() != 2)
    throw Error(Errc::protocol, "SCAN reply has " + std::to_string(parts.size()) + " elements, not 2");
  cursor_ = string_reply(parts[0], {"SCAN"});
  done_ = cursor_ == "0";
  std::vector<std::string> keys;
  for (const Reply& key : array_reply(parts[1], {"SCAN"})) keys.push_back(string_reply(key, {"SCAN"}));
  if (!keys.empty()) samples = read_keys(client_, keys, server_now_ms, expire_time_);
  return true;
}

}  // namespace lockbridge::tools::audit
