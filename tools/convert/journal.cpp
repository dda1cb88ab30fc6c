#include "journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "cli_common.hpp"
#include "fd_buffer.hpp"
#include "key_text.hpp"
#include "lockbridge/error.hpp"

namespace lockbridge::tools::convert {

namespace {

constexpr std::string_view kMagic = "lockbridge_convert_journal";
// A header is a few hundred bytes; a first line longer than this is no journal's.
constexpr std::size_t kMaxHeader = 1 << 20;

bool is_header(const nlohmann::json& line) { return line.is_object() && line.contains(kMagic); }

nlohmann::ordered_json intent_line(const JournalEntry& entry) {
  nlohmann::ordered_json line;
  line["n"] = entry.number;
  put_key(line, entry.key);
  line["action"] = to_string(entry.action);
  put_key(line, entry.old_value, "old_value");
  line["old_pttl_ms"] = entry.old_pttl_ms;
  line["old_expire_at_ms"] = entry.old_expire_at_ms;
  if (entry.action != Action::remove) {
    put_key(line, entry.new_value, "new_value");
    line["new_expire_at_ms"] = entry.new_expire_at_ms;
  }
  return line;
}

const nlohmann::json& field(const nlohmann::json& line, const char* name) {
  const auto found = line.find(name);
  if (found == line.end()) throw std::invalid_argument(std::string("no \"") + name + "\"");
  return *found;
}

std::string text_field(const nlohmann::json& line, const char* name) { return field(line, name).get<std::string>(); }

// A JSON integer in [min, max]. A number written with a fraction or an exponent, or beyond 64 bits
// (which JSON parsers read as a double), is not one: converting such a double to an integer is
// undefined where it does not fit (found by fuzz_journal).
std::int64_t integer_field(const nlohmann::json& line, const char* name, std::int64_t min) {
  const nlohmann::json& value = field(line, name);
  const auto refuse = [&] { throw std::invalid_argument(std::string("\"") + name + "\" is not an integer in range"); };
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) refuse();
  } else if (!value.is_number_integer()) {
    refuse();
  }
  const auto number = value.get<std::int64_t>();
  if (number < min) refuse();
  return number;
}

std::string bytes_field(const nlohmann::json& line, const std::string& name) {
  auto bytes = read_key(line, name);
  if (!bytes) throw std::invalid_argument("no valid \"" + name + "\"");
  return std::move(*bytes);
}

JournalEntry entry_from(const nlohmann::json& line) {
  JournalEntry entry;
  entry.number = static_cast<std::uint64_t>(integer_field(line, "n", 0));
  entry.key = bytes_field(line, "key");
  const auto action = action_from_string(text_field(line, "action"));
  if (!action || *action == Action::skip) throw std::invalid_argument("unknown \"action\"");
  entry.action = *action;
  entry.old_value = bytes_field(line, "old_value");
  // -1 no TTL (and PTTL's -2, gone), else a time: nothing below -2 is one of Redis's answers.
  entry.old_pttl_ms = integer_field(line, "old_pttl_ms", -2);
  entry.old_expire_at_ms = integer_field(line, "old_expire_at_ms", -2);
  if (entry.action != Action::remove) {
    entry.new_value = bytes_field(line, "new_value");
    entry.new_expire_at_ms = integer_field(line, "new_expire_at_ms", -2);
  }
  return entry;
}

}  // namespace

bool is_write_outcome(std::string_view outcome) noexcept {
  return outcome == kWriteFailed ||
         std::find(std::begin(kWriteOutcomes), std::end(kWriteOutcomes), outcome) != std::end(kWriteOutcomes);
}

bool is_convert_journal(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError("cannot read", path, errno != 0 ? errno : EIO);
  std::string first;
  for (char c = 0; first.size() < kMaxHeader && in.get(c) && c != '\n';) first.push_back(c);
  if (in.bad()) throw FileError("cannot read", path, errno != 0 ? errno : EIO);
  const nlohmann::json line = nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
  return is_header(line);
}

// ---- writing ------------------------------------------------------------------------------------

