// Redisson hash fields: a Redisson lock is a hash of "<client uuid>:<thread id>" -> reentrant count.
// Audit, convert (which never converts one), inspect and watch read such hashes from a live Redis,
// where anything may sit in a hash: every field and count is classified with and without
// --type-hint redisson, and the holders shown must be printable JSON naming those fields.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "audit/classify.hpp"
#include "audit/tally.hpp"
#include "cli_common.hpp"
#include "lock_view.hpp"

namespace audit = lockbridge::tools::audit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider input(data, size);
  audit::KeySample sample;
  sample.key = "redisson:lock";
  sample.type = "hash";
  sample.pttl_ms = input.ConsumeBool() ? -1 : input.ConsumeIntegralInRange<std::int64_t>(0, 3600000);
  while (input.remaining_bytes() > 0 && sample.fields.size() < audit::KeySample::kHashSample) {
    std::string field = input.ConsumeRandomLengthString(64);
    sample.fields.emplace_back(std::move(field), input.ConsumeRandomLengthString(24));
  }
  for (const audit::TypeHint hint : {audit::TypeHint::none, audit::TypeHint::redisson}) {
    audit::ClassifyOptions options;
    options.hint = hint;
    const audit::Classification found = audit::classify(sample, 1700000000000, options);
    if (found.lock_class == audit::LockClass::redisson && hint == audit::TypeHint::none) {
      // Named a Redisson lock unhinted: every field has Redisson's shape.
      for (const auto& [field, count] : sample.fields) {
        if (field.size() <= 37 || field[36] != ':') std::abort();
      }
    }
    if (found.lock_class != audit::LockClass::redisson && found.lock_class != audit::LockClass::other) std::abort();
    nlohmann::ordered_json line;
    lockbridge::tools::put_holder(line, sample, found);
    const nlohmann::ordered_json& holder = line["holder"];
    if (found.lock_class == audit::LockClass::redisson && !sample.fields.empty() &&
        (!holder.is_array() || holder.size() != sample.fields.size())) {
      std::abort();  // every holder is shown
    }
    (void)lockbridge::tools::dump_line(audit::details_line(sample, found));
    (void)line.dump();  // strict: every holder is valid UTF-8, its exact bytes in *_base64
  }
  return 0;
}
