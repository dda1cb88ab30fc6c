#include "scanner.hpp"

#include "lockbridge/error.hpp"

namespace lockbridge::tools::audit {

namespace {

// KEYS = the batch. Returns {now_ms, {type, pttl, sample}, ...}: sample = the first 257 bytes of a
// string (257: one more than kept, to know it was longer), up to 4 random fields with values of a
// hash, false otherwise. Read-only.
constexpr std::string_view kReadBatch = R"lua(
local t = redis.call('TIME')
local out = {tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key)['ok']
  local sample = false
  if kind == 'string' then
    sample = redis.call('GETRANGE', key, 0, 256)
  elseif kind == 'hash' then
    sample = redis.call('HRANDFIELD', key, 4, 'WITHVALUES')
  end
  out[#out + 1] = {kind, redis.call('PTTL', key), sample}
end
return out
)lua";

std::string as_string(const Reply& reply, std::string_view what) {
  if (reply.kind != Reply::Kind::string && reply.kind != Reply::Kind::status) {
    throw Error(Errc::protocol, "audit: expected a string for " + std::string(what));
  }
  return reply.str;
}

KeySample sample_from(std::string key, const Reply& entry) {
  if (entry.kind != Reply::Kind::array || entry.elements.size() < 2) {
    throw Error(Errc::protocol, "audit: unexpected reply for one key");
  }
  KeySample sample;
  sample.key = std::move(key);
  sample.type = as_string(entry.elements[0], "TYPE");
  sample.pttl_ms = entry.elements[1].integer;
  if (entry.elements.size() < 3) return sample;
  const Reply& value = entry.elements[2];
  if (sample.type == "string" && value.kind == Reply::Kind::string) {
    sample.value = value.str;
    if (sample.value.size() > KeySample::kValueSample) {
      sample.value.resize(KeySample::kValueSample);
      sample.truncated = true;
    }
  } else if (sample.type == "hash" && value.kind == Reply::Kind::array) {
    for (std::size_t i = 0; i + 1 < value.elements.size(); i += 2) {
      sample.fields.emplace_back(value.elements[i].str, value.elements[i + 1].str);
    }
  }
  return sample;
}

}  // namespace

std::vector<KeySample> read_keys(const Client& client, const std::vector<std::string>& keys, std::int64_t& server_now_ms) {
  std::vector<std::string> args{"EVAL", std::string(kReadBatch), std::to_string(keys.size())};
  args.reserve(3 + keys.size());
  args.insert(args.end(), keys.begin(), keys.end());
  const Reply read = client.command(args);
  if (read.kind != Reply::Kind::array || read.elements.size() != keys.size() + 1) {
    throw Error(Errc::protocol, "audit: unexpected reply to the batch read");
  }
  server_now_ms = read.elements[0].integer;
  std::vector<KeySample> samples;
  samples.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) samples.push_back(sample_from(keys[i], read.elements[i + 1]));
  return samples;
}

KeyScanner::KeyScanner(const Client& client, std::string pattern, int batch)
    : client_(client), pattern_(std::move(pattern)), count_(std::to_string(batch)) {
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
  if (!keys.empty()) samples = read_keys(client_, keys, server_now_ms);
  return true;
}

}  // namespace lockbridge::tools::audit
