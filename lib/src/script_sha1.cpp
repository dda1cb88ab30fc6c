#include "lockbridge/client.hpp"

#include <openssl/evp.h>

#include <array>
#include <new>

namespace lockbridge {

std::string script_sha1(std::string_view body) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate its context.
  if (EVP_Digest(body.data(), body.size(), digest.data(), &size, EVP_sha1(), nullptr) != 1) throw std::bad_alloc();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

}  // namespace lockbridge
