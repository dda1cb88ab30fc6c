// Client::eval: a script runs once per call, as EVALSHA, and again as EVAL for the calls a server
// did not have the script for (new, flushed); replies come back in the calls' order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lockbridge/client.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

// Sets its key to its argument and answers with both, so each reply names its own call.
constexpr std::string_view kSetAndEcho = "redis.call('SET', KEYS[1], ARGV[1]) return KEYS[1] .. '=' .. ARGV[1]";

std::vector<Client::EvalCall> calls_for(const std::vector<std::string>& keys) {
  std::vector<Client::EvalCall> calls;
  for (std::size_t i = 0; i < keys.size(); ++i) calls.push_back({{keys[i]}, {"v" + std::to_string(i)}});
  return calls;
}

TEST(ClientEval, AScriptTheServerLacksRunsOnceAsEvalAndRepliesInOrder) {
  const Client client = test_client();
  const std::vector<std::string> keys{unique_key("a"), unique_key("b"), unique_key("c")};
  raw({"SCRIPT", "FLUSH"});
  const std::vector<Reply> replies = client.eval(kSetAndEcho, calls_for(keys));
  ASSERT_EQ(replies.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(replies[i].str, keys[i] + "=v" + std::to_string(i));
    EXPECT_EQ(raw({"GET", keys[i]}).str, "v" + std::to_string(i));  // ran once: its own value
  }
  // The server has it now: named by the SHA1 computed here.
  const Reply exists = raw({"SCRIPT", "EXISTS", script_sha1(kSetAndEcho)});
  ASSERT_EQ(exists.elements.size(), 1u);
  EXPECT_EQ(exists.elements[0].integer, 1);
}

TEST(ClientEval, AnErrorReplyIsReturnedInItsPlaceWithoutHidingTheOthers) {
  const Client client = test_client();
  const std::string list_key = unique_key("list");
  raw({"RPUSH", list_key, "x"});
  const std::vector<std::string> keys{unique_key("a"), list_key, unique_key("c")};
  const std::vector<Reply> replies =
      client.eval("return redis.call('GET', KEYS[1])",
                  std::vector<Client::EvalCall>{{{keys[0]}, {}}, {{keys[1]}, {}}, {{keys[2]}, {}}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_TRUE(replies[0].is_nil());
  EXPECT_EQ(replies[1].kind, Reply::Kind::error);
  EXPECT_NE(replies[1].str.find("WRONGTYPE"), std::string::npos) << replies[1].str;
  EXPECT_TRUE(replies[2].is_nil());
}

TEST(ClientEval, NoCallsSendNothing) {
  const Client client = test_client();
  const auto before = client.stats().round_trips;
  EXPECT_TRUE(client.eval(kSetAndEcho, {}).empty());
  EXPECT_EQ(client.stats().round_trips, before);
}

}  // namespace
}  // namespace lockbridge::testing
