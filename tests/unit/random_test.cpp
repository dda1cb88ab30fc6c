// Lock tokens and owner UUIDs from the kernel CSPRNG, drawn ahead a page per thread: their shape,
// and that they do not repeat, not even across a fork (a child drawing its parent's next tokens
// would hold the parent's locks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

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

TEST(RandomToken, AForkedChildDrawsOtherTokensThanItsParent) {
  (void)random_token();  // the generator is seeded and holds state before the fork
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_ends[0]);
    std::string drawn;
    for (int i = 0; i < 100; ++i) drawn += random_token();
    const bool written = write(pipe_ends[1], drawn.data(), drawn.size()) == static_cast<ssize_t>(drawn.size());
    _exit(written ? 0 : 1);
  }
  close(pipe_ends[1]);
  std::set<std::string> tokens;
  for (int i = 0; i < 100; ++i) tokens.insert(random_token());
  std::string from_child;
  char buffer[4096];
  for (ssize_t got; (got = read(pipe_ends[0], buffer, sizeof buffer)) > 0;) from_child.append(buffer, static_cast<std::size_t>(got));
  close(pipe_ends[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(from_child.size(), 100U * 32U);
  for (std::size_t at = 0; at < from_child.size(); at += 32) tokens.insert(from_child.substr(at, 32));
  EXPECT_EQ(tokens.size(), 200U);
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
