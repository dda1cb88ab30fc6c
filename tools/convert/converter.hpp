// Carries out convert's plans (plan.hpp) one batch at a time: journal the planned writes (on disk
// before anything is sent), run one compare-and-set script per key in one pipelined round trip,
// journal the outcomes. Also --rollback, which walks a journal back the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/classify.hpp"
#include "journal.hpp"
#include "lockbridge/client.hpp"
#include "plan.hpp"

namespace lockbridge::tools::convert {

struct ConvertTally {
  std::uint64_t scanned = 0;
  std::uint64_t converted = 0;  // written (or, on a dry run, would be)
  std::uint64_t deleted = 0;    // stale locks deleted (--delete-stale)
  std::uint64_t other = 0;      // not locks: never touched
  std::map<Reason, std::uint64_t> skipped;

  // Whether a lock key was left unconverted for a reason worth reporting (anything but being in
  // the target format already).
  bool any_reported() const noexcept;
  nlohmann::ordered_json to_json(double seconds) const;
  void print(std::ostream& out, double seconds) const;
};

class Converter {
 public:
  // `journal` null means a dry run: plans are made and reported, nothing is written anywhere but
  // `details` (one JSON line per lock key; may be null).
  Converter(const Client& client, ConvertOptions options, JournalWriter* journal, std::ostream* details,
            FreshIdentities fresh);

  // `samples` as read by read_keys(..., expire_time = true) with Redis TIME `server_now_ms`. Keys
  // that changed since that read are skipped (Reason::changed), never overwritten. Throws Error,
  // FileError (the journal). A script's error reply (server_reply), or a reply that is not one of
  // its outcomes (protocol), is thrown after the whole batch is counted and its outcomes journalled;
  // the latter's write may have happened, so it gets no outcome line (rollback then checks the key).
  void convert_batch(const std::vector<audit::KeySample>& samples, std::int64_t server_now_ms);

  const ConvertTally& tally() const noexcept { return tally_; }

 private:
  void report(const audit::KeySample& sample, const audit::Classification& found, const Plan& plan,
              std::string_view outcome);
  void count(const Plan& plan, std::string_view outcome);

  const Client& client_;
  const ConvertOptions options_;
  JournalWriter* const journal_;
  std::ostream* const details_;
  const FreshIdentities fresh_;
  std::uint64_t next_number_ = 1;
  ConvertTally tally_;
};

struct RollbackTally {
  std::map<std::string, std::uint64_t> outcomes;  // restored, not_restored, expired, not_written
  nlohmann::ordered_json to_json(double seconds) const;
  void print(std::ostream& out, double seconds) const;
};

// Restores every key in the journal that still holds what convert wrote (docs/migration.md),
// counting into `tally` as it goes (so the counts so far survive a throw). The whole journal is
// read first, and a malformed line stops it before anything is sent. A write convert deleted is
// never recreated: convert deletes only stamps whose lease had ended, so it counts as expired.
// `details` (may be null) gets one JSON line per journalled write with its outcome. `before_batch`
// (may be empty) runs before each batch is sent: it throws to stop there (a --details file that
// could not be written). Returns false when interrupted (between batches) before the end. Throws
// Error (a script's error reply, or a reply that is not one of its outcomes, after the whole batch
// is counted), FileError.
bool rollback(const Client& client, JournalReader& journal, std::ostream* details, RollbackTally& tally,
              const std::function<void()>& before_batch = {});

}  // namespace lockbridge::tools::convert
