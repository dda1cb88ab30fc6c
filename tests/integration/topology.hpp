// Real multi-server Redis topologies on loopback TCP for integration tests: independent masters
// (Redlock), a master with a replica watched by three Sentinels, and a Redis Cluster. Every server
// is a child process of the test, in its own temporary directory; destroying the object kills the
// process, reaps it and removes the directory, also when a constructor throws halfway.
//
// Waits poll a condition with a bound (steady_clock) and throw std::runtime_error, with the end of
// the server's log where one is to blame, when the bound passes. Nothing here needs the CTest
// fixture's server.
#pragma once

#include <sys/types.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockbridge/client.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {

// Under over_tls() (CTest's "TLS." copies) the topologies below run over TLS: every server gets a
// TLS port beside its plain one, and the servers talk TLS to each other (replication, the cluster
// bus, Sentinel's links), with the fixture's certificates. url() then names the TLS ports, and the
// plain ports stay for the tests' own checks (command()). Without it, everything is plain TCP.
bool topology_tls();

// Client options for a topology's url(): trusting the fixture's CA when the topology runs over TLS.
ClientOptions topology_client();
// The same, for tests that kill servers: a dead node costs half a second per connect or reply,
// not the default second, so a failover test stays short.
ClientOptions quick_failing_client();
// The CLI arguments for a topology's url(): --url, and --cacert when it runs over TLS.
std::string cli_topology_args(const std::string& url);

// Polls `condition` every 10 ms until it holds; throws std::runtime_error naming `what` (and
// adding `details()`) after `timeout`. A condition that throws std::runtime_error counts as not
// yet, so it may ask a server that closes connections meanwhile (a Sentinel reconfiguring a
// server ends with CLIENT KILL TYPE normal there).
void wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout, const std::string& what,
                const std::function<std::string()>& details = {});

// One redis-server or redis-sentinel child process on a free 127.0.0.1 TCP port, in a fresh
// temporary directory (mkdtemp under $LOCKBRIDGE_TEST_DIR if set, else /tmp). Not daemonized: it
// is forked and exec'd here, and dies with the thread that started it (PR_SET_PDEATHSIG), so a
// crashed test run leaves no server behind (so start it from a thread that outlives it).
// command(), command_list(), port() and address() may be called from several threads at once;
// running(), kill() and restart() (which reap the child) need the caller's exclusion.
class ServerProcess {
 public:
  // redis-server --port P --bind 127.0.0.1 --save "" --appendonly no --dir D --logfile D/log,
  // then `extra`. Tries random ports in 20000-50000 until one binds (up to 20); blocks until the
  // server answers (at most ~5 s per port). Throws std::runtime_error with the log's end otherwise.
  static std::unique_ptr<ServerProcess> start_server(std::vector<std::string> extra = {});
  // A TLS-only server (--port 0, --tls-port P), configured by `tls` (certificate, key, CA,
  // tls-auth-clients ...), as managed services run them. Its port() and tls_port() are P; command()
  // goes over TLS there, presenting the fixture's client certificate, not verifying the server's.
  static std::unique_ptr<ServerProcess> start_tls_server(std::vector<std::string> tls);
  // start_server(), or under topology_tls() a server with a TLS port beside its plain one (which
  // command() keeps using), `extra` and the topologies' TLS settings (certificates,
  // tls-replication; tls-cluster too when `extra` enables cluster mode).
  static std::unique_ptr<ServerProcess> start_topology_server(std::vector<std::string> extra = {});

  // redis-sentinel with a generated D/sentinel.conf monitoring `master_name` at
  // 127.0.0.1:`master_port` with `quorum`, `down_after` and `failover_timeout`. Ports and throws
  // as start_server(). The master need not be up yet. With `tls`, it also listens on a TLS port
  // and talks TLS to the servers it watches and to the other Sentinels (`master_port` is then the
  // master's TLS port).
  static std::unique_ptr<ServerProcess> start_sentinel(
      const std::string& master_name, int master_port, int quorum,
      std::chrono::milliseconds down_after = std::chrono::milliseconds(1000),
      std::chrono::milliseconds failover_timeout = std::chrono::milliseconds(3000), bool tls = false);

  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const noexcept { return port_; }
  int tls_port() const noexcept { return tls_port_; }  // 0 without one
  std::string address() const;                         // "127.0.0.1:<port>"
  // The port lockbridge is given, and the one servers name to each other (replication, CLUSTER
  // NODES to TLS clients, Sentinel): the TLS port when there is one, else port().
  int client_port() const noexcept { return with_tls_port_ ? tls_port_ : port_; }  // port() when TLS-only
  std::string client_address() const;                                              // "127.0.0.1:<client_port>"
  // The current process id; -1 after kill() until restart().
  pid_t pid() const noexcept { return pid_; }
  const std::string& dir() const noexcept { return dir_; }
  // Whether the process is still alive (reaps it if it has exited). Never blocks.
  bool running() const;

