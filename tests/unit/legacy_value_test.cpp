// The three legacy lock value encodings: parsing as each peer parses, formatting, plausibility, expiry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockbridge/legacy_value.hpp"

namespace {

using lockbridge::format_legacy_value;
using lockbridge::is_expired;
using lockbridge::is_plausible;
using lockbridge::kLegacyForeverSeconds;
using lockbridge::legacy_format_from_string;
using lockbridge::LegacyFormat;
using lockbridge::LegacyStamp;
using lockbridge::parse_legacy_value;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

constexpr std::string_view kUuid = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
constexpr std::string_view kUpperUuid = "F47AC10B-58CC-4372-A567-0E02B2C3D479";

// A value in a readable form for traces: non-printable bytes as \xNN.
std::string printable(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out + "\"";
}

LegacyStamp stamp(std::int64_t expiry_ms, bool forever = false, std::string owner = {}) {
  return LegacyStamp{expiry_ms, forever, std::move(owner)};
}

std::string uuid_value(std::string_view uuid, std::string_view expiry) {
  return std::string(uuid) + ":" + std::string(expiry);
}

// ---- epoch_ms: Java's Long.parseLong ---------------------------------------------------------

TEST(LegacyEpochMs, ParsesSignedDecimalIntegers) {
  const std::vector<std::pair<std::string, std::int64_t>> cases{
      {"1400000060001", 1400000060001},
      {"+5", 5},
      {"-5", -5},
      {"0", 0},
      {"-0", 0},
      {"0001400000060001", 1400000060001},  // leading zeros: Long.parseLong accepts them
      {"9223372036854775807", kInt64Max},
      {"-9223372036854775808", kInt64Min},
  };
  for (const auto& [value, expiry_ms] : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_ms), stamp(expiry_ms));
  }
}

TEST(LegacyEpochMs, RejectsAnythingThatIsNotASignedDecimalInteger) {
  const std::vector<std::string> cases{
      "",
      "+",
      "-",
      "abc",
      "12a",
      " 12",
      "12 ",
      "1.5",
      "1e3",
      "0x10",
      "--5",
      "+-5",
      "-+5",
      "1_000",
      std::string("12\0"
                  "34",
                  5),
      std::string("\0", 1),
      std::string("12\0", 3),
      "\xff\xfe",
      "\xd9\xa1\xd9\xa2",  // Arabic-Indic digits in UTF-8: not ASCII digits
  };
  for (const std::string& value : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_ms), std::nullopt);
  }
}

TEST(LegacyEpochMs, RejectsOverflow) {
  const std::vector<std::string> cases{
      "9223372036854775808",
      "-9223372036854775809",
      "18446744073709551616",
      "99999999999999999999",
      std::string(400, '9'),
      "-" + std::string(400, '9'),
      std::string(400, '0') + "1" + std::string(19, '0'),
  };
  for (const std::string& value : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_ms), std::nullopt);
  }
}

TEST(LegacyEpochMs, AcceptsLongRunOfLeadingZeros) {
  EXPECT_EQ(parse_legacy_value(std::string(400, '0') + "42", LegacyFormat::epoch_ms), stamp(42));
}

TEST(LegacyEpochMs, FormatsAsDecimalMilliseconds) {
  EXPECT_EQ(format_legacy_value(LegacyFormat::epoch_ms, 1400000060001), "1400000060001");
  EXPECT_EQ(format_legacy_value(LegacyFormat::epoch_ms, 0), "0");
  EXPECT_EQ(format_legacy_value(LegacyFormat::epoch_ms, -5), "-5");
}

TEST(LegacyEpochMs, FormatIgnoresOwner) {
  EXPECT_EQ(format_legacy_value(LegacyFormat::epoch_ms, 1400000060001, kUuid), "1400000060001");
}

TEST(LegacyEpochMs, RoundTripsEveryExpiry) {
  for (const std::int64_t expiry_ms :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{-5}, std::int64_t{1400000060001}, kInt64Max, kInt64Min}) {
    SCOPED_TRACE(expiry_ms);
    const std::string value = format_legacy_value(LegacyFormat::epoch_ms, expiry_ms);
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_ms), stamp(expiry_ms));
  }
}

