// convert's crash safety: `lockbridge convert` killed with SIGKILL at seeded random moments over a
// keyspace of 6,300 lock keys of every format, while lock_contender processes keep locking some of
// them, then resumed (a new run with a new journal) or rolled back from the journals (rollback
// itself killed too, and run again). Afterwards every key is in exactly one recognised format
// (converted with its lease's expiry, or untouched), no key is lost or made, no lock was taken
// from its holder (the lockers' exclusion check), and a rollback gives back every value byte for
// byte (DUMP) with its expiry (PEXPIRETIME). docs/migration.md §4 states the guarantee.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contenders.hpp"
#include "lockbridge/legacy_value.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCrashPerClass = 700;  // 9 classes: 6,300 keys

// Makes kCrashPerClass keys of each class under ARGV[1] in one call (the fixture's server is not a
// cluster, so the keys need not be declared). Expiries lie an hour ahead, so none passes while the
// test runs; `stale` stamps lie in the past (convert skips them without --delete-stale).
constexpr std::string_view kCrashKeyspaceScript = R"lua(
local prefix, now, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local uuid = 'f47ac10b-58cc-4372-a567-0e02b2c3d479'
local binary = 'bin' .. string.char(10, 255) .. ':'
for i = 1, n do
  local s = tostring(i)
  local stamp = tostring(now + 3600000 + i)
  redis.call('SET', prefix .. 'ms:' .. s, stamp)                                  -- jedis-lock: no TTL
  redis.call('SET', prefix .. 'hard:' .. s, stamp, 'PX', 3605000 + i)              -- hardened: TTL past the stamp
  redis.call('SET', prefix .. 'sec:' .. s, tostring(math.floor(now / 1000) + 3600 + i))
  redis.call('SET', prefix .. 'uuid:' .. s, uuid .. ':' .. stamp)
  redis.call('SET', prefix .. binary .. s, stamp)
  redis.call('SET', prefix .. 'tok:' .. s, redis.sha1hex(prefix .. s), 'PX', 3600000 + i)
  redis.call('SET', prefix .. 'stale:' .. s, tostring(now - 60000 - i))
  redis.call('HSET', prefix .. 'redisson:' .. s, uuid .. ':' .. s, '1')
  redis.call('PEXPIRE', prefix .. 'redisson:' .. s, 3600000 + i)
  redis.call('SET', prefix .. 'other:' .. s, 'not a lock ' .. s)
end
return n * 9
)lua";

// Every key named in ARGV: {type, GET (strings), DUMP, PEXPIRETIME}, in one call.
constexpr std::string_view kCrashReadKeys = R"lua(
local out = {}
for i = 1, #ARGV do
  local key = ARGV[i]
  local kind = redis.call('TYPE', key).ok
  local value = ''
  if kind == 'string' then value = redis.call('GET', key) end
  out[i] = {kind, value, redis.call('DUMP', key) or '', redis.call('PEXPIRETIME', key)}
end
return out
)lua";

// Every key matching ARGV[1].
constexpr std::string_view kCrashScanKeys = R"lua(
local keys, cursor = {}, '0'
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do keys[#keys + 1] = key end
until cursor == '0'
return keys
)lua";

struct CrashKeyBytes {
  std::string type;
  std::string value;  // strings only
  std::string dump;
  std::int64_t expire_at_ms = -2;
  bool operator==(const CrashKeyBytes&) const = default;
};

std::map<std::string, CrashKeyBytes> read_crash_keys(const std::vector<std::string>& keys) {
  std::vector<std::string> args{"EVAL", std::string(kCrashReadKeys), "0"};
  args.insert(args.end(), keys.begin(), keys.end());
  const Reply reply = raw(args);
  std::map<std::string, CrashKeyBytes> states;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Reply& entry = reply.elements.at(i);
    states[keys[i]] = {entry.elements.at(0).str, entry.elements.at(1).str, entry.elements.at(2).str,
                       entry.elements.at(3).integer};
  }
  return states;
}

std::set<std::string> crash_keys_matching(const std::string& pattern) {
  const Reply reply = raw({"EVAL", kCrashScanKeys, "0", pattern});
  std::set<std::string> keys;
  for (const Reply& key : reply.elements) keys.insert(key.str);
  return keys;
}

// The class a key was made as, from its name (kCrashKeyspaceScript's names).
std::string crash_class_of(const std::string& key, const std::string& prefix) {
  const std::string rest = key.substr(prefix.size());
  return rest.substr(0, rest.find(':'));
}

// Whether convert --to `to` rewrites a key of `kind`, and what expiry its lock has (epoch ms).
bool crash_converted_by(const std::string& kind, const std::string& to) {
  if (to == "legacy") return kind == "tok";
  return kind == "ms" || kind == "hard" || kind == "sec" || kind == "uuid" || kind.starts_with("bin");
}

