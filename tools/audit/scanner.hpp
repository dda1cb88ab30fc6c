// Walks the keyspace with SCAN (never KEYS) and reads each batch of keys in one pipelined round
// trip (one more for keys that are not strings): type, PTTL and a bounded sample of the value, plus
// Redis TIME once per batch (staleness is judged by the server's clock, never ours). Memory is one
// batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "classify.hpp"
#include "lockbridge/client.hpp"

namespace lockbridge::tools::audit {

// Reads `keys`: each key's sample, and Redis TIME (epoch ms) into `server_now_ms`. With
// `expire_time`, also each key's PEXPIRETIME (convert compares it exactly before it writes; audit
// does without the extra command). Throws Error: server_reply for an error reply (an ACL's NOPERM)
// naming the command and key, protocol for a reply of another shape (replies.hpp).
std::vector<KeySample> read_keys(const Client& client, const std::vector<std::string>& keys,
                                 std::int64_t& server_now_ms, bool expire_time = false);

class KeyScanner {
 public:
  // `pattern` is SCAN's MATCH; `batch` its COUNT (1 to kMaxBatch, as batch_option() reads it).
  KeyScanner(const Client& client, std::string pattern, int batch, bool expire_time = false);

  // The next batch (possibly empty: SCAN may return no keys for a cursor step). false once the
  // scan is complete. `server_now_ms` is Redis TIME, read in the same call as the keys.
  bool next(std::vector<KeySample>& samples, std::int64_t& server_now_ms);

 private:
  const Client& client_;
  const std::string pattern_;
  const std::string count_;
  const bool expire_time_;
  std::string cursor_ = "0";
  bool done_ = false;
};

}  // namespace lockbridge::tools::audit
