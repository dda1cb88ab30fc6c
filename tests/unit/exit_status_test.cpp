// The CLI's exit status text, printed by every subcommand's --help from one table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exit_status.hpp"

namespace lockbridge::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

TEST(ExitStatus, EveryCommandTellsTheSharedCodesWithItsOwnMeanings) {
  const std::string text = one_line(exit_status_text({.ok = "the key exists", .not_acquired = "it does not"}));
  EXPECT_EQ(text,
            "Exit status: 0 the key exists, 1 it does not, 2 bad usage, 3 Redis or connection error, 5 stdout "
            "could not be written, 130 interrupted.");
}

TEST(ExitStatus, CodesACommandNeverUsesAreLeftOutAndDetailsFollowTheirCode) {
  const std::string text = one_line(exit_status_text({.ok = "converted",
                                                      .usage_detail = "(another database)",
                                                      .findings = "some were skipped",
                                                      .files = "journal, stdout",
                                                      .interrupt_detail = "(after the batch)"}));
  EXPECT_THAT(text, Not(HasSubstr(" 1 ")));
  EXPECT_THAT(text, HasSubstr("2 bad usage (another database), 3 Redis or connection error, 4 some were skipped, "
                              "5 a local file (journal, stdout) could not be written, 130 interrupted (after the "
                              "batch)."));
}

TEST(ExitStatus, LinesStayWithinAHundredColumnsAndNoCodeEndsALine) {
  const std::string text = exit_status_text({.ok = "no violation",
                                             .not_acquired = "violations seen (without --fault)",
                                             .redis_detail = "(also when errors stopped the work: a client still "
                                                             "failing at the end, e.g. a server that died)",
                                             .interrupt_detail = "(SIGINT, SIGTERM, SIGHUP: the run stops at once)"});
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    EXPECT_LE(line.size(), 100u) << line;
    const std::string last = line.substr(line.rfind(' ') + 1);
    EXPECT_NE(last.find_first_not_of("0123456789"), std::string::npos) << "a code ends the line: " << line;
    start = end + 1;
  }
}

}  // namespace
}  // namespace lockbridge::tools
