#include "converter.hpp"

#include <algorithm>
#include <iomanip>
#include <optional>
#include <ostream>

#include "audit/tally.hpp"
#include "cli_common.hpp"
#include "key_text.hpp"
#include "lockbridge/error.hpp"
#include "scripts.hpp"

namespace lockbridge::tools::convert {

namespace {

// The rollback script's answers (the convert script's are the journal's kWriteOutcomes).
constexpr std::string_view kRollbackOutcomes[] = {"restored", "not_restored", "expired"};

// The first failure among a batch's replies, thrown once the whole batch is counted (and journalled).
struct BatchFailure {
  std::optional<Error> first;
  void add(Errc errc, const std::string& what) {
    if (!first) first.emplace(errc, what);
  }
  void throw_if_any() const {
    if (first) throw *first;
  }
};

// What the script answered for `key`: one of `known`; kWriteFailed for an error reply (the script
// failed before it wrote: docs/errors.md), recorded in `failure` with Redis's text; nullopt for
// any other reply, which is not our script's and so says nothing of what happened to the key,
// recorded in `failure` as Error{protocol}.
template <std::size_t N>
std::optional<std::string> outcome_of(const Reply& reply, const std::string_view (&known)[N], std::string_view command,
                                      std::string_view key, BatchFailure& failure) {
  if (reply.kind == Reply::Kind::error) {
    failure.add(Errc::server_reply,
                std::string(command) + ": the script failed for " + quoted_key(key) + ": " + reply.str);
    return std::string(kWriteFailed);
  }
  const bool text = reply.kind == Reply::Kind::string || reply.kind == Reply::Kind::status;
  if (text && std::find(std::begin(known), std::end(known), reply.str) != std::end(known)) return reply.str;
  failure.add(Errc::protocol,
              std::string(command) + ": the script's reply for " + quoted_key(key) + " is not one of its outcomes: " +
                  (text ? "'" + reply.str + "'" : "reply type " + std::to_string(static_cast<int>(reply.kind))));
  return std::nullopt;
}

void print_counts(std::ostream& out, const std::map<std::string, std::uint64_t>& counts) {
  for (const auto& [name, count] : counts)
    out << "  " << std::left << std::setw(18) << name << std::right << std::setw(10) << count << "\n";
}

}  // namespace

// ---- tallies ------------------------------------------------------------------------------------

bool ConvertTally::any_reported() const noexcept {
  for (const auto& [reason, count] : skipped) {
    if (reason != Reason::already_target && count > 0) return true;
  }
  return false;
}

nlohmann::ordered_json ConvertTally::to_json(double seconds) const {
  nlohmann::ordered_json by_reason = nlohmann::ordered_json::object();
  for (const Reason reason : kEveryReason) {
    if (reason == Reason::already_target) continue;
    const auto found = skipped.find(reason);
    by_reason[std::string(to_string(reason))] = found == skipped.end() ? 0 : found->second;
  }
  const auto already = skipped.find(Reason::already_target);
  return {{"scanned", scanned},   {"converted", converted},
          {"deleted", deleted},   {"already_target", already == skipped.end() ? 0 : already->second},
          {"skipped", by_reason}, {"other", other},
          {"seconds", seconds}};
}

void ConvertTally::print(std::ostream& out, double seconds) const {
  const nlohmann::ordered_json summary = to_json(seconds);
  out << "keys scanned: " << scanned << " in " << std::fixed << std::setprecision(2) << seconds << " s\n"
      << "converted: " << converted << "\ndeleted (stale): " << deleted
      << "\nalready in the target format: " << summary["already_target"].get<std::uint64_t>()
      << "\nnot locks (untouched): " << other << "\nskipped and reported:\n";
  std::map<std::string, std::uint64_t> counts;
  for (const auto& [name, count] : summary["skipped"].items()) counts[name] = count.get<std::uint64_t>();
  print_counts(out, counts);
}

namespace {
constexpr const char* kRollbackCounts[] = {"restored", "expired", "not_restored", "not_written"};
}  // namespace

nlohmann::ordered_json RollbackTally::to_json(double seconds) const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const char* name : kRollbackCounts) {
    const auto found = outcomes.find(name);
    out[name] = found == outcomes.end() ? 0 : found->second;
  }
  out["seconds"] = seconds;
  return out;
}

void RollbackTally::print(std::ostream& out, double seconds) const {
  out << "rollback in " << std::fixed << std::setprecision(2) << seconds << " s\n";
  std::map<std::string, std::uint64_t> counts;
  for (const char* name : kRollbackCounts) counts[name] = outcomes.contains(name) ? outcomes.at(name) : 0;
  print_counts(out, counts);
}

// ---- convert ------------------------------------------------------------------------------------

Converter::Converter(const Client& client, ConvertOptions options, JournalWriter* journal, std::ostream* details,
                     FreshIdentities fresh)
    : client_(client), options_(options), journal_(journal), details_(details), fresh_(std::move(fresh)) {}

void Converter::count(const Plan& plan, std::string_view outcome) {
  if (plan.action == Action::skip) {
    ++tally_.skipped[plan.reason];
  } else if (outcome == "changed") {
    ++tally_.skipped[Reason::changed];
  } else if (outcome == "stale") {
    ++tally_.skipped[Reason::stale];
  } else if (outcome == "deleted" || (outcome == "dry_run" && plan.action == Action::remove)) {
    ++tally_.deleted;
  } else if (outcome == "written" || outcome == "dry_run") {
    ++tally_.converted;
  }
}

