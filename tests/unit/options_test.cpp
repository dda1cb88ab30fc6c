// Option validation, construction without I/O, names of enums and error codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/mutex.hpp"
#include "no_server.hpp"

namespace {

using lockbridge::Client;
using lockbridge::ClientOptions;
using lockbridge::Errc;
using lockbridge::LegacyPreset;
using lockbridge::Mutex;
using lockbridge::MutexOptions;
using lockbridge::StrategyKind;
using lockbridge::testing::bad_option_message;
using lockbridge::testing::kUnreachableUrl;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr milliseconds kYear{365LL * 24 * 3600 * 1000};

// ---- MutexOptions ----------------------------------------------------------------------------

TEST(MutexOptions, DefaultsAreValid) {
  const MutexOptions options;
  EXPECT_NO_THROW(options.validate());
  EXPECT_EQ(options.strategy, StrategyKind::token);
  EXPECT_EQ(options.lease, milliseconds(60000));
  EXPECT_EQ(options.legacy.preset, LegacyPreset::hardened);
}

TEST(MutexOptions, RejectsLeaseOutsideOneMillisecondToOneYear) {
  for (const milliseconds lease :
       {milliseconds(0), milliseconds(-1), milliseconds(-60000), kYear + milliseconds(1), milliseconds::max()}) {
    SCOPED_TRACE(lease.count());
    MutexOptions options;
    options.lease = lease;
    EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("lease"));
  }
}

TEST(MutexOptions, AcceptsLeaseAtBothEndsOfTheRange) {
  for (const milliseconds lease : {milliseconds(1), kYear}) {
    SCOPED_TRACE(lease.count());
    MutexOptions options;
    options.lease = lease;
    EXPECT_NO_THROW(options.validate());
  }
}

TEST(MutexOptions, RejectsNegativeAcquireTimeout) {
  MutexOptions options;
  options.acquire_timeout = milliseconds(-1);
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("acquire_timeout"));
}

TEST(MutexOptions, RejectsNegativeRetryDurations) {
  MutexOptions options;
  options.retry.interval = milliseconds(-1);
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("retry.interval"));
  options = MutexOptions();
  options.retry.cap = milliseconds(-1);
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("retry.cap"));
  options = MutexOptions();
  options.retry.retries = -1;
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("retry.retries"));
}

TEST(MutexOptions, DefaultsWaitForReleaseNotificationsWithJitteredBackoff) {
  const MutexOptions options;
  EXPECT_EQ(options.wait_mode, lockbridge::WaitMode::notify);
  EXPECT_EQ(options.retry.kind, lockbridge::RetryPolicy::Kind::backoff);
  EXPECT_TRUE(options.local_queue);
}

TEST(MutexOptions, RejectsNegativeSafetyTtlGrace) {
  MutexOptions options;
  options.legacy.safety_ttl_grace = milliseconds(-1);
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("safety_ttl_grace"));
}

TEST(MutexOptions, RejectsSafetyTtlGraceAboveOneYear) {
  MutexOptions options;
  options.legacy.safety_ttl_grace = kYear + milliseconds(1);
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("safety_ttl_grace"));
}

TEST(MutexOptions, AcceptsZeroWaits) {
  MutexOptions options;
  options.acquire_timeout = milliseconds(0);
  options.retry.interval = milliseconds(0);
  options.retry.initial = milliseconds(0);
  options.legacy.safety_ttl_grace = milliseconds(0);
  EXPECT_NO_THROW(options.validate());
}

TEST(MutexOptions, JedisLock10PresetMatchesJedisLockDefaults) {
  const MutexOptions options = MutexOptions::jedis_lock_1_0();
  EXPECT_EQ(options.strategy, StrategyKind::legacy);
  EXPECT_EQ(options.legacy.preset, LegacyPreset::faithful);
  EXPECT_EQ(options.legacy.format, lockbridge::LegacyFormat::epoch_ms);
  EXPECT_EQ(options.lease, milliseconds(60000));
  EXPECT_EQ(options.acquire_timeout, milliseconds(10000));
  EXPECT_EQ(options.retry.kind, lockbridge::RetryPolicy::Kind::jedis_lock);
  EXPECT_EQ(options.retry.interval, milliseconds(100));
  EXPECT_EQ(options.wait_mode, lockbridge::WaitMode::poll);
  EXPECT_NO_THROW(options.validate());
}

