// lockbridge convert against the fixture's redis-server: a legacy -> token -> legacy round trip of a
// mixed keyspace keeps every lock (same lease end) and touches nothing else; a dry run changes no
// byte; rollback restores the original values; keys changed between the read and the write are
// skipped, never clobbered; lockers running throughout see no overlap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "audit/scanner.hpp"
#include "convert/converter.hpp"
#include "key_text.hpp"
#include "lockbridge/identity.hpp"
#include "lockbridge/legacy_value.hpp"
#include "mixed_keyspace.hpp"
#include "redis_test_support.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using tools::convert::Converter;
using tools::convert::JournalReader;
using tools::convert::JournalWriter;

// Every byte of a key and its TTL.
struct KeyState {
  std::string dump;
  std::int64_t expire_at_ms = -2;
  bool operator==(const KeyState&) const = default;
};

KeyState state_of(const std::string& key) { return {raw({"DUMP", key}).str, raw({"PEXPIRETIME", key}).integer}; }

std::map<std::string, KeyState> snapshot(const std::vector<std::string>& keys) {
  std::map<std::string, KeyState> states;
  for (const std::string& key : keys) states[key] = state_of(key);
  return states;
}

std::string journal_path(const std::string& tag, const std::string& name) {
  return (std::filesystem::path(test_dir()) / ("journal-" + name + "-" + tag + ".jsonl")).string();
}

const nlohmann::json& summary_of(const CliRun& run) { return run.lines.back(); }

// The MixedKeyspace keys convert rewrites, with the expiry (epoch ms) each one's lock has.
std::map<std::string, std::int64_t> live_legacy_expiries(const MixedKeyspace& space) {
  std::map<std::string, std::int64_t> expiries;
  for (const char* name : {"ms-live:", "seconds:", "uuid:", "bin\nary \xff\xfe:"}) {
    const std::string key = name + space.tag;
    const std::string value = raw({"GET", key}).str;
    for (const LegacyFormat format : {LegacyFormat::uuid_ms, LegacyFormat::epoch_ms, LegacyFormat::epoch_seconds}) {
      const auto stamp = parse_legacy_value(value, format);
      if (stamp && is_plausible(*stamp, format)) {
        expiries[key] = stamp->expiry_ms;
        break;
      }
    }
  }
  return expiries;
}

