// The CLI's exit codes, and the one text that tells them: every subcommand's --help (and so its
// man page) prints exit_status_text() with its own meanings, never a list of its own.
#pragma once

#include <string>
#include <string_view>

namespace lockbridge::tools {

enum ExitCode : int {
  kExitOk = 0,
  kExitNotAcquired = 1,  // not acquired, or the lease was lost before release (bench, compare: violations)
  kExitUsage = 2,        // bad usage or bad input (options, URL, key, wrong type, unparsable value)
  kExitRedis = 3,        // Redis or connection error
  kExitFindings = 4,     // audit: something named by --fail-on was found; convert: a key was skipped
  kExitFile = 5,         // a local file (an output, the journal, standard output) could not be written or read
  kExitInterrupted = 130,
};

// What the codes mean for one subcommand. 0, 1 and 4 are the command's own (empty: it never exits
// with that code); 2, 3, 5 and 130 mean the same everywhere, each with the command's detail.
struct ExitMeanings {
  std::string_view ok;                  // 0
  std::string_view not_acquired{};      // 1
  std::string_view usage_detail{};      // after "2 bad usage"
  std::string_view redis_detail{};      // after "3 Redis or connection error"
  std::string_view findings{};          // 4
  std::string_view files = "stdout";    // "5 <files> could not be written"; more than stdout: "a local file (...)"
  std::string_view interrupt_detail{};  // after "130 interrupted"
};

// "Exit status: 0 ..., 1 ..., 2 bad usage..., 3 Redis or connection error..., 4 ..., 5 ... could
// not be written, 130 interrupted...", wrapped at 100 columns.
std::string exit_status_text(const ExitMeanings& meanings);

}  // namespace lockbridge::tools