namespace {

[[noreturn]] void journal_exists(const std::string& path) {
  throw Error(Errc::bad_option, "the journal '" + path +
                                    "' already exists; convert never overwrites a journal (it may be needed for "
                                    "--rollback): name a new file");
}

// The directory a path names a file in ("." for a bare name).
std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

namespace {

// A descriptor closed when it goes out of scope, unless released.
struct OwnedFd {
  int fd = -1;
  explicit OwnedFd(int descriptor) : fd(descriptor) {}
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
  int release() noexcept { return std::exchange(fd, -1); }
};

// `header_line` written and synced in a new file with no name yet; then that file linked as
// `path`. O_TMPFILE keeps it nameless (nothing is left behind if the run dies); where the file
// system has none, or /proc (which linkat needs to name it) is not mounted, a temporary name is
// used instead, and removed. Returns the open descriptor. Throws FileError; Error{bad_option}
// when `path` exists.
int create_linked(const std::string& path, const std::string& directory, const std::string& header_line) {
  const auto written_and_synced = [&](int fd) {
    std::size_t written = 0;
    if (const int failed = write_all(fd, header_line, written)) throw FileError("writing the journal", path, failed);
    if (::fdatasync(fd) != 0) throw FileError("syncing the journal", path, errno);
  };
  OwnedFd unnamed(::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, kJournalMode));
  if (unnamed.fd >= 0) {
    written_and_synced(unnamed.fd);
    if (::linkat(AT_FDCWD, ("/proc/self/fd/" + std::to_string(unnamed.fd)).c_str(), AT_FDCWD, path.c_str(),
                 AT_SYMLINK_FOLLOW) == 0) {
      return unnamed.release();
    }
    if (errno == EEXIST) journal_exists(path);
    if (errno != ENOENT && errno != EPERM && errno != EACCES) throw FileError("cannot create the journal", path, errno);
  } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    throw FileError("cannot create the journal", path, errno);
  }
  std::string temporary = path + ".tmp-XXXXXX";
  OwnedFd named(::mkostemp(temporary.data(), O_CLOEXEC));
  if (named.fd < 0) throw FileError("cannot create the journal", path, errno);
  struct Unlink {
    const std::string& name;
    ~Unlink() { ::unlink(name.c_str()); }
  } unlink_temporary{temporary};
  (void)::fchmod(named.fd, kJournalMode);
  written_and_synced(named.fd);
  if (::link(temporary.c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) journal_exists(path);
    throw FileError("cannot create the journal", path, errno);
  }
  return named.release();
}

}  // namespace

JournalWriter::JournalWriter(const std::string& path, nlohmann::ordered_json header) : path_(path) {
  nlohmann::ordered_json first;
  first[std::string(kMagic)] = 1;
  if (header.is_object()) first.update(header);
  // The journal appears with its header whole, or not at all. So an empty or headerless file is
  // never a journal convert wrote (rollback refuses one: a shell's `> J` empties a journal), and
  // the link fails where `path` exists: an earlier journal is never replaced.
  const std::string directory = directory_of(path);
  fd_ = create_linked(path, directory, dump_line(first) + '\n');
  // The name, synced too: a journal whose writes went out must still be found after a crash.
  const int parent = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent >= 0) {
    (void)::fsync(parent);
    ::close(parent);
  }
  (void)::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_APPEND);
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::append(const std::string& lines) {
  std::size_t written = 0;
  if (const int failed = write_all(fd_, lines, written)) throw FileError("writing the journal", path_, failed);
  if (::fdatasync(fd_) != 0) throw FileError("syncing the journal", path_, errno);
}

void JournalWriter::write_intents(const std::vector<JournalEntry>& entries) {
  if (entries.empty()) return;
  std::string lines;
  for (const JournalEntry& entry : entries) lines += dump_line(intent_line(entry)) + '\n';
  append(lines);
}

void JournalWriter::write_outcomes(const std::vector<std::pair<const JournalEntry*, std::string>>& outcomes) {
  if (outcomes.empty()) return;
  std::string lines;
  for (const auto& [entry, outcome] : outcomes) {
    nlohmann::ordered_json line;
    line["n"] = entry->number;
    put_key(line, entry->key);
    line["outcome"] = outcome;
    lines += dump_line(line) + '\n';
  }
  append(lines);
}

