// Redis keys are bytes; JSON strings are Unicode. Every key lockbridge prints in JSON goes through
// put_key(), so that any key (spaces, newlines, invalid UTF-8) comes out escaped and can be read
// back exactly.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace lockbridge::tools {

bool is_valid_utf8(std::string_view bytes) noexcept;

std::string base64_encode(std::string_view bytes);
// nullopt for anything that is not canonical padded base64.
std::optional<std::string> base64_decode(std::string_view text);

// Sets out[field] to the key: as is when it is valid UTF-8 (JSON escapes control characters), and
// otherwise with each invalid byte written as \xHH, plus out[field + "_base64"] holding the exact
// bytes. read_key() is the inverse.
void put_key(nlohmann::ordered_json& out, std::string_view key, const std::string& field = "key");
std::optional<std::string> read_key(const nlohmann::json& in, const std::string& field = "key");

// The key as a quoted JSON string, for messages: "lock:a b", "lock:\\xff"; terminal-safe.
std::string quoted_key(std::string_view key);

// A JSON value as text for a terminal: JSON escapes the C0 controls, invalid UTF-8 becomes U+FFFD,
// and the C1 controls (U+0080-U+009F) and DEL, which JSON leaves as they are and a terminal may
// obey (CSI is U+009B), are escaped too. For text views of bytes from Redis: keys, holders, values.
std::string terminal_json(const nlohmann::ordered_json& value);

}  // namespace lockbridge::tools
