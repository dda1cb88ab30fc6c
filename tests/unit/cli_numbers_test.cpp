// The CLI's numbers: options read as text and range-checked in one place, time sums that saturate
// instead of wrapping into the past, and sleeps longer than the clock can count. No server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "no_server.hpp"
#include "saturating.hpp"

namespace lockbridge::tools {
namespace {

using lockbridge::testing::bad_option_message;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

// `--value TEXT` parsed as the CLI parses it.
po::variables_map parsed_value(const std::string& text) {
  po::options_description options;
  options.add_options()("value", number_value());
  std::vector<std::string> args{"--value=" + text};
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);
  return vm;
}

TEST(CliNumbers, MillisecondsWithinTheirRangeAreRead) {
  EXPECT_EQ(milliseconds_option(parsed_value("0"), "value", milliseconds(0), kMaxOptionDuration), milliseconds(0));
  EXPECT_EQ(milliseconds_option(parsed_value("31536000000"), "value", milliseconds(0), kMaxOptionDuration),
            kMaxOptionDuration);
}

TEST(CliNumbers, AnythingElseNamesTheOptionAndItsRange) {
  for (const std::string text : {"-1", "31536000001", "99999999999999999999", "1e3", "ten", " 5", "5 ", "+5", "0x10"}) {
    SCOPED_TRACE(text);
    const std::string message = bad_option_message(
        [&] { (void)milliseconds_option(parsed_value(text), "value", milliseconds(0), kMaxOptionDuration); });
    EXPECT_THAT(message, HasSubstr("--value must be between 0 and 31536000000 ms (365 days), got '" + text + "'"));
  }
  EXPECT_THAT(bad_option_message([] { (void)count_option(parsed_value("0"), "value", 1, 100); }),
              HasSubstr("--value must be between 1 and 100, got '0'"));
}

TEST(CliNumbers, SecondsAreDecimalAndRoundedToMilliseconds) {
  EXPECT_EQ(seconds_option(parsed_value("0.5"), "value", milliseconds(1), milliseconds(3600000)), milliseconds(500));
  EXPECT_EQ(seconds_option(parsed_value("3"), "value", milliseconds(1), milliseconds(3600000)), milliseconds(3000));
  for (const std::string text : {"0", "0.0001", "3600.001", "nan", "inf", "1e400", "-1", "1s"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT(bad_option_message(
                    [&] { (void)seconds_option(parsed_value(text), "value", milliseconds(1), milliseconds(3600000)); }),
                HasSubstr("--value must be between 0.001 and 3600 seconds"));
  }
}

TEST(CliNumbers, TimeSumsSaturateInsteadOfWrapping) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(add_saturating(1, 2), 3);
  EXPECT_EQ(add_saturating(kMax - 1, 5), kMax);
  EXPECT_EQ(add_saturating(kMin + 1, -5), kMin);
}

TEST(CliNumbers, ASleepTooLongForTheClockStillEndsWhenStopped) {
  int asked = 0;
  EXPECT_FALSE(sleep_unless(milliseconds::max(), [&] { return ++asked > 2; }));
}

}  // namespace
}  // namespace lockbridge::tools
