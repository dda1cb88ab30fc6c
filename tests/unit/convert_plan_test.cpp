// convert's decisions (tools/convert/plan.cpp) and its journal format (journal.cpp), no server:
// what each lock class becomes, which are left alone and why, and that a journal reads back batch
// by batch with its outcomes, a torn last line ignored.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "convert/journal.hpp"
#include "convert/plan.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::tools::convert {
namespace {

using audit::Flag;
using audit::LockClass;

constexpr std::int64_t kNow = 1'800'000'000'000;
const FreshIdentities kFresh{[] { return std::string(32, 'a'); },
                             [] { return std::string("f47ac10b-58cc-4372-a567-0e02b2c3d479"); }};

audit::KeySample string_key(std::string value, std::int64_t expire_at_ms) {
  audit::KeySample sample;
  sample.key = "k";
  sample.type = "string";
  sample.value = std::move(value);
  sample.expire_at_ms = expire_at_ms;
  sample.pttl_ms = expire_at_ms < 0 ? -1 : expire_at_ms - kNow;
  return sample;
}

Plan plan_for(const audit::KeySample& sample, const ConvertOptions& options) {
  return plan_key(sample, audit::classify(sample, kNow, {}), options, kFresh);
}

ConvertOptions to(Target target, LegacyFormat format = LegacyFormat::epoch_ms, bool delete_stale = false) {
  return {target, format, delete_stale, {}};
}

TEST(ConvertPlan, ALiveStampBecomesATokenWhoseLeaseEndsWhenTheStampDoes) {
  const Plan plan = plan_for(string_key(std::to_string(kNow + 60000), -1), to(Target::token));
  EXPECT_EQ(plan.action, Action::to_token);
  EXPECT_EQ(plan.new_value, std::string(32, 'a'));
  EXPECT_EQ(plan.new_expire_at_ms, kNow + 60000);
}

TEST(ConvertPlan, AnEarlierTtlWinsOverTheStamp) {
  // A hardened writer's safety TTL, or a TTL someone shortened: never make the lock live longer.
  const Plan plan = plan_for(string_key(std::to_string(kNow + 60000), kNow + 2000), to(Target::token));
  EXPECT_EQ(plan.new_expire_at_ms, kNow + 2000);
}

TEST(ConvertPlan, SecondsAndUuidStampsConvertToo) {
  EXPECT_EQ(plan_for(string_key(std::to_string(kNow / 1000 + 60), -1), to(Target::token)).new_expire_at_ms,
            kNow + 60000);
  const Plan uuid =
      plan_for(string_key("f47ac10b-58cc-4372-a567-0e02b2c3d479:" + std::to_string(kNow + 5), -1), to(Target::token));
  EXPECT_EQ(uuid.action, Action::to_token);
  EXPECT_EQ(uuid.new_expire_at_ms, kNow + 5);
}

TEST(ConvertPlan, StaleStampsAreReportedOrDeletedOnRequest) {
  const audit::KeySample stale = string_key(std::to_string(kNow - 1), -1);
  EXPECT_EQ(plan_for(stale, to(Target::token)).reason, Reason::stale);
  EXPECT_EQ(plan_for(stale, to(Target::token, LegacyFormat::epoch_ms, true)).action, Action::remove);
}

TEST(ConvertPlan, WhatCannotBeConvertedSafelyIsLeftAndNamed) {
  const ConvertOptions options = to(Target::token);
  EXPECT_EQ(plan_for(string_key("2147483649", -1), options).reason, Reason::forever);
  EXPECT_EQ(plan_for(string_key(std::to_string(kNow + 400LL * 24 * 3600 * 1000), -1), options).reason,
            Reason::far_future);
  EXPECT_EQ(plan_for(string_key("f47ac10b-58cc-4372-a567-0e02b2c3d479:soon", -1), options).reason, Reason::bad_value);
  EXPECT_EQ(plan_for(string_key("0123456789abcdef0123456789abcdef", kNow + 100), options).reason,
            Reason::already_target);
  EXPECT_EQ(plan_for(string_key("hello", -1), options).reason, Reason::not_a_lock);
  audit::KeySample redisson;
  redisson.type = "hash";
  redisson.pttl_ms = 1000;
  redisson.fields = {{"f47ac10b-58cc-4372-a567-0e02b2c3d479:57", "1"}};
  EXPECT_EQ(plan_for(redisson, options).reason, Reason::foreign);
}

TEST(ConvertPlan, ATokenBecomesTheStampOfItsLeaseEndInTheFormatAsked) {
  const audit::KeySample token = string_key("0123456789abcdef0123456789abcdef", kNow + 1500);
  const Plan ms = plan_for(token, to(Target::legacy));
  EXPECT_EQ(ms.action, Action::to_legacy);
  EXPECT_EQ(ms.new_value, std::to_string(kNow + 1500));
  EXPECT_EQ(ms.new_expire_at_ms, kNow + 1500);  // the TTL is kept
  EXPECT_EQ(plan_for(token, to(Target::legacy, LegacyFormat::epoch_seconds)).new_value,
            std::to_string(kNow / 1000 + 2));  // rounded up
  EXPECT_EQ(plan_for(token, to(Target::legacy, LegacyFormat::uuid_ms)).new_value,
            "f47ac10b-58cc-4372-a567-0e02b2c3d479:" + std::to_string(kNow + 1500));
}

TEST(ConvertPlan, ATokenWithoutTtlHasNoLeaseEndToWrite) {
  EXPECT_EQ(plan_for(string_key("0123456789abcdef0123456789abcdef", -1), to(Target::legacy)).reason, Reason::no_ttl);
  EXPECT_EQ(plan_for(string_key(std::to_string(kNow + 60000), -1), to(Target::legacy)).reason, Reason::already_target);
}

// ---- journal --------------------------------------------------------------------------------------

class ConvertJournal : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  const std::string path_ =
      (std::filesystem::temp_directory_path() / ("lockbridge-journal-" + std::to_string(::getpid()) + ".jsonl"))
          .string();
};

