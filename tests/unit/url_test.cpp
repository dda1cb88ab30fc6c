// parse_redis_url and RedisUrl::redacted(): what is accepted, and what is rejected with which complaint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/error.hpp"
#include "lockbridge/url.hpp"

namespace {

using lockbridge::Errc;
using lockbridge::parse_redis_url;
using lockbridge::RedisUrl;
using ::testing::HasSubstr;
using ::testing::Not;

// The message of the Error{bad_option} that parsing `url` throws; a test failure if it throws
// anything else or nothing.
std::string rejection(std::string_view url) {
  try {
    const RedisUrl parsed = parse_redis_url(url);
    ADD_FAILURE() << "accepted '" << url << "' as " << parsed.redacted();
  } catch (const lockbridge::Error& error) {
    EXPECT_EQ(error.errc(), Errc::bad_option) << "'" << url << "': " << error.what();
    return error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "'" << url << "' threw something other than lockbridge::Error: " << error.what();
  }
  return {};
}

// ---- accepted --------------------------------------------------------------------------------

TEST(RedisUrl, HostAloneGetsDefaultPortAndDatabase) {
  const RedisUrl url = parse_redis_url("redis://cache.example.com");
  EXPECT_EQ(url.transport, RedisUrl::Transport::tcp);
  EXPECT_EQ(url.host, "cache.example.com");
  EXPECT_EQ(url.port, 6379);
  EXPECT_EQ(url.db, 0);
  EXPECT_FALSE(url.user);
  EXPECT_FALSE(url.password);
  EXPECT_TRUE(url.socket_path.empty());
}

TEST(RedisUrl, ParsesHostAndPort) {
  const RedisUrl url = parse_redis_url("redis://10.0.0.7:6380");
  EXPECT_EQ(url.host, "10.0.0.7");
  EXPECT_EQ(url.port, 6380);
  EXPECT_EQ(url.db, 0);
}

TEST(RedisUrl, AcceptsPortsAtBothEndsOfTheRange) {
  EXPECT_EQ(parse_redis_url("redis://h:1").port, 1);
  EXPECT_EQ(parse_redis_url("redis://h:65535").port, 65535);
}

TEST(RedisUrl, ParsesDatabase) {
  EXPECT_EQ(parse_redis_url("redis://h/3").db, 3);
  EXPECT_EQ(parse_redis_url("redis://h:6380/15").db, 15);
  EXPECT_EQ(parse_redis_url("redis://h/0").db, 0);
}

TEST(RedisUrl, TrailingSlashMeansDatabaseZero) {
  const RedisUrl url = parse_redis_url("redis://h:6380/");
  EXPECT_EQ(url.port, 6380);
  EXPECT_EQ(url.db, 0);
}

TEST(RedisUrl, ParsesUserAndPassword) {
  const RedisUrl url = parse_redis_url("redis://alice:s3cret@h:6380/2");
  EXPECT_EQ(url.user, "alice");
  EXPECT_EQ(url.password, "s3cret");
  EXPECT_EQ(url.host, "h");
  EXPECT_EQ(url.port, 6380);
  EXPECT_EQ(url.db, 2);
}

TEST(RedisUrl, ParsesPasswordWithoutUser) {
  const RedisUrl url = parse_redis_url("redis://:s3cret@h");
  EXPECT_FALSE(url.user);
  EXPECT_EQ(url.password, "s3cret");
  EXPECT_EQ(url.host, "h");
}

TEST(RedisUrl, ParsesUserWithoutPassword) {
  const RedisUrl url = parse_redis_url("redis://alice@h");
  EXPECT_EQ(url.user, "alice");
  EXPECT_FALSE(url.password);
  EXPECT_EQ(url.host, "h");
}

TEST(RedisUrl, PercentDecodesUserAndPassword) {
  const RedisUrl url = parse_redis_url("redis://al%69ce%3Ax:p%40ss%2F%3a%25@h");
  EXPECT_EQ(url.user, "alice:x");
  EXPECT_EQ(url.password, "p@ss/:%");
  EXPECT_EQ(url.host, "h");
}

TEST(RedisUrl, ParsesBracketedIpv6HostAndPort) {
  const RedisUrl url = parse_redis_url("redis://[::1]:6380");
  EXPECT_EQ(url.transport, RedisUrl::Transport::tcp);
  EXPECT_EQ(url.host, "::1");
  EXPECT_EQ(url.port, 6380);
}

TEST(RedisUrl, ParsesBracketedIpv6HostWithoutPort) {
  const RedisUrl url = parse_redis_url("redis://u:p@[fe80::1]/4");
  EXPECT_EQ(url.host, "fe80::1");
  EXPECT_EQ(url.port, 6379);
  EXPECT_EQ(url.db, 4);
  EXPECT_EQ(url.password, "p");
}

TEST(RedisUrl, ParsesUnixSocketPath) {
  const RedisUrl url = parse_redis_url("unix:///var/run/redis/redis.sock");
  EXPECT_EQ(url.transport, RedisUrl::Transport::unix_socket);
  EXPECT_EQ(url.socket_path, "/var/run/redis/redis.sock");
  EXPECT_EQ(url.db, 0);
  EXPECT_FALSE(url.user);
  EXPECT_FALSE(url.password);
}

TEST(RedisUrl, ParsesUnixSocketDatabaseParameter) {
  const RedisUrl url = parse_redis_url("unix:///tmp/redis.sock?db=3");
  EXPECT_EQ(url.socket_path, "/tmp/redis.sock");
  EXPECT_EQ(url.db, 3);
}

TEST(RedisUrl, ParsesUnixSocketUserAndPasswordParameters) {
  const RedisUrl url = parse_redis_url("unix:///tmp/redis.sock?user=alice&password=p%40ss&db=2");
  EXPECT_EQ(url.socket_path, "/tmp/redis.sock");
  EXPECT_EQ(url.user, "alice");
  EXPECT_EQ(url.password, "p@ss");
  EXPECT_EQ(url.db, 2);
}

// ---- rejected --------------------------------------------------------------------------------

TEST(RedisUrl, RejectsEmptyString) { EXPECT_THAT(rejection(""), HasSubstr("missing scheme")); }

TEST(RedisUrl, RejectsUrlWithoutScheme) { EXPECT_THAT(rejection("localhost:6379"), HasSubstr("missing scheme")); }

TEST(RedisUrl, RejectsUnknownScheme) {
  const std::string message = rejection("http://localhost:6379");
  EXPECT_THAT(message, HasSubstr("unknown scheme"));
  EXPECT_THAT(message, Not(HasSubstr("localhost"))) << "nothing of the URL is quoted";
}

TEST(RedisUrl, TlsSchemesAreThePlainOnesOverTls) {
  const RedisUrl single = parse_redis_url("rediss://u:p@localhost:6380/2");
  EXPECT_TRUE(single.tls);
  EXPECT_EQ(single.topology, RedisUrl::Topology::single);
  EXPECT_EQ(single.host, "localhost");
  EXPECT_EQ(single.port, 6380);
  EXPECT_EQ(single.db, 2);
  EXPECT_EQ(single.redacted(), "rediss://u:***@localhost:6380/2");
  EXPECT_TRUE(single.server(RedisUrl::Node{"10.0.0.1", 7000}).tls) << "a node reached through it keeps TLS";

  const RedisUrl sentinel = parse_redis_url("rediss-sentinel://a:26380,b/mymaster");
  EXPECT_TRUE(sentinel.tls);
  EXPECT_EQ(sentinel.topology, RedisUrl::Topology::sentinel);
  EXPECT_EQ(sentinel.master_name, "mymaster");
  EXPECT_EQ(sentinel.redacted(), "rediss-sentinel://a:26380,b:26379/mymaster");

  const RedisUrl cluster = parse_redis_url("rediss-cluster://a:7000,b:7001");
  EXPECT_TRUE(cluster.tls);
  EXPECT_EQ(cluster.topology, RedisUrl::Topology::cluster);
  EXPECT_EQ(cluster.redacted(), "rediss-cluster://a:7000,b:7001");

  EXPECT_FALSE(parse_redis_url("redis://localhost").tls);
}

TEST(RedisUrl, RejectsTlsSchemesThatDoNotExist) {
  for (const std::string_view url : {"rediss-redlock://a,b,c", "rediss-unix:///tmp/s", "redisss://h"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(rejection(url), HasSubstr("unknown scheme"));
  }
}

TEST(RedisUrl, RejectsMissingHost) {
  for (const std::string_view url : {"redis://", "redis://:6379", "redis:///1", "redis://u:p@", "redis://[]:6379"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(rejection(url), HasSubstr("missing host"));
  }
}

TEST(RedisUrl, RejectsEmptyUserInfo) { EXPECT_THAT(rejection("redis://@h"), HasSubstr("empty user info")); }

TEST(RedisUrl, RejectsPortZero) {
  EXPECT_THAT(rejection("redis://h:0"), HasSubstr("port is not a number in [1, 65535]"));
}

TEST(RedisUrl, RejectsPortAboveRange) {
  EXPECT_THAT(rejection("redis://h:65536"), HasSubstr("port is not a number in [1, 65535]"));
  EXPECT_THAT(rejection("redis://h:99999999999999999999"), HasSubstr("port is not a number in [1, 65535]"));
}

TEST(RedisUrl, RejectsNonNumericPort) {
  for (const std::string_view url :
       {"redis://h:abc", "redis://h:-1", "redis://h:+1", "redis://h:63 79", "redis://h:6379x", "redis://[::1]:abc"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(rejection(url), HasSubstr("port is not a number in [1, 65535]"));
  }
}

TEST(RedisUrl, RejectsEmptyPort) {
  EXPECT_THAT(rejection("redis://h:"), HasSubstr("empty port"));
  EXPECT_THAT(rejection("redis://h:/1"), HasSubstr("empty port"));
  EXPECT_THAT(rejection("redis://[::1]:"), HasSubstr("empty port"));
}

TEST(RedisUrl, RejectsNonNumericDatabase) {
  EXPECT_THAT(rejection("redis://h/x"), HasSubstr("database is not a number in [0, 1048576]"));
  EXPECT_THAT(rejection("redis://h/1/2"), HasSubstr("database is not a number in [0, 1048576]"));
}

TEST(RedisUrl, RejectsNegativeDatabase) {
  EXPECT_THAT(rejection("redis://h/-1"), HasSubstr("database is not a number in [0, 1048576]"));
}

TEST(RedisUrl, RejectsDatabaseTooLarge) {
  EXPECT_EQ(parse_redis_url("redis://h/1048576").db, 1048576);  // the documented upper end
  EXPECT_THAT(rejection("redis://h/1048577"), HasSubstr("database is not a number in [0, 1048576]"));
  EXPECT_THAT(rejection("redis://h/99999999999999999999"), HasSubstr("database is not a number in [0, 1048576]"));
}

TEST(RedisUrl, RejectsBadPercentEscape) {
  EXPECT_THAT(rejection("redis://u:p%zz@h"), HasSubstr("bad percent escape in password"));
  EXPECT_THAT(rejection("redis://u%4g:p@h"), HasSubstr("bad percent escape in user"));
  EXPECT_THAT(rejection("unix:///s?password=%zz"), HasSubstr("bad percent escape in password"));
}

TEST(RedisUrl, RejectsTruncatedPercentEscape) {
  EXPECT_THAT(rejection("redis://u:p%4@h"), HasSubstr("truncated percent escape in password"));
  EXPECT_THAT(rejection("redis://u:%@h"), HasSubstr("truncated percent escape in password"));
  EXPECT_THAT(rejection("redis://u%4:p@h"), HasSubstr("truncated percent escape in user"));
  EXPECT_THAT(rejection("unix:///s?user=%4"), HasSubstr("truncated percent escape in user"));
}

TEST(RedisUrl, RejectsUnclosedIpv6Bracket) {
  EXPECT_THAT(rejection("redis://[::1"), HasSubstr("missing its closing ']'"));
  EXPECT_THAT(rejection("redis://[::1:6379"), HasSubstr("missing its closing ']'"));
}

TEST(RedisUrl, RejectsTextAfterIpv6Bracket) {
  EXPECT_THAT(rejection("redis://[::1]x"), HasSubstr("unexpected text after the IPv6 host"));
  EXPECT_THAT(rejection("redis://[::1]6379"), HasSubstr("unexpected text after the IPv6 host"));
}

TEST(RedisUrl, RejectsRelativeUnixSocketPath) {
  for (const std::string_view url : {"unix://redis.sock", "unix://", "unix://?db=1", "unix://tmp/redis.sock"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(rejection(url), HasSubstr("socket path must be absolute"));
  }
}

TEST(RedisUrl, RejectsUnknownUnixQueryParameter) {
  const std::string message = rejection("unix:///tmp/redis.sock?db=1&timeout=5");
  EXPECT_THAT(message, HasSubstr("query parameter 2 is unknown"));
}

TEST(RedisUrl, RejectsBadUnixDatabaseParameter) {
  EXPECT_THAT(rejection("unix:///s?db=x"), HasSubstr("database is not a number in [0, 1048576]"));
  EXPECT_THAT(rejection("unix:///s?db="), HasSubstr("database is not a number in [0, 1048576]"));
  EXPECT_THAT(rejection("unix:///s?db"), HasSubstr("database is not a number in [0, 1048576]"));
  EXPECT_THAT(rejection("unix:///s?db=-1"), HasSubstr("database is not a number in [0, 1048576]"));
}

TEST(RedisUrl, RejectsQueryStringOnTcpUrl) {
  for (const std::string_view url : {"redis://h?db=1", "redis://h:6379/0?timeout=1", "redis://h#frag"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(rejection(url), HasSubstr("query parameters and fragments are not supported"));
  }
}

TEST(RedisUrl, RejectsInvalidCharacterInHost) {
  for (const std::string_view url : {"redis://my host", "redis://my host:6379", "redis://h%41", "redis://[::1 ]",
                                     "redis://ho\"st", "redis://h\tx"}) {
    SCOPED_TRACE(url);
    EXPECT_THAT(rejection(url), HasSubstr("host contains an invalid character"));
  }
}

TEST(RedisUrl, RejectsSlashInsideHost) {
  // '/' ends the authority, so what follows is read (and rejected) as the database.
  EXPECT_THAT(rejection("redis://ho/st:6379"), HasSubstr("database is not a number in [0, 1048576]"));
}

TEST(RedisUrl, ErrorMessageShowsSchemeButNotPassword) {
  const std::string message = rejection("redis://alice:hunter2@h:0");
  EXPECT_THAT(message, HasSubstr("redis://"));
  EXPECT_THAT(message, Not(HasSubstr("hunter2")));
}

// A base64-style password with an unencoded '/' ends the authority early: "default:Zq9x" is then
// read as host:port. The complaint must not quote the start of the password.
TEST(RedisUrl, PasswordMayContainAnUnencodedSlash) {
  const RedisUrl url = parse_redis_url("redis://default:Zq9x/Yw8v@h:6379/2");
  EXPECT_EQ(url.user, "default");
  EXPECT_EQ(url.password, "Zq9x/Yw8v");
  EXPECT_EQ(url.host, "h");
  EXPECT_EQ(url.port, 6379);
  EXPECT_EQ(url.db, 2);
}

// ---- redacted --------------------------------------------------------------------------------

TEST(RedisUrl, RedactedReplacesPasswordWithStars) {
  EXPECT_EQ(parse_redis_url("redis://alice:s3cret@h:6380/2").redacted(), "redis://alice:***@h:6380/2");
  EXPECT_EQ(parse_redis_url("redis://:s3cret@h").redacted(), "redis://:***@h:6379");
}

TEST(RedisUrl, RedactedKeepsEverythingElse) {
  EXPECT_EQ(parse_redis_url("redis://h").redacted(), "redis://h:6379");
  EXPECT_EQ(parse_redis_url("redis://alice:pw@h/3").redacted(), "redis://alice:***@h:6379/3");
  EXPECT_EQ(parse_redis_url("redis://[::1]:6380").redacted(), "redis://[::1]:6380");
  EXPECT_EQ(parse_redis_url("unix:///tmp/redis.sock").redacted(), "unix:///tmp/redis.sock");
  EXPECT_EQ(parse_redis_url("unix:///tmp/redis.sock?db=3").redacted(), "unix:///tmp/redis.sock?db=3");
}

// "redis://s3cret@h" is a user named s3cret to the parser, and may be a password whose ':' was
// forgotten: redacted() hides it.
TEST(RedisUrl, RedactedHidesAUserGivenWithoutAPassword) {
  EXPECT_EQ(parse_redis_url("redis://s3cret@h/3").redacted(), "redis://***@h:6379/3");
  EXPECT_EQ(parse_redis_url("redis-cluster://s3cret@a:1,b:2").redacted(), "redis-cluster://***@a:1,b:2");
}

TEST(RedisUrl, RedactedNeverContainsThePassword) {
  const std::vector<std::string_view> urls{
      "redis://alice:s3cret@h",
      "redis://:s3cret@h:1/9",
      "redis://alice:s3%63ret@[::1]:6380",
      "unix:///tmp/redis.sock?password=s3cret",
      "unix:///tmp/redis.sock?user=alice&password=s3cret&db=1",
  };
  for (const std::string_view text : urls) {
    SCOPED_TRACE(text);
    const RedisUrl url = parse_redis_url(text);
    ASSERT_EQ(url.password, "s3cret");
    EXPECT_THAT(url.redacted(), Not(HasSubstr("s3cret")));
  }
}

// The class of leaks, not only the cases found: every one-character corruption (a character
// deleted, or a delimiter inserted) of URLs whose password is "Zq7pw9Xk" that is rejected must not
// quote any four characters of it, wherever the parser then thinks the password sits (port,
// database, query parameter, node, scheme).
TEST(RedisUrl, NoRejectionOfACorruptedUrlQuotesAnyPartOfItsPassword) {
  const std::string secret = "Zq7pw9Xk";
  const std::vector<std::string> urls{
      "redis://alice:" + secret + "@h:6379/2",
      "redis://:" + secret + "@[::1]:6380",
      "unix:///tmp/r.sock?user=alice&password=" + secret + "&db=1",
      "redis-sentinel://alice:" + secret + "@s1:26379,s2/master/1",
      "redlock://:" + secret + "@m1:7001,m2:7002,m3:7003/4",
      "redis-cluster://alice:" + secret + "@c1:7000,c2:7001",
  };
  std::vector<std::string> fragments;
  for (std::size_t i = 0; i + 4 <= secret.size(); ++i) fragments.push_back(secret.substr(i, 4));
  int rejected = 0;
  const auto check = [&](const std::string& url) {
    try {
      (void)parse_redis_url(url);
    } catch (const lockbridge::Error& error) {
      ++rejected;
      for (const std::string& fragment : fragments) {
        EXPECT_THAT(error.what(), Not(HasSubstr(fragment))) << "'" << url << "'";
      }
    }
  };
  for (const std::string& url : urls) {
    for (std::size_t at = 0; at < url.size(); ++at) {
      check(url.substr(0, at) + url.substr(at + 1));
      for (const char delimiter : std::string_view(":/@?&=%#,[]"))
        check(url.substr(0, at) + delimiter + url.substr(at));
    }
  }
  EXPECT_GT(rejected, 500) << "the corruptions must reach the parser's complaints";
}

// ---- multi-node forms ----------------------------------------------------------------------------

TEST(RedisUrl, SentinelListsSentinelsAndNamesTheMaster) {
  const RedisUrl url = parse_redis_url("redis-sentinel://app:pw@10.0.0.1,10.0.0.2:26380,[::1]:26381/orders-master/2");
  EXPECT_EQ(url.topology, RedisUrl::Topology::sentinel);
  ASSERT_EQ(url.nodes.size(), 3U);
  EXPECT_EQ(url.nodes[0], (RedisUrl::Node{"10.0.0.1", 26379}));  // the sentinels' default port
  EXPECT_EQ(url.nodes[1], (RedisUrl::Node{"10.0.0.2", 26380}));
  EXPECT_EQ(url.nodes[2], (RedisUrl::Node{"::1", 26381}));
  EXPECT_EQ(url.master_name, "orders-master");
  EXPECT_EQ(url.db, 2);
  EXPECT_EQ(url.user, "app");
  EXPECT_EQ(url.password, "pw");
  EXPECT_EQ(url.redacted(), "redis-sentinel://app:***@10.0.0.1:26379,10.0.0.2:26380,[::1]:26381/orders-master/2");
}

TEST(RedisUrl, ServerOfANodeKeepsCredentialsAndDatabase) {
  const RedisUrl url = parse_redis_url("redlock://:pw@127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003/4");
  const RedisUrl server = url.server(url.nodes[1]);
  EXPECT_EQ(server.topology, RedisUrl::Topology::single);
  EXPECT_EQ(server.host, "127.0.0.1");
  EXPECT_EQ(server.port, 7002);
  EXPECT_EQ(server.password, "pw");
  EXPECT_EQ(server.db, 4);
  EXPECT_TRUE(server.nodes.empty());
}

TEST(RedisUrl, RedlockNeedsAnOddNumberOfDistinctMasters) {
  const RedisUrl url = parse_redis_url("redlock://a:7001,b:7002,c");
  EXPECT_EQ(url.topology, RedisUrl::Topology::redlock);
  EXPECT_EQ(url.nodes[2], (RedisUrl::Node{"c", 6379}));
  EXPECT_EQ(url.redacted(), "redlock://a:7001,b:7002,c:6379");
  EXPECT_THAT(rejection("redlock://a:1,b:2"), HasSubstr("odd number of masters from 3 to 15, got 2"));
  EXPECT_THAT(rejection("redlock://a:1"), HasSubstr("got 1"));
  // The same master twice would count one write as two votes.
  EXPECT_THAT(rejection("redlock://a:1,b:2,a:1"), HasSubstr("nodes 1 and 3 are the same host and port"));
}

TEST(RedisUrl, ClusterTakesSeedNodesAndOnlyDatabaseZero) {
  const RedisUrl url = parse_redis_url("redis-cluster://127.0.0.1:7000,127.0.0.1:7001");
  EXPECT_EQ(url.topology, RedisUrl::Topology::cluster);
  EXPECT_EQ(url.nodes.size(), 2U);
  EXPECT_EQ(url.redacted(), "redis-cluster://127.0.0.1:7000,127.0.0.1:7001");
  EXPECT_THAT(rejection("redis-cluster://127.0.0.1:7000/1"), HasSubstr("only database 0"));
}

TEST(RedisUrl, MultiNodeFormsRejectBadParts) {
  EXPECT_THAT(rejection("redis-sentinel://10.0.0.1:26379"), HasSubstr("missing master name"));
  EXPECT_THAT(rejection("redis-sentinel://10.0.0.1:26379/"), HasSubstr("missing master name"));
  EXPECT_THAT(rejection("redis-sentinel://10.0.0.1:26379,/m"), HasSubstr("missing host"));
  EXPECT_THAT(rejection("redis-sentinel://10.0.0.1:0/m"), HasSubstr("node 1: port is not a number in [1, 65535]"));
  EXPECT_THAT(rejection("redis-sentinel://10.0.0.1/m?x=1"), HasSubstr("query parameters"));
  EXPECT_THAT(rejection("redlock://a:1,b:2,c:3/x"), HasSubstr("database is not a number in [0, 1048576]"));
  EXPECT_THAT(rejection("redis-sentinel://u:s3cret@/m"), Not(HasSubstr("s3cret")));
}

}  // namespace
