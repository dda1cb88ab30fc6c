// What the CLI does with replies it did not expect: an error reply (an ACL's NOPERM) is reported
// with Redis's own text and the command it answered, never as a malformed reply or a missing
// feature; a reply of the wrong shape (a fake server) is a protocol error that says what was wrong;
// and a convert or rollback that Redis stops midway still prints what it did so far.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A server that speaks RESP and answers each command from a table of raw replies: by "NAME arg"
// for an entry naming one of its arguments (a key), else by its name ("-ERR unknown command" for
// the rest): replies no real Redis would give.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::map<std::string, std::string> replies) : replies_(std::move(replies)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(listen_fd_, 16) != 0) {
      throw std::runtime_error("cannot listen on loopback");
    }
    socklen_t length = sizeof address;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    thread_.join();
    for (const auto& [fd, buffer] : clients_) close(fd);
    close(listen_fd_);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (const auto& [fd, buffer] : clients_) fds.push_back({fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) clients_[accept(listen_fd_, nullptr, nullptr)];
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        char chunk[4096];
        const ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
        if (got <= 0) {
          close(fds[i].fd);
          clients_.erase(fds[i].fd);
          continue;
        }
        std::string& buffer = clients_[fds[i].fd];
        buffer.append(chunk, static_cast<std::size_t>(got));
        answer(fds[i].fd, buffer);
      }
    }
  }

  // Answers every complete command at the front of `buffer` (RESP arrays of bulk strings).
  void answer(int fd, std::string& buffer) {
    for (;;) {
      std::size_t at = 0;
      const auto line = [&]() -> std::optional<std::string> {
        const std::size_t end = buffer.find("\r\n", at);
        if (end == std::string::npos) return std::nullopt;
        std::string text = buffer.substr(at, end - at);
        at = end + 2;
        return text;
      };
      const auto count = line();
      if (!count) return;
      std::vector<std::string> args;
      for (int i = 0; i < std::stoi(count->substr(1)); ++i) {
        const auto length = line();
        if (!length) return;
        const std::size_t size = std::stoul(length->substr(1));
        if (buffer.size() < at + size + 2) return;
        args.push_back(buffer.substr(at, size));
        at += size + 2;
      }
      buffer.erase(0, at);
      std::string name = args.empty() ? "" : args[0];
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      auto found = replies_.end();
      for (std::size_t i = 1; i < args.size() && found == replies_.end(); ++i)
        found = replies_.find(name + " " + args[i]);
      if (found == replies_.end()) found = replies_.find(name);
      const std::string reply = found == replies_.end() ? "-ERR unknown command '" + name + "'\r\n" : found->second;
      if (write(fd, reply.data(), reply.size()) < 0) return;
    }
  }

  std::map<std::string, std::string> replies_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::map<int, std::string> clients_;  // connection -> bytes not yet answered
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A keyspace of one key, as a fake server shows it.
std::map<std::string, std::string> one_key_server() {
  return {{"PING", "+PONG\r\n"},
          {"DBSIZE", ":1\r\n"},
          {"SCAN", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"},
          {"TIME", "*2\r\n$10\r\n1800000000\r\n$6\r\n123456\r\n"},
          {"GETRANGE", "$13\r\n1800000060000\r\n"},
          {"PTTL", ":-1\r\n"},
          {"PEXPIRETIME", ":-1\r\n"}};
}

// Found by fuzz_reply: hiredis allocates an array's element pointers when its header arrives, so
// "*2000000000" asked for 16 GB before a single element came. A reply array above 2^24 elements
// is a protocol error (the connection is dropped); nothing is allocated for it.
TEST(CliReplies, AnArrayHeaderClaimingBillionsOfElementsIsAProtocolErrorNotAnAllocation) {
  const ScriptedServer server({{"PING", "*2000000000\r\n"}, {"GET", "*3\r\n:1\r\n:2\r\n:3\r\n"}});
  const Client client(server.url());
  try {
    (void)client.command({"PING"});
    FAIL() << "an impossible array was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.errc(), Errc::protocol) << error.what();
    EXPECT_THAT(error.what(), HasSubstr("more than 16777216 elements")) << error.what();
  }
  EXPECT_EQ(client.command({"GET", "k"}).elements.size(), 3U) << "a fresh connection reads arrays as before";
}

TEST(CliReplies, AnAclRefusalOfAReadNamesTheCommandAndRedissText) {
  const std::string tag = unique_key("acl");
  const std::string stamp = "stamp:" + tag;
  const std::string hash = "hash:" + tag;
  raw({"SET", stamp, std::to_string(server_ms() + 60000)});
  raw({"HSET", hash, "f47ac10b-58cc-4372-a567-0e02b2c3d479:1", "1"});
  for (const std::string command : {"getrange", "pttl", "time", "type", "hrandfield"}) {
    SCOPED_TRACE(command);
    const AclUser user({"+@all", "-" + command});
    const CliRun run = run_cli("audit --json --match '*" + tag + "*' --url '" + user.url() + "'", false);
    EXPECT_EQ(run.exit_code, 3) << run;
    EXPECT_THAT(run.errors, HasSubstr("NOPERM")) << run;
    std::string upper = command;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_THAT(run.errors, HasSubstr(upper)) << run;
    EXPECT_THAT(run.errors, HasSubstr("[server_reply]")) << run;
  }
  raw({"DEL", stamp, hash});
}

TEST(CliReplies, ANopermOnPexpiretimeIsNotMistakenForAnOldRedis) {
  const std::string key = unique_key();
  raw({"SET", key, std::to_string(server_ms() + 60000)});
  const AclUser user({"+@all", "-pexpiretime"});
  const CliRun run = run_cli("convert --to token --dry-run --match '" + key + "' --url '" + user.url() + "'", false);
  EXPECT_EQ(run.exit_code, 3) << run;
  EXPECT_THAT(run.errors, HasSubstr("NOPERM")) << run;
  EXPECT_THAT(run.errors, HasSubstr("PEXPIRETIME")) << run;
  EXPECT_THAT(run.errors, Not(HasSubstr("7.0"))) << run;
  raw({"DEL", key});
}

TEST(CliReplies, ATimeReplyThatIsNotANumberIsAProtocolErrorSayingSo) {
  std::map<std::string, std::string> replies = one_key_server();
  replies["TIME"] = "*2\r\n$4\r\nsoon\r\n$5\r\nlater\r\n";
  const ScriptedServer server(replies);
  for (const std::string command : {"inspect k", "audit", "convert --to token --dry-run"}) {
    SCOPED_TRACE(command);
    const CliRun run = run_cli(command + " --url " + server.url(), false);
    EXPECT_EQ(run.exit_code, 3) << run;
    EXPECT_THAT(run.errors, HasSubstr("TIME reply")) << run;
    EXPECT_THAT(run.errors, HasSubstr("is not a number")) << run;
    EXPECT_THAT(run.errors, HasSubstr("[protocol]")) << run;
  }
}

TEST(CliReplies, ReplysOfTheWrongShapeAreProtocolErrorsNamingTheCommand) {
  const std::vector<std::pair<std::string, std::string>> wrong{
      {"SCAN", "*2\r\n$1\r\n0\r\n:5\r\n"},  // the keys are not an array
      {"DBSIZE", "$3\r\nabc\r\n"},
      {"PTTL", "$2\r\n-1\r\n"},
      {"GETRANGE", ":12\r\n"},
  };
  for (const auto& [command, reply] : wrong) {
    SCOPED_TRACE(command);
    std::map<std::string, std::string> replies = one_key_server();
    replies[command] = reply;
    const ScriptedServer server(replies);
    const CliRun run = run_cli("audit --url " + server.url(), false);
    EXPECT_EQ(run.exit_code, 3) << run;
    EXPECT_THAT(run.errors, HasSubstr(command)) << run;
    EXPECT_THAT(run.errors, HasSubstr("[protocol]")) << run;
  }
}

// A server that is not Redis is a protocol error (exit 3), never "bad usage": bench read its answer
// to the check key's GET as a check key in use (exit 2). It asks PING first now.
TEST(CliReplies, AServerThatIsNotRedisIsAProtocolErrorNotBadUsage) {
  for (const std::string& answer : {std::string("+OK\r\n"), std::string("$3\r\nabc\r\n")}) {
    SCOPED_TRACE(answer);
    const ScriptedServer server({{"PING", answer}, {"GET", answer}, {"INFO", "$0\r\n\r\n"}});
    const CliRun run = run_cli("bench --ops 3 --url " + server.url(), false, "timeout -s KILL 30");
    EXPECT_EQ(run.exit_code, 3) << run;
    EXPECT_THAT(run.errors, HasSubstr("not PONG: is it a Redis server?")) << run;
  }
}

// A hash that another client replaces between audit's TYPE and HRANDFIELD (WRONGTYPE), and any
// hash on Redis < 6.2 (no HRANDFIELD): classified by its type, without fields, and the audit goes on.
TEST(CliReplies, AHashWhoseFieldsCannotBeSampledIsClassifiedByItsTypeAlone) {
  std::map<std::string, std::string> replies = one_key_server();
  replies["GETRANGE"] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
  replies["TYPE"] = "+hash\r\n";
  replies["HGET"] = "$-1\r\n";  // no 'mode' field: not Redisson's read/write lock
  for (const std::string hrandfield : {"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", ""}) {
    SCOPED_TRACE(hrandfield.empty() ? "no HRANDFIELD (Redis < 6.2)" : "WRONGTYPE");
    std::map<std::string, std::string> server_replies = replies;
    if (!hrandfield.empty()) server_replies["HRANDFIELD"] = hrandfield;
    const ScriptedServer server(server_replies);
    const CliRun run = run_cli("audit --json --url " + server.url(), false);
    EXPECT_EQ(run.exit_code, 0) << run;
    ASSERT_FALSE(run.lines.empty()) << run;
    EXPECT_EQ(run.lines.back()["total"], 1) << run;
    EXPECT_EQ(run.lines.back()["by_class"]["other"], 1) << run;
    // Told it is a Redisson lock, audit does not call values it could not read bad.
    const CliRun hinted = run_cli("audit --json --type-hint redisson --url " + server.url(), false);
    EXPECT_EQ(hinted.exit_code, 0) << hinted;
    ASSERT_FALSE(hinted.lines.empty()) << hinted;
    EXPECT_EQ(hinted.lines.back()["by_class"]["redisson"], 1) << hinted;
    EXPECT_EQ(hinted.lines.back()["by_flag"]["bad_value"], 0) << hinted;
  }
}

// Three keys a, b, c, each a live stamp (as one_key_server shows them), whose script calls are
// answered with the status replies `a`, `b` and `c`.
std::map<std::string, std::string> three_key_server(const std::string& a, const std::string& b, const std::string& c) {
  std::map<std::string, std::string> replies = one_key_server();
  replies["DBSIZE"] = ":3\r\n";
  replies["SCAN"] = "*2\r\n$1\r\n0\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n";
  replies["EVALSHA a"] = "+" + a + "\r\n";
  replies["EVALSHA b"] = "+" + b + "\r\n";
  replies["EVALSHA c"] = "+" + c + "\r\n";
  return replies;
}

std::vector<nlohmann::json> json_lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// A script reply that is none of the script's outcomes (a fake server's) says nothing of what
// happened to its key: the rest of the batch is still counted and journalled, that key's write
// gets no outcome line (it may have happened: rollback checks the key), and then the run stops.
TEST(CliReplies, AScriptReplyThatIsNoOutcomeStopsTheRunAfterItsBatchIsCountedAndJournalled) {
  const std::string journal = (std::filesystem::path(test_dir()) / ("journal-" + unique_key() + ".jsonl")).string();
  {
    const ScriptedServer server(three_key_server("written", "perhaps", "written"));
    const CliRun run = run_cli("convert --to token --json --journal '" + journal + "' --url " + server.url(), false);
    EXPECT_THAT(run.errors, HasSubstr("the script's reply for \"b\" is not one of its outcomes: 'perhaps'")) << run;
    EXPECT_THAT(run.errors, HasSubstr("[protocol]")) << run;
    expect_incomplete_summary(run, 3, "converted", 2);
  }
  std::map<std::string, std::string> outcomes;
  for (const nlohmann::json& line : json_lines(journal)) {
    if (line.contains("outcome")) outcomes[line["key"]] = line["outcome"];
  }
  EXPECT_EQ(outcomes, (std::map<std::string, std::string>{{"a", "written"}, {"c", "written"}}));

  // Rollback sends all three (b's write may have happened); the same kind of reply for a is
  // reported after b and c are counted.
  const ScriptedServer server(three_key_server("perhaps", "restored", "restored"));
  const CliRun rollback = run_cli("convert --json --rollback '" + journal + "' --url " + server.url(), false);
  EXPECT_THAT(rollback.errors, HasSubstr("the script's reply for \"a\" is not one of its outcomes")) << rollback;
  expect_incomplete_summary(rollback, 3, "restored", 2);
  std::filesystem::remove(journal);
}

// Live legacy stamps, some of which an ACL user may write ("allowed:") and some not ("refused:").
struct TwoGroups {
  std::string tag = unique_key("groups");
  std::vector<std::string> allowed;
  std::vector<std::string> refused;
  TwoGroups() {
    const std::int64_t now = server_ms();
    for (int i = 0; i < 3; ++i) {
      allowed.push_back("allowed:" + tag + ":" + std::to_string(i));
      refused.push_back("refused:" + tag + ":" + std::to_string(i));
      raw({"SET", allowed.back(), std::to_string(now + 600000)});
      raw({"SET", refused.back(), std::to_string(now + 600000)});
    }
  }
  ~TwoGroups() {
    for (const auto* group : {&allowed, &refused}) {
      for (const std::string& key : *group) raw({"DEL", key});
    }
  }
  std::string match() const { return " --match '*:" + tag + ":*'"; }
  // How many allowed keys hold what `written` says convert (or rollback) writes. SCAN decides
  // which keys share the batch that met the refusal, so the summary must match this, not a
  // number fixed in advance.
  std::int64_t allowed_holding(const std::function<bool(const std::string&)>& written) const {
    std::int64_t count = 0;
    for (const std::string& key : allowed) count += written(raw({"GET", key}).str) ? 1 : 0;
    return count;
  }
};

// Reads every key, writes (scripts included) only the allowed ones.
AclUser writes_only_allowed() { return AclUser({"resetkeys", "%R~*", "~allowed:*", "+@all"}); }

TEST(CliReplies, AConvertThatRedisStopsMidwayStillPrintsTheCountsSoFar) {
  const TwoGroups keys;
  const AclUser user = writes_only_allowed();
  const std::string journal = (std::filesystem::path(test_dir()) / ("journal-" + keys.tag + ".jsonl")).string();
  const CliRun run = run_cli(
      "convert --to token --json --journal '" + journal + "'" + keys.match() + " --url '" + user.url() + "'", false);
  EXPECT_THAT(run.errors, HasSubstr("NOPERM")) << run;
  expect_incomplete_summary(run, 3, "converted", keys.allowed_holding(is_token));
  for (const std::string& key : keys.refused) EXPECT_FALSE(is_token(raw({"GET", key}).str)) << key;
  std::filesystem::remove(journal);
}

TEST(CliReplies, ARollbackThatRedisStopsMidwayStillPrintsTheCountsSoFar) {
  const TwoGroups keys;
  const std::string journal = (std::filesystem::path(test_dir()) / ("journal-" + keys.tag + ".jsonl")).string();
  ASSERT_EQ(run_cli("convert --to token --journal '" + journal + "'" + keys.match()).exit_code, 0);
  const AclUser user = writes_only_allowed();
  const CliRun run = run_cli("convert --json --rollback '" + journal + "' --url '" + user.url() + "'", false);
  EXPECT_THAT(run.errors, HasSubstr("NOPERM")) << run;
  expect_incomplete_summary(run, 3, "restored",
                            keys.allowed_holding([](const std::string& value) { return !is_token(value); }));
  for (const std::string& key : keys.refused) EXPECT_TRUE(is_token(raw({"GET", key}).str)) << key;
  std::filesystem::remove(journal);
}

}  // namespace
}  // namespace lockbridge::testing