std::int64_t crash_lock_expiry(const std::string& kind, const CrashKeyBytes& before) {
  if (kind == "tok") return before.expire_at_ms;
  const LegacyFormat format = kind == "sec"    ? LegacyFormat::epoch_seconds
                              : kind == "uuid" ? LegacyFormat::uuid_ms
                                               : LegacyFormat::epoch_ms;
  const auto stamp = parse_legacy_value(before.value, format);
  if (!stamp) return -3;
  // convert writes min(the stamp's expiry, the key's own expiry when it has one).
  return before.expire_at_ms >= 0 ? std::min(stamp->expiry_ms, before.expire_at_ms) : stamp->expiry_ms;
}

// The keys of one round, made afresh.
class CrashKeyspace {
 public:
  explicit CrashKeyspace(const std::string& prefix) : prefix_(prefix) {
    raw({"EVAL", kCrashKeyspaceScript, "0", prefix_, std::to_string(server_ms()), std::to_string(kCrashPerClass)});
    const std::set<std::string> made = crash_keys_matching(prefix_ + "*");
    keys_.assign(made.begin(), made.end());
    before_ = read_crash_keys(keys_);
  }
  ~CrashKeyspace() {
    for (std::size_t i = 0; i < keys_.size(); i += 500) {
      std::vector<std::string> args{"DEL"};
      for (std::size_t j = i; j < std::min(keys_.size(), i + 500); ++j) args.push_back(keys_[j]);
      raw(args);
    }
  }
  CrashKeyspace(const CrashKeyspace&) = delete;
  CrashKeyspace& operator=(const CrashKeyspace&) = delete;

  const std::vector<std::string>& keys() const { return keys_; }

  // No key lost, none made: exactly the keys made match the pattern.
  void expect_same_keys() const {
    const std::set<std::string> now = crash_keys_matching(prefix_ + "*");
    EXPECT_EQ(now.size(), keys_.size());
    EXPECT_TRUE(now == std::set<std::string>(keys_.begin(), keys_.end())) << "keys were lost or made";
  }

  // After a rollback: every byte and every expiry as they were.
  void expect_restored() const {
    expect_same_keys();
    const auto after = read_crash_keys(keys_);
    int differ = 0;
    for (const std::string& key : keys_) {
      if (after.at(key) == before_.at(key)) continue;
      if (++differ <= 3) ADD_FAILURE() << "not restored: " << ::testing::PrintToString(key);
    }
    EXPECT_EQ(differ, 0);
  }

  // After a complete conversion to `to`: each key converted, with its lock's expiry, or untouched.
  void expect_converted(const std::string& to) const {
    expect_same_keys();
    const auto after = read_crash_keys(keys_);
    int wrong = 0;
    for (const std::string& key : keys_) {
      const std::string kind = crash_class_of(key, prefix_);
      const CrashKeyBytes& was = before_.at(key);
      const CrashKeyBytes& now = after.at(key);
      bool right = false;
      if (!crash_converted_by(kind, to)) {
        right = now == was;
      } else if (to == "token") {
        right = now.type == "string" && is_token(now.value) && now.expire_at_ms == crash_lock_expiry(kind, was);
      } else {
        right = now.type == "string" && now.value == std::to_string(was.expire_at_ms) &&
                now.expire_at_ms == was.expire_at_ms;
      }
      if (!right && ++wrong <= 3) {
        ADD_FAILURE() << ::testing::PrintToString(key) << " (" << kind << ") was "
                      << ::testing::PrintToString(was.value) << " PXAT " << was.expire_at_ms << ", is "
                      << ::testing::PrintToString(now.value) << " PXAT " << now.expire_at_ms;
      }
    }
    EXPECT_EQ(wrong, 0);
  }

 private:
  std::string prefix_;
  std::vector<std::string> keys_;
  std::map<std::string, CrashKeyBytes> before_;
};

// One command of the CLI, killed (SIGKILL) after `kill_after` unless it ends first (a generous
// bound against a hang when none is given). Its exit code; -1 when it was killed.
int crash_run_or_kill(const std::string& args, std::optional<std::chrono::microseconds> kill_after) {
  BackgroundCli cli(args);
  if (kill_after) {
    std::this_thread::sleep_for(*kill_after);
    ::kill(cli.pid(), SIGKILL);  // not reaped yet, so the pid is still its own even if it has ended
  }
  return cli.finish(std::chrono::seconds(120)).exit_code;
}

std::string crash_journal_file(const std::string& tag, int number) {
  return (std::filesystem::path(test_dir()) / ("crash-" + tag + "-" + std::to_string(number) + ".jsonl")).string();
}

}  // namespace