// ---- epoch_seconds: Python's float() on redis-py's own values --------------------------------

TEST(LegacyEpochSeconds, ParsesWholeAndFractionalSeconds) {
  const std::vector<std::pair<std::string, std::int64_t>> cases{
      {"1400000061", 1400000061000},
      {"1400000061.0", 1400000061000},  // what old redis-py wrote
      {"1400000061.5", 1400000061500},
      {"1400000061.25", 1400000061250},
      {"1400000061.125", 1400000061125},
      {"1400000061.2500000", 1400000061250},
      {".5", 500},
      {"5.", 5000},
      {"0", 0},
      {"+5", 5000},
      {"-1.5", -1500},
      {"-.5", -500},
      {"-1400000061", -1400000061000},
      {"01400000061", 1400000061000},
      {"9223372036854774", 9223372036854774000},  // the largest whole second accepted
  };
  for (const auto& [value, expiry_ms] : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_seconds), stamp(expiry_ms));
  }
}

TEST(LegacyEpochSeconds, ForeverSentinelIsNeverExpiring) {
  for (const std::string_view value : {"2147483649", "2147483649.0", "2147483649.000", "2147483649."}) {
    SCOPED_TRACE(value);
    const auto parsed = parse_legacy_value(value, LegacyFormat::epoch_seconds);
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(parsed->forever);
    EXPECT_EQ(parsed->expiry_ms, kLegacyForeverSeconds * 1000);
  }
}

TEST(LegacyEpochSeconds, NearForeverValuesAreOrdinaryExpiries) {
  const std::vector<std::pair<std::string_view, std::int64_t>> cases{
      {"2147483649.5", 2147483649500}, {"2147483649.001", 2147483649001}, {"2147483648", 2147483648000},
      {"2147483650", 2147483650000},   {"-2147483649", -2147483649000},
  };
  for (const auto& [value, expiry_ms] : cases) {
    SCOPED_TRACE(value);
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_seconds), stamp(expiry_ms));
  }
}

TEST(LegacyEpochSeconds, RejectsAnythingThatIsNotADecimalNumber) {
  const std::vector<std::string> cases{
      "",
      ".",
      "+",
      "-",
      "-.",
      "+.",
      "abc",
      "1..5",
      "1.2.3",
      "1.5a",
      "1a.5",
      " 1",
      "1 ",
      "1e9",
      "inf",
      "nan",
      "--1",
      "+-1",
      "1,5",
      std::string("14\0"
                  "00",
                  5),
      std::string("1.\0", 3),
  };
  for (const std::string& value : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_seconds), std::nullopt);
  }
}

TEST(LegacyEpochSeconds, RejectsOverflow) {
  const std::vector<std::string> cases{
      "9223372036854776",  // x 1000 no longer fits in int64
      "9223372036854775808",        "18446744073709551616",      std::string(400, '9'),
      std::string(400, '9') + ".5", "-" + std::string(400, '9'),
  };
  for (const std::string& value : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_seconds), std::nullopt);
  }
}

TEST(LegacyEpochSeconds, FormatRoundsUpToWholeSeconds) {
  const std::vector<std::pair<std::int64_t, std::string>> cases{
      {0, "0"},
      {1, "1"},
      {999, "1"},
      {1000, "1"},
      {1001, "2"},
      {1999, "2"},
      {2000, "2"},
      {1400000060001, "1400000061"},
      {1400000061000, "1400000061"},
      {-1000, "-1"},
      {-1500, "-1"},  // rounding up, towards the later moment, also below zero
  };
  for (const auto& [expiry_ms, value] : cases) {
    SCOPED_TRACE(expiry_ms);
    EXPECT_EQ(format_legacy_value(LegacyFormat::epoch_seconds, expiry_ms), value);
  }
}