TEST(Convert, LegacyToTokenToLegacyKeepsEveryLockAndTouchesNothingElse) {
  MixedKeyspace space;
  const std::map<std::string, std::int64_t> legacy = live_legacy_expiries(space);
  ASSERT_EQ(legacy.size(), 4U);
  const std::string token_key = "token:" + space.tag;
  const std::int64_t token_expiry = raw({"PEXPIRETIME", token_key}).integer;
  std::map<std::string, KeyState> untouched = snapshot(space.keys);
  for (const auto& [key, expiry] : legacy) untouched.erase(key);
  untouched.erase(token_key);
  const std::string match = " --match '*" + space.tag + "*'";

  const std::string to_token_journal = journal_path(space.tag, "to-token");
  const CliRun to_token = run_cli("convert --to token --json --journal '" + to_token_journal + "'" + match);
  EXPECT_EQ(to_token.exit_code, 4) << to_token;  // stale, far-future, forever, ... were reported
  const nlohmann::json expected_to_token = {{"scanned", 16},
                                            {"converted", 4},
                                            {"deleted", 0},
                                            {"already_target", 2},
                                            {"skipped",
                                             {{"changed", 0},
                                              {"stale", 2},
                                              {"no_ttl", 0},
                                              {"forever", 1},
                                              {"far_future", 1},
                                              {"bad_value", 1},
                                              {"wrong_type", 0},
                                              {"foreign", 3}}},
                                            {"other", 2}};
  nlohmann::json got = summary_of(to_token);
  got.erase("seconds");
  got.erase("dry_run");
  EXPECT_EQ(got, expected_to_token) << to_token;
  for (const auto& [key, expiry] : legacy) {
    EXPECT_TRUE(is_token(raw({"GET", key}).str)) << key;
    // Redis keeps the key while now <= PEXPIRETIME; peers hold the stamp while now <= expiry.
    EXPECT_EQ(raw({"PEXPIRETIME", key}).integer, expiry) << key;
  }

  const std::string to_legacy_journal = journal_path(space.tag, "to-legacy");
  const CliRun to_legacy =
      run_cli("convert --to legacy --format ms --json --journal '" + to_legacy_journal + "'" + match);
  EXPECT_EQ(to_legacy.exit_code, 4) << to_legacy;  // token-no-ttl, garbage and foreign keys reported
  EXPECT_EQ(summary_of(to_legacy)["converted"], 5) << to_legacy;
  EXPECT_EQ(summary_of(to_legacy)["skipped"]["no_ttl"], 1) << to_legacy;
  for (const auto& [key, expiry] : legacy) {
    const auto stamp = parse_legacy_value(raw({"GET", key}).str, LegacyFormat::epoch_ms);
    ASSERT_TRUE(stamp.has_value()) << key;
    EXPECT_EQ(stamp->expiry_ms, expiry) << key;  // the same lease, to the millisecond (within 1 s asked)
    EXPECT_EQ(raw({"PEXPIRETIME", key}).integer, expiry) << key;  // and the TTL stays
  }
  const auto token_stamp = parse_legacy_value(raw({"GET", token_key}).str, LegacyFormat::epoch_ms);
  ASSERT_TRUE(token_stamp.has_value());
  EXPECT_EQ(token_stamp->expiry_ms, token_expiry);
  EXPECT_EQ(raw({"PEXPIRETIME", token_key}).integer, token_expiry);

  for (const auto& [key, state] : untouched) EXPECT_EQ(state_of(key), state) << key;
  for (const std::string& key : space.keys) EXPECT_EQ(raw({"EXISTS", key}).integer, 1) << key;
  std::filesystem::remove(to_token_journal);
  std::filesystem::remove(to_legacy_journal);
}

TEST(Convert, DryRunChangesNoByteAndPrintsWhatItWouldDo) {
  MixedKeyspace space;
  const std::map<std::string, KeyState> before = snapshot(space.keys);
  const std::string match = " --match '*" + space.tag + "*'";
  for (const std::string options : {"--to token --delete-stale", "--to legacy --format uuid-ms"}) {
    SCOPED_TRACE(options);
    const CliRun run = run_cli("convert --dry-run --json " + options + match);
    EXPECT_EQ(run.exit_code, 4) << run;
    ASSERT_EQ(run.lines.size(), 14U + 1) << run;  // one line per lock key, then the summary
    EXPECT_EQ(summary_of(run)["dry_run"], true);
    std::set<std::string> planned;
    for (std::size_t i = 0; i + 1 < run.lines.size(); ++i) {
      planned.insert(*tools::read_key(run.lines[i]));
      EXPECT_TRUE(run.lines[i].contains("action")) << run.lines[i];
    }
    EXPECT_TRUE(planned.contains("bin\nary \xff\xfe:" + space.tag));
    EXPECT_FALSE(planned.contains("counter:" + space.tag));
  }
  EXPECT_EQ(snapshot(space.keys), before);
}

