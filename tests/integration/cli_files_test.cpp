// The files the CLI writes (--details, --journal, compare's --json and --plot, standard output): no
// output may be an input, the journal or another output of the same command, by any path; a convert
// journal is never overwritten; a target is replaced whole or not at all; a full disk or a file-size
// limit is a local file error (exit 5), never a connection error, and never a silent success.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "mixed_keyspace.hpp"
#include "random.hpp"
#include "redis_test_support.hpp"

namespace lockbridge::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A directory of its own per test, removed at the end.
struct Scratch {
  fs::path dir = fs::path(test_dir()) / ("files-" + detail::random_token().substr(0, 12));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> all;
    for (const auto& entry : fs::directory_iterator(dir)) all.push_back(entry.path().filename().string());
    std::sort(all.begin(), all.end());
    return all;
  }
};

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Runs the CLI under a file-size limit (RLIMIT_FSIZE) of `kib` KiB: a disk that fills up.
std::string file_size_limit(int kib) { return "bash -c 'ulimit -f " + std::to_string(kib) + "; exec \"$0\" \"$@\"'"; }

// Live legacy stamps (no TTL, as Java writes them) under one tag, removed at the end.
struct LiveStamps {
  std::string tag = unique_key("stamps");
  std::vector<std::string> keys;
  explicit LiveStamps(int count) {
    const std::int64_t now = server_ms();
    for (int i = 0; i < count; ++i) {
      keys.push_back("stamp" + std::to_string(i) + ":" + tag);
      raw({"SET", keys.back(), std::to_string(now + 600000 + i)});
    }
  }
  ~LiveStamps() {
    for (const std::string& key : keys) raw({"DEL", key});
  }
  std::string match() const { return " --match '*" + tag + "*'"; }
  std::map<std::string, std::string> values() const {
    std::map<std::string, std::string> all;
    for (const std::string& key : keys) all[key] = raw({"GET", key}).str;
    return all;
  }
};

TEST(CliFiles, ConvertRefusesADetailsFileThatIsItsJournalBeforeWritingAnything) {
  const Scratch scratch;
  const LiveStamps stamps(2);
  const auto before = stamps.values();
  const std::string journal = scratch.path("journal.jsonl");
  for (const std::string& details : {journal, scratch.path(".") + "/journal.jsonl", scratch.path("sub/../journal.jsonl")}) {
    SCOPED_TRACE(details);
    fs::create_directories(scratch.dir / "sub");
    const CliRun run = run_cli("convert --to token --journal '" + journal + "' --details '" + details + "'" + stamps.match());
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr("--details")) << run;
    EXPECT_THAT(run.errors, HasSubstr("--journal")) << run;
    EXPECT_FALSE(fs::exists(journal)) << "nothing is created before the check";
  }
  EXPECT_EQ(stamps.values(), before) << "nothing is sent before the check";
}

TEST(CliFiles, RollbackRefusesADetailsFileThatIsItsJournalByAnyPath) {
  const Scratch scratch;
  const LiveStamps stamps(2);
  const std::string journal = scratch.path("journal.jsonl");
  ASSERT_EQ(run_cli("convert --to token --journal '" + journal + "'" + stamps.match()).exit_code, 0);
  const std::string journal_text = contents(journal);
  const auto converted = stamps.values();
  fs::create_hard_link(journal, scratch.dir / "hard-link");
  fs::create_symlink(journal, scratch.dir / "symlink");
  for (const std::string& details : {journal, scratch.path("hard-link"), scratch.path("symlink")}) {
    SCOPED_TRACE(details);
    const CliRun run = run_cli("convert --rollback '" + journal + "' --details '" + details + "'");
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr("--details")) << run;
    EXPECT_THAT(run.errors, HasSubstr("--rollback")) << run;
    EXPECT_EQ(contents(journal), journal_text);
  }
  EXPECT_EQ(stamps.values(), converted) << "nothing is sent before the check";
}

TEST(CliFiles, AuditNeverOverwritesAConvertJournal) {
  const Scratch scratch;
  const LiveStamps stamps(1);
  const std::string journal = scratch.path("journal.jsonl");
  ASSERT_EQ(run_cli("convert --to token --journal '" + journal + "'" + stamps.match()).exit_code, 0);
  const std::string journal_text = contents(journal);
  fs::create_symlink(journal, scratch.dir / "symlink");
  for (const std::string& details : {journal, scratch.path("symlink")}) {
    SCOPED_TRACE(details);
    const CliRun run = run_cli("audit --details '" + details + "'" + stamps.match());
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.errors, HasSubstr("journal")) << run;
    EXPECT_EQ(contents(journal), journal_text);
  }
  // Any other file is replaced.
  write_file(scratch.path("old.jsonl"), "yesterday\n");
  ASSERT_EQ(run_cli("audit --details '" + scratch.path("old.jsonl") + "'" + stamps.match()).exit_code, 0);
  EXPECT_THAT(contents(scratch.path("old.jsonl")), HasSubstr(stamps.keys[0]));
}

