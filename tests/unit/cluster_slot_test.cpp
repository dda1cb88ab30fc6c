// Redis Cluster routing without a server: key slots, CLUSTER SLOTS replies, MOVED/ASK redirects.
// Expected slots were read from redis-server 7.0.15 in cluster mode (CLUSTER KEYSLOT); the
// CLUSTER SLOTS shapes and the MOVED text are transcribed from the same servers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/key_slot.hpp"
#include "cluster/redirect.hpp"
#include "cluster/slot_map.hpp"
#include "lockbridge/client.hpp"
#include "lockbridge/error.hpp"

namespace {

using lockbridge::Errc;
using lockbridge::Reply;
using lockbridge::detail::crc16;
using lockbridge::detail::hashed_part;
using lockbridge::detail::key_slot;
using lockbridge::detail::NodeAddress;
using lockbridge::detail::parse_redirect;
using lockbridge::detail::Redirect;
using lockbridge::detail::SlotMap;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::string_literals;

// ---- key_slot ---------------------------------------------------------------------------------

TEST(ClusterSlotKey, Crc16IsXmodem) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);  // the CRC catalogue's check value for CRC-16/XMODEM
  EXPECT_EQ(crc16(""), 0);
  EXPECT_EQ(crc16("A"), 0x58E5);
}

TEST(ClusterSlotKey, MatchesRedisForPlainKeys) {
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("123456789"), 12739);  // 0x31C3 itself: already below 16384
  EXPECT_EQ(key_slot("order-42"), 9984);
  EXPECT_EQ(key_slot(""), 0);
}

TEST(ClusterSlotKey, IsBinarySafe) {
  // Bytes >= 0x80 and NULs count as themselves; a C-string walk would stop at the NUL.
  EXPECT_EQ(key_slot("\0"s), 0);
  EXPECT_EQ(key_slot("a\0b"s), 8383);
  EXPECT_EQ(key_slot("\xff\xfe"), 3374);
  EXPECT_EQ(key_slot("z\xc3\xbcrich"), 15322);
  EXPECT_EQ(key_slot("{\xff}tail"), 7920);
  EXPECT_EQ(key_slot("{\0}x"s), 0);
}

TEST(ClusterSlotKey, HashTagPutsRelatedKeysInOneSlot) {
  EXPECT_EQ(key_slot("{user1000}.following"), 3443);
  EXPECT_EQ(key_slot("{user1000}.followers"), 3443);
  EXPECT_EQ(key_slot("lock:{order-42}"), key_slot("order-42"));
  EXPECT_EQ(hashed_part("{user1000}.following"), "user1000");
}

