// convert's write-ahead journal: JSON lines. A header, then for each batch the writes planned
// (synced to disk before any of them is sent), then each one's outcome. --rollback reads it back
// batch by batch, so its memory is one batch whatever the journal's size. docs/migration.md shows
// the format.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan.hpp"

namespace lockbridge::tools::convert {

struct JournalEntry {
  std::uint64_t number = 0;  // the write's place in the journal (outcome lines refer to it)
  std::string key;
  Action action = Action::skip;
  std::string old_value;
  std::int64_t old_pttl_ms = -1;
  std::int64_t old_expire_at_ms = -1;  // PEXPIRETIME: epoch ms, -1 no TTL
  std::string new_value;               // empty for a delete
  std::int64_t new_expire_at_ms = -1;
};

// What an outcome line says of a planned write: the convert script's answer, or kWriteFailed for
// its error reply (the script writes nothing before it can fail).
inline constexpr std::string_view kWriteOutcomes[] = {"written", "deleted", "changed", "stale"};
inline constexpr std::string_view kWriteFailed = "error";
bool is_write_outcome(std::string_view outcome) noexcept;

// Whether `path` holds a convert journal: its first line is a JSON object with the key
// "lockbridge_convert_journal". Throws FileError ("cannot read '<path>': <reason>") when it exists
// but cannot be read.
bool is_convert_journal(const std::string& path);

// A journal's mode: its owner may read it, nobody may write it by name. Convert writes it through
// the descriptor it created it with; a later `> J` by its owner (not root) fails instead of
// emptying it. It holds lock values: nobody else may read it.
inline constexpr mode_t kJournalMode = 0400;

class JournalWriter {
 public:
  // Creates `path` (kJournalMode) with `header` in it, whole: the file appears under its name only
  // once the header is on disk. Refuses a file that already exists (Error{bad_option}), so an
  // earlier run's journal is never lost. Throws FileError when it cannot be created or written.
  JournalWriter(const std::string& path, nlohmann::ordered_json header);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends the lines and returns once they are on disk (fdatasync). Throws FileError (a full
  // disk, a file-size limit): a torn last line is what rollback expects of such a failure.
  void write_intents(const std::vector<JournalEntry>& entries);
  void write_outcomes(const std::vector<std::pair<const JournalEntry*, std::string>>& outcomes);

 private:
  void append(const std::string& lines);
  int fd_ = -1;
  std::string path_;
};

struct JournalRecord {
  JournalEntry entry;
  std::optional<std::string> outcome;  // none: the run stopped between the write and its outcome line
};

class JournalReader {
 public:
  // Opens `path` and reads its header. Throws Error{bad_option} when there is no such file, it is
  // not a regular file (it is read twice: see rewind()) or is not a convert journal (an empty file,
  // or one without a whole header line, never is: JournalWriter creates journals with their
  // header); FileError when it exists but the system will not let it be read (permissions, a
  // symlink loop, an I/O error).
  explicit JournalReader(const std::string& path);
  const nlohmann::json& header() const noexcept { return header_; }

  // The next batch of planned writes with their outcomes; false at the end. A torn last line (the
  // run died while writing it, so none of its writes were sent) is skipped. Throws Error{bad_option}
  // naming the line for a malformed line anywhere else (not JSON, a field missing, an outcome for a
  // write not planned in its batch, an unknown outcome), FileError when reading fails.
  bool next_batch(std::vector<JournalRecord>& batch);
  // Back to the first batch: rollback reads the whole journal once to check it before it sends
  // anything, then again to apply it, holding one batch at a time.
  void rewind();

 private:
  std::optional<nlohmann::json> next_line();
  void read_header();

  std::ifstream in_;
  std::string path_;
  std::uint64_t line_number_ = 0;
  nlohmann::json header_;
  std::optional<nlohmann::json> pushed_back_;
};

}  // namespace lockbridge::tools::convert
