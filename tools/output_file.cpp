#include "output_file.hpp"
#include "key_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>

#include "cli_common.hpp"
#include "convert/journal.hpp"

namespace lockbridge::tools {

namespace fs = std::filesystem;

namespace {

// The file `path` names once its symlinks are followed, even when the last one dangles (then the
// file it would create). A relative link is followed from the link's own directory.
std::string resolve_links(const std::string& path) {
  fs::path at = path;
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit (ELOOP)
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(at, error))) break;
    const fs::path link = fs::read_symlink(at, error);
    if (error) break;
    at = link.is_absolute() ? link : at.parent_path() / link;
  }
  return at.string();
}

// What a file is, to tell whether two names are one file: device and inode when it exists (this
// sees through hard links and symlinks), else where its name leads.
struct FileId {
  bool exists = false;
  bool regular = false;
  dev_t device = 0;
  ino_t inode = 0;
  fs::path where;
};

FileId from_stat(const struct stat& status) {
  FileId id;
  id.exists = true;
  id.regular = S_ISREG(status.st_mode);
  id.device = status.st_dev;
  id.inode = status.st_ino;
  return id;
}

FileId identify(const std::string& path) {
  struct stat status {};
  FileId id = ::stat(path.c_str(), &status) == 0 ? from_stat(status) : FileId{};
  std::error_code error;
  id.where = fs::weakly_canonical(fs::absolute(resolve_links(path), error), error);
  if (error) id.where = fs::absolute(path, error).lexically_normal();
  return id;
}

bool same_file(const FileId& a, const FileId& b) {
  if (a.exists != b.exists) return false;
  if (a.exists) return a.device == b.device && a.inode == b.inode;
  return a.where == b.where;
}

// Only regular files (and names not yet taken) can be replaced, and so lost.
bool replaceable(const FileId& id) { return !id.exists || id.regular; }

std::string named(const NamedFile& file) {
  return file.path.empty() ? file.option : file.option + " '" + terminal_text(file.path) + "'";
}

// A new empty file next to `destination`, created with `mode` less the umask, never one that
// exists already. Returns its descriptor; `path` is set to its name.
int create_temporary(const std::string& destination, const std::string& option, unsigned mode, std::string& path) {
  const fs::path where = destination;
  const fs::path dir = where.parent_path().empty() ? fs::path(".") : where.parent_path();
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, ".lockbridge-%08x", static_cast<unsigned>(random()));
    path = (dir / ("." + where.filename().string() + suffix)).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd >= 0) return fd;
    if (errno != EEXIST) throw FileError("cannot create the " + option + " file next to", destination, errno);
  }
  throw FileError("cannot create the " + option + " file next to", destination, EEXIST);
}

[[noreturn]] void refuse_same(const NamedFile& output, const NamedFile& other) {
  throw Error(Errc::bad_option, named(output) + " is the same file as " + named(other) +
                                    ": a command never writes over its own input, journal or other output");
}

}  // namespace

void check_files(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs) {
  for (const auto* files : {&inputs, &outputs}) {
    for (const NamedFile& file : *files) {
      if (file.path.empty()) throw Error(Errc::bad_option, file.option + " names no file (the path is empty)");
    }
  }
  // Standard output redirected to a file is an output too: no input or other output may share it
  // (`--rollback J --json >> J` would append the summary to the journal).
  const NamedFile standard_output{"standard output", ""};
  struct stat status {};
  const std::optional<FileId> out =
      ::fstat(STDOUT_FILENO, &status) == 0 ? std::optional(from_stat(status)) : std::nullopt;
  std::vector<std::pair<NamedFile, FileId>> seen;
  for (const NamedFile& input : inputs) {
    const FileId id = identify(input.path);
    if (out && replaceable(*out) && replaceable(id) && same_file(*out, id)) refuse_same(standard_output, input);
    seen.emplace_back(input, id);
  }
  if (out) seen.emplace_back(standard_output, *out);
  for (const NamedFile& output : outputs) {
    const FileId id = identify(output.path);
    if (!replaceable(id)) continue;
    for (const auto& [other, other_id] : seen) {
      if (replaceable(other_id) && same_file(id, other_id)) refuse_same(output, other);
    }
    bool journal = false;
    try {
      journal = id.exists && convert::is_convert_journal(output.path);
    } catch (const FileError& error) {
      throw Error(Errc::bad_option, "cannot tell whether " + named(output) +
                                        " is a lockbridge convert journal, which is "
                                        "never overwritten (" +
                                        error.what() + "): name another file");
    }
    if (journal) {
      throw Error(Errc::bad_option, named(output) +
                                        " is a lockbridge convert journal, which is never overwritten "
                                        "(it may be needed for --rollback): name another file");
    }
    seen.emplace_back(output, id);
  }
}