TEST(LegacyEpochSeconds, RoundTripNeverEndsBeforeTheLease) {
  for (const std::int64_t expiry_ms : {std::int64_t{1000}, std::int64_t{1001}, std::int64_t{1999},
                                       std::int64_t{1400000060001}, std::int64_t{1400000061000}}) {
    SCOPED_TRACE(expiry_ms);
    const auto parsed =
        parse_legacy_value(format_legacy_value(LegacyFormat::epoch_seconds, expiry_ms), LegacyFormat::epoch_seconds);
    ASSERT_TRUE(parsed);
    EXPECT_GE(parsed->expiry_ms, expiry_ms);
    EXPECT_LT(parsed->expiry_ms, expiry_ms + 1000);
    EXPECT_FALSE(parsed->forever);
  }
}

// ---- uuid_ms: jedis-lock master's "<uuid>:<epoch ms>" ----------------------------------------

TEST(LegacyUuidMs, ParsesCanonicalUuidAndExpiry) {
  EXPECT_EQ(parse_legacy_value(uuid_value(kUuid, "1436950000001"), LegacyFormat::uuid_ms),
            stamp(1436950000001, false, std::string(kUuid)));
}

TEST(LegacyUuidMs, NormalisesOwnerToLowercase) {
  EXPECT_EQ(parse_legacy_value(uuid_value(kUpperUuid, "1436950000001"), LegacyFormat::uuid_ms),
            stamp(1436950000001, false, std::string(kUuid)));
  EXPECT_EQ(parse_legacy_value(uuid_value("F47ac10b-58CC-4372-a567-0E02b2c3d479", "7"), LegacyFormat::uuid_ms),
            stamp(7, false, std::string(kUuid)));
}

TEST(LegacyUuidMs, ParsesSignedExpiry) {
  EXPECT_EQ(parse_legacy_value(uuid_value(kUuid, "-5"), LegacyFormat::uuid_ms), stamp(-5, false, std::string(kUuid)));
  EXPECT_EQ(parse_legacy_value(uuid_value(kUuid, "+5"), LegacyFormat::uuid_ms), stamp(5, false, std::string(kUuid)));
  EXPECT_EQ(parse_legacy_value(uuid_value(kUuid, "9223372036854775807"), LegacyFormat::uuid_ms),
            stamp(kInt64Max, false, std::string(kUuid)));
}

TEST(LegacyUuidMs, RejectsMalformedValues) {
  const std::string uuid(kUuid);
  const std::vector<std::string> cases{
      "",
      ":1436950000001",
      uuid,                    // no colon
      uuid + "1436950000001",  // no colon
      uuid + ":",              // empty expiry
      uuid + ":1:2",           // extra colon
      uuid + "::1",
      uuid + ":abc",
      uuid + ":1.5",
      uuid + ": 1",
      uuid + ":9223372036854775808",  // overflow
      uuid.substr(1) + ":1",          // 35 characters
      uuid + "0:1",                   // 37 characters
      "0" + uuid + ":1",
      "g47ac10b-58cc-4372-a567-0e02b2c3d479:1",  // not hex
      "f47ac10b-58cc-4372-a567-0e02b2c3d47z:1",
      "f47ac10b 58cc-4372-a567-0e02b2c3d479:1",  // space for a dash
      "f47ac10-b58cc-4372-a567-0e02b2c3d479:1",  // dash one early
      "f47ac10b5-8cc-4372-a567-0e02b2c3d479:1",  // dash one late
      "f47ac10b-58cc-4372-a5670-e02b2c3d479:1",
      "f47ac10b-58cc-4372-a567-0e02b2c3d4-9:1",  // dash where a digit belongs
      "f47ac10b58cc4372a5670e02b2c3d479:1",      // 32 hex digits, no dashes
      "{f47ac10b-58cc-4372-a567-0e02b2c3d479}:1",
      "1436950000001",  // a plain epoch_ms value
      uuid + std::string(":14\0"
                         "36",
                         6),
  };
  for (const std::string& value : cases) {
    SCOPED_TRACE(printable(value));
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::uuid_ms), std::nullopt);
  }
}

TEST(LegacyUuidMs, FormatsOwnerColonMilliseconds) {
  EXPECT_EQ(format_legacy_value(LegacyFormat::uuid_ms, 1436950000001, kUuid), uuid_value(kUuid, "1436950000001"));
}