TEST(Convert, RollbackRestoresTheOriginalValuesOnlyWhereConvertsWriteStillStands) {
  MixedKeyspace space;
  const std::map<std::string, KeyState> before = snapshot(space.keys);
  const std::string journal = journal_path(space.tag, "rollback");
  const CliRun convert =
      run_cli("convert --to token --delete-stale --json --journal '" + journal + "' --match '*" + space.tag + "*'");
  ASSERT_EQ(convert.exit_code, 4) << convert;
  EXPECT_EQ(summary_of(convert)["converted"], 4) << convert;
  EXPECT_EQ(summary_of(convert)["deleted"], 2) << convert;
  EXPECT_EQ(raw({"EXISTS", "ms-stale:" + space.tag}).integer, 0);
  // A journal is never overwritten.
  EXPECT_EQ(run_cli("convert --to token --journal '" + journal + "' --match '*" + space.tag + "*'").exit_code, 2);

  // One converted key has since been taken by a new holder: rollback must leave it alone.
  const std::string retaken = "ms-live:" + space.tag;
  raw({"SET", retaken, "ffffffffffffffffffffffffffffffff", "PX", "60000"});
  const KeyState retaken_state = state_of(retaken);

  const CliRun rollback = run_cli("convert --json --rollback '" + journal + "'");
  ASSERT_EQ(rollback.exit_code, 0) << rollback;
  EXPECT_EQ(summary_of(rollback)["restored"], 3) << rollback;
  EXPECT_EQ(summary_of(rollback)["not_restored"], 1) << rollback;
  // The deleted stale locks stay deleted: their lease had ended, so rollback reports them expired.
  EXPECT_EQ(summary_of(rollback)["expired"], 2) << rollback;
  const std::set<std::string> deleted{"ms-stale:" + space.tag, "ms-stale-too:" + space.tag};
  for (const std::string& key : space.keys) {
    if (key == retaken) continue;
    if (deleted.contains(key)) {
      EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << key;
    } else {
      EXPECT_EQ(state_of(key), before.at(key)) << key;
    }
  }
  EXPECT_EQ(state_of(retaken), retaken_state);

  // Twice is harmless: nothing holds what convert wrote any more. It is not a silent success
  // either: nothing restored is exit 4, with the causes named (another server among them).
  const CliRun again = run_cli("convert --json --rollback '" + journal + "'");
  EXPECT_EQ(again.exit_code, 4) << again;
  EXPECT_THAT(again.errors, ::testing::HasSubstr("nothing was restored")) << again;
  EXPECT_EQ(summary_of(again)["restored"], 0) << again;
  EXPECT_EQ(summary_of(again)["not_restored"], 4) << again;
  EXPECT_EQ(summary_of(again)["expired"], 2) << again;
  std::filesystem::remove(journal);
}

// A rollback pointed at another database than the journal's is refused before anything is sent; at
// another server, it restores nothing, and says so with exit 4 instead of a silent success.
TEST(Convert, ARollbackOnAnotherDatabaseOrServerIsNotASilentSuccess) {
  const std::string tag = unique_key("elsewhere");
  const std::string key = "stamp:" + tag;
  raw({"SET", key, std::to_string(server_ms() + 600000)});
  const std::string journal = journal_path(tag, "elsewhere");
  ASSERT_EQ(run_cli("convert --to token --journal '" + journal + "' --match '*" + tag + "*'").exit_code, 0);
  const std::string converted = raw({"GET", key}).str;

  const CliRun other_db = run_cli("convert --rollback '" + journal + "' --url '" + unix_url() + "?db=1'", false);
  EXPECT_EQ(other_db.exit_code, 2) << other_db;
  EXPECT_THAT(other_db.errors, ::testing::HasSubstr("was written on database 0")) << other_db;
  EXPECT_THAT(other_db.errors, ::testing::HasSubstr("would write to database 1")) << other_db;

  const auto server = ServerProcess::start_server();
  const CliRun other_server =
      run_cli("convert --json --rollback '" + journal + "' --url redis://" + server->address(), false);
  EXPECT_EQ(other_server.exit_code, 4) << other_server;
  EXPECT_THAT(other_server.errors, ::testing::HasSubstr("nothing was restored")) << other_server;
  EXPECT_EQ(summary_of(other_server)["not_restored"], 1) << other_server;
  EXPECT_EQ(raw({"GET", key}).str, converted) << "the journal's server is untouched";

  const CliRun home = run_cli("convert --json --rollback '" + journal + "'");
  EXPECT_EQ(home.exit_code, 0) << home;
  EXPECT_EQ(summary_of(home)["restored"], 1) << home;
  raw({"DEL", key});
  std::filesystem::remove(journal);
}