TEST(MutexOptions, LegacyOwnerMustBeALowercaseUuidInTheUuidMsFormat) {
  MutexOptions options = MutexOptions::jedis_lock_1_0();
  options.legacy.format = lockbridge::LegacyFormat::uuid_ms;
  options.legacy.owner = "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
  EXPECT_NO_THROW(options.validate());
  for (const char* bad :
       {"0B6F0A2C-3C4D-4E5F-8A9B-0C1D2E3F4A5B", "0b6f0a2c", "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b:1"}) {
    SCOPED_TRACE(bad);
    options.legacy.owner = bad;
    EXPECT_THROW(options.validate(), lockbridge::Error);
  }
  options.legacy.owner = "0b6f0a2c-3c4d-4e5f-8a9b-0c1d2e3f4a5b";
  options.legacy.format = lockbridge::LegacyFormat::epoch_ms;
  EXPECT_THROW(options.validate(), lockbridge::Error) << "epoch_ms values carry no owner";
}

TEST(MutexOptions, JedisLockMasterRulesNeedFaithfulUuidMs) {
  MutexOptions options = MutexOptions::jedis_lock_1_0();
  options.legacy.jedis_lock_master = true;
  EXPECT_THROW(options.validate(), lockbridge::Error) << "epoch_ms";
  options.legacy.format = lockbridge::LegacyFormat::uuid_ms;
  EXPECT_NO_THROW(options.validate());
  options.legacy.preset = LegacyPreset::hardened;
  EXPECT_THROW(options.validate(), lockbridge::Error) << "the hardened preset never steals";
  options.legacy.preset = LegacyPreset::faithful;
  options.strategy = StrategyKind::token;
  EXPECT_THROW(options.validate(), lockbridge::Error);
}

// ---- ClientOptions ---------------------------------------------------------------------------

TEST(ClientOptions, DefaultsAreValid) { EXPECT_NO_THROW(ClientOptions().validate()); }

TEST(ClientOptions, RejectsNonPositiveConnectTimeout) {
  for (const milliseconds timeout : {milliseconds(0), milliseconds(-1)}) {
    SCOPED_TRACE(timeout.count());
    ClientOptions options;
    options.connect_timeout = timeout;
    EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("connect_timeout"));
  }
}

TEST(ClientOptions, RejectsNonPositiveCommandTimeout) {
  for (const milliseconds timeout : {milliseconds(0), milliseconds(-1)}) {
    SCOPED_TRACE(timeout.count());
    ClientOptions options;
    options.command_timeout = timeout;
    EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("command_timeout"));
  }
}

TEST(ClientOptions, RejectsEmptyPool) {
  ClientOptions options;
  options.pool_size = 0;
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("pool_size"));
}

TEST(ClientOptions, RejectsNegativeReconnectBackoff) {
  ClientOptions options;
  options.reconnect_backoff = milliseconds(-1);
  EXPECT_THAT(bad_option_message([&] { options.validate(); }), HasSubstr("reconnect_backoff"));
}

TEST(ClientOptions, AcceptsZeroReconnectBackoffAndPoolOfOne) {
  ClientOptions options;
  options.reconnect_backoff = milliseconds(0);
  options.pool_size = 1;
  EXPECT_NO_THROW(options.validate());
}

// ---- Client construction ---------------------------------------------------------------------

