// The CLI's subcommands, one file each. Each takes argv from the subcommand name on and returns the
// process exit code (cli_common.hpp); it may throw, since main() runs it inside guarded().
#pragma once

namespace lockbridge::tools {

int run_hold(int argc, char** argv);
int run_demo(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_compare(int argc, char** argv);
int run_audit(int argc, char** argv);
int run_inspect(int argc, char** argv);
int run_convert(int argc, char** argv);
int run_watch(int argc, char** argv);

}  // namespace lockbridge::tools
