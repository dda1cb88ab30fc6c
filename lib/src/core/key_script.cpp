#include "core/key_script.hpp"

#include <charconv>
#include <span>

#include "strategies/strategy.hpp"

namespace lockbridge::detail {

namespace {
// `run` on the link to the key's server, the route's failures naming the operation and the key.
Task<void> on_key(Routes& routes, const std::string& key, const Routes::Operation& run, std::string_view operation,
                  Routes::Clock::time_point deadline) {
  std::exception_ptr failure;
  try {
    co_await routes.on_link(key, run, deadline);
  } catch (const Error& error) {
    failure = std::make_exception_ptr(naming_key(error, operation, key));
  }
  if (failure) std::rethrow_exception(failure);
}
}  // namespace

Task<ReplyPtr> call_on_key(Routes& routes, ScriptCache& scripts, const ScriptCall& call, std::string_view operation,
                           Routes::Clock::time_point deadline, bool* sent) {
  const std::string& key = call.keys.front();
  ReplyPtr reply;
  const Routes::Operation run = [&](Link& link) -> Task<void> {
    if (sent != nullptr) *sent = true;
    auto replies = co_await run_scripts(link, scripts, std::span(&call, 1));
    reply = std::move(replies.front());
  };
  co_await on_key(routes, key, run, operation, deadline);
  throw_if_script_error(*reply, ReplyContext(operation, key), call.keys);
  co_return reply;
}

ReplyPtr run_on_key(ClientState& state, const ScriptCall& call, std::string_view operation) {
  BlockingRoutes routes(state);
  return call_on_key(routes, state.scripts, call, operation).run_now();
}

Task<std::int64_t> read_integer(Routes& routes, std::string key, std::string_view operation,
                                Routes::Clock::time_point deadline) {
  ReplyPtr reply;
  const Routes::Operation run = [&](Link& link) -> Task<void> { reply = co_await link.command("GET", key); };
  co_await on_key(routes, key, run, operation, deadline);
  const std::optional<std::string> value = string_or_nil(*reply, ReplyContext(operation, key));
  if (!value) co_return 0;
  std::int64_t number = 0;
  const char* end = value->data() + value->size();
  const auto [parsed_to, error] = std::from_chars(value->data(), end, number);
  if (error != std::errc() || parsed_to != end) {
    throw Error(Errc::bad_value, describe(operation, key) + ": the key holds no integer");
  }
  co_return number;
}

void require_java_int(std::string_view what, std::int64_t value, std::int64_t least) {
  if (value < least || value > kJavaIntMax) {
    throw Error(Errc::bad_option, std::string(what) + " must be between " + std::to_string(least) + " and " +
                                      std::to_string(kJavaIntMax) + " (a Java int), not " + std::to_string(value));
  }
}

std::int64_t integer_of(const redisReply& reply, std::string_view operation, std::string_view key) {
  return expect_integer(reply, ReplyContext(operation, key));
}

}  // namespace lockbridge::detail
