// What INFO says of eviction, and which lock keys each maxmemory-policy may evict.
#include <gtest/gtest.h>

#include <string>

#include "audit/eviction.hpp"

namespace lockbridge::tools::audit {
namespace {

Eviction parsed(const std::string& info) {
  Eviction out;
  parse_info_into(info, out);
  return out;
}

TEST(AuditEviction, ReadsTheThreeFieldsOfInfoWithCrLfOrLf) {
  const Eviction crlf = parsed(
      "# Memory\r\nused_memory:1000\r\nmaxmemory:1048576\r\nmaxmemory_human:1.00M\r\n"
      "maxmemory_policy:allkeys-lru\r\n# Stats\r\nevicted_keys:12\r\n");
  EXPECT_EQ(crlf.policy, "allkeys-lru");
  EXPECT_EQ(crlf.maxmemory, 1048576);
  EXPECT_EQ(crlf.evicted_keys, 12);
  const Eviction lf = parsed("maxmemory:0\nmaxmemory_policy:noeviction");
  EXPECT_EQ(lf.policy, "noeviction");
  EXPECT_EQ(lf.maxmemory, 0);
  EXPECT_FALSE(lf.evicted_keys.has_value());
}

TEST(AuditEviction, EachPolicyReachesTheLockKeysItMayEvict) {
  const auto reach = [](const std::string& policy, const std::string& maxmemory) {
    return parsed("maxmemory:" + maxmemory + "\nmaxmemory_policy:" + policy + "\n").reach();
  };
  EXPECT_EQ(reach("noeviction", "1048576"), Eviction::Reach::none);
  EXPECT_EQ(reach("allkeys-lru", "0"), Eviction::Reach::none);  // no limit: nothing is evicted
  for (const char* policy : {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}) {
    EXPECT_EQ(reach(policy, "1048576"), Eviction::Reach::with_ttl) << policy;
  }
  for (const char* policy : {"allkeys-lru", "allkeys-lfu", "allkeys-random"}) {
    EXPECT_EQ(reach(policy, "1048576"), Eviction::Reach::any) << policy;
  }
  EXPECT_EQ(reach("some-future-policy", "1048576"), Eviction::Reach::unknown);  // never called safe
  EXPECT_EQ(parsed("maxmemory_policy:noeviction\n").reach(), Eviction::Reach::unknown);
  EXPECT_EQ(reach("volatile-lru", "not a number"), Eviction::Reach::unknown);
}

TEST(AuditEviction, OnlyServersKnownToKeepTheirKeysAreSafe) {
  const Eviction safe = parsed("maxmemory:0\nmaxmemory_policy:noeviction\n");
  Eviction refused;
  refused.error = "NOPERM";
  EXPECT_FALSE(any_not_known_safe({safe, safe}));
  EXPECT_TRUE(any_not_known_safe({safe, parsed("maxmemory:1\nmaxmemory_policy:volatile-ttl\n")}));
  EXPECT_TRUE(any_not_known_safe({safe, refused}));  // fails closed
  Eviction half_read = safe;  // a policy read, then a failure: what is known is not enough
  half_read.error = "NOPERM";
  EXPECT_EQ(half_read.reach(), Eviction::Reach::unknown);
  EXPECT_EQ(to_json({refused})[0]["may_evict"], "unknown");
  EXPECT_EQ(to_json({refused})[0]["error"], "NOPERM");
}

}  // namespace
}  // namespace lockbridge::tools::audit
