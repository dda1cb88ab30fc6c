#include "plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli_common.hpp"
#include "embedded_server.hpp"
#include "report.hpp"

namespace lockbridge::tools::bench {
namespace {

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
  const std::string data_path = (dir / "compare.dat").string();
  {
    // One row per workload; per strategy: acquire p50 (us), acquire p99 (us), acquisitions/s.
    OutputFile data({"chart data", data_path});
    for (std::size_t w = 0; w < workloads.size(); ++w) {
      data.stream() << '"' << workloads[w] << '"';
      for (std::size_t s = 0; s < strategies.size(); ++s) {
        const BenchResult& r = results.at(w * strategies.size() + s);
        data.stream() << ' ' << r.summary.acquire_p50_us.value_or(0) << ' ' << r.summary.acquire_p99_us.value_or(0)
                      << ' ' << acquisitions_per_s(r);
      }
      data.stream() << '\n';
    }
    data.commit();
  }
  const std::string script_path = (dir / "compare.gp").string();
  {
    OutputFile script_file({"chart script", script_path});
    std::ostream& script = script_file.stream();
    script << (extension == ".svg" ? "set terminal svg size 1200,520 dynamic font 'sans,11'\n"
                                   : "set terminal pngcairo size 1200,520 font 'sans,10'\n")
           << "set output " << quoted(chart.write_path()) << "\n"
           << "set datafile separator whitespace\n"
           << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
           << "set key top left\nset grid ytics\nset xtics rotate by -20\n"
           << "set multiplot layout 1,2 title 'lockbridge compare (same Redis, same run)'\n"
           << "set title 'acquire latency p50, microseconds (log scale)'\nset logscale y\n"
           << "plot ";
    for (std::size_t s = 0; s < strategies.size(); ++s) {
      script << (s ? ", " : "") << quoted(data_path) << " using " << 2 + 3 * s << (s ? "" : ":xtic(1)") << " title "
             << quoted(strategies[s]);
    }
    script << "\nset title 'throughput, acquisitions per second'\nunset logscale y\nset yrange [0:*]\nplot ";
    for (std::size_t s = 0; s < strategies.size(); ++s) {
      script << (s ? ", " : "") << quoted(data_path) << " using " << 4 + 3 * s << (s ? "" : ":xtic(1)") << " title "
             << quoted(strategies[s]);
    }
    script << "\nunset multiplot\n";
    script_file.commit();
  }
  const int status = run_gnuplot(gnuplot, script_path);
  if (status != 0) return {false, "no chart: gnuplot failed (exit status " + std::to_string(status) + ")"};
  chart.commit();
  return {true, "chart: " + path};
}

}  // namespace lockbridge::tools::bench
