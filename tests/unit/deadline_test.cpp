// deadline_after() and deadline_at() (lockbridge/deadline.hpp): every wait a caller can write, of
// any representation and period, gives one attempt, a deadline that far ahead, or none; never an
// overflow (the sanitizer builds run these too).
#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <limits>
#include <utility>

#include "lockbridge/deadline.hpp"

namespace {

using namespace std::chrono;
using lockbridge::deadline_after;
using lockbridge::deadline_at;
using Steady = steady_clock::time_point;

// `deadline` is `wait` after a moment in [before, after] (rounded up to the clock's tick).
void expect_after(Steady deadline, Steady before, Steady after, steady_clock::duration wait) {
  EXPECT_GE(deadline, before + wait);
  EXPECT_LE(deadline, after + wait + nanoseconds(1));
}

TEST(Deadline, AWaitThatIsNotPositiveIsOneAttempt) {
  for (const auto& [name, deadline_of] : std::initializer_list<std::pair<const char*, Steady (*)()>>{
           {"zero", [] { return deadline_after(seconds::zero()); }},
           {"-1 ns", [] { return deadline_after(nanoseconds(-1)); }},
           {"nanoseconds::min()", [] { return deadline_after(nanoseconds::min()); }},
           {"hours::min()", [] { return deadline_after(hours::min()); }},
           {"days::min()", [] { return deadline_after(days::min()); }},
           {"years::min()", [] { return deadline_after(years::min()); }},
           {"picoseconds::min()", [] { return deadline_after(duration<long long, std::pico>::min()); }},
           {"NaN", [] { return deadline_after(duration<double>(std::numeric_limits<double>::quiet_NaN())); }},
           {"-inf", [] { return deadline_after(duration<double>(-std::numeric_limits<double>::infinity())); }},
       }) {
    SCOPED_TRACE(name);
    const Steady before = steady_clock::now();
    const Steady deadline = deadline_of();
    const Steady after = steady_clock::now();
    EXPECT_GE(deadline, before);
    EXPECT_LE(deadline, after);
  }
}

TEST(Deadline, AHundredYearsOrMoreIsNoDeadline) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(deadline_after(lockbridge::kNoDeadline), Steady::max());
  EXPECT_EQ(deadline_after(nanoseconds::max()), Steady::max());
  EXPECT_EQ(deadline_after(hours::max()), Steady::max());
  EXPECT_EQ(deadline_after(days::max()), Steady::max());
  EXPECT_EQ(deadline_after(years::max()), Steady::max());
  EXPECT_EQ(deadline_after(duration<double>(inf)), Steady::max());
  EXPECT_EQ(deadline_after(duration<long double>(std::numeric_limits<long double>::max())), Steady::max());
}

TEST(Deadline, AnOrdinaryWaitIsThatFarAhead) {
  for (const steady_clock::duration wait :
       {steady_clock::duration(nanoseconds(1)), steady_clock::duration(milliseconds(5)),
        steady_clock::duration(hours(24 * 365 * 99))}) {
    const Steady before = steady_clock::now();
    const Steady deadline = deadline_after(wait);
    expect_after(deadline, before, steady_clock::now(), wait);
  }
  // A picosecond rounds up to the clock's next tick; a fraction of a second in double is kept.
  Steady before = steady_clock::now();
  Steady deadline = deadline_after(duration<long long, std::pico>(1));
  expect_after(deadline, before, steady_clock::now(), nanoseconds(1));
  before = steady_clock::now();
  deadline = deadline_after(duration<double>(0.25));
  expect_after(deadline, before, steady_clock::now(), milliseconds(250));
}

// Each deadline is computed before the clock is read for comparison.
template <class TimePoint>
void expect_one_attempt(const TimePoint& time_point) {
  const Steady before = steady_clock::now();
  const Steady deadline = deadline_at(time_point);
  const Steady after = steady_clock::now();
  EXPECT_GE(deadline, before);
  EXPECT_LE(deadline, after);
}

TEST(Deadline, ATimePointOfAnyClockAndTypeNeverOverflows) {
  expect_one_attempt(system_clock::time_point::min());
  expect_one_attempt(sys_days::min());
  expect_one_attempt(sys_seconds::min());
  expect_one_attempt(Steady::min());
  expect_one_attempt(system_clock::now() - hours(1));
  EXPECT_EQ(deadline_at(system_clock::time_point::max()), Steady::max());
  EXPECT_EQ(deadline_at(sys_days::max()), Steady::max());
  EXPECT_EQ(deadline_at(sys_seconds::max()), Steady::max());
  EXPECT_EQ(deadline_at(Steady::max()), Steady::max());
  // A time point an hour ahead on the wall clock is about an hour ahead on the steady clock.
  const Steady before = steady_clock::now();
  const Steady deadline = deadline_at(system_clock::now() + hours(1));
  const Steady after = steady_clock::now();
  EXPECT_GT(deadline, before + minutes(59));
  EXPECT_LT(deadline, after + minutes(61));
}

}  // namespace