TEST(ConvertCrash, KilledAtRandomMomentsItResumesOrRollsBackLosingNothing) {
  const std::string tag = unique_key("crash");
  const std::string stop_key = "stop:" + tag;
  // Lockers on two keys under the converted pattern, two processes each, all through every round:
  // convert rewrites a held token lock to a stamp (--to legacy) and must never free it for another.
  // Their lease (3 s, no watchdog) is far above any pause of a holder between its lock and its
  // check, even under ThreadSanitizer on two loaded cores (a 300 ms lease once ended there, which
  // the check counted as a lock taken from its holder); a lock convert leaves stuck (its holder's
  // release no longer matches) frees itself within that lease.
  std::vector<std::string> lockers;
  for (int i = 0; i < 4; ++i) {
    const std::string key = tag + ":live:" + std::to_string(i % 2);
    lockers.push_back(contender_command("token", "none", key, "check:" + key, 1000000, 3000, stop_key));
  }
  Contenders contenders(lockers);
  struct StopOnExit {
    std::string key;
    ~StopOnExit() { raw({"SET", key, "1", "PX", "60000"}); }
  } stop{stop_key};

  const unsigned seed = std::random_device{}();
  std::mt19937 random(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::chrono::microseconds full_run{0};  // how long a whole convert took: kill moments are drawn below it
  int cut_short = 0;                      // runs the kill ended before they did (the test's own check)
  constexpr int kRounds = 9;
  for (int round = 0; round < kRounds; ++round) {
    const std::string to = round % 2 == 0 ? "token" : "legacy";
    const std::string recovery = std::array{"rollback", "resume", "resume-then-rollback"}[round % 3];
    SCOPED_TRACE("round " + std::to_string(round) + ": --to " + to + ", then " + recovery);
    const std::string prefix = tag + ":r" + std::to_string(round) + ":";
    CrashKeyspace space(prefix);
    // The lockers' keys match too: convert meets them held, free and changing hands.
    const std::string match = " --match '" + tag + ":*' --batch 100";
    std::vector<std::string> journals;
    const auto convert = [&](std::optional<std::chrono::microseconds> kill_after) {
      journals.push_back(crash_journal_file(tag, static_cast<int>(journals.size()) + 100 * round));
      const std::string args = "convert --to " + to + " --json --journal '" + journals.back() + "'" + match;
      const auto started = Clock::now();
      const int exit_code = crash_run_or_kill(args, kill_after);
      if (exit_code == -1) ++cut_short;
      if (!kill_after) {
        full_run = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
        EXPECT_TRUE(exit_code == 0 || exit_code == 4) << "convert exit " << exit_code;
      }
    };
    const auto rollback = [&](const std::string& journal, bool kill_once) {
      // A run killed before it created its journal wrote nothing (the journal comes first).
      if (!std::filesystem::exists(journal)) return;
      const std::string args = "convert --json --rollback '" + journal + "'";
      if (kill_once) {
        std::uniform_int_distribution<long> moment(0, full_run.count());
        if (crash_run_or_kill(args, std::chrono::microseconds(moment(random))) == -1) ++cut_short;
      }
      // 4: it restored nothing, the killed run having restored all there was (or the lockers
      // having changed the keys since); the keyspace check below says whether that is so.
      const int exit_code = crash_run_or_kill(args, std::nullopt);
      EXPECT_TRUE(exit_code == 0 || exit_code == 4) << "rollback of " << journal << ": exit " << exit_code;
    };

    if (round == 0) {
      convert(std::nullopt);  // the first run measures a whole run, and is rolled back whole
    } else {
      std::uniform_int_distribution<long> moment(0, full_run.count() * 11 / 10);
      convert(std::chrono::microseconds(moment(random)));
    }
    if (recovery == "rollback") {
      rollback(journals.back(), round % 2 == 1);
      space.expect_restored();
    } else {
      // Resumed: a new run, itself killed once at random, then one that ends.
      std::uniform_int_distribution<long> moment(0, full_run.count());
      convert(std::chrono::microseconds(moment(random)));
      convert(std::nullopt);
      space.expect_converted(to);
      if (recovery == "resume-then-rollback") {
        // Every journal, the newest first, as docs/migration.md says to go back through several runs.
        for (auto journal = journals.rbegin(); journal != journals.rend(); ++journal) rollback(*journal, false);
        space.expect_restored();
      }
    }
    for (const std::string& journal : journals) std::filesystem::remove(journal);
    if (::testing::Test::HasFailure()) break;
  }

  EXPECT_GT(cut_short, 0) << "no kill landed before its run ended: nothing was tested";
  raw({"SET", stop_key, "1", "PX", "60000"});
  const ContenderTotals totals = contenders.finish();
  EXPECT_EQ(totals.failed_processes, 0);
  EXPECT_EQ(totals.violations, 0) << "a lock convert rewrote was taken from its holder";
  EXPECT_GT(totals.acquisitions, 0);
}

}  // namespace lockbridge::testing