TEST(LegacyUuidMs, RoundTripsOwnerAndExpiry) {
  for (const std::int64_t expiry_ms :
       {std::int64_t{0}, std::int64_t{-5}, std::int64_t{1436950000001}, kInt64Max, kInt64Min}) {
    SCOPED_TRACE(expiry_ms);
    const std::string value = format_legacy_value(LegacyFormat::uuid_ms, expiry_ms, kUuid);
    EXPECT_EQ(parse_legacy_value(value, LegacyFormat::uuid_ms), stamp(expiry_ms, false, std::string(kUuid)));
  }
}

// ---- the other formats' values do not parse as each other where they must not ---------------

TEST(LegacyValue, UuidValueIsNotANumber) {
  const std::string value = uuid_value(kUuid, "1436950000001");
  EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_ms), std::nullopt);
  EXPECT_EQ(parse_legacy_value(value, LegacyFormat::epoch_seconds), std::nullopt);
}

TEST(LegacyValue, EpochMsNeverSetsForeverOrOwner) {
  const auto parsed = parse_legacy_value("2147483649", LegacyFormat::epoch_ms);
  EXPECT_EQ(parsed, stamp(2147483649));
}

// ---- is_plausible ----------------------------------------------------------------------------

TEST(LegacyValue, SecondsReadAsMillisecondsAreImplausible) {
  const auto parsed = parse_legacy_value("1400000061", LegacyFormat::epoch_ms);
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(is_plausible(*parsed, LegacyFormat::epoch_ms));
}

TEST(LegacyValue, MillisecondsReadAsSecondsAreImplausible) {
  const auto parsed = parse_legacy_value("1400000060001", LegacyFormat::epoch_seconds);
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(is_plausible(*parsed, LegacyFormat::epoch_seconds));
}

TEST(LegacyValue, ValuesInTheirOwnFormatArePlausible) {
  const std::vector<std::pair<std::string, LegacyFormat>> cases{
      {"1400000060001", LegacyFormat::epoch_ms},     {"1400000061", LegacyFormat::epoch_seconds},
      {"1400000061.0", LegacyFormat::epoch_seconds}, {uuid_value(kUuid, "1436950000001"), LegacyFormat::uuid_ms},
      {"4102444800000", LegacyFormat::epoch_ms},  // 2100-01-01
  };
  for (const auto& [value, format] : cases) {
    SCOPED_TRACE(value + " as " + std::string(lockbridge::to_string(format)));
    const auto parsed = parse_legacy_value(value, format);
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(is_plausible(*parsed, format));
  }
}

TEST(LegacyValue, NegativeAndZeroExpiriesAreImplausible) {
  const std::vector<std::pair<std::string, LegacyFormat>> cases{
      {"-5", LegacyFormat::epoch_ms},
      {"-1400000060001", LegacyFormat::epoch_ms},
      {"0", LegacyFormat::epoch_ms},
      {"-1400000061", LegacyFormat::epoch_seconds},
      {"-1.5", LegacyFormat::epoch_seconds},
      {"0", LegacyFormat::epoch_seconds},
      {uuid_value(kUuid, "-1436950000001"), LegacyFormat::uuid_ms},
      {uuid_value(kUuid, "0"), LegacyFormat::uuid_ms},
  };
  for (const auto& [value, format] : cases) {
    SCOPED_TRACE(value + " as " + std::string(lockbridge::to_string(format)));
    const auto parsed = parse_legacy_value(value, format);
    ASSERT_TRUE(parsed);
    EXPECT_FALSE(is_plausible(*parsed, format));
  }
}

TEST(LegacyValue, ForeverIsPlausibleOnlyForEpochSeconds) {
  const auto forever = parse_legacy_value("2147483649", LegacyFormat::epoch_seconds);
  ASSERT_TRUE(forever);
  ASSERT_TRUE(forever->forever);
  EXPECT_TRUE(is_plausible(*forever, LegacyFormat::epoch_seconds));
  EXPECT_FALSE(is_plausible(*forever, LegacyFormat::epoch_ms));
  EXPECT_FALSE(is_plausible(*forever, LegacyFormat::uuid_ms));
}

// ---- is_expired ------------------------------------------------------------------------------