// ---- OutputFile ---------------------------------------------------------------------------------

OutputFile::OutputFile(NamedFile file, unsigned mode) : file_(std::move(file)), stream_(nullptr) {
  struct stat status {};
  const bool exists = ::stat(file_.path.c_str(), &status) == 0;
  int fd = -1;
  if (exists && !S_ISREG(status.st_mode)) {
    direct_ = true;
    destination_ = write_path_ = file_.path;
    fd = ::open(file_.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw FileError("cannot open the " + file_.option + " file", file_.path, errno);
  } else {
    destination_ = resolve_links(file_.path);
    // Renaming needs only the directory's permission: keep a read-only file's protection.
    if (exists && ::access(destination_.c_str(), W_OK) != 0) {
      throw FileError("cannot write the " + file_.option + " file", file_.path, errno);
    }
    fd = create_temporary(destination_, file_.option, mode, write_path_);
    if (exists) ::fchmod(fd, status.st_mode & 07777);
  }
  buffer_ = std::make_unique<FdBuffer>(fd, /*owned=*/true);
  stream_.rdbuf(buffer_.get());
}

OutputFile::~OutputFile() {
  stream_.rdbuf(nullptr);
  buffer_.reset();
  if (!committed_ && !direct_) ::unlink(write_path_.c_str());
}

void OutputFile::check() {
  stream_.flush();
  if (buffer_->error() != 0 || !stream_) {
    throw FileError("writing the " + file_.option + " file", file_.path,
                    buffer_->error() != 0 ? buffer_->error() : EIO);
  }
}

void OutputFile::commit() {
  const std::string what = " the " + file_.option + " file";
  check();
  // A FIFO or a terminal has nothing to sync; a regular file must be on disk before it replaces one.
  if (!direct_ && ::fsync(buffer_->fd()) != 0) throw FileError("syncing" + what, file_.path, errno);
  if (!buffer_->close()) throw FileError("writing" + what, file_.path, errno);
  if (!direct_) {
    if (::rename(write_path_.c_str(), destination_.c_str()) != 0)
      throw FileError("replacing" + what, file_.path, errno);
    committed_ = true;
    // The rename itself is on disk once the directory is (some file systems cannot sync one: EINVAL).
    const std::string dir =
        fs::path(destination_).parent_path().empty() ? "." : fs::path(destination_).parent_path().string();
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      const bool synced = ::fsync(dir_fd) == 0 || errno == EINVAL;
      const int error = errno;
      ::close(dir_fd);
      if (!synced) throw FileError("syncing the directory of" + what, file_.path, error);
    }
  }
  committed_ = true;
}

void OutputFile::finish(bool complete, std::string_view command) {
  if (complete) {
    commit();
    return;
  }
  std::cerr << "lockbridge " << command << ": the run was interrupted: ";
  if (!direct_) {
    std::cerr << named(file_) << " is left as it was\n";
  } else if (buffer_->written() == 0) {
    std::cerr << "nothing was written to " << named(file_) << "\n";
  } else {
    // Not a regular file, so written as the run went: what it got cannot be taken back.
    std::cerr << named(file_) << " (not a regular file: written directly) got only the first " << buffer_->written()
              << " bytes of the output\n";
  }
}

}  // namespace lockbridge::tools