TEST(Client, RejectsBadUrl) {
  for (const char* url :
       {"", "http://127.0.0.1:6379", "redis://127.0.0.1:0", "rediss://127.0.0.1:0", "rediss-redlock://h"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(bad_option_message([&] { Client client(url); }), HasSubstr("invalid Redis URL"));
  }
}

TEST(Client, RejectsACertificateWithoutItsKeyAndTheReverse) {
  ClientOptions options;
  options.tls.cert_file = "/tmp/client.pem";
  EXPECT_THAT(bad_option_message([&] { Client client("rediss://127.0.0.1:6380", options); }),
              HasSubstr("only the certificate is given"));
  options.tls.cert_file.clear();
  options.tls.key_file = "/tmp/client.key";
  EXPECT_THAT(bad_option_message([&] { Client client("rediss://127.0.0.1:6380", options); }),
              HasSubstr("only the key is given"));
}

TEST(Client, RejectsTlsOverAUnixSocket) {
  EXPECT_THAT(bad_option_message([&] {
                Client client("unix:///tmp/redis.sock", ClientOptions{.tls = lockbridge::TlsOptions{.enabled = true}});
              }),
              HasSubstr("TLS over a unix socket"));
}

TEST(Client, RejectsBadOptions) {
  ClientOptions options;
  options.pool_size = 0;
  EXPECT_THAT(bad_option_message([&] { Client client(kUnreachableUrl, options); }), HasSubstr("pool_size"));
}

TEST(Client, ConstructionDoesNotConnect) {
  ClientOptions options;
  options.pool_size = 3;
  std::optional<Client> client;
  ASSERT_NO_THROW(client.emplace(kUnreachableUrl, options));
  EXPECT_EQ(client->url().host, "127.0.0.1");
  EXPECT_EQ(client->url().port, 1);
  EXPECT_EQ(client->options().pool_size, 3U);
}

TEST(Client, CopiesShareState) {
  const Client client(kUnreachableUrl);
  const Client copy = client;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
  EXPECT_EQ(copy.state(), client.state());
}

TEST(Client, RejectsEmptyCommandWithoutConnecting) {
  const Client client(kUnreachableUrl);
  EXPECT_THAT(bad_option_message([&] { client.command(std::initializer_list<std::string_view>{}); }),
              HasSubstr("empty command"));
}

// ---- Mutex construction ----------------------------------------------------------------------

TEST(Mutex, RejectsEmptyKey) {
  const Client client(kUnreachableUrl);
  EXPECT_THAT(bad_option_message([&] { Mutex mutex(client, ""); }), HasSubstr("key"));
}

TEST(Mutex, RejectsInvalidOptions) {
  const Client client(kUnreachableUrl);
  MutexOptions options;
  options.lease = milliseconds(0);
  EXPECT_THAT(bad_option_message([&] { Mutex mutex(client, "orders:42", options); }), HasSubstr("lease"));
}

TEST(Mutex, ConstructionDoesNoIoForEveryStrategy) {
  const Client client(kUnreachableUrl);
  MutexOptions hardened;
  hardened.strategy = StrategyKind::legacy;
  const std::vector<std::pair<const char*, MutexOptions>> cases{
      {"token", MutexOptions()},
      {"legacy hardened", hardened},
      {"legacy faithful", MutexOptions::jedis_lock_1_0()},
  };
  for (const auto& [name, options] : cases) {
    SCOPED_TRACE(name);
    std::optional<Mutex> mutex;
    ASSERT_NO_THROW(mutex.emplace(client, "orders:42", options));
    EXPECT_EQ(mutex->key(), "orders:42");
    EXPECT_EQ(mutex->options().strategy, options.strategy);
    EXPECT_FALSE(mutex->owns_lock());
    EXPECT_EQ(mutex->valid_for(), milliseconds(0));
    EXPECT_TRUE(mutex->value().empty());
    EXPECT_FALSE(mutex->last_error());
    mutex.reset();  // the destructor has nothing to release, so it talks to no server either
  }
}

TEST(Mutex, UnlockWithoutHoldingIsHarmless) {
  const Client client(kUnreachableUrl);
  Mutex mutex(client, "orders:42");
  mutex.unlock();
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_FALSE(mutex.last_error());
}

TEST(Mutex, ExtendRejectsNonPositiveLease) {
  const Client client(kUnreachableUrl);
  Mutex mutex(client, "orders:42");
  for (const milliseconds lease : {milliseconds(0), milliseconds(-1)}) {
    SCOPED_TRACE(lease.count());
    EXPECT_THAT(bad_option_message([&] { (void)mutex.extend(lease); }), HasSubstr("lease"));
  }
}

TEST(Mutex, ExtendWithoutHoldingThrowsBadOption) {
  const Client client(kUnreachableUrl);
  Mutex mutex(client, "orders:42");
  EXPECT_THAT(bad_option_message([&] { (void)mutex.extend(milliseconds(1000)); }), HasSubstr("does not hold"));
}

// ---- names -----------------------------------------------------------------------------------

TEST(EnumNames, NamesStrategyKinds) {
  EXPECT_EQ(lockbridge::to_string(StrategyKind::legacy), "legacy");
  EXPECT_EQ(lockbridge::to_string(StrategyKind::token), "token");
}

TEST(EnumNames, NamesLegacyPresets) {
  EXPECT_EQ(lockbridge::to_string(LegacyPreset::faithful), "faithful");
  EXPECT_EQ(lockbridge::to_string(LegacyPreset::hardened), "hardened");
}

// ---- errors ----------------------------------------------------------------------------------

const std::vector<std::pair<Errc, std::string>>& all_codes() {
  static const std::vector<std::pair<Errc, std::string>> codes{
      {Errc::io, "io"},
      {Errc::timeout, "timeout"},
      {Errc::protocol, "protocol"},
      {Errc::server_reply, "server_reply"},
      {Errc::wrong_type, "wrong_type"},
      {Errc::bad_value, "bad_value"},
      {Errc::lease_lost, "lease_lost"},
      {Errc::no_quorum, "no_quorum"},
      {Errc::bad_option, "bad_option"},
      {Errc::tls, "tls"},
  };
  return codes;
}

TEST(Error, NamesEveryCode) {
  for (const auto& [code, name] : all_codes()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(std::string(lockbridge::errc_name(code)), name);
  }
}

TEST(Error, NamesUnknownCodeAsUnknown) {
  EXPECT_EQ(std::string(lockbridge::errc_name(static_cast<Errc>(0))), "unknown");
}

TEST(Error, EveryCodeHasItsOwnDescription) {
  std::vector<std::string> seen;
  for (const auto& [code, name] : all_codes()) {
    SCOPED_TRACE(name);
    const std::string message = lockbridge::error_category().message(static_cast<int>(code));
    EXPECT_FALSE(message.empty());
    EXPECT_NE(message, "unknown lockbridge error");
    EXPECT_THAT(seen, ::testing::Not(::testing::Contains(message)));
    seen.push_back(message);
  }
}

TEST(Error, IsASystemErrorInTheLockbridgeCategory) {
  static_assert(std::is_base_of_v<std::system_error, lockbridge::Error>);
  for (const auto& [code, name] : all_codes()) {
    SCOPED_TRACE(name);
    try {
      throw lockbridge::Error(code, "acquire orders:42");
    } catch (const std::system_error& error) {
      EXPECT_STREQ(error.code().category().name(), "lockbridge");
      EXPECT_EQ(error.code().value(), static_cast<int>(code));
      EXPECT_EQ(error.code(), lockbridge::make_error_code(code));
      EXPECT_EQ(dynamic_cast<const lockbridge::Error&>(error).errc(), code);
    }
  }
}

TEST(Error, WhatIsContextThenDescription) {
  const lockbridge::Error error(Errc::timeout, "acquire orders:42");
  EXPECT_EQ(std::string(error.what()),
            "acquire orders:42: " + lockbridge::error_category().message(static_cast<int>(Errc::timeout)));
}

TEST(Error, CodesConvertImplicitlyToErrorCode) {
  const std::error_code code = Errc::lease_lost;
  EXPECT_EQ(code.category(), lockbridge::error_category());
  EXPECT_EQ(code.value(), static_cast<int>(Errc::lease_lost));
  EXPECT_EQ(code, Errc::lease_lost);
  EXPECT_NE(code, std::error_code(static_cast<int>(Errc::lease_lost), std::generic_category()));
}

}  // namespace