TEST(Convert, RollbackNeverRecreatesAStaleLockConvertDeleted) {
  const std::string tag = unique_key("stale");
  const std::string stale = "stale:" + tag;
  const std::string live = "live:" + tag;
  const std::int64_t now = server_ms();
  raw({"SET", stale, std::to_string(now - 60000)});  // a Java leftover: no TTL, long expired
  raw({"SET", live, std::to_string(now + 600000)});
  const std::string journal = journal_path(tag, "stale");
  ASSERT_EQ(
      run_cli("convert --to token --delete-stale --json --journal '" + journal + "' --match '*" + tag + "'").exit_code,
      0);
  ASSERT_EQ(raw({"EXISTS", stale}).integer, 0);
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(run);
    const CliRun rollback = run_cli("convert --json --rollback '" + journal + "'");
    // The second run restores nothing (the live stamp is back already): exit 4, said.
    ASSERT_EQ(rollback.exit_code, run == 0 ? 0 : 4) << rollback;
    EXPECT_EQ(summary_of(rollback)["expired"], 1) << rollback;
    EXPECT_EQ(raw({"EXISTS", stale}).integer, 0) << "a lock whose lease had ended came back, without a TTL";
    // Meanwhile a legacy client locks the key and releases it: the key is absent again.
    raw({"SET", stale, std::to_string(server_ms() + 60000)});
    raw({"DEL", stale});
  }
  EXPECT_EQ(raw({"GET", live}).str.size(), 13U) << "the live stamp came back";
  raw({"DEL", live});
  std::filesystem::remove(journal);
}

TEST(Convert, AMalformedLineInTheMiddleOfAJournalStopsRollbackBeforeAnyWrite) {
  const std::string tag = unique_key("malformed");
  const std::int64_t now = server_ms();
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back("k" + std::to_string(i) + ":" + tag);
    raw({"SET", keys.back(), std::to_string(now + 600000)});
  }
  const std::string converted = journal_path(tag, "converted");
  ASSERT_EQ(run_cli("convert --to token --journal '" + converted + "' --match '*" + tag + "'").exit_code, 0);
  std::vector<std::string> lines;
  {
    std::ifstream in(converted);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 1 + 2 * keys.size());  // header, the planned writes, their outcomes
  std::map<std::string, std::string> tokens;
  for (const std::string& key : keys) tokens[key] = raw({"GET", key}).str;

  // Its batches, then the same planned writes again, a malformed line and their outcomes: the
  // batches before the malformed line must not be sent either.
  const std::string broken = journal_path(tag, "broken");
  {
    std::ofstream out(broken);
    for (const std::string& line : lines) out << line << '\n';
    for (std::size_t i = 1; i <= keys.size(); ++i) out << lines[i] << '\n';
    out << "{\"n\":99,\"key\":\"k\",\"outc\n";
    for (std::size_t i = keys.size() + 1; i < lines.size(); ++i) out << lines[i] << '\n';
  }
  const CliRun run = run_cli("convert --json --rollback '" + broken + "'");
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, ::testing::HasSubstr("line " + std::to_string(lines.size() + keys.size() + 1))) << run;
  for (const std::string& key : keys) EXPECT_EQ(raw({"GET", key}).str, tokens[key]) << key;

  // A torn last line is what a crash leaves: its writes were never sent, and rollback goes on.
  {
    std::filesystem::permissions(converted, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
    std::ofstream out(converted, std::ios::app);
    out << "{\"n\":99,\"key\":\"k\",\"act";
  }
  const CliRun torn = run_cli("convert --json --rollback '" + converted + "'");
  EXPECT_EQ(torn.exit_code, 0) << torn;
  EXPECT_EQ(summary_of(torn)["restored"], keys.size()) << torn;
  for (const std::string& key : keys) raw({"DEL", key});
  std::filesystem::remove(converted);
  std::filesystem::remove(broken);
}

