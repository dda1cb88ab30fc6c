#include "lockbridge/client.hpp"

#include <openssl/evp.h>

#include <array>
#include <new>
#include <span>

#include "util/hex.hpp"

namespace lockbridge {

std::string script_sha1(std::string_view body) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate its context.
  if (EVP_Digest(body.data(), body.size(), digest.data(), &size, EVP_sha1(), nullptr) != 1) throw std::bad_alloc();
  return detail::lowercase_hex(std::span(digest.data(), size));
}

}  // namespace lockbridge
