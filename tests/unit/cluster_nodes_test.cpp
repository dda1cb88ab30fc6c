// slot_map_from_cluster_nodes: CLUSTER NODES text (lines as Redis 7.0 prints them) to a slot map,
// the higher config epoch winning a slot two masters claim.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/cluster_nodes.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::detail {
namespace {

const NodeAddress kAsked{"127.0.0.1", 7000};

TEST(ClusterNodes, ReadsEachMastersRangesAndSkipsReplicas) {
  const SlotMap map = slot_map_from_cluster_nodes(
      "a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n"
      "b2 127.0.0.1:7001@17001 master - 0 1795330249622 2 connected 5461-10921 10922\n"
      "c3 127.0.0.1:7002@17002,node-c.example master - 0 1795330249622 3 connected 10923-16383\n"
      "d4 127.0.0.1:7003@17003 slave a1 0 1795330249622 1 connected\n",
      kAsked);
  EXPECT_TRUE(map.complete());
  EXPECT_EQ(map.master_of(0), (NodeAddress{"127.0.0.1", 7000}));
  EXPECT_EQ(map.master_of(10922), (NodeAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(map.master_of(16383), (NodeAddress{"127.0.0.1", 7002}));
  EXPECT_EQ(map.masters().size(), 3U);
}

TEST(ClusterNodes, AfterAFailoverTheHigherEpochOwnsTheSlot) {
  // The view of a node that has heard of the promotion while the dead master still lists slots.
  const SlotMap map = slot_map_from_cluster_nodes(
      "f9 127.0.0.1:7009@17009 myself,master - 0 0 7 connected 10923-16383\n"
      "c3 127.0.0.1:7002@17002 master,fail - 1795330247609 1795330247107 3 disconnected 10923-16383\n"
      "a1 127.0.0.1:7000@17000 master - 0 0 1 connected 0-10922\n",
      kAsked);
  EXPECT_EQ(map.master_of(12000), (NodeAddress{"127.0.0.1", 7009}));
  EXPECT_EQ(map.masters().size(), 2U);
}

TEST(ClusterNodes, MigratingEntriesStayWithTheirOwnerAndEmptyHostsAreTheAskedNode) {
  const SlotMap map = slot_map_from_cluster_nodes(
      "a1 :7000@17000 myself,master - 0 0 1 connected 0-16383 [42->-b2]\n"
      "b2 127.0.0.2:7001@17001 handshake - 0 0 0 connected\n",
      kAsked);
  EXPECT_EQ(map.master_of(42), kAsked);
  EXPECT_TRUE(map.complete());
}

TEST(ClusterNodes, MalformedLinesAreProtocolErrors) {
  for (const char* text :
       {"a1 127.0.0.1:7000@17000 master - 0 0\n", "a1 127.0.0.1@17000 master - 0 0 1 connected 0-1\n",
        "a1 127.0.0.1:0@17000 master - 0 0 1 connected 0-1\n", "a1 127.0.0.1:7000@17000 master - 0 0 x connected 0-1\n",
        "a1 127.0.0.1:7000@17000 master - 0 0 1 connected 5-2\n",
        "a1 127.0.0.1:7000@17000 master - 0 0 1 connected 0-16384\n"}) {
    try {
      (void)slot_map_from_cluster_nodes(text, kAsked);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& error) {
      EXPECT_EQ(error.errc(), Errc::protocol) << text;
    }
  }
}

}  // namespace
}  // namespace lockbridge::detail