// ---- reading ------------------------------------------------------------------------------------

JournalReader::JournalReader(const std::string& path) : path_(path) {
  // Checked before opening: opening a FIFO would wait for a writer. A name that leads nowhere is
  // bad input; a file the system will not let us read (permissions, a symlink loop, an I/O error)
  // is a local file error.
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      throw Error(Errc::bad_option, "there is no journal '" + path + "': " + std::strerror(errno));
    }
    throw FileError("cannot read the journal", path, errno);
  }
  if (!S_ISREG(status.st_mode)) {
    throw Error(Errc::bad_option, "the journal '" + path +
                                      "' is not a regular file: rollback reads it twice (once to check it "
                                      "before anything is sent)");
  }
  errno = 0;
  in_.open(path, std::ios::binary);
  if (!in_) throw FileError("cannot open the journal", path, errno != 0 ? errno : EIO);
  read_header();
}

void JournalReader::read_header() {
  const auto first = next_line();
  if (!first) {
    in_.clear();
    in_.seekg(0, std::ios::end);
    const bool empty = in_.tellg() == 0;
    throw Error(Errc::bad_option,
                "'" + path_ + "' is not a journal convert wrote: " +
                    (empty ? std::string("it is empty, and convert creates its journals with their header in place "
                                         "(was it emptied, as a shell's '> FILE' does?)")
                           : std::string("it holds no whole header line")) +
                    "; if it was a journal, the values convert replaced are gone with it (docs/migration.md, \"What "
                    "keeps the originals\")");
  }
  if (!is_header(*first)) throw Error(Errc::bad_option, "'" + path_ + "' is not a lockbridge convert journal");
  header_ = std::move(*first);
}

void JournalReader::rewind() {
  in_.clear();
  in_.seekg(0);
  if (!in_) throw FileError("reading the journal", path_, errno != 0 ? errno : EIO);
  line_number_ = 0;
  pushed_back_.reset();
  read_header();
}

std::optional<nlohmann::json> JournalReader::next_line() {
  if (pushed_back_) return std::exchange(pushed_back_, std::nullopt);
  std::string text;
  while (std::getline(in_, text)) {
    ++line_number_;
    if (text.empty()) continue;
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      // getline stopped at the end of the file without a newline: a line torn by a crash.
      if (in_.eof()) return std::nullopt;
      throw Error(Errc::bad_option, "journal '" + path_ + "' line " + std::to_string(line_number_) + " is not JSON");
    }
  }
  if (in_.bad()) throw FileError("reading the journal", path_, errno != 0 ? errno : EIO);
  return std::nullopt;
}

bool JournalReader::next_batch(std::vector<JournalRecord>& batch) {
  batch.clear();
  bool seen_outcome = false;
  while (auto line = next_line()) {
    try {
      if (line->contains("outcome")) {
        seen_outcome = true;
        const auto number = static_cast<std::uint64_t>(integer_field(*line, "n", 0));
        const auto outcome = text_field(*line, "outcome");
        if (!is_write_outcome(outcome)) throw std::invalid_argument("unknown \"outcome\" '" + outcome + "'");
        const auto planned = std::find_if(batch.begin(), batch.end(),
                                          [&](const JournalRecord& record) { return record.entry.number == number; });
        if (planned == batch.end())
          throw std::invalid_argument("an outcome for write " + std::to_string(number) + ", not planned in its batch");
        planned->outcome = outcome;
        continue;
      }
      if (seen_outcome) {  // the next batch's first planned write
        pushed_back_ = std::move(line);
        break;
      }
      batch.push_back({entry_from(*line), std::nullopt});
    } catch (const std::exception& error) {
      if (dynamic_cast<const Error*>(&error)) throw;
      throw Error(Errc::bad_option,
                  "journal '" + path_ + "' line " + std::to_string(line_number_) + ": " + error.what());
    }
  }
  return !batch.empty();
}

}  // namespace lockbridge::tools::convert