TEST(Convert, KeysChangedBetweenTheReadAndTheWriteAreSkippedNotClobbered) {
  const std::string tag = unique_key("changed");
  const std::int64_t now = server_ms();
  const std::vector<std::string> keys{"restamped:" + tag, "released:" + tag,     "extended:" + tag,
                                      "retyped:" + tag,   "quiet-legacy:" + tag, "quiet-token:" + tag};
  for (std::size_t i = 0; i < 2; ++i) raw({"SET", keys[i], std::to_string(now + 60000)});
  raw({"SET", keys[2], "0123456789abcdef0123456789abcdef", "PX", "60000"});
  raw({"SET", keys[3], "0123456789abcdef0123456789abcdef", "PX", "60000"});
  raw({"SET", keys[4], std::to_string(now + 60000)});
  raw({"SET", keys[5], "abcdef0123456789abcdef0123456789", "PX", "60000"});

  const Client client = test_client();
  std::int64_t read_at = 0;
  const std::vector<tools::audit::KeySample> samples = tools::audit::read_keys(client, keys, read_at, true);

  // Between the read and the write, other clients act.
  raw({"SET", keys[0], std::to_string(now + 90000)});  // a new holder's stamp
  raw({"DEL", keys[1]});                               // released
  raw({"PEXPIRE", keys[2], "120000"});                 // extended: same value
  raw({"DEL", keys[3]});
  raw({"HSET", keys[3], std::string(kUuid) + ":1", "1"});  // now a Redisson lock
  std::map<std::string, KeyState> changed = snapshot({keys[0], keys[1], keys[2], keys[3]});

  const std::string journal = journal_path(tag, "changed");
  {
    JournalWriter writer(journal, {{"test", true}});
    const tools::convert::FreshIdentities fresh{random_token, random_uuid};
    tools::convert::ConvertOptions token_options;
    token_options.to = tools::convert::Target::token;
    tools::convert::ConvertOptions legacy_options;
    legacy_options.to = tools::convert::Target::legacy;
    Converter to_token(client, token_options, &writer, nullptr, fresh);
    Converter to_legacy(client, legacy_options, &writer, nullptr, fresh);
    to_token.convert_batch(samples, read_at);
    to_legacy.convert_batch(samples, read_at);
    EXPECT_EQ(to_token.tally().converted, 1U);   // quiet-legacy
    EXPECT_EQ(to_legacy.tally().converted, 1U);  // quiet-token
    EXPECT_EQ(to_token.tally().skipped.at(tools::convert::Reason::changed), 2U);
    EXPECT_EQ(to_legacy.tally().skipped.at(tools::convert::Reason::changed), 2U);
  }
  for (const auto& [key, state] : changed) EXPECT_EQ(state_of(key), state) << key;
  EXPECT_TRUE(is_token(raw({"GET", keys[4]}).str));
  EXPECT_TRUE(parse_legacy_value(raw({"GET", keys[5]}).str, LegacyFormat::epoch_ms).has_value());

  // The journal says which writes did not happen; rollback undoes only the two that did.
  JournalReader reader(journal);
  tools::convert::RollbackTally undone;
  EXPECT_TRUE(tools::convert::rollback(client, reader, nullptr, undone));
  EXPECT_EQ(undone.outcomes.at("restored"), 2U);
  EXPECT_EQ(undone.outcomes.at("not_written"), 4U);
  for (const auto& [key, state] : changed) EXPECT_EQ(state_of(key), state) << key;
  EXPECT_EQ(raw({"GET", keys[4]}).str, std::to_string(now + 60000));
  for (const std::string& key : keys) raw({"DEL", key});
  std::filesystem::remove(journal);
}

