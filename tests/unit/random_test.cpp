// Lock tokens and owner UUIDs from the kernel CSPRNG: their shape, and that they do not repeat.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "lockbridge/identity.hpp"
#include "lockbridge/legacy_value.hpp"

namespace {

using lockbridge::random_token;
using lockbridge::random_uuid;

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

constexpr int kDraws = 1000;

TEST(RandomToken, Is32LowercaseHexCharacters) {
  for (int i = 0; i < 20; ++i) {
    const std::string token = random_token();
    SCOPED_TRACE(token);
    ASSERT_EQ(token.size(), 32U);
    for (const char c : token) EXPECT_TRUE(is_lower_hex(c)) << "character '" << c << "'";
  }
}

TEST(RandomToken, ThousandDrawsAreAllDistinct) {
  std::set<std::string> tokens;
  for (int i = 0; i < kDraws; ++i) tokens.insert(random_token());
  EXPECT_EQ(tokens.size(), static_cast<std::size_t>(kDraws));
}

TEST(RandomUuid, IsCanonicalLowercaseVersion4) {
  for (int i = 0; i < 100; ++i) {
    const std::string uuid = random_uuid();
    SCOPED_TRACE(uuid);
    ASSERT_EQ(uuid.size(), 36U);
    for (std::size_t j = 0; j < uuid.size(); ++j) {
      if (j == 8 || j == 13 || j == 18 || j == 23) {
        EXPECT_EQ(uuid[j], '-') << "at " << j;
      } else {
        EXPECT_TRUE(is_lower_hex(uuid[j])) << "at " << j << ": '" << uuid[j] << "'";
      }
    }
    EXPECT_EQ(uuid[14], '4') << "version nibble";
    EXPECT_THAT(std::string("89ab"), ::testing::HasSubstr(std::string(1, uuid[19]))) << "variant nibble";
  }
}

TEST(RandomUuid, ThousandDrawsAreAllDistinct) {
  std::set<std::string> uuids;
  for (int i = 0; i < kDraws; ++i) uuids.insert(random_uuid());
  EXPECT_EQ(uuids.size(), static_cast<std::size_t>(kDraws));
}

TEST(RandomUuid, ParsesAsUuidMsOwner) {
  for (int i = 0; i < 20; ++i) {
    const std::string uuid = random_uuid();
    SCOPED_TRACE(uuid);
    const auto stamp = lockbridge::parse_legacy_value(uuid + ":1", lockbridge::LegacyFormat::uuid_ms);
    ASSERT_TRUE(stamp);
    EXPECT_EQ(stamp->owner, uuid);
    EXPECT_EQ(stamp->expiry_ms, 1);
    EXPECT_FALSE(stamp->forever);
  }
}

}  // namespace
