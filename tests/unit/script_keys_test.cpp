// Every key a script touches is declared in KEYS (Redis Cluster, cluster proxies and Dragonfly
// refuse undeclared keys), and docs/design.md §4.5's table says which: checked here against the
// scripts' own text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "strategies/scripts.hpp"

namespace lockbridge::detail {
namespace {

using KeySet = std::set<std::string>;

// A script's text without the shared preludes, whose helpers take the first key's index as an
// argument: what the script itself names.
std::string own_text(const Script& script) {
  std::string text(script.body);
  for (const std::string_view prelude : {std::string_view(kFairPrelude), std::string_view(kFencePrelude), std::string_view(kGrantPrelude)}) {
    if (const auto at = text.find(prelude); at != std::string::npos) text.erase(at, prelude.size());
  }
  return text;
}

void add_matches(const std::string& text, const std::regex& pattern,
                 const std::function<void(const std::smatch&)>& add) {
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) add(*it);
}

// The keys a script uses, as the table writes them: "1", "2", ..., or "1..n", "n+1", "n+2" for the
// scripts over any number of locks.
KeySet keys_used(const Script& script) {
  const std::string text = own_text(script);
  KeySet keys;
  add_matches(text, std::regex(R"(KEYS\[(\d+)\])"), [&](const std::smatch& m) { keys.insert(m[1]); });
  // KEYS[i], KEYS[blocking]: an index over the locks.
  add_matches(text, std::regex(R"(KEYS\[([a-z_]+)\])"), [&](const std::smatch&) { keys.insert("1..n"); });
  // The queue helpers take the queue's index; its times come next.
  add_matches(text, std::regex(R"((queue_error|next_in_line|keep_place|leave_place|may_take_free)\((\d+|n \+ 1))"),
              [&](const std::smatch& m) {
                if (m[2] == "n + 1") {
                  keys.insert({"n+1", "n+2"});
                } else {
                  const int first = std::stoi(m[2]);
                  keys.insert({std::to_string(first), std::to_string(first + 1)});
                }
              });
  add_matches(text, std::regex(R"(draw_fence\((\d+)\))"), [&](const std::smatch& m) { keys.insert(m[1]); });
  // grant(waiter, spec, lock, record, fence_at) and granted_to(waiter, lock, record).
  add_matches(text, std::regex(R"(grant\([^,]+, [^,]+, (\d+), (\d+), (\d+)\))"),
              [&](const std::smatch& m) { keys.insert({m[1], m[2], m[3]}); });
  add_matches(text, std::regex(R"(granted_to\([^,]+, (\d+), (\d+)\))"),
              [&](const std::smatch& m) { keys.insert({m[1], m[2]}); });
  // queued_view() reads the lock and the queue at KEYS[2], KEYS[3].
  if (text.find("queued_view(") != std::string::npos) keys.insert({"1", "2", "3"});
  return keys;
}

// docs/design.md's table: script name -> the KEYS[...] its row names.
std::map<std::string, KeySet> documented_keys() {
  std::ifstream in(std::string(LOCKBRIDGE_SOURCE_DIR) + "/docs/design.md");
  const std::string design{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::map<std::string, KeySet> table;
  add_matches(design, std::regex(R"(\n\| `([a-z_]+)` \| ([^\n]*KEYS\[[^\n]*)\|)"), [&](const std::smatch& row) {
    KeySet& keys = table[row[1]];
    const std::string cells = row[2];
    add_matches(cells, std::regex(R"(KEYS\[([^\]]+)\])"), [&](const std::smatch& m) { keys.insert(m[1]); });
  });
  return table;
}

TEST(Scripts, EveryKeyIsDeclaredAsTheTableSays) {
  const std::map<std::string, KeySet> table = documented_keys();
  ASSERT_FALSE(table.empty()) << "docs/design.md has no script table";
  for (const Script* script : kEveryScript) {
    SCOPED_TRACE(std::string(script->name));
    const auto row = table.find(std::string(script->name));
    ASSERT_NE(row, table.end()) << "not in docs/design.md's script table";
    EXPECT_EQ(row->second, keys_used(*script));
  }
  EXPECT_EQ(table.size(), kEveryScript.size()) << "the table names a script that does not exist";
}

TEST(Scripts, EveryCommandsKeyIsAKeysEntryNotOneBuiltInLua) {
  // The key argument of every command that takes one: KEYS[...], or the prelude's parameters
  // that are given KEYS[...] (queue, times), never a string made in the script.
  const std::regex call(R"(redis\.p?call\('([A-Za-z]+)',\s*([^,)]+))");
  const std::regex declared(R"(KEYS\[[^\]]+\]|queue|times)");
  // Redisson's read/write lock names a timeout key per reader hold, {K}:<field>:rwlock_timeout:<i>,
  // which only Lua can build (any reader's, any count): built from a declared prefix, in K's slot.
  const std::set<std::string> builds_reader_keys{"redisson_read_lock", "redisson_read_unlock", "redisson_read_renew"};
  const std::regex built(R"(KEYS\[\d\] \.\. .+|key)");
  const std::set<std::string> keyless{"TIME", "SPUBLISH", "PUBLISH"};
  for (const Script* script : kEveryScript) {
    SCOPED_TRACE(std::string(script->name));
    const std::string body(script->body);
    int checked = 0;
    add_matches(body, call, [&](const std::smatch& m) {
      std::string command = m[1];
      for (char& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (keyless.contains(command)) return;
      ++checked;
      const bool ok = std::regex_match(m[2].str(), declared) ||
                      (builds_reader_keys.contains(std::string(script->name)) && std::regex_match(m[2].str(), built));
      EXPECT_TRUE(ok) << command << " on " << m[2];
    });
    EXPECT_GT(checked, 0);
  }
}

}  // namespace
}  // namespace lockbridge::detail