JournalEntry entry(std::uint64_t number, std::string key, Action action) {
  return {number, std::move(key), action, "1800000060000", -1, -1, action == Action::remove ? "" : "tok", kNow + 60000};
}

TEST_F(ConvertJournal, ReadsBackBatchByBatchWithOutcomes) {
  {
    JournalWriter writer(path_, {{"to", "token"}});
    const std::vector<JournalEntry> first{entry(1, "a", Action::to_token), entry(2, "b\n\xff", Action::remove)};
    writer.write_intents(first);
    writer.write_outcomes({{&first[0], "written"}, {&first[1], "changed"}});
    const std::vector<JournalEntry> second{entry(3, "c", Action::to_token)};
    writer.write_intents(second);  // and the run stopped here
  }
  JournalReader reader(path_);
  EXPECT_EQ(reader.header()["to"], "token");
  std::vector<JournalRecord> batch;
  ASSERT_TRUE(reader.next_batch(batch));
  ASSERT_EQ(batch.size(), 2U);
  EXPECT_EQ(batch[0].entry.key, "a");
  EXPECT_EQ(batch[0].entry.new_value, "tok");
  EXPECT_EQ(batch[0].outcome, "written");
  EXPECT_EQ(batch[1].entry.key, "b\n\xff");  // any bytes come back exactly
  EXPECT_EQ(batch[1].entry.action, Action::remove);
  EXPECT_EQ(batch[1].outcome, "changed");
  ASSERT_TRUE(reader.next_batch(batch));
  ASSERT_EQ(batch.size(), 1U);
  EXPECT_FALSE(batch[0].outcome.has_value());
  EXPECT_FALSE(reader.next_batch(batch));
}

TEST_F(ConvertJournal, NeverOverwritesAJournal) {
  { JournalWriter writer(path_, {}); }
  try {
    JournalWriter again(path_, {});
    FAIL() << "an existing journal was opened for writing";
  } catch (const Error& error) {
    EXPECT_EQ(error.errc(), Errc::bad_option);
  }
}

