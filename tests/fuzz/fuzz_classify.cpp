// The audit classifier (tools/audit/classify.hpp), which convert trusts to decide what to rewrite:
// any value, Redis type, TTL and hash fields, under every --type-hint, at any server time. It must
// give one class and flags that agree with it, and the details line audit prints for the key must
// be printable JSON whatever bytes the value holds.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "audit/classify.hpp"
#include "audit/tally.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "lock_view.hpp"
#include "terminal_check.hpp"

namespace audit = lockbridge::tools::audit;

namespace {

constexpr const char* kTypes[] = {"string", "hash", "list", "set", "zset", "stream", "none"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider input(data, size);
  audit::KeySample sample;
  sample.key = input.ConsumeRandomLengthString(64);
  sample.type = kTypes[input.ConsumeIntegralInRange<std::size_t>(0, std::size(kTypes) - 1)];
  sample.pttl_ms = input.ConsumeIntegralInRange<std::int64_t>(-2, 10LL * 365 * 24 * 3600 * 1000);
  sample.expire_at_ms = input.ConsumeIntegral<std::int64_t>();
  const std::int64_t server_now_ms = input.ConsumeIntegralInRange<std::int64_t>(0, 4102444800000);  // to 2100
  audit::ClassifyOptions options;
  options.hint = static_cast<audit::TypeHint>(input.ConsumeIntegralInRange<int>(0, 5));
  if (sample.type == "hash") {
    const std::size_t fields = input.ConsumeIntegralInRange<std::size_t>(0, audit::KeySample::kHashSample);
    for (std::size_t i = 0; i < fields; ++i) {
      std::string field = input.ConsumeRandomLengthString(80);
      sample.fields.emplace_back(std::move(field), input.ConsumeRandomLengthString(24));
    }
  } else {
    sample.value = input.ConsumeRemainingBytesAsString();
    if (sample.value.size() > audit::KeySample::kValueSample) {
      sample.value.resize(audit::KeySample::kValueSample);
      sample.truncated = true;
    }
  }

  const audit::Classification found = audit::classify(sample, server_now_ms, options);
  // Flags of a timestamp belong to timestamp classes: `stale` is never said of a token or a hash.
  const bool timestamp = found.lock_class == audit::LockClass::legacy_ms ||
                         found.lock_class == audit::LockClass::legacy_seconds ||
                         found.lock_class == audit::LockClass::legacy_uuid_ms;
  if (found.has(audit::Flag::stale) && !timestamp) std::abort();
  if (found.lock_class == audit::LockClass::other && found.flags != 0 && options.hint == audit::TypeHint::none) {
    std::abort();  // `other` keys are counted, never flagged, unless a hint says they should be locks
  }
  // What audit, inspect and watch print of the key: exact JSON whatever the bytes (strict dumping
  // throws on invalid UTF-8; the exact bytes are in *_base64), and terminal-safe text.
  nlohmann::ordered_json line = audit::details_line(sample, found);
  lockbridge::tools::put_holder(line, sample, found);
  (void)line.dump();
  if (!lockbridge::testing::terminal_safe(lockbridge::tools::terminal_json(line), /*newlines=*/false)) std::abort();
  if (!lockbridge::testing::terminal_safe(lockbridge::tools::terminal_text(sample.value), false)) std::abort();
  if (!lockbridge::testing::terminal_safe(lockbridge::tools::dump_line(line), false)) std::abort();
  return 0;
}
