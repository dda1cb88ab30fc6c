// The lock protocol over the event-driven link: each strategy's own coroutines (the same code the
// blocking front runs in place) driven by an Asio io_context through a Pipeline, against the
// fixture's real server: acquire, contend, release, the EVAL fallback on a flushed script cache,
// and an acquire cancelled while its request is in flight, whose reply then reaches nobody.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "loop_runner.hpp"
#include "redis/pipeline_link.hpp"
#include "redis/script_runner.hpp"
#include "redis_test_support.hpp"
#include "strategies/strategy.hpp"

namespace lockbridge::testing {
namespace {

using detail::AcquireAttempt;
using detail::AttemptRequest;
using detail::ReleaseOutcome;
using detail::Task;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class PipelineLinkTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    ClientOptions options;
    if (over_tls()) options.tls = test_tls();
    auto connection = std::make_unique<detail::Connection>(parse_redis_url(over_tls() ? tls_url() : unix_url()),
                                                           options, round_trips_);
    pipeline_ = detail::Pipeline::start(*runner_.loop(), std::move(connection));
    link_ = std::make_unique<detail::PipelineLink>(pipeline_, milliseconds(5000));
  }
  std::unique_ptr<detail::LockStrategy> strategy() {
    return detail::make_strategy(variant_options(GetParam()), scripts_, /*on_cluster=*/false);
  }
  template <class T>
  T finish(Task<T> task) {
    return runner_.finish(std::move(task));
  }

  LoopRunner runner_;
  std::atomic<std::uint64_t> round_trips_{0};
  detail::ScriptCache scripts_;
  std::shared_ptr<detail::Pipeline> pipeline_;
  std::unique_ptr<detail::PipelineLink> link_;
};

TEST_P(PipelineLinkTest, AStrategyAcquiresContendsAndReleasesOverThePipeline) {
  const std::string key = unique_key();
  auto first = strategy();
  auto second = strategy();
  const std::string channel = first->release_channel_of(key).name;
  AttemptRequest request;
  request.lease = milliseconds(10000);
  request.learn_remaining = true;
  // A flushed script cache: the scripted strategies go again as EVAL, on the loop too.
  raw({"SCRIPT", "FLUSH"});
  const AcquireAttempt won = finish(first->try_acquire(*link_, key, request));
  ASSERT_TRUE(won.acquired);
  EXPECT_TRUE(raw({"EXISTS", key}).integer == 1);
  const AcquireAttempt lost = finish(second->try_acquire(*link_, key, request));
  EXPECT_FALSE(lost.acquired);
  ASSERT_TRUE(lost.holder_remaining.has_value());
  EXPECT_GT(lost.holder_remaining->count(), 0);
  EXPECT_EQ(finish(first->release(*link_, key, won.value, channel)), ReleaseOutcome::released);
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0);
  // The second takes it now, and its own release is owner-checked as on the blocking front. (A
  // longer lease: legacy ms stamps written in the same millisecond would be the same value.)
  AttemptRequest later = request;
  later.lease = milliseconds(20000);
  const AcquireAttempt next = finish(second->try_acquire(*link_, key, later));
  ASSERT_TRUE(next.acquired);
  const ReleaseOutcome stale = finish(first->release(*link_, key, won.value, channel));
  if (std::string_view(GetParam()) != "legacy_faithful") {  // jedis-lock deletes whatever is there
    EXPECT_EQ(stale, ReleaseOutcome::not_ours);
    EXPECT_EQ(raw({"EXISTS", key}).integer, 1);
  }
  (void)finish(second->release(*link_, key, next.value, channel));
}

TEST_P(PipelineLinkTest, AnAcquireCancelledInFlightLeavesItsReplyToNobody) {
  const std::string key = unique_key();
  auto cancelled = strategy();
  AttemptRequest request;
  request.lease = milliseconds(10000);
  {
    // Started (its request written) and destroyed before the loop ran: the operation was cancelled
    // after its request went out. (Undoing what it may have won is the lock core's job.)
    Task<AcquireAttempt> gone = cancelled->try_acquire(*link_, key, request);
    EXPECT_FALSE(gone.done());
  }
  // The next request on the same connection gets its own reply, not the cancelled one's.
  const std::string probe = unique_key("probe");
  raw({"SET", probe, "probe value"});
  auto reply = finish(link_->command("GET", probe));
  EXPECT_EQ(detail::as_view(*reply), "probe value");
  raw({"DEL", key, probe});
}

INSTANTIATE_TEST_SUITE_P(Strategies, PipelineLinkTest,
                         ::testing::Values("token", "legacy_hardened", "legacy_faithful", "redisson"), kVariantName);

}  // namespace
}  // namespace lockbridge::testing
