// The files a command writes (audit, convert and rollback --details, compare --json and --plot) and
// reads (rollback's journal), under one rule, so that a slip on the command line cannot eat data:
// no output is an input or another output of the same command, however it is spelt (a symlink, a
// hard link, "./"); no output replaces a convert journal; and an output is replaced whole or not at
// all. docs/migration.md, "Output files", states the rule for users.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fd_buffer.hpp"

namespace lockbridge::tools {

// A file named on the command line, by the option that named it.
struct NamedFile {
  std::string option;  // "--details"
  std::string path;
};

// Call before anything is created or sent. Throws Error{bad_option} for an empty path; naming both
// when an output is one of `inputs` or another of `outputs`, or when the file standard output goes
// to is one of either (`--rollback J --json >> J` would append to the journal); and when an output
// is an existing convert journal, or exists and cannot be read to tell. Outputs that exist and are
// not regular files (/dev/null, a FIFO, a terminal) are written straight through and replace
// nothing: they are not compared.
void check_files(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs);

// The mode (before the umask) of a new output that holds lock values or keys: --details.
inline constexpr unsigned kOwnerOnly = 0600;

// One output. A regular file (or one that does not exist yet; through a symlink, the file the link
// names) is written to a temporary file in the same directory, which commit() renames over it once
// complete: until then, and for ever if the command fails or is interrupted, the destination is
// left exactly as it was. A destination that exists and is not a regular file is written directly.
class OutputFile {
 public:
  // Creates the temporary file (or opens the destination). A new file gets `mode` (less the
  // umask); one that replaces a file keeps that file's mode. Throws FileError.
  explicit OutputFile(NamedFile file, unsigned mode = 0666);
  ~OutputFile();  // without commit(): removes the temporary file
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() noexcept { return stream_; }
  // Where another program (gnuplot) should write instead of stream(): the temporary file, or the
  // destination when it is written directly.
  const std::string& write_path() const noexcept { return write_path_; }
  const NamedFile& file() const noexcept { return file_; }

  // Flushes stream() and throws FileError if any write to it so far failed (a full disk, a
  // file-size limit). Commands call it between batches, so that a failed write stops them there
  // rather than at commit(), after all the work.
  void check();
  // Flushes, syncs to disk and renames the temporary file over the destination. Throws FileError
  // for any write, flush, sync or rename that failed, including earlier writes to stream().
  void commit();
  // The end of a command's run: commit() when it went to the end; otherwise (interrupted) a
  // replaced destination is left as it was, and a direct one has what reached it so far: which of
  // these is said on stderr under `command`'s name.
  void finish(bool complete, std::string_view command);

 private:
  NamedFile file_;
  std::string destination_;  // the file to replace: the path, or what its symlinks name
  std::string write_path_;   // the temporary file, or the destination when written directly
  bool direct_ = false;
  bool committed_ = false;
  std::unique_ptr<FdBuffer> buffer_;
  std::ostream stream_;
};

}  // namespace lockbridge::tools
