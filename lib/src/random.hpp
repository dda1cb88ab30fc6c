// Unpredictable identities from the kernel's CSPRNG (getrandom(2)).
#pragma once

#include <string>

namespace lockbridge::detail {

// 128 random bits as 32 lowercase hex characters: the token strategy's lock value.
std::string random_token();

// A random (version 4) UUID, lowercase 8-4-4-4-12, as java.util.UUID.toString() prints it.
std::string random_uuid();

}  // namespace lockbridge::detail
