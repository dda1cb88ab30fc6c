// LockStripes without a server: the stable hash, the spread of ids over stripes, option checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"
#include "lockbridge/mutex.hpp"
#include "lockbridge/stripes.hpp"
#include "no_server.hpp"

namespace {

using lockbridge::Client;
using lockbridge::Errc;
using lockbridge::LockStripes;
using lockbridge::MutexOptions;
using lockbridge::testing::bad_option_message;
using lockbridge::testing::kUnreachableUrl;
using ::testing::HasSubstr;

TEST(LockStripes, HashIsFnv1a64AndNeverChanges) {
  // Pinned once: a fleet whose processes disagree on these locks one resource through two keys.
  EXPECT_EQ(LockStripes::stable_hash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(LockStripes::stable_hash("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(LockStripes::stable_hash("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(LockStripes::stable_hash("order-42"), 0x7d1deb86a05662d4ULL);
  EXPECT_EQ(LockStripes::stable_hash("z\xc3\xbcrich"), 0xfe8bb21e6544b7a0ULL);  // bytes >= 0x80 count unsigned
  EXPECT_EQ(LockStripes::stable_hash(std::string("\xff\0x", 3)), 0xf920b11be415a916ULL);
}

TEST(LockStripes, StripeAndKeyOfAnIdAreFixed) {
  const LockStripes sixteen(Client(kUnreachableUrl), "orders", 16);
  EXPECT_EQ(sixteen.stripe_of("order-42"), 4U);
  EXPECT_EQ(sixteen.stripe_of("foobar"), 8U);
  EXPECT_EQ(sixteen.key_for("a"), "orders:stripe:12");
  const LockStripes thousand(Client(kUnreachableUrl), "{orders}", 1000);
  EXPECT_EQ(thousand.stripe_of("a"), 996U);
  EXPECT_EQ(thousand.key_for("foobar"), "{orders}:stripe:968");
}

TEST(LockStripes, SpreadsIdsOverEveryStripe) {
  const LockStripes stripes(Client(kUnreachableUrl), "orders", 16);
  std::vector<std::size_t> per_stripe(16);
  for (int id = 0; id < 10000; ++id) {
    const std::size_t stripe = stripes.stripe_of("order-" + std::to_string(id));
    ASSERT_LT(stripe, 16U);
    ++per_stripe[stripe];
  }
  for (std::size_t stripe = 0; stripe < per_stripe.size(); ++stripe) {
    SCOPED_TRACE(stripe);
    // 625 each if perfectly even; a usable hash stays well within half to double of that.
    EXPECT_GT(per_stripe[stripe], 10000U / 16 / 2);
    EXPECT_LT(per_stripe[stripe], 10000U / 16 * 2);
  }
}

TEST(LockStripes, OneStripeTakesEveryId) {
  const LockStripes one(Client(kUnreachableUrl), "all", 1);
  EXPECT_EQ(one.stripe_of("x"), 0U);
  EXPECT_EQ(one.key_for("y"), "all:stripe:0");
}

TEST(LockStripes, MutexForDoesNoIoAndUsesTheStripeKeyAndOptions) {
  MutexOptions options;
  options.lease = std::chrono::milliseconds(1234);
  const LockStripes stripes(Client(kUnreachableUrl), "orders", 16, options);
  const lockbridge::Mutex mutex = stripes.mutex_for("order-42");
  EXPECT_EQ(mutex.key(), "orders:stripe:4");
  EXPECT_EQ(mutex.options().lease, std::chrono::milliseconds(1234));
  EXPECT_FALSE(mutex.owns_lock());
}

TEST(LockStripes, RefusesAnEmptyPrefix) {
  EXPECT_THAT(bad_option_message([] { LockStripes(Client(kUnreachableUrl), "", 16); }), HasSubstr("prefix"));
}

TEST(LockStripes, RefusesStripeCountsOutsideOneToAMillion) {
  for (const std::size_t count : {std::size_t{0}, LockStripes::kMaxStripes + 1, static_cast<std::size_t>(-1)}) {
    SCOPED_TRACE(count);
    EXPECT_THAT(bad_option_message([&] { LockStripes(Client(kUnreachableUrl), "orders", count); }),
                HasSubstr("stripe count"));
  }
  EXPECT_NO_THROW(LockStripes(Client(kUnreachableUrl), "orders", LockStripes::kMaxStripes));
}

TEST(LockStripes, RefusesInvalidMutexOptions) {
  MutexOptions options;
  options.lease = std::chrono::milliseconds(0);
  EXPECT_THAT(bad_option_message([&] { LockStripes(Client(kUnreachableUrl), "orders", 16, options); }),
              HasSubstr("lease"));
}

}  // namespace
