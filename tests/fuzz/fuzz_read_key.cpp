// Keys in JSON (tools/key_text.hpp): every key lockbridge prints is escaped so that it can be read
// back exactly, and read_key() reads keys back from details files and journals. Any bytes as a key
// survive put_key() then read_key(); any bytes as a JSON document give a key or nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "key_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  // The round trip, through the printed JSON text as a reader of a details file would see it.
  nlohmann::ordered_json out;
  lockbridge::tools::put_key(out, bytes);
  const std::string line = lockbridge::tools::dump_line(out);
  const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
  if (parsed.is_discarded()) std::abort();  // lockbridge printed JSON it cannot read
  const auto key = lockbridge::tools::read_key(parsed);
  if (!key || *key != bytes) std::abort();  // a key that does not come back whole
  (void)lockbridge::tools::quoted_key(bytes);
  if (const auto decoded = lockbridge::tools::base64_decode(bytes)) {
    if (lockbridge::tools::base64_encode(*decoded) != bytes) std::abort();  // canonical base64 only
  }

  // The input as a document someone else wrote (or damaged).
  const nlohmann::json document = nlohmann::json::parse(bytes, nullptr, false);
  if (!document.is_discarded() && document.is_object()) {
    try {
      (void)lockbridge::tools::read_key(document);
    } catch (const nlohmann::json::exception&) {
      std::abort();  // read_key must judge the document, not throw past its caller
    }
  }
  return 0;
}