TEST(LegacyValue, ExpiredOnlyStrictlyAfterTheExpiry) {
  const LegacyStamp s = stamp(1400000060001);
  EXPECT_FALSE(is_expired(s, 1400000060000));
  EXPECT_FALSE(is_expired(s, 1400000060001));  // expiry == now: still held, as jedis-lock's `expiry < now`
  EXPECT_TRUE(is_expired(s, 1400000060002));
}

TEST(LegacyValue, ForeverNeverExpires) {
  const auto forever = parse_legacy_value("2147483649", LegacyFormat::epoch_seconds);
  ASSERT_TRUE(forever);
  EXPECT_FALSE(is_expired(*forever, 0));
  EXPECT_FALSE(is_expired(*forever, kLegacyForeverSeconds * 1000 + 1));
  EXPECT_FALSE(is_expired(*forever, kInt64Max));
}

// ---- format names ----------------------------------------------------------------------------

TEST(LegacyFormatName, NamesEachFormat) {
  EXPECT_EQ(lockbridge::to_string(LegacyFormat::epoch_ms), "ms");
  EXPECT_EQ(lockbridge::to_string(LegacyFormat::epoch_seconds), "seconds");
  EXPECT_EQ(lockbridge::to_string(LegacyFormat::uuid_ms), "uuid-ms");
}

TEST(LegacyFormatName, ParsesEachNameBack) {
  for (const LegacyFormat format : {LegacyFormat::epoch_ms, LegacyFormat::epoch_seconds, LegacyFormat::uuid_ms}) {
    SCOPED_TRACE(lockbridge::to_string(format));
    EXPECT_EQ(legacy_format_from_string(lockbridge::to_string(format)), format);
  }
}

TEST(LegacyFormatName, RejectsUnknownNames) {
  for (const std::string_view name : {"", "MS", "Seconds", "epoch_ms", "uuid_ms", "uuid", " ms", "ms "}) {
    SCOPED_TRACE(printable(name));
    EXPECT_EQ(legacy_format_from_string(name), std::nullopt);
  }
}

// jedis-lock master's Lock.fromString + isExpiredOrMine (docs/wire-formats.md §1.3): what it cannot
// read is NO_LOCK, expired, so it may take it (docs/wire-formats.md hazard 1, LegacyOptions::jedis_lock_master).
TEST(JedisLockMasterMayTake, TakesWhatItCannotReadAndWhatIsExpiredOrMine) {
  using lockbridge::jedis_lock_master_may_take;
  const std::string mine = "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
  const std::string other = "f47ac10b-58cc-4372-a567-0e02b2c3d479";
  const std::int64_t now = 1'436'950'000'000;
  EXPECT_TRUE(jedis_lock_master_may_take(std::nullopt, mine, now)) << "a missing key";
  for (const std::string_view unreadable :
       {"", "1436950060001", "d77d35b6b3da96da86da6422474258d8", "garbage",
        "f47ac10b-58cc-4372-a567-0e02b2c3d479:", ":1436950060001",
        "f47ac10b-58cc-4372-a567-0e02b2c3d479::1436950060001", "f47ac10b-58cc-4372-a567-0e02b2c3d479:12x"}) {
    SCOPED_TRACE(unreadable);
    EXPECT_TRUE(jedis_lock_master_may_take(unreadable, mine, now));
  }
  EXPECT_FALSE(jedis_lock_master_may_take(other + ":1436950060001", mine, now)) << "live, another owner";
  EXPECT_FALSE(jedis_lock_master_may_take(other + ":1436950060001:junk", mine, now)) << "split(\":\") ignores the rest";
  EXPECT_FALSE(jedis_lock_master_may_take(other + ":" + std::to_string(now), mine, now)) << "expiry == now is live";
  EXPECT_TRUE(jedis_lock_master_may_take(other + ":" + std::to_string(now - 1), mine, now)) << "expired";
  EXPECT_TRUE(jedis_lock_master_may_take(mine + ":1436950060001", mine, now)) << "mine";
  EXPECT_TRUE(jedis_lock_master_may_take("0B6F0A2C-3C4D-4E5F-8A9B-0C1D2E3F4A5B:1436950060001", mine, now))
      << "java.util.UUID compares values, not spellings";
}

}  // namespace
