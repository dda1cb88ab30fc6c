// MutexOptions::replica_ack: after an acquire or extend, Redis WAIT for replicas. Against a private
// master without replicas (a shortfall, every time) and against the fixture's server with a real
// replica attached (started here from Debian's redis-server, and stopped at the end).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "embedded_server.hpp"
#include "lockbridge/multi_mutex.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using std::chrono::milliseconds;

MutexOptions with_replicas(int replicas, ReplicaAckOptions::OnShortfall on_shortfall) {
  MutexOptions options = token_options();
  options.replica_ack.replicas = replicas;
  options.replica_ack.timeout = milliseconds(50);
  options.replica_ack.on_shortfall = on_shortfall;
  return options;
}

TEST(ReplicaAck, AShortfallReleasesAndTellsTheCaller) {
  const auto master = tools::EmbeddedRedis::start();  // private: no replica can be attached to it
  const Client client(master->url());
  const std::string key = unique_key();
  Mutex mutex(client, key, with_replicas(1, ReplicaAckOptions::OnShortfall::release));
  const Error error = expect_error([&] { (void)mutex.try_lock(); });
  EXPECT_EQ(error.errc(), Errc::no_quorum);
  EXPECT_THAT(error.what(), ::testing::HasSubstr("0 of 1 replicas"));
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_EQ(client.command({"EXISTS", key}).integer, 0);  // released again
  EXPECT_EQ(mutex.replicas_acknowledged(), 0);
}

TEST(ReplicaAck, AcceptModeKeepsTheLockAndSaysHowManyAcknowledged) {
  const auto master = tools::EmbeddedRedis::start();
  const Client client(master->url());
  const std::string key = unique_key();
  Mutex mutex(client, key, with_replicas(1, ReplicaAckOptions::OnShortfall::accept));
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_EQ(mutex.replicas_acknowledged(), 0);
  EXPECT_EQ(client.command({"EXISTS", key}).integer, 1);
  EXPECT_TRUE(mutex.extend(std::chrono::seconds(30)));
  mutex.unlock();
}

TEST(ReplicaAck, AWaitLongerThanTheCommandTimeoutGetsItsAnswer) {
  // The server holds WAIT's reply for up to replica_ack.timeout: a 2 s WAIT on a Client whose
  // command timeout is 500 ms still ends in its answer (a shortfall here), not in a timeout that
  // would leave the outcome unknown. (A shorter command timeout failed the acquire's own SET on a
  // loaded machine, before any WAIT.)
  const auto master = tools::EmbeddedRedis::start();
  ClientOptions impatient;
  impatient.command_timeout = milliseconds(500);
  const Client client(master->url(), impatient);
  const std::string key = unique_key();
  MutexOptions options = with_replicas(1, ReplicaAckOptions::OnShortfall::release);
  options.replica_ack.timeout = milliseconds(2000);
  Mutex mutex(client, key, options);
  EXPECT_EQ(expect_error([&] { (void)mutex.try_lock(); }).errc(), Errc::no_quorum);
  EXPECT_EQ(mutex.replicas_acknowledged(), 0);
  EXPECT_EQ(client.command({"EXISTS", key}).integer, 0);
  EXPECT_EQ(client.command({"PING"}).str, "PONG");
}

// The only test that attaches a replica to the fixture's shared server (the others use private
// servers), so no other test's WAIT can count it.
TEST(ReplicaAck, AReplicaThatHasTheWriteIsCountedAndOneThatLeftMakesTheExtendFail) {
  const auto replica = tools::EmbeddedRedis::start();
  const Client replica_client(replica->url());
  replica_client.command({"REPLICAOF", "127.0.0.1", std::to_string(tcp_port())});
  ASSERT_TRUE(eventually([&] {
    return replica_client.command({"INFO", "replication"}).str.find("master_link_status:up") != std::string::npos;
  }));
  const std::string key = unique_key();
  // A replica acknowledges within milliseconds when idle, but the suite runs in parallel on two
  // cores: WAIT gets 2 s (it returns as soon as the replica answers), the connection 5 s.
  MutexOptions options = with_replicas(1, ReplicaAckOptions::OnShortfall::release);
  options.replica_ack.timeout = std::chrono::seconds(2);
  ClientOptions patient;
  patient.command_timeout = std::chrono::seconds(5);
  Mutex mutex(test_client(patient), key, options);
  std::atomic<bool> lost{false};
  mutex.on_lease_lost([&](const Error& error) { lost = error.errc() == Errc::no_quorum; });
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_GE(mutex.replicas_acknowledged().value_or(0), 1);
  EXPECT_EQ(replica_client.command({"GET", key}).str, mutex.value());  // the replica has the lock

  // The replica goes away: the next extend cannot be acknowledged, so the lock is released and
  // the caller is told, by the exception and by the loss notice.
  replica_client.command({"REPLICAOF", "NO", "ONE"});
  ASSERT_TRUE(eventually([&] {
    return raw({"INFO", "replication"}).str.find("connected_slaves:0") != std::string::npos;
  }));
  EXPECT_EQ(expect_error([&] { (void)mutex.extend(std::chrono::seconds(30)); }).errc(), Errc::no_quorum);
  EXPECT_FALSE(mutex.owns_lock());
  EXPECT_TRUE(eventually([&] { return lost.load(); }));
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
}

TEST(ReplicaAck, OptionsAreChecked) {
  MutexOptions options = token_options();
  options.replica_ack.replicas = -1;
  EXPECT_THROW(options.validate(), Error);
  MutexOptions faithful = faithful_options();
  faithful.replica_ack.replicas = 1;
  EXPECT_THROW(faithful.validate(), Error);
  MutexOptions acknowledged = token_options();
  acknowledged.replica_ack.replicas = 1;
  const Error multi = expect_error([&] {
    MultiMutex(test_client(), {unique_key("a"), unique_key("b")}, acknowledged);
  });
  EXPECT_EQ(multi.errc(), Errc::bad_option);
  EXPECT_THAT(multi.what(), ::testing::HasSubstr("replica_ack"));
}

}  // namespace
}  // namespace lockbridge::testing
