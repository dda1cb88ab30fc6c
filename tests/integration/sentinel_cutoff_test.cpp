// Sentinel's own limit, shown with real servers: a master the Sentinels can no longer reach, but
// some clients still can, goes on accepting their locks after the Sentinels promoted its replica,
// so two clients hold one lock; when the old master is reachable again the Sentinels make it a
// replica of the new one, and the locks written there in the meantime are gone.
//
// The cut is made without network namespaces (tests stay on loopback): the old master starts to
// require a password and drops the Sentinels' connections. The Sentinels cannot authenticate, so
// to them it is down; a client that knows the password still locks there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "redis_test_support.hpp"
#include "topology.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

constexpr char kPassword[] = "cut-off";

// Closes every connection whose client name starts with "sentinel-" (each Sentinel keeps a command
// and a pub/sub link to every server it watches), through `admin`, a Client of that server.
void drop_sentinel_connections(const Client& admin) {
  std::istringstream clients(admin.command({"CLIENT", "LIST"}).str);
  for (std::string line; std::getline(clients, line);) {
    if (line.find(" name=sentinel-") == std::string::npos) continue;
    const std::string id = line.substr(3, line.find(' ') - 3);  // "id=<n> addr=..."
    admin.command({"CLIENT", "KILL", "ID", id});
  }
}

TEST(SentinelCutOff, AMasterTheSentinelsCannotReachTakesLocksThatAreLostWhenItRejoins) {
  // Once the old master is reachable again it is a candidate for promotion (it says master, so
  // the Sentinels see no broken link), and a second, spurious failover back to it would undo the
  // setting: down-after is 3 s here, not 1 s, so a loaded machine does not make one.
  SentinelTopology topology(std::chrono::seconds(3));
  const int old_port = topology.master->client_port();
  // The replica keeps replicating from the old master until the promotion.
  topology.replica->command({"CONFIG", "SET", "masterauth", kPassword});
  topology.master->command({"CONFIG", "SET", "requirepass", kPassword});
  const Client cut_off_side("redis://:" + std::string(kPassword) + "@" + topology.master->address(),
                            quick_failing_client());
  drop_sentinel_connections(cut_off_side);
  const int new_port = topology.wait_for_failover(old_port);
  ASSERT_EQ(new_port, topology.replica->client_port());
  // The old master does not know: it still says master, and takes a lock.
  ASSERT_EQ(cut_off_side.command({"ROLE"}).elements.at(0).str, "master");

  const std::string key = unique_key();
  Mutex stranded(cut_off_side, key, one_attempt_options());
  ASSERT_TRUE(stranded.try_lock());
  // Through the Sentinels, the same lock is free on the new master: two holders.
  Mutex majority_side(Client(topology.url(), quick_failing_client()), key, one_attempt_options());
  ASSERT_TRUE(majority_side.try_lock());
  EXPECT_TRUE(stranded.owns_lock());
  EXPECT_EQ(topology.replica->command({"GET", key}), majority_side.value());

  // Reachable again: the Sentinels make the old master a replica of the new one (once it has
  // reported master for 8 s; they ask each replica's INFO every 10 s), and the lock written there is replaced by
  // the new master's data. Each Sentinel that reconfigures it also sends CLIENT KILL TYPE normal,
  // so the polls below may see their connection closed; wait_until takes that as "not yet".
  cut_off_side.command({"CONFIG", "SET", "requirepass", ""});
  const auto sentinel_logs = [&] { return topology.sentinels[0]->log_tail(40); };
  wait_until([&] { return topology.master->command({"ROLE"}).rfind("slave", 0) == 0; }, std::chrono::seconds(40),
             "the old master made a replica", sentinel_logs);
  wait_until(
      [&] {
        return topology.master->command({"GET", key}) == majority_side.value();
      },
      std::chrono::seconds(10), "the new master's lock replicated to the old one", sentinel_logs);
  // The stranded holder's release fails (its connection was closed, or it finds the other
  // owner's value) and touches nothing of the majority side's lock.
  stranded.unlock();
  EXPECT_TRUE(stranded.last_error());
  EXPECT_EQ(topology.replica->command({"GET", key}), majority_side.value());
  majority_side.unlock();
  EXPECT_FALSE(majority_side.last_error());
}

}  // namespace
}  // namespace lockbridge::testing
