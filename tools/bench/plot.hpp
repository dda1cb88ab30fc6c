// The compare chart: acquire latency and throughput per strategy and workload, drawn by gnuplot
// (SVG or PNG by the file's extension) when it is installed.
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
