#include "exit_status.hpp"

#include <sstream>
#include <vector>

namespace lockbridge::tools {

namespace {

std::string code_and(int code, std::string_view meaning, std::string_view detail = {}) {
  std::string text = std::to_string(code) + " " + std::string(meaning);
  if (!detail.empty()) text += " " + std::string(detail);
  return text;
}

// Words joined into lines of at most `width` columns; a code stays on the line of its meaning.
std::string wrapped(const std::string& text, std::size_t width) {
  std::istringstream words(text);
  std::string word;
  std::string out;
  std::size_t line = 0;
  while (words >> word) {
    std::string next;
    if (word.find_first_not_of("0123456789") == std::string::npos && words >> next) word += " " + next;
    if (line > 0 && line + 1 + word.size() > width) {
      out += "\n";
      line = 0;
    } else if (line > 0) {
      out += " ";
      ++line;
    }
    out += word;
    line += word.size();
  }
  return out;
}

}  // namespace

std::string exit_status_text(const ExitMeanings& meanings) {
  std::vector<std::string> parts{code_and(kExitOk, meanings.ok)};
  if (!meanings.not_acquired.empty()) parts.push_back(code_and(kExitNotAcquired, meanings.not_acquired));
  parts.push_back(code_and(kExitUsage, "bad usage", meanings.usage_detail));
  parts.push_back(code_and(kExitRedis, "Redis or connection error", meanings.redis_detail));
  if (!meanings.findings.empty()) parts.push_back(code_and(kExitFindings, meanings.findings));
  const std::string files =
      meanings.files == "stdout" ? "stdout" : "a local file (" + std::string(meanings.files) + ")";
  parts.push_back(code_and(kExitFile, files + " could not be written"));
  parts.push_back(code_and(kExitInterrupted, "interrupted", meanings.interrupt_detail));
  std::string text = "Exit status:";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? " " : ", ") + parts[i];
  return wrapped(text + ".", 100);
}

}  // namespace lockbridge::tools
