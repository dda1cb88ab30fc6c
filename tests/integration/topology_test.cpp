// The test topologies themselves (topology.hpp): each starts, answers and behaves like the Redis
// deployment it stands for, and leaves no process or directory behind. These tests start their own
// servers and need no CTest fixture.
#include "topology.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Whether `pid` is gone, reaped included (a zombie would still accept signal 0).
bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// The slot ranges a cluster node's own CLUSTER NODES line lists.
std::string own_slots(const ServerProcess& node) {
  std::istringstream lines(node.command({"CLUSTER", "NODES"}));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("myself") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string field, slots;
    for (int i = 0; fields >> field; ++i) {
      if (i >= 8) slots += field + " ";
    }
    return slots;
  }
  return "";
}

TEST(Topology, AServerAnswersRestartsOnItsPortAndLeavesNothingBehind) {
  auto server = ServerProcess::start_server();
  const int port = server->port();
  const std::string dir = server->dir();
  EXPECT_EQ(server->address(), "127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(server->command({"SET", "k", "v"}), "OK");
  EXPECT_EQ(server->command({"INCR", "n"}), "1");
  EXPECT_EQ(server->command({"GET", "missing"}), "(nil)");
  EXPECT_EQ(server->command({"RPUSH", "l", "a", "b"}), "2");
  EXPECT_EQ(server->command({"LRANGE", "l", "0", "-1"}), "a b");
  EXPECT_THAT(server->command({"INCR", "k"}), StartsWith("ERR "));

  const pid_t first = server->pid();
  server->kill();
  EXPECT_FALSE(server->running());
  EXPECT_TRUE(process_gone(first));
  EXPECT_THROW(server->command({"PING"}), std::runtime_error);

  server->restart();
  EXPECT_TRUE(server->running());
  EXPECT_EQ(server->port(), port);
  EXPECT_EQ(server->command({"PING"}), "PONG");
  EXPECT_EQ(server->command({"GET", "k"}), "(nil)");  // a crash without persistence loses the data

  const pid_t second = server->pid();
  server.reset();
  EXPECT_TRUE(process_gone(second));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(Topology, AServerThatCannotStartThrowsWithItsLogAndIsCleanedUp) {
  try {
    (void)ServerProcess::start_server({"--no-such-directive", "1"});
    FAIL() << "a bad directive started";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_THAT(message, HasSubstr("no-such-directive"));  // from the server's own complaint
    std::smatch dir;
    ASSERT_TRUE(std::regex_search(message, dir, std::regex(R"(\[127\.0\.0\.1:\d+ (\S+)\])"))) << message;
    EXPECT_FALSE(std::filesystem::exists(dir[1].str()));
  }
}

TEST(Topology, IndependentMastersAllAnswerAndAreDistinct) {
  const IndependentMasters redlock(5);
  ASSERT_EQ(redlock.masters.size(), 5u);
  std::set<int> ports;
  std::set<pid_t> pids;
  std::string expected_url = "redlock://";
  for (const auto& master : redlock.masters) {
    EXPECT_EQ(master->command({"PING"}), "PONG");
    EXPECT_THAT(master->command({"ROLE"}), StartsWith("master"));
    ports.insert(master->port());
    pids.insert(master->pid());
    expected_url += (ports.size() > 1 ? "," : "") + master->address();
  }
  EXPECT_EQ(ports.size(), 5u);
  EXPECT_EQ(pids.size(), 5u);
  EXPECT_EQ(redlock.url(), expected_url);
  // Independent: a write to one is not seen by another.
  EXPECT_EQ(redlock.masters[0]->command({"SET", "only-here", "1"}), "OK");
  EXPECT_EQ(redlock.masters[1]->command({"GET", "only-here"}), "(nil)");
}

TEST(Topology, SentinelsPromoteTheReplicaWhenTheMasterDies) {
  const SentinelTopology topology;
  ASSERT_EQ(topology.sentinels.size(), 3u);
  EXPECT_EQ(topology.url(), "redis-sentinel://" + topology.sentinels[0]->address() + "," +
                                topology.sentinels[1]->address() + "," + topology.sentinels[2]->address() +
                                "/" + topology.master_name);
  const int old_port = topology.master->port();
  EXPECT_EQ(topology.current_master_port(), old_port);
  for (const auto& sentinel : topology.sentinels) {
    EXPECT_EQ(sentinel->command({"SENTINEL", "get-master-addr-by-name", topology.master_name}),
              "127.0.0.1 " + std::to_string(old_port));
  }
  EXPECT_THAT(topology.replica->command({"ROLE"}), StartsWith("slave"));

  topology.master->kill();
  const int new_port = topology.wait_for_failover(old_port);
  EXPECT_EQ(new_port, topology.replica->port());
  EXPECT_EQ(topology.current_master_port(), new_port);
  EXPECT_EQ(topology.replica->command({"SET", "after-failover", "1"}), "OK");
}

TEST(Topology, ClusterServesEverySlotRedirectsAndMovesASlotWithItsKeys) {
  ClusterTopology cluster(3);
  ASSERT_EQ(cluster.nodes.size(), 3u);
  EXPECT_THAT(cluster.url(), StartsWith("redis-cluster://" + cluster.nodes[0]->address() + ","));
  for (const auto& node : cluster.nodes) {
    EXPECT_THAT(node->command({"CLUSTER", "INFO"}), HasSubstr("cluster_state:ok"));
    EXPECT_NE(own_slots(*node), "") << node->address() << " owns no slot";
  }

  // A key sent to a node that does not own its slot is redirected to the owner.
  const std::string key = "lbtopo:moved";
  const int slot = cluster.slot_of(key);
  const int owner = cluster.owner_of_slot(slot);
  const int other = (owner + 1) % 3;
  EXPECT_EQ(cluster.nodes[other]->command({"SET", key, "v"}),
            "MOVED " + std::to_string(slot) + " " + cluster.nodes[owner]->address());
  EXPECT_EQ(cluster.nodes[owner]->command({"SET", key, "v"}), "OK");

  // A slot holding keys moves with them (more than one MIGRATE batch of 10).
  const int moving = cluster.slot_of("{lbtopo-move}");
  const int from = cluster.owner_of_slot(moving);
  const int to = (from + 1) % 3;
  for (int i = 0; i < 25; ++i) {
    const std::string k = "{lbtopo-move}:" + std::to_string(i);
    ASSERT_EQ(cluster.nodes[from]->command({"SET", k, "value-" + std::to_string(i)}), "OK");
  }
  cluster.move_slot(moving, to);
  EXPECT_EQ(cluster.owner_of_slot(moving), to);
  EXPECT_EQ(cluster.nodes[to]->command({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(moving)}), "25");
  EXPECT_EQ(cluster.nodes[from]->command({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(moving)}), "0");
  const std::string moved = "MOVED " + std::to_string(moving) + " " + cluster.nodes[to]->address();
  for (int i = 0; i < 25; ++i) {
    const std::string k = "{lbtopo-move}:" + std::to_string(i);
    EXPECT_EQ(cluster.nodes[to]->command({"GET", k}), "value-" + std::to_string(i));
    EXPECT_EQ(cluster.nodes[from]->command({"GET", k}), moved);
    EXPECT_EQ(cluster.nodes[3 - from - to]->command({"GET", k}), moved);
  }
  EXPECT_THAT(cluster.nodes[from]->command({"CLUSTER", "INFO"}), HasSubstr("cluster_state:ok"));
}

TEST(Topology, ClusterReplicasFollowOneMasterEach) {
  const ClusterTopology cluster(3, 1);
  ASSERT_EQ(cluster.nodes.size(), 6u);
  std::set<std::string> followed;
  for (const auto& node : cluster.nodes) {
    const std::string role = node->command({"ROLE"});
    if (role.rfind("master", 0) == 0) {
      EXPECT_NE(own_slots(*node), "") << node->address() << " is a master without slots";
      continue;
    }
    EXPECT_THAT(node->command({"INFO", "replication"}), HasSubstr("master_link_status:up"));
    std::istringstream fields(role);  // "slave 127.0.0.1 <master port> connected <offset>"
    std::string kind, host, port;
    fields >> kind >> host >> port;
    followed.insert(port);
  }
  EXPECT_EQ(followed.size(), 3u);  // each master has its own replica
}

}  // namespace
}  // namespace lockbridge::testing
