// LockStripes against the fixture's redis-server: ids on one stripe exclude each other, ids on
// different stripes do not, and mutex_for gives an ordinary working Mutex.
#include <gtest/gtest.h>

#include <string>

#include "lockbridge/stripes.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

// Two ids on one stripe and one on another, found by the (stable) hash itself.
struct Ids {
  std::string first, same_stripe, other_stripe;
};
Ids pick_ids(const LockStripes& stripes) {
  Ids ids{"order-0", "", ""};
  for (int n = 1; ids.same_stripe.empty() || ids.other_stripe.empty(); ++n) {
    const std::string id = "order-" + std::to_string(n);
    std::string& slot = stripes.stripe_of(id) == stripes.stripe_of(ids.first) ? ids.same_stripe : ids.other_stripe;
    if (slot.empty()) slot = id;
  }
  return ids;
}

TEST(LockStripes, TwoIdsOnOneStripeExcludeEachOther) {
  const LockStripes stripes(test_client(), unique_key(), 4, token_options());
  const Ids ids = pick_ids(stripes);
  Mutex first = stripes.mutex_for(ids.first);
  Mutex same = stripes.mutex_for(ids.same_stripe);
  Mutex other = stripes.mutex_for(ids.other_stripe);
  ASSERT_TRUE(first.try_lock());
  EXPECT_FALSE(same.try_lock()) << "false sharing: a different id, the same stripe key";
  EXPECT_TRUE(other.try_lock()) << "another stripe is another key";
  first.unlock();
  EXPECT_TRUE(same.try_lock());
}

TEST(LockStripes, MutexForGivesAWorkingMutexOnTheStripeKey) {
  const LockStripes stripes(test_client(), unique_key(), 16, token_options());
  Mutex mutex = stripes.mutex_for("order-42");
  EXPECT_EQ(mutex.key(), stripes.key_for("order-42"));
  {
    std::unique_lock guard(mutex);
    EXPECT_EQ(raw({"GET", stripes.key_for("order-42")}).str, mutex.value());
  }
  EXPECT_TRUE(raw({"GET", stripes.key_for("order-42")}).is_nil());
  EXPECT_FALSE(mutex.last_error());
}

}  // namespace
}  // namespace lockbridge::testing
