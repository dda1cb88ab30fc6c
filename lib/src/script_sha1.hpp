// The SHA1 that Redis names a Lua script by (EVALSHA), computed here: the client never needs
// SCRIPT LOAD, which an ACL may deny (`-script`) while it allows EVAL and EVALSHA.
#pragma once

#include <string>
#include <string_view>

namespace lockbridge::detail {

// 40 lowercase hex digits, as SCRIPT LOAD answers. Pure; throws std::bad_alloc only.
std::string script_sha1(std::string_view body);

}  // namespace lockbridge::detail
