#include "scanner.hpp"

#include "lockbridge/error.hpp"

namespace lockbridge::tools::audit {

namespace {

std::string as_string(const Reply& reply, std::string_view what) {
  if (reply.kind != Reply::Kind::string && reply.kind != Reply::Kind::status) {
    throw Error(Errc::protocol, "audit: expected a string for " + std::string(what));
  }
  return reply.str;
}

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
// which round trip 2 reads with TYPE and HRANDFIELD (4 random fields with their values: enough to
// recognise Redisson's <uuid>:<thread> fields). A missing key reads as '' with PTTL -2.
std::vector<KeySample> read_keys(const Client& client, const std::vector<std::string>& keys, std::int64_t& server_now_ms,
                                 bool expire_time) {
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
  const Reply& time = replies.at(0);
  if (time.kind != Reply::Kind::array || time.elements.size() != 2) throw Error(Errc::protocol, "audit: unexpected TIME reply");
  server_now_ms = std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;

  std::vector<KeySample> samples(keys.size());
  std::vector<std::size_t> not_strings;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    KeySample& sample = samples[i];
    sample.key = keys[i];
    Reply& value = replies[1 + per_key * i];
    sample.pttl_ms = replies[2 + per_key * i].integer;
    if (expire_time) {
      const Reply& expire_at = replies[3 + per_key * i];
      if (expire_at.kind == Reply::Kind::error) {
        throw Error(Errc::server_reply, "PEXPIRETIME failed (" + expire_at.str + "): convert needs Redis 7.0 or later");
      }
      sample.expire_at_ms = expire_at.integer;
    }
    if (sample.pttl_ms == -2) {
      sample.type = "none";
    } else if (value.kind == Reply::Kind::string) {
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
  }
  replies = client.pipeline(commands);
  for (std::size_t j = 0; j < not_strings.size(); ++j) {
    KeySample& sample = samples[not_strings[j]];
    sample.type = as_string(replies[2 * j], "TYPE");
    const Reply& fields = replies[2 * j + 1];
    if (sample.type != "hash" || fields.kind != Reply::Kind::array) continue;
    for (std::size_t k = 0; k + 1 < fields.elements.size(); k += 2) {
      sample.fields.emplace_back(fields.elements[k].str, fields.elements[k + 1].str);
    }
  }
  return samples;
}

KeyScanner::KeyScanner(const Client& client, std::string pattern, int batch, bool expire_time)
    : client_(client), pattern_(std::move(pattern)), count_(std::to_string(batch)), expire_time_(expire_time) {
  if (batch < 1 || batch > 100000) throw Error(Errc::bad_option, "--batch must be between 1 and 100000");
}

bool KeyScanner::next(std::vector<KeySample>& samples, std::int64_t& server_now_ms) {
  samples.clear();
  if (done_) return false;
  const Reply scan = client_.command({"SCAN", cursor_, "MATCH", pattern_, "COUNT", count_});
  if (scan.kind != Reply::Kind::array || scan.elements.size() != 2) throw Error(Errc::protocol, "audit: unexpected SCAN reply");
  cursor_ = as_string(scan.elements[0], "the SCAN cursor");
  done_ = cursor_ == "0";
  std::vector<std::string> keys;
  keys.reserve(scan.elements[1].elements.size());
  for (const Reply& key : scan.elements[1].elements) keys.push_back(key.str);
  if (!keys.empty()) samples = read_keys(client_, keys, server_now_ms, expire_time_);
  return true;
}

}  // namespace lockbridge::tools::audit
