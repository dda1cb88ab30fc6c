#include "golden_transcript.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "strategies/scripts.hpp"

namespace lockbridge::testing {

void preload_scripts() {
  for (const detail::Script* script : detail::kEveryScript) raw({"SCRIPT", "LOAD", script->body});
}

Transcript load_golden(const std::string& dir, const std::string& name) {
  const std::string path = std::string(LOCKBRIDGE_SOURCE_DIR) + "/compat/golden/" + dir + "/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing golden file " + path);
  Transcript transcript;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> command;
    for (std::string word; words >> word;) command.push_back(word);
    transcript.push_back(command);
  }
  return transcript;
}

std::string show(const Transcript& transcript) {
  std::string out;
  for (const auto& command : transcript) {
    for (const auto& arg : command) out += arg + " ";
    out += "\n";
  }
  return out;
}

Accepts exactly(std::string value) {
  return [value = std::move(value)](const std::string& got) { return got == value; };
}

Accepts matching(std::string pattern) {
  return [pattern = std::regex(pattern)](const std::string& got) { return std::regex_match(got, pattern); };
}

Accepts stamp_between(std::int64_t before, std::int64_t after, std::int64_t lease, std::string prefix) {
  return [=](const std::string& got) {
    if (got.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string digits = got.substr(prefix.size());
    if (!std::regex_match(digits, std::regex("^[0-9]+$"))) return false;
    const std::int64_t stamp = std::stoll(digits);
    return stamp >= before + lease + 1 && stamp <= after + lease + 1;
  };
}

void expect_matches(const Transcript& golden, const Transcript& recorded, const Placeholders& placeholders) {
  ASSERT_EQ(golden.size(), recorded.size()) << "golden:\n" << show(golden) << "recorded:\n" << show(recorded);
  for (std::size_t i = 0; i < golden.size(); ++i) {
    ASSERT_EQ(golden[i].size(), recorded[i].size()) << "command " << i << ": " << show({recorded[i]});
    for (std::size_t j = 0; j < golden[i].size(); ++j) {
      const std::string& want = golden[i][j];
      const std::string& got = recorded[i][j];
      if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
        const auto accepts = placeholders.find(want);
        ASSERT_NE(accepts, placeholders.end()) << "no value given for placeholder " << want;
        EXPECT_TRUE(accepts->second(got)) << "command " << i << " argument " << j << ": " << want << " got " << got;
      } else {
        EXPECT_EQ(got, want) << "command " << i << " argument " << j;
      }
    }
  }
}

}  // namespace lockbridge::testing