TEST(ClusterSlotKey, OnlyTheFirstNonEmptyTagAfterTheFirstBraceCounts) {
  // An empty first tag means no tag at all: the whole key, not the later "{bar}".
  EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(key_slot("foo{}{bar}"), 8363);
  // The tag runs from the first '{' to the first '}' after it, so it may contain a '{'.
  EXPECT_EQ(hashed_part("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(key_slot("foo{{bar}}zap"), 4015);
  EXPECT_EQ(key_slot("{bar"), 4015);
  // Only the first tag.
  EXPECT_EQ(hashed_part("foo{bar}{zap}"), "bar");
  EXPECT_EQ(key_slot("foo{bar}{zap}"), 5061);
}

TEST(ClusterSlotKey, UnclosedOrBackwardsBracesHashTheWholeKey) {
  EXPECT_EQ(hashed_part("a{b"), "a{b");
  EXPECT_EQ(key_slot("a{b"), 13340);
  EXPECT_EQ(hashed_part("a}b{c}"), "c");  // a '}' before the first '{' is just a byte
  EXPECT_EQ(key_slot("a}b{c}"), 7365);
  EXPECT_EQ(hashed_part("{}"), "{}");
  EXPECT_EQ(key_slot("{}"), 15257);
}

// ---- SlotMap ----------------------------------------------------------------------------------

Reply integer(std::int64_t value) {
  return Reply{.kind = Reply::Kind::integer, .str = {}, .integer = value, .elements = {}};
}
Reply string(std::string value) {
  return Reply{.kind = Reply::Kind::string, .str = std::move(value), .integer = 0, .elements = {}};
}
Reply nil() { return Reply{}; }
Reply array(std::vector<Reply> elements) {
  return Reply{.kind = Reply::Kind::array, .str = {}, .integer = 0, .elements = std::move(elements)};
}
// A node as Redis 7 writes it: [host, port, id, metadata].
Reply node(Reply host, std::int64_t port, std::string id = "0123456789abcdef0123456789abcdef01234567") {
  return array({std::move(host), integer(port), string(std::move(id)), array({})});
}
Reply range(std::int64_t first, std::int64_t last, Reply master, std::vector<Reply> replicas = {}) {
  std::vector<Reply> entry{integer(first), integer(last), std::move(master)};
  for (auto& replica : replicas) entry.push_back(std::move(replica));
  return array(std::move(entry));
}

const NodeAddress kAsked{.host = "10.0.0.9", .port = 7000};

// The error's code must be `expected`; returns what() for message checks.
std::string error_of(Errc expected, const std::function<void()>& action) {
  try {
    action();
    ADD_FAILURE() << "no exception thrown";
  } catch (const lockbridge::Error& error) {
    EXPECT_EQ(error.errc(), expected) << error.what();
    return error.what();
  }
  return {};
}

std::string protocol_error(const Reply& reply) {
  return error_of(Errc::protocol, [&] { SlotMap map(reply, kAsked); });
}

TEST(ClusterSlotMap, MapsEachSlotToItsMasterAndIgnoresReplicas) {
  const SlotMap map(array({range(0, 5460, node(string("127.0.0.1"), 7000), {node(string("127.0.0.1"), 7003)}),
                           range(5461, 10922, node(string("127.0.0.1"), 7001)),
                           range(10923, 16383, node(string("::1"), 7002), {node(string("::1"), 7005)})}),
                    kAsked);
  EXPECT_TRUE(map.complete());
  EXPECT_EQ(map.master_of(0), (NodeAddress{"127.0.0.1", 7000}));
  EXPECT_EQ(map.master_of(5460), (NodeAddress{"127.0.0.1", 7000}));
  EXPECT_EQ(map.master_of(5461), (NodeAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(map.master_of(10923), (NodeAddress{"::1", 7002}));  // IPv6 kept as given
  EXPECT_EQ(map.master_of(16383), (NodeAddress{"::1", 7002}));
  EXPECT_EQ(map.master_of(key_slot("foo")), (NodeAddress{"::1", 7002}));
  EXPECT_THAT(map.masters(),
              ElementsAre(NodeAddress{"127.0.0.1", 7000}, NodeAddress{"127.0.0.1", 7001}, NodeAddress{"::1", 7002}));
}

TEST(ClusterSlotMap, OneMasterWithSeveralRangesIsListedOnce) {
  const SlotMap map(array({range(0, 99, node(string("a"), 1)), range(100, 199, node(string("b"), 2)),
                           range(200, 16383, node(string("a"), 1))}),
                    kAsked);
  EXPECT_TRUE(map.complete());
  EXPECT_THAT(map.masters(), ElementsAre(NodeAddress{"a", 1}, NodeAddress{"b", 2}));
  EXPECT_EQ(map.master_of(99), (NodeAddress{"a", 1}));
  EXPECT_EQ(map.master_of(150), (NodeAddress{"b", 2}));
  EXPECT_EQ(map.master_of(200), (NodeAddress{"a", 1}));
}

TEST(ClusterSlotMap, UncoveredSlotsHaveNoMaster) {
  const SlotMap map(array({range(0, 99, node(string("a"), 1)), range(200, 16383, node(string("a"), 1))}), kAsked);
  EXPECT_FALSE(map.complete());
  EXPECT_EQ(map.master_of(99), (NodeAddress{"a", 1}));
  EXPECT_EQ(map.master_of(100), std::nullopt);
  EXPECT_EQ(map.master_of(199), std::nullopt);
  EXPECT_EQ(map.master_of(16384), std::nullopt);  // beyond the last slot
  EXPECT_EQ(map.master_of(0xFFFF), std::nullopt);
}

TEST(ClusterSlotMap, EmptyReplyAndDefaultMapCoverNothing) {
  const SlotMap empty(array({}), kAsked);
  EXPECT_FALSE(empty.complete());
  EXPECT_TRUE(empty.masters().empty());
  EXPECT_EQ(empty.master_of(0), std::nullopt);
  const SlotMap none;
  EXPECT_FALSE(none.complete());
  EXPECT_EQ(none.master_of(16383), std::nullopt);
}

TEST(ClusterSlotMap, EmptyOrNilHostMeansTheNodeAsked) {
  // Transcribed from a one-node redis-server 7.0.15 cluster before it learnt its own IP:
  // host "", slots 100..199 unassigned.
  const SlotMap map(array({range(0, 99, node(string(""), 44665)), range(200, 16383, node(string(""), 44665))}), kAsked);
  EXPECT_EQ(map.master_of(0), (NodeAddress{"10.0.0.9", 44665}));  // the asked host, the reply's port
  EXPECT_THAT(map.masters(), ElementsAre(NodeAddress{"10.0.0.9", 44665}));
  EXPECT_FALSE(map.complete());

  const SlotMap unknown_endpoint(array({range(0, 16383, array({nil(), integer(7001)}))}), kAsked);
  EXPECT_EQ(unknown_endpoint.master_of(5), (NodeAddress{"10.0.0.9", 7001}));
  EXPECT_TRUE(unknown_endpoint.complete());
}

TEST(ClusterSlotMap, AcceptsOldNodesWithoutIdOrMetadata) {
  const SlotMap map(array({range(0, 16383, array({string("h"), integer(6379)}))}), kAsked);
  EXPECT_EQ(map.master_of(1), (NodeAddress{"h", 6379}));
}

TEST(ClusterSlotMap, RejectsRepliesOfTheWrongShape) {
  EXPECT_THAT(protocol_error(string("OK")), HasSubstr("not an array"));
  EXPECT_THAT(protocol_error(nil()), HasSubstr("not an array"));
  EXPECT_THAT(protocol_error(array({integer(1)})), HasSubstr("entry 0"));
  EXPECT_THAT(protocol_error(array({array({integer(0), integer(1)})})), HasSubstr("entry 0"));
  EXPECT_THAT(
      protocol_error(array({range(0, 1, node(string("a"), 1)), array({integer(2), integer(3), string("a:1")})})),
      HasSubstr("entry 1: master is not [host, port"));
  EXPECT_THAT(protocol_error(array({range(0, 1, array({string("a")}))})), HasSubstr("master is not [host, port"));
  EXPECT_THAT(protocol_error(array({array({string("0"), integer(1), node(string("a"), 1)})})),
              HasSubstr("first slot is not an integer"));
  EXPECT_THAT(protocol_error(array({array({integer(0), string("1"), node(string("a"), 1)})})),
              HasSubstr("last slot is not an integer"));
  EXPECT_THAT(protocol_error(array({range(0, 1, array({integer(1), integer(1)}))})), HasSubstr("host is not a string"));
  EXPECT_THAT(protocol_error(array({range(0, 1, array({string("a"), string("7000")}))})),
              HasSubstr("port is not an integer"));
}

TEST(ClusterSlotMap, RejectsSlotsOutOfRangeBackwardsOrListedTwice) {
  EXPECT_THAT(protocol_error(array({range(-1, 5, node(string("a"), 1))})),
              HasSubstr("first slot -1 is outside 0..16383"));
  EXPECT_THAT(protocol_error(array({range(0, 16384, node(string("a"), 1))})),
              HasSubstr("last slot 16384 is outside 0..16383"));
  EXPECT_THAT(protocol_error(array({range(0, 1LL << 40, node(string("a"), 1))})), HasSubstr("outside 0..16383"));
  EXPECT_THAT(protocol_error(array({range(10, 9, node(string("a"), 1))})),
              HasSubstr("first slot 10 is after last slot 9"));
  EXPECT_THAT(protocol_error(array({range(0, 10, node(string("a"), 1)), range(10, 20, node(string("b"), 2))})),
              HasSubstr("entry 1: slot 10 is listed twice"));
}

TEST(ClusterSlotMap, RejectsPortsOutside1To65535) {
  EXPECT_THAT(protocol_error(array({range(0, 1, node(string("a"), 0))})), HasSubstr("port 0 is outside 1..65535"));
  EXPECT_THAT(protocol_error(array({range(0, 1, node(string("a"), 65536))})), HasSubstr("port 65536 is outside"));
  EXPECT_THAT(protocol_error(array({range(0, 1, node(string("a"), -7000))})), HasSubstr("port -7000 is outside"));
  const SlotMap highest(array({range(0, 1, node(string("a"), 65535))}), kAsked);
  EXPECT_EQ(highest.master_of(1), (NodeAddress{"a", 65535}));
}

TEST(ClusterSlotMap, RejectsTheUnreachableQuestionMarkEndpoint) {
  EXPECT_THAT(protocol_error(array({range(0, 1, node(string("?"), 7000))})), HasSubstr("endpoint is \"?\""));
}

TEST(ClusterSlotMap, AnErrorReplyIsAServerReplyError) {
  const Reply error{.kind = Reply::Kind::error,
                    .str = "ERR This instance has cluster support disabled",
                    .integer = 0,
                    .elements = {}};
  EXPECT_THAT(error_of(Errc::server_reply, [&] { SlotMap map(error, kAsked); }), HasSubstr("cluster support disabled"));
}

TEST(ClusterSlotMap, NeedsTheAskedHost) {
  error_of(Errc::bad_option, [] { SlotMap map(array({}), NodeAddress{"", 7000}); });
}

TEST(ClusterSlotMap, MoveRoutesOneSlotElsewhere) {
  SlotMap map(array({range(0, 8191, node(string("a"), 1)), range(8192, 16383, node(string("b"), 2))}), kAsked);
  map.move(195, NodeAddress{"c", 3});
  EXPECT_EQ(map.master_of(195), (NodeAddress{"c", 3}));
  EXPECT_EQ(map.master_of(194), (NodeAddress{"a", 1}));
  EXPECT_EQ(map.master_of(196), (NodeAddress{"a", 1}));
  EXPECT_EQ(map.master_of(8192), (NodeAddress{"b", 2}));
  EXPECT_THAT(map.masters(), ElementsAre(NodeAddress{"a", 1}, NodeAddress{"b", 2}, NodeAddress{"c", 3}));
  EXPECT_TRUE(map.complete());

  map.move(196, NodeAddress{"b", 2});  // to a master already known: no duplicate
  EXPECT_EQ(map.master_of(196), (NodeAddress{"b", 2}));
  EXPECT_EQ(map.masters().size(), 3U);
}

TEST(ClusterSlotMap, MoveFillsAnUncoveredSlot) {
  SlotMap map(array({range(1, 16383, node(string("a"), 1))}), kAsked);
  EXPECT_FALSE(map.complete());
  map.move(0, NodeAddress{"a", 1});
  EXPECT_TRUE(map.complete());
  EXPECT_EQ(map.master_of(0), (NodeAddress{"a", 1}));
}

TEST(ClusterSlotMap, AMasterThatLosesItsLastSlotIsNoLongerListed) {
  SlotMap map(array({range(0, 0, node(string("a"), 1)), range(1, 1, node(string("b"), 2)),
                     range(2, 16383, node(string("c"), 3))}),
              kAsked);
  map.move(0, NodeAddress{"c", 3});
  // "a" is gone and the indices after it shifted: every slot must still find its own master.
  EXPECT_THAT(map.masters(), ElementsAre(NodeAddress{"b", 2}, NodeAddress{"c", 3}));
  EXPECT_EQ(map.master_of(0), (NodeAddress{"c", 3}));
  EXPECT_EQ(map.master_of(1), (NodeAddress{"b", 2}));
  EXPECT_EQ(map.master_of(16383), (NodeAddress{"c", 3}));
  map.move(1, NodeAddress{"d", 4});
  EXPECT_THAT(map.masters(), ElementsAre(NodeAddress{"c", 3}, NodeAddress{"d", 4}));
  EXPECT_EQ(map.master_of(1), (NodeAddress{"d", 4}));
  EXPECT_EQ(map.master_of(2), (NodeAddress{"c", 3}));
  EXPECT_TRUE(map.complete());
}

TEST(ClusterSlotMap, MoveRejectsBadArgumentsAndChangesNothing) {
  SlotMap map(array({range(0, 16383, node(string("a"), 1))}), kAsked);
  EXPECT_THAT(error_of(Errc::bad_option, [&] { map.move(16384, NodeAddress{"b", 2}); }), HasSubstr("slot 16384"));
  EXPECT_THAT(error_of(Errc::bad_option, [&] { map.move(5, NodeAddress{"", 2}); }), HasSubstr("host is empty"));
  EXPECT_THAT(error_of(Errc::bad_option, [&] { map.move(5, NodeAddress{"b", 0}); }), HasSubstr("port 0"));
  EXPECT_EQ(map.master_of(5), (NodeAddress{"a", 1}));
  EXPECT_THAT(map.masters(), ElementsAre(NodeAddress{"a", 1}));
}

// ---- parse_redirect ---------------------------------------------------------------------------

TEST(ClusterSlotRedirect, ParsesMovedAndAsk) {
  const auto moved = parse_redirect("MOVED 195 127.0.0.1:41727");  // as redis-server 7.0.15 wrote it
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->kind, Redirect::Kind::moved);
  EXPECT_EQ(moved->slot, 195);
  EXPECT_EQ(moved->to, (NodeAddress{"127.0.0.1", 41727}));

  const auto ask = parse_redirect("ASK 3999 127.0.0.1:6381");
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->kind, Redirect::Kind::ask);
  EXPECT_EQ(ask->slot, 3999);
  EXPECT_EQ(ask->to, (NodeAddress{"127.0.0.1", 6381}));

  const auto hostname = parse_redirect("MOVED 16383 redis-2.example.internal:65535");
  ASSERT_TRUE(hostname.has_value());
  EXPECT_EQ(hostname->slot, 16383);
  EXPECT_EQ(hostname->to, (NodeAddress{"redis-2.example.internal", 65535}));
}

TEST(ClusterSlotRedirect, PortFollowsTheLastColonForIpv6) {
  const auto loopback = parse_redirect("MOVED 1 ::1:7000");
  ASSERT_TRUE(loopback.has_value());
  EXPECT_EQ(loopback->to, (NodeAddress{"::1", 7000}));
  const auto full = parse_redirect("ASK 0 2001:db8::ff00:42:8329:6379");
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->to, (NodeAddress{"2001:db8::ff00:42:8329", 6379}));
}

TEST(ClusterSlotRedirect, EmptyHostMeansTheSender) {
  const auto redirect = parse_redirect("MOVED 1 :7000");
  ASSERT_TRUE(redirect.has_value());
  EXPECT_EQ(redirect->to, (NodeAddress{"", 7000}));
}

TEST(ClusterSlotRedirect, OtherErrorsAreNotRedirects) {
  EXPECT_EQ(parse_redirect(""), std::nullopt);
  EXPECT_EQ(parse_redirect("ERR unknown command"), std::nullopt);
  EXPECT_EQ(parse_redirect("CLUSTERDOWN The cluster is down"), std::nullopt);
  EXPECT_EQ(parse_redirect("TRYAGAIN Multiple keys request during rehashing of slot"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVED"), std::nullopt);
  EXPECT_EQ(parse_redirect("MOVEDX 1 a:1"), std::nullopt);
  EXPECT_EQ(parse_redirect("moved 1 a:1"), std::nullopt);
  EXPECT_EQ(parse_redirect("ASKING 1 a:1"), std::nullopt);
}

TEST(ClusterSlotRedirect, MalformedMovedOrAskIsNotFollowed) {
  for (const char* text :
       {"MOVED 16384 a:1", "MOVED 99999999999999999999999 a:1", "MOVED -1 a:1", "MOVED +1 a:1", "MOVED 1x a:1",
        "MOVED  1 a:1", "MOVED 1", "MOVED 1 ", "MOVED 1 a", "MOVED 1 a:", "MOVED 1 a:0", "MOVED 1 a:65536",
        "MOVED 1 a:-1", "MOVED 1 a:1x", "MOVED 1 a:1 extra", "ASK  a:1", "ASK 1 a:1 ", "MOVED 1 a:1\n"}) {
    EXPECT_EQ(parse_redirect(text), std::nullopt) << text;
  }
}

}  // namespace
