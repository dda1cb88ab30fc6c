// The compare chart, drawn by gnuplot (SVG or PNG by the file's extension) when it is installed:
// one panel per workload. Contended workloads show each column's p99 and worst wait on a log axis
// with its fairness (Jain's index, per-client min/max) under it, since what tells the strategies
// apart is the tail and the fairness, not the median; the uncontended panel shows the lock cycle as
// a multiple of the round trip, against the floor of 2. Each panel names its best column.
#pragma once

#include <string>
#include <vector>

#include "output_file.hpp"
#include "runner.hpp"

namespace lockbridge::tools::bench {

struct PlotOutcome {
  bool drawn = false;
  std::string message;  // what was written, or plainly why nothing was
};

// `results` are compare's runs in order: for each workload, one run per strategy.
// `workloads` and `strategies` name the rows and columns. gnuplot draws into `chart`, which is
// committed only when it succeeded. Throws FileError when a file cannot be written.
PlotOutcome draw_chart(const std::vector<BenchResult>& results, const std::vector<std::string>& workloads,
                       const std::vector<std::string>& strategies, OutputFile& chart);

}  // namespace lockbridge::tools::bench