TEST(CliFiles, CompareRefusesOneFileForJsonAndPlot) {
  const Scratch scratch;
  const std::string file = scratch.path("both.svg");
  const CliRun run = run_cli("compare --duration 0.01 --json '" + file + "' --plot '" + file + "'");
  EXPECT_EQ(run.exit_code, 2) << run;
  EXPECT_THAT(run.errors, HasSubstr("--json")) << run;
  EXPECT_THAT(run.errors, HasSubstr("--plot")) << run;
  EXPECT_TRUE(scratch.names().empty());
}

TEST(CliFiles, AFailedDetailsWriteLeavesThePreviousFileWholeAndIsAFileError) {
  const Scratch scratch;
  const MixedKeyspace space;  // 14 lock keys: a few KiB of details
  const std::string details = scratch.path("details.jsonl");
  write_file(details, "the previous run\n");
  const CliRun run = run_cli("audit --match '*" + space.tag + "*' --details '" + details + "'", true, file_size_limit(1));
  EXPECT_EQ(run.exit_code, 5) << run;
  EXPECT_THAT(run.errors, HasSubstr(details)) << run;
  EXPECT_THAT(run.errors, HasSubstr("File too large")) << run;
  EXPECT_THAT(run.errors, HasSubstr("[file]")) << run;
  EXPECT_EQ(contents(details), "the previous run\n");
  EXPECT_EQ(scratch.names(), std::vector<std::string>{"details.jsonl"}) << "no temporary file is left behind";

  // A full disk, written directly (a device is never renamed over).
  const CliRun full = run_cli("audit --match '*" + space.tag + "*' --details /dev/full");
  EXPECT_EQ(full.exit_code, 5) << full;
  EXPECT_THAT(full.errors, HasSubstr("'/dev/full': No space left on device [file]")) << full;
}

TEST(CliFiles, ATargetIsReplacedThroughItsSymlinkAndOneThatIsNotARegularFileIsWrittenDirectly) {
  const Scratch scratch;
  const LiveStamps stamps(1);
  const std::string target = scratch.path("target.jsonl");
  write_file(target, "old\n");
  fs::create_symlink(target, scratch.dir / "link");
  ASSERT_EQ(run_cli("audit --details '" + scratch.path("link") + "'" + stamps.match()).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(scratch.dir / "link"));
  EXPECT_THAT(contents(target), HasSubstr(stamps.keys[0]));

  EXPECT_EQ(run_cli("audit --details /dev/null" + stamps.match()).exit_code, 0);

  const std::string fifo = scratch.path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string read_back;
  std::thread reader([&] { read_back = contents(fifo); });
  const CliRun run = run_cli("audit --details '" + fifo + "'" + stamps.match());
  reader.join();
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(read_back, HasSubstr(stamps.keys[0]));
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(CliFiles, AJournalThatCannotGrowIsAFileErrorAndNoWriteIsSent) {
  const Scratch scratch;
  const LiveStamps stamps(20);  // 20 planned writes: about 5 KiB of journal
  const auto before = stamps.values();
  const std::string journal = scratch.path("journal.jsonl");
  const CliRun run =
      run_cli("convert --to token --json --journal '" + journal + "'" + stamps.match(), true, file_size_limit(1));
  EXPECT_EQ(run.exit_code, 5) << run;
  EXPECT_THAT(run.errors, HasSubstr(journal)) << run;
  EXPECT_THAT(run.errors, HasSubstr("File too large")) << run;
  EXPECT_THAT(run.errors, HasSubstr("[file]")) << run;
  EXPECT_THAT(run.errors, ::testing::Not(HasSubstr("connection"))) << run;
  EXPECT_EQ(stamps.values(), before) << "the planned writes were not on disk, so none was sent";
  ASSERT_FALSE(run.lines.empty()) << run;
  EXPECT_EQ(run.lines.back()["incomplete"], true) << run;
  EXPECT_EQ(run.lines.back()["converted"], 0) << run;
}

TEST(CliFiles, AFailedWriteToStandardOutputIsAFileErrorNotSuccess) {
  const LiveStamps stamps(1);
  const CliRun audit = run_cli("audit --json" + stamps.match() + " >/dev/full");
  EXPECT_EQ(audit.exit_code, 5) << audit;
  EXPECT_THAT(audit.errors, HasSubstr("standard output")) << audit;

  const std::string key = unique_key();
  const CliRun hold = run_cli("hold '" + key + "' --json >/dev/full");
  EXPECT_EQ(hold.exit_code, 5) << hold;
  EXPECT_EQ(raw({"EXISTS", key}).integer, 0) << "released all the same";

  // A failure the command reports itself keeps its own exit status.
  const std::string held = unique_key();
  Mutex holder(test_client(), held, token_options());
  ASSERT_TRUE(holder.try_lock());
  EXPECT_EQ(run_cli("hold '" + held + "' --json >/dev/full").exit_code, 1);
  holder.unlock();
}

}  // namespace
}  // namespace lockbridge::testing
