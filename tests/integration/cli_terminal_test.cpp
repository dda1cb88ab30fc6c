// Text the CLI prints is safe for a terminal, whatever bytes it shows: keys, patterns, file names,
// URLs, --sni names and Redis's own error messages may hold ESC sequences, C1 controls (CSI) or
// bidirectional overrides; the text views escape them, and the JSON lines too (still the same
// JSON values: \u escapes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "key_text.hpp"
#include "redis_test_support.hpp"
#include "terminal_check.hpp"

namespace lockbridge::testing {
namespace {

// ESC [ 31 m (red), OSC 0 (the window title) ended by BEL, CSI as a C1 control (U+009B), NEL
// (U+0085), and RIGHT-TO-LEFT OVERRIDE (U+202E): each either obeyed or reordering the line.
const std::string kHostile = "x\x1b[31m\x1b]0;pwned\x07\xc2\x9b" "2J\xc2\x85\xe2\x80\xae" "y";

// `text` as one shell word, any byte in it (run_cli's shell is sh: printf's octal escapes).
std::string shell_bytes(const std::string& text) {
  std::string quoted = "\"$(printf '";
  for (const char c : text) {
    char escape[8];
    std::snprintf(escape, sizeof escape, "\\%03o", static_cast<unsigned char>(c));
    quoted += escape;
  }
  return quoted + "')\"";
}

void expect_terminal_safe(const CliRun& run) {
  EXPECT_TRUE(terminal_safe(run.output)) << run;
  EXPECT_TRUE(terminal_safe(run.errors)) << run;
}

TEST(CliTerminal, EveryTextAndJsonOutputEscapesWhatATerminalWouldObey) {
  const std::string key = unique_key() + kHostile;
  const std::string tls = " --url " + tls_url() + " --cacert " + tls_file("ca.pem");
  const std::vector<std::string> commands{
      "hold " + shell_bytes(key) + " --for 0",
      "hold " + shell_bytes(key) + " --for 0 --json",
      "inspect " + shell_bytes(key),
      "watch " + shell_bytes(key + "*") + " --once",
      "bench --ops 5 --lock-key " + shell_bytes(key),
      "bench --ops 5 --json --lock-key " + shell_bytes(key),
      "audit --details " + shell_bytes("/nonexistent/" + kHostile),
      "convert --rollback " + shell_bytes("/nonexistent/" + kHostile),
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    expect_terminal_safe(run_cli(command));
  }
  // Messages built from what the user gave: a file name, a server name, an unknown command.
  expect_terminal_safe(run_cli("hold k --for 0 --cacert " + shell_bytes("/nonexistent/" + kHostile) + " --url " +
                                   tls_url(),
                               false));
  expect_terminal_safe(run_cli("hold k --for 0 --sni " + shell_bytes("redis" + kHostile) + tls, false));
  expect_terminal_safe(run_cli(shell_bytes(kHostile), false));
  raw({"DEL", key});
}

TEST(CliTerminal, JsonLinesStayTheSameValuesWithTheirControlsEscaped) {
  const std::string key = unique_key() + kHostile;
  const CliRun run = run_cli("hold " + shell_bytes(key) + " --for 0 --json");
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_EQ(run.lines.size(), 2U) << run;
  EXPECT_EQ(run.lines.front()["key"], key) << "the same key, read back";
  EXPECT_THAT(run.output, ::testing::HasSubstr("\\u202e")) << run;
  EXPECT_THAT(run.output, ::testing::HasSubstr("\\u009b")) << run;
  EXPECT_TRUE(terminal_safe(run.output)) << run;
}

TEST(CliTerminal, TerminalTextEscapesControlsBidiAndBytesThatAreNotUtf8) {
  EXPECT_EQ(tools::terminal_text("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(tools::terminal_text("a\xc2\x9b" "b"), "a\\x9bb");
  EXPECT_EQ(tools::terminal_text("a\xe2\x80\xae" "b"), "a\\u202eb");
  EXPECT_EQ(tools::terminal_text("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(tools::terminal_text("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93") << "printable UTF-8 stays";
  EXPECT_EQ(tools::terminal_text("a\tb\nc"), "a b\\x0ac");
  EXPECT_EQ(tools::terminal_safe_json("\"a\xe2\x81\xa6\xc2\x85\x7f\""), "\"a\\u2066\\u0085\\u007f\"");
}

}  // namespace
}  // namespace lockbridge::testing