// Token and hardened legacy lockers (each its own Client, no local queue: they meet only in Redis)
// hammer a few keys, some starting as Java-style stamps without TTL (which token lockers alone could
// never take), while convert runs both ways over and over. Holding is recorded in memory: two holders at once is a
// violation, whatever convert did to the keys.
TEST(Convert, LockersRunningThroughoutSeeNoOverlap) {
  const std::string tag = unique_key("lockers");
  constexpr int kKeys = 6;
  std::vector<std::string> keys;
  const std::int64_t now = server_ms();
  for (int i = 0; i < kKeys; ++i) keys.push_back("k" + std::to_string(i) + ":" + tag);
  raw({"SET", keys[0], std::to_string(now + 300)});  // live legacy stamps, no TTL
  raw({"SET", keys[1], std::to_string(now + 300)});
  raw({"SET", keys[2], std::to_string(now - 1000)});  // stale leftovers, no TTL
  raw({"SET", keys[3], std::to_string(now - 1000)});

  std::array<std::atomic<int>, kKeys> holders{};
  std::array<std::atomic<int>, kKeys> acquired{};
  std::atomic<int> violations{0};
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> lockers;
  for (int t = 0; t < 6; ++t) {
    lockers.emplace_back([&, t] {
      // Mid-migration: four token lockers and two hardened legacy ones on the same keys.
      MutexOptions options = t < 4 ? token_options() : hardened_options();
      options.lease = std::chrono::milliseconds(800);
      options.local_queue = false;
      const Client client = test_client();
      for (int round = 0; !stop && round < 100000; ++round) {
        const int i = (t + round) % kKeys;
        Mutex mutex(client, keys[i], options);
        bool locked = false;
        try {
          locked = mutex.try_lock_for(std::chrono::milliseconds(20));
        } catch (const Error& error) {
          ADD_FAILURE() << "locker " << t << ": " << error.what();
          ++errors;
        }
        if (!locked) continue;
        if (holders[i].fetch_add(1) != 0) ++violations;
        ++acquired[i];
        // Holds of 0.3 to 9 ms: long enough for convert to read and write a key while it is held.
        std::this_thread::sleep_for(std::chrono::microseconds(300 + 1000 * (round % 9)));
        holders[i].fetch_sub(1);
        mutex.unlock();  // may find convert rewrote it: lease_lost, the key frees at its lease end
      }
    });
  }
  const std::string match = " --match '*" + tag + "*'";
  for (int round = 0; round < 6; ++round) {
    const bool to_token = round % 2 == 0;
    const std::string journal = journal_path(tag, std::to_string(round));
    const CliRun run = run_cli(std::string("convert --json --journal '") + journal + "'" +
                               (to_token ? " --to token --delete-stale" : " --to legacy") + match);
    EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 4) << run;
    std::filesystem::remove(journal);
  }
  // Long enough for every lease convert left (800 ms at most) to run out and be taken again.
  ASSERT_TRUE(eventually([&] {
    for (const auto& count : acquired) {
      if (count == 0) return false;
    }
    return true;
  }));
  stop = true;
  for (std::thread& locker : lockers) locker.join();
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(errors, 0);
  for (const std::string& key : keys) raw({"DEL", key});
}

TEST(Convert, RefusesBadUsage) {
  const std::string tag = unique_key("usage");
  const std::string journal = journal_path(tag, "usage");
  EXPECT_EQ(run_cli("convert --match '*" + tag + "*'").exit_code, 2);             // no --to
  EXPECT_EQ(run_cli("convert --to token --match '*" + tag + "*'").exit_code, 2);  // no --journal
  EXPECT_EQ(run_cli("convert --to redisson --dry-run").exit_code, 2);
  EXPECT_EQ(run_cli("convert --to token --format seconds --dry-run").exit_code, 2);
  EXPECT_EQ(run_cli("convert --to legacy --format minutes --dry-run").exit_code, 2);
  EXPECT_EQ(run_cli("convert --rollback '" + journal + "'").exit_code, 2);  // no such file
  std::ofstream(journal) << "{\"not\":\"a journal\"}\n";
  EXPECT_EQ(run_cli("convert --rollback '" + journal + "'").exit_code, 2);
  EXPECT_EQ(run_cli("convert --to token --rollback '" + journal + "'").exit_code, 2);
  std::filesystem::remove(journal);
  // A journal is read twice (checked, then applied): a pipe is refused, without waiting for a writer.
  ASSERT_EQ(mkfifo(journal.c_str(), 0600), 0);
  EXPECT_EQ(run_cli("convert --rollback '" + journal + "'", true, "timeout -s KILL 30").exit_code, 2);
  std::filesystem::remove(journal);
}

}  // namespace
}  // namespace lockbridge::testing