// What a crash (or a test) appends to a journal convert made read-only.
void allow_appending(const std::string& path) {
  std::filesystem::permissions(path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
}

TEST_F(ConvertJournal, IgnoresATornLastLineButNotAMalformedOne) {
  { JournalWriter writer(path_, {}); }
  allow_appending(path_);
  std::ofstream(path_, std::ios::app)
      << R"({"n":1,"key":"a","action":"to_token","old_value":"1","old_pttl_ms":-1,"old_exp)";
  JournalReader torn(path_);
  std::vector<JournalRecord> batch;
  EXPECT_FALSE(torn.next_batch(batch));
  std::ofstream(path_, std::ios::app) << "\n{}\n";
  JournalReader malformed(path_);
  EXPECT_THROW((void)malformed.next_batch(batch), Error);
}

// Found by fuzz_journal: a number beyond 64 bits is read by the JSON parser as a double, and
// converting that to an integer was undefined behaviour. Numbers that are not integers in range
// (a fraction, an exponent, a negative write number, a PEXPIRETIME below Redis's -2) are malformed.
TEST_F(ConvertJournal, ANumberThatIsNotAnIntegerInRangeIsAMalformedLine) {
  const std::string planned =
      R"({"n":1,"key":"a","action":"to_token","old_value":"1","old_pttl_ms":-1,"old_expire_at_ms":-1,)"
      R"("new_value":"t","new_expire_at_ms":)";
  for (const std::string bad : {"1795377777777777777777777777777777777777777700509231", "1.5", "1e3", "-3", "\"7\""}) {
    std::remove(path_.c_str());
    { JournalWriter writer(path_, {}); }
    allow_appending(path_);
    std::ofstream(path_, std::ios::app) << planned << bad << "}\n";
    JournalReader reader(path_);
    std::vector<JournalRecord> batch;
    try {
      (void)reader.next_batch(batch);
      ADD_FAILURE() << "accepted new_expire_at_ms " << bad;
    } catch (const Error& error) {
      EXPECT_EQ(error.errc(), Errc::bad_option) << bad;
      EXPECT_THAT(error.what(), ::testing::HasSubstr("line 2")) << error.what();
    }
  }
}

// A journal appears under its name with its header whole, read-only: a `> J` of its owner fails,
// and a file that is empty or has no whole header (a shell emptied it, or another program's file)
// is never a journal convert wrote, so rollback refuses it instead of finding nothing to undo.
TEST_F(ConvertJournal, IsCreatedWholeAndReadOnlyAndAnEmptyOrHeaderlessFileIsNone) {
  { JournalWriter writer(path_, {{"to", "token"}}); }
  EXPECT_EQ(std::filesystem::status(path_).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read);
  EXPECT_EQ(JournalReader(path_).header()["to"], "token");
  const std::string name = std::filesystem::path(path_).filename().string();
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path_).parent_path())) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(name + ".tmp-")) << "a temporary file left: " << entry;
  }
  for (const std::string& headless : {std::string(), std::string("{\"lockbridge_conv"),
                                      std::string("{\"lockbridge_convert_journal\":1,\"lockbridge_version\":\"0.")}) {
    std::filesystem::remove(path_);
    std::ofstream(path_, std::ios::trunc) << headless;
    try {
      JournalReader reader(path_);
      ADD_FAILURE() << "read as a journal: '" << headless << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.errc(), Errc::bad_option);
      EXPECT_THAT(error.what(), ::testing::HasSubstr("is not a journal convert wrote")) << headless;
      if (headless.empty()) {
        EXPECT_THAT(error.what(), ::testing::HasSubstr("it is empty")) << error.what();
      }
    }
  }
  for (const std::string& other : {std::string("{\"other\":1}\n"), std::string("x\n")}) {
    std::ofstream(path_, std::ios::trunc) << other;
    EXPECT_THROW(JournalReader{path_}, Error) << other;
  }
}

}  // namespace
}  // namespace lockbridge::tools::convert
