// The faithful legacy preset, recorded on the server with MONITOR, must send exactly jedis-lock
// 1.0.0's commands. The golden transcripts live in compat/golden/jedis-lock-1.0.0/.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using Transcript = std::vector<std::vector<std::string>>;

Transcript load_golden(const std::string& name) {
  const std::string path = std::string(LOCKBRIDGE_SOURCE_DIR) + "/compat/golden/jedis-lock-1.0.0/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing golden file " + path);
  Transcript transcript;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> command;
    for (std::string word; words >> word;) command.push_back(word);
    transcript.push_back(command);
  }
  return transcript;
}

std::string show(const Transcript& transcript) {
  std::string out;
  for (const auto& command : transcript) {
    for (const auto& arg : command) out += arg + " ";
    out += "\n";
  }
  return out;
}

// Placeholders: {key} is the lock key; {stamp} is a jedis-lock value for a lease taken between
// `before` and `after` (both read from the wall clock around the operation).
void expect_matches(const Transcript& golden, const Transcript& recorded, const std::string& key, std::int64_t before,
                    std::int64_t after, std::int64_t lease) {
  ASSERT_EQ(golden.size(), recorded.size()) << "golden:\n" << show(golden) << "recorded:\n" << show(recorded);
  for (std::size_t i = 0; i < golden.size(); ++i) {
    ASSERT_EQ(golden[i].size(), recorded[i].size()) << "command " << i << ": " << show({recorded[i]});
    for (std::size_t j = 0; j < golden[i].size(); ++j) {
      const std::string& want = golden[i][j];
      const std::string& got = recorded[i][j];
      if (want == "{key}") {
        EXPECT_EQ(got, key);
      } else if (want == "{stamp}") {
        ASSERT_TRUE(std::regex_match(got, std::regex("^[0-9]+$"))) << got;
        const std::int64_t stamp = std::stoll(got);
        EXPECT_GE(stamp, before + lease + 1);
        EXPECT_LE(stamp, after + lease + 1);
      } else {
        EXPECT_EQ(got, want) << "command " << i << " argument " << j;
      }
    }
  }
}

class FaithfulWire : public ::testing::Test {
 protected:
  const std::string key_ = unique_key();
  const MutexOptions options_ = faithful_options();
  Mutex mutex_{test_client(), key_, options_};
  CommandRecorder recorder_{key_};
};

TEST_F(FaithfulWire, AcquiringAFreeKeyIsOneSetnx) {
  recorder_.start();
  const std::int64_t before = wall_ms();
  ASSERT_TRUE(mutex_.try_lock());
  const std::int64_t after = wall_ms();
  expect_matches(load_golden("acquire_free.txt"), recorder_.stop(), key_, before, after, options_.lease.count());
}

TEST_F(FaithfulWire, AttemptOnALiveKeyIsSetnxThenGet) {
  raw({"SET", key_, std::to_string(wall_ms() + 600000)});
  recorder_.start();
  const std::int64_t before = wall_ms();
  ASSERT_FALSE(mutex_.try_lock());
  const std::int64_t after = wall_ms();
  expect_matches(load_golden("acquire_held.txt"), recorder_.stop(), key_, before, after, options_.lease.count());
}

TEST_F(FaithfulWire, TakingOverAnExpiredKeyIsSetnxGetGetset) {
  raw({"SET", key_, std::to_string(wall_ms() - 1000)});
  recorder_.start();
  const std::int64_t before = wall_ms();
  ASSERT_TRUE(mutex_.try_lock());
  const std::int64_t after = wall_ms();
  expect_matches(load_golden("acquire_expired.txt"), recorder_.stop(), key_, before, after, options_.lease.count());
}

TEST_F(FaithfulWire, ReleaseIsAPlainDel) {
  ASSERT_TRUE(mutex_.try_lock());
  recorder_.start();
  mutex_.unlock();
  expect_matches(load_golden("release.txt"), recorder_.stop(), key_, 0, 0, 0);
}

}  // namespace
}  // namespace lockbridge::testing
