#include "plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <ostream>
#include <utility>

#include "cli_common.hpp"
#include "embedded_server.hpp"
#include "report.hpp"

namespace lockbridge::tools::bench {
namespace {

// A string in a gnuplot data file: double quotes, which it cannot escape, become single ones.
std::string quoted_data(std::string text) {
  for (char& c : text) {
    if (c == '"') c = '\'';
  }
  return '"' + text + '"';
}

// A gnuplot string literal: single quotes, with embedded ones doubled.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

int run_gnuplot(const std::string& gnuplot, const std::string& script) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execl(gnuplot.c_str(), gnuplot.c_str(), script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// A panel's rows, one per column: name, cycle p50 in rtt, p99 and worst wait in ms, and the fairness
// label printed under the column ("Jain 0.998, 280/283": the index, then per-client min/max).
void write_panel_data(const std::string& path, const std::vector<const BenchResult*>& panel,
                      const std::vector<std::string>& strategies) {
  OutputFile data({"chart data", path});
  for (std::size_t s = 0; s < panel.size(); ++s) {
    const BenchResult& r = *panel[s];
    const SampleSummary& summary = r.summary;
    const double cycle_rtt = summary.cycle_p50_us && r.rtt_us > 0 ? *summary.cycle_p50_us / r.rtt_us : 0;
    // A log axis cannot show 0: a column without any wait gets a sliver, not a gap.
    const auto ms = [](const std::optional<double>& us) { return std::max(us.value_or(0) / 1000.0, 0.001); };
    data.stream() << quoted_data(strategies[s]) << ' ' << cycle_rtt << ' ' << ms(summary.acquire_p99_us) << ' '
                  << ms(summary.acquire_max_us) << ' '
                  << quoted_data("Jain " + fixed(summary.fairness_jain, 3) + ", " +
                                 std::to_string(summary.per_client_min) + "/" + std::to_string(summary.per_client_max))
                  << '\n';
  }
  data.commit();
}

// The panel's best column: uncontended, the cheapest cycle in round trips; contended, the shortest
// worst wait, fairness breaking a tie. A column that saw a violation is never the best.
std::size_t best_column(const std::vector<const BenchResult*>& panel, bool contended) {
  const auto score = [&](const BenchResult& r) {
    constexpr double kWorst = std::numeric_limits<double>::infinity();
    if (r.violations > 0) return std::pair{kWorst, 0.0};
    if (!contended) return std::pair{r.summary.cycle_p50_us.value_or(kWorst) / r.rtt_us, 0.0};
    return std::pair{r.summary.acquire_max_us.value_or(kWorst), -r.summary.fairness_jain.value_or(0)};
  };
  std::size_t best = 0;
  for (std::size_t s = 1; s < panel.size(); ++s) {
    if (score(*panel[s]) < score(*panel[best])) best = s;
  }
  return best;
}

std::string best_reason(const BenchResult& r, bool contended) {
  if (!contended) return "cycle " + fixed(r.summary.cycle_p50_us.value_or(0) / r.rtt_us, 1) + " x rtt";
  return "worst wait " + fixed(r.summary.acquire_max_us.value_or(0) / 1000.0, 1) + " ms, Jain " +
         fixed(r.summary.fairness_jain, 3);
}

}  // namespace

PlotOutcome draw_chart(const std::vector<BenchResult>& results, const std::vector<std::string>& workloads,
                       const std::vector<std::string>& strategies, OutputFile& chart) {
  // $LOCKBRIDGE_GNUPLOT names another gnuplot (empty: draw no chart).
  const char* chosen = std::getenv("LOCKBRIDGE_GNUPLOT");
  const std::string gnuplot = chosen != nullptr ? std::string(chosen) : find_on_path("gnuplot");
  if (gnuplot.empty() || access(gnuplot.c_str(), X_OK) != 0) {
    return {false,
            "no chart: gnuplot is not installed (Debian: apt-get install gnuplot-nox); the table and JSON have every "
            "number"};
  }
  const std::string& path = chart.file().path;
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension != ".svg" && extension != ".png") return {false, "no chart: --plot must end in .svg or .png"};

  std::string dir_pattern = (std::filesystem::temp_directory_path() / "lockbridge-plot-XXXXXX").string();
  if (mkdtemp(dir_pattern.data()) == nullptr)
    throw FileError("cannot create a temporary directory", dir_pattern, errno);
  const std::filesystem::path dir = dir_pattern;
  struct RemoveDir {
    const std::filesystem::path& dir;
    ~RemoveDir() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_dir{dir};
  const std::string script_path = (dir / "compare.gp").string();
  {
    OutputFile script_file({"chart script", script_path});
    std::ostream& script = script_file.stream();
    const bool svg = extension == ".svg";
    const std::size_t rows = (workloads.size() + 1) / 2;
    script << (svg ? "set terminal svg size 1400," : "set terminal pngcairo size 1400,") << 470 * rows
           << (svg ? " dynamic font 'sans,11'\n" : " font 'sans,10'\n") << "set output " << quoted(chart.write_path())
           << "\n"
           << "set datafile separator whitespace\n"
           << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
           << "set key top left\nset grid ytics\nset xtics rotate by -25 font ',9'\nset bmargin 6\n"
           << "set multiplot layout " << rows << ",2 title "
           << quoted(
                  "lockbridge compare: same Redis, same run. Contended: p99 and worst wait (log), fairness under "
                  "each column")
           << "\n";
    for (std::size_t w = 0; w < workloads.size(); ++w) {
      const std::string data_path = (dir / ("panel" + std::to_string(w) + ".dat")).string();
      std::vector<const BenchResult*> panel;  // this workload's run of each column
      for (std::size_t s = 0; s < strategies.size(); ++s) panel.push_back(&results.at(w * strategies.size() + s));
      write_panel_data(data_path, panel, strategies);
      const bool contended = panel.front()->config.clients > 1;
      const std::size_t best = best_column(panel, contended);
      script << "set title "
             << quoted(workloads[w] + ": best " + strategies[best] + " (" + best_reason(*panel[best], contended) + ")")
             << "\n";
      if (contended) {
        script << "set logscale y\nset ylabel 'wait, ms (log scale)'\nset yrange [*:*]\n"
               << "plot " << quoted(data_path)
               << " using 3:xtic(stringcolumn(1).\"\\n\".stringcolumn(5)) title 'p99 wait', '' using 4 title 'worst "
                  "wait'\n";
      } else {
        script << "unset logscale y\nset ylabel 'lock cycle p50, multiples of the PING round trip'\nset yrange [0:*]\n"
               << "plot " << quoted(data_path) << " using 2:xtic(1) title 'cycle p50 / rtt', "
               << "2 with lines dashtype 2 linewidth 2 title 'the floor: 2 round trips'\n";
      }
    }
    script << "unset multiplot\n";
    script_file.commit();
  }
  const int status = run_gnuplot(gnuplot, script_path);
  if (status != 0) return {false, "no chart: gnuplot failed (exit status " + std::to_string(status) + ")"};
  chart.commit();
  return {true, "chart: " + path};
}

}  // namespace lockbridge::tools::bench
