// convert's write-ahead journal: JSON lines. A header, then for each batch the writes planned
// (synced to disk before any of them is sent), then each one's outcome. --rollback reads it back
// batch by batch, so its memory is one batch whatever the journal's size. docs/migration.md shows
// the format.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
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

class JournalWriter {
 public:
  // Creates `path` (mode 0600: it holds lock values) and writes `header`. Refuses a file that
  // already exists, so an earlier run's journal is never lost. Throws Error.
  JournalWriter(const std::string& path, nlohmann::ordered_json header);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends the lines and returns once they are on disk (fdatasync). Throws Error{io}.
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
  // Opens `path` and reads its header. Throws Error{bad_option} when it is not a convert journal.
  explicit JournalReader(const std::string& path);
  const nlohmann::json& header() const noexcept { return header_; }

  // The next batch of planned writes with their outcomes; false at the end. A torn last line (the
  // run died while writing it, so none of its writes were sent) is skipped. Throws Error{bad_option}
  // for a malformed line anywhere else.
  bool next_batch(std::vector<JournalRecord>& batch);

 private:
  std::optional<nlohmann::json> next_line();

  std::ifstream in_;
  std::string path_;
  std::uint64_t line_number_ = 0;
  nlohmann::json header_;
  std::optional<nlohmann::json> pushed_back_;
};

}  // namespace lockbridge::tools::convert
