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
// and what JSON leaves as it is and a terminal may obey is escaped too (terminal_safe_json). For
// text views of bytes from Redis: keys, holders, values.
std::string terminal_json(const nlohmann::ordered_json& value);

// A JSON text (valid UTF-8, as dump() writes it) with DEL, the C1 controls (CSI is U+009B) and the
// bidirectional formatting characters (U+202E and kin, which reorder the rest of a line) written
// as \uXXXX: the same JSON value, safe to print. Every JSON line the CLI prints goes through it.
std::string terminal_safe_json(std::string_view json);

// Any text (a message, a pattern, a URL, bytes from Redis) for a terminal: valid UTF-8 stays, but
// controls (C0 but tab, which becomes a space; DEL; C1), bidirectional formatting characters
// and bytes that are not UTF-8 are written as \xHH or \uXXXX.
std::string terminal_text(std::string_view text);

}  // namespace lockbridge::tools