  // SIGKILL and wait for it: a crash. Nothing is saved. No-op when not running.
  void kill();
  // Starts it again on the same port and directory with the same arguments (a sentinel reads the
  // config it rewrote, a cluster node its nodes.conf) and blocks until it answers (at most ~5 s).
  // Kills the running process first, if any. Throws std::runtime_error if it does not come up.
  void restart();
  // SIGSTOP / SIGCONT: a server that keeps its connections open but answers nothing (a long GC
  // pause, a stopped VM, a host cut off mid-stream); the kernel still accepts connections and
  // buffers what is sent to it. pause() returns once the process has stopped. kill() and the
  // destructor work on a paused process. No-op when not running.
  void pause();
  void resume();

  // One command on a fresh connection (connect and command timeouts `timeout`), the reply
  // flattened to a string: integers in decimal, arrays space-joined (recursively), nil as "(nil)",
  // status and error replies as their text ("OK", "MOVED 3999 127.0.0.1:30001", "ERR ...").
  // Throws std::runtime_error if the server cannot be reached or the connection fails.
  std::string command(std::initializer_list<std::string_view> args) const;
  std::string command(const std::vector<std::string>& args,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) const;
  // The same, for replies whose structure matters: an array reply's elements, each flattened.
  std::vector<std::string> command_list(const std::vector<std::string>& args) const;

  // The last `lines` lines of the server's log (and of anything it printed before opening it).
  std::string log_tail(int lines = 20) const;

 private:
  enum class Kind { server, sentinel };
  ServerProcess(Kind kind, std::string dir);
  // A server with a TLS port: beside its plain one, or instead of it.
  static std::unique_ptr<ServerProcess> start_with_tls_port(std::vector<std::string> extra, bool tls_only);
  // Tries random ports until the process comes up on one.
  void start_on_free_port();
  // Forks and execs on port_; false if it exited (a bind failure) or did not answer in time.
  bool launch_and_wait(std::string* failure);
  std::vector<std::string> arguments() const;

  Kind kind_;
  std::string dir_;
  std::vector<std::string> extra_;  // servers: arguments after the fixed ones
  std::string sentinel_body_;       // sentinels: the config after its `port` (and `tls-port`) line
  int port_ = 0;
  bool with_tls_port_ = false;
  bool tls_only_ = false;  // start_tls_server(): no plain port; port_ is the TLS port
  int tls_port_ = 0;
  mutable pid_t pid_ = -1;
};

// Makes `replica` miss every write `master` accepts from now on, for certain: pauses the replica
// (so it cannot reconnect), has the master drop its replica links (CLIENT KILL TYPE replica) and
// returns once the master counts no connected replica. For "a failover to a replica that never
// received the write": write, kill the master, and only then resume the replica (resumed while
// the master runs, it would reconnect and resync). Keep the pause well under the Sentinels'
// down-after and the cluster-node-timeout (1 s here): they would see the replica down too.
void cut_off_replica(ServerProcess& master, ServerProcess& replica);

// Whether `node` counts exactly one sharded subscriber of `channel`, or of a Client's own channel
// beside it (`channel` + ":<tag>", where a waiter of a token or hardened lock listens:
// docs/design.md §10.2): a waiter's Client subscribed there.
bool has_one_shard_subscriber(const ServerProcess& node, const std::string& channel);

// How many connections `server` has open on its `port` (CLIENT LIST's laddr), not counting the
// one that asks: whether clients reached it on its TLS port or its plain one.
int connections_on_port(const ServerProcess& server, int port);

// 1 master + 1 replica + 3 Sentinels (quorum 2), on loopback. The constructor returns once the
// replica is in sync (the master's INFO replication shows it online) and every Sentinel knows the
// master, the replica (link up) and the other two Sentinels; it throws std::runtime_error after
// 20 s otherwise. Members are destroyed Sentinels first.
struct SentinelTopology {
  // `down_after`: the Sentinels' down-after-milliseconds, how long a server may not answer
  // before they call it down.
  explicit SentinelTopology(std::chrono::milliseconds down_after = std::chrono::milliseconds(1000));

  // Unique to this topology ("lbmaster-<pid>-<n>"). Sentinels find each other by the master's name
  // in the hello messages they publish on the master: when a test killed its master and another
  // test's new master got that port, the first test's Sentinels, still watching the address,
  // joined the second's under a shared name, and its Sentinels never agreed on who they were.
  std::string master_name;
  std::unique_ptr<ServerProcess> master, replica;
  std::vector<std::unique_ptr<ServerProcess>> sentinels;

