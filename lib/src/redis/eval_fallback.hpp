// The EVALSHA-then-EVAL rule, written once for every way lockbridge runs its scripts: on one
// connection (script_runner.cpp), on every Redlock master at once (redlock/quorum.cpp) and through
// a Client's pipeline (Client::eval, which the CLI's convert uses). lockbridge computes each
// script's SHA1 itself and never sends SCRIPT LOAD (an ACL may deny SCRIPT while it allows EVAL
// and EVALSHA): the calls go as EVALSHA, and those a server answers NOSCRIPT (it has not seen the
// script: new, restarted or flushed) did not run, so they go again as EVAL, which also caches it.
#pragma once

#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

#include "util/task.hpp"

namespace lockbridge::detail {

// How a call names its script: EVALSHA <sha1>, or EVAL <the source>.
enum class ScriptForm { sha, source };

// `send(form, calls)` sends the calls at those indices (in that order, all in one batch) naming
// the script by `form`, and returns (as a Task) their answers in the same order; `lacks(answer)` is
// true for a NOSCRIPT answer. Returns every call's answer, in order: two batches at most, the
// second only for the calls the server lacked the script for; none for no calls. A coroutine, so
// that a blocking send and an event-driven one share it; `send` is kept in its frame.
template <class Answer, class Send, class Lacks>
Task<std::vector<Answer>> run_with_eval_fallback(std::size_t count, Send send, Lacks lacks) {
  if (count == 0) co_return std::vector<Answer>{};
  std::vector<std::size_t> all(count);
  std::iota(all.begin(), all.end(), std::size_t{0});
  std::vector<Answer> answers = co_await send(ScriptForm::sha, all);
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    if (lacks(answers[i])) missing.push_back(i);
  }
  if (missing.empty()) co_return answers;
  std::vector<Answer> again = co_await send(ScriptForm::source, missing);
  for (std::size_t j = 0; j < missing.size(); ++j) answers[missing[j]] = std::move(again[j]);
  co_return answers;
}

}  // namespace lockbridge::detail