void Converter::report(const audit::KeySample& sample, const audit::Classification& found, const Plan& plan,
                       std::string_view outcome) {
  count(plan, outcome);
  if (details_ == nullptr) return;
  nlohmann::ordered_json line = audit::details_line(sample, found);
  line["action"] = to_string(plan.action);
  if (plan.action == Action::skip) line["reason"] = to_string(plan.reason);
  if (plan.action == Action::to_token || plan.action == Action::to_legacy) {
    put_key(line, plan.new_value, "new_value");
    line["new_expire_at_ms"] = plan.new_expire_at_ms;
  }
  if (plan.action != Action::skip) line["outcome"] = outcome;
  *details_ << dump_line(line) << '\n';
}

void Converter::convert_batch(const std::vector<audit::KeySample>& samples, std::int64_t server_now_ms) {
  struct Pending {
    const audit::KeySample* sample;
    audit::Classification found;
    Plan plan;
  };
  std::vector<Pending> writes;
  std::vector<JournalEntry> entries;
  std::vector<Client::EvalCall> calls;
  for (const audit::KeySample& sample : samples) {
    ++tally_.scanned;
    const audit::Classification found = audit::classify(sample, server_now_ms, options_.classify);
    Plan plan = plan_key(sample, found, options_, fresh_);
    if (plan.reason == Reason::not_a_lock) {
      ++tally_.other;
      continue;
    }
    if (plan.action == Action::skip || journal_ == nullptr) {
      report(sample, found, plan, plan.action == Action::skip ? "" : "dry_run");
      continue;
    }
    JournalEntry entry{next_number_++, sample.key,          plan.action,    sample.value,
                       sample.pttl_ms, sample.expire_at_ms, plan.new_value, plan.new_expire_at_ms};
    calls.push_back({{sample.key},
                     {sample.value, std::to_string(sample.expire_at_ms), std::string(to_string(plan.action)),
                      plan.new_value, std::to_string(plan.new_expire_at_ms)}});
    entries.push_back(std::move(entry));
    writes.push_back({&sample, found, std::move(plan)});
  }
  if (calls.empty()) return;

  journal_->write_intents(entries);  // on disk before any write is sent
  const std::vector<Reply> replies = client_.eval(kConvertKey, calls);
  std::vector<std::pair<const JournalEntry*, std::string>> outcomes;
  BatchFailure failure;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const std::optional<std::string> outcome =
        outcome_of(replies[i], kWriteOutcomes, "convert", entries[i].key, failure);
    // Counted as failed, but journalled only when known: a write with no outcome line may have
    // happened, so rollback checks the key (it restores it only if it holds what convert wrote).
    report(*writes[i].sample, writes[i].found, writes[i].plan, outcome.value_or(std::string(kWriteFailed)));
    if (outcome) outcomes.emplace_back(&entries[i], *outcome);
  }
  // Counted before the outcomes are journalled: the keys were written whether or not that succeeds.
  journal_->write_outcomes(outcomes);
  failure.throw_if_any();
}

// ---- rollback -----------------------------------------------------------------------------------

bool rollback(const Client& client, JournalReader& journal, std::ostream* details, RollbackTally& tally,
              const std::function<void()>& before_batch) {
  std::vector<JournalRecord> batch;
  // First the whole journal, one batch at a time: a malformed line anywhere stops it here, before
  // any key is touched.
  while (journal.next_batch(batch)) {
    if (interrupted()) return false;
  }
  journal.rewind();

  const auto report = [&](const JournalEntry& entry, const std::string& outcome) {
    ++tally.outcomes[outcome];
    if (details == nullptr) return;
    nlohmann::ordered_json line;
    put_key(line, entry.key);
    line["action"] = to_string(entry.action);
    line["outcome"] = outcome;
    *details << dump_line(line) << '\n';
  };
  while (journal.next_batch(batch)) {
    if (interrupted()) return false;  // between batches: the one read is not sent
    if (before_batch) before_batch();
    std::vector<const JournalEntry*> sent;
    std::vector<Client::EvalCall> calls;
    for (const JournalRecord& record : batch) {
      const JournalEntry& entry = record.entry;
      // A write convert skipped (changed, stale, error) left the key alone: there is nothing to undo.
      // No outcome at all means the run stopped after sending it: it may have happened.
      if (record.outcome && *record.outcome != "written" && *record.outcome != "deleted") {
        report(entry, "not_written");
        continue;
      }
      // Convert deleted only stale stamps, whose lease had ended when it ran: recreating one would
      // bring back a lock nobody holds (without a TTL, for a Java stamp), again on every rollback.
      if (entry.action == Action::remove) {
        report(entry, "expired");
        continue;
      }
      calls.push_back({{entry.key}, {entry.new_value, entry.old_value, std::to_string(entry.old_expire_at_ms)}});
      sent.push_back(&entry);
    }
    if (!calls.empty()) {
      const std::vector<Reply> replies = client.eval(kRollbackKey, calls);
      BatchFailure failure;
      for (std::size_t i = 0; i < replies.size(); ++i) {
        report(*sent[i], outcome_of(replies[i], kRollbackOutcomes, "rollback", sent[i]->key, failure)
                             .value_or(std::string(kWriteFailed)));
      }
      failure.throw_if_any();
    }
  }
  return true;
}

}  // namespace lockbridge::tools::convert