  // "redis-sentinel://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c/<master_name>" (rediss-sentinel:// and
  // the TLS ports under topology_tls())
  std::string url() const;
  // The port the Sentinels now name as master (SENTINEL get-master-addr-by-name), asked of the
  // first that answers: a client_port(). Throws std::runtime_error if none answers.
  int current_master_port() const;
  // Blocks until the Sentinels name a master other than `old_port` (a client_port()), that server's ROLE says
  // master, and every running Sentinel names it and flags it plain "master" (up, no failover in
  // progress); returns its port. Throws std::runtime_error after `timeout`, with the Sentinels' logs.
  int wait_for_failover(int old_port, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // The server (master or replica) whose client_port() is `port`, or nullptr.
  ServerProcess* server_on(int port) const;
};

// N independent masters for Redlock; each answers PING when the constructor returns.
struct IndependentMasters {
  explicit IndependentMasters(int n = 5);

  std::vector<std::unique_ptr<ServerProcess>> masters;

  // "redlock://127.0.0.1:a,127.0.0.1:b,..."
  std::string url() const;
};

// A Redis Cluster of `masters` masters with `replicas_per_master` replicas each (cluster-enabled,
// nodes.conf in each node's directory, cluster-node-timeout 1000 ms), created with
// `redis-cli --cluster create ... --cluster-yes`. The constructor returns once every node says
// cluster_state:ok and all nodes agree on the nodes, their roles and the slot map; it throws
// std::runtime_error after 20 s otherwise. With replicas, it also waits until each replica's link
// to its master is up.
struct ClusterTopology {
  static constexpr int kSlots = 16384;

  explicit ClusterTopology(int masters = 3, int replicas_per_master = 0);

  std::vector<std::unique_ptr<ServerProcess>> nodes;
  std::vector<std::string> node_ids;  // CLUSTER MYID of nodes[i]

  // "redis-cluster://127.0.0.1:a,127.0.0.1:b,..." (every node, in `nodes` order; redis-cli chose
  // which became replicas: ask ROLE). Under topology_tls(), rediss-cluster:// and the TLS ports: a
  // node answers a TLS client with its peers' TLS ports (CLUSTER NODES, MOVED), a plain one with
  // their plain ports, so owner_of_slot() and the like keep working on port().
  std::string url() const;

  // Moves `slot` from its owner to nodes[to_index] as `redis-cli --cluster reshard` does:
  // SETSLOT IMPORTING on the destination, MIGRATING on the source, MIGRATE the keys in batches of
  // 10, then SETSLOT NODE on the destination, the source and the other masters. Blocks until every
  // running node agrees on the new owner. A client may keep working meanwhile (it sees ASK, then
  // MOVED). No-op if the destination owns it already. Throws std::runtime_error on an error reply
  // or timeout.
  void move_slot(int slot, int to_index);
  // The index of the node that claims `slot` itself (its own CLUSTER NODES "myself" line). Throws
  // std::runtime_error unless exactly one running node claims it.
  int owner_of_slot(int slot) const;
  // Blocks until a running node other than nodes[old_owner] claims `slot` (a replica promoted after
  // its master died) and returns its index. Throws std::runtime_error after `timeout`, with the
  // logs of the running nodes.
  int wait_for_new_owner(int slot, int old_owner, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // CLUSTER KEYSLOT of `key`, asked of the first running node.
  int slot_of(std::string_view key) const;
  // The index of a node replicating nodes[master_index] (its ROLE names that master's port).
  // Throws std::runtime_error if none does.
  int replica_of(int master_index) const;
  // Blocks until every running node says cluster_state:ok and all of them describe the same nodes,
  // roles and slot owners, with no node failing or in handshake (so not while a killed node is
  // still listed). Throws std::runtime_error after `timeout`, with the last views.
  void wait_until_consistent(std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
};

// The reshard test of issue 7, for either front: a slot moves to another master and back while
// the lockers `start(url, key, options)` makes keep locking a key in it (with the preset `variant`
// names); ASK and MOVED are followed, and no overlap and no error reaches them. The lockers have
// make_progress(n), stop(), overlaps(), errors() (read once stopped) and an operator<<.
template <class StartLockers>
void lock_through_a_reshard(std::string_view variant, StartLockers start) {
  ClusterTopology cluster(3);
  const std::string key = unique_key();
  const int slot = cluster.slot_of(key);
  const int home = cluster.owner_of_slot(slot);
  MutexOptions options = variant_options(variant);
  options.lease = std::chrono::seconds(10);
  auto lockers = start(cluster.url(), key, options);
  ASSERT_TRUE(lockers->make_progress(50)) << *lockers;
  cluster.move_slot(slot, (home + 1) % 3);
  ASSERT_TRUE(lockers->make_progress(50)) << *lockers;
  cluster.move_slot(slot, home);
  ASSERT_TRUE(lockers->make_progress(50)) << *lockers;
  lockers->stop();
  EXPECT_EQ(lockers->overlaps(), 0);
  EXPECT_THAT(lockers->errors(), ::testing::IsEmpty()) << *lockers;
  EXPECT_EQ(cluster.owner_of_slot(slot), home);
}

}  // namespace lockbridge::testing
