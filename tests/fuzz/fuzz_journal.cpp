// convert's journal reader (tools/convert/journal.hpp), which --rollback trusts to put lock values
// back: any bytes as a journal file. It reads batches or refuses the file with Error{bad_option}
// (a malformed line, a missing field) before rollback sends anything; it never crashes, and a
// journal it accepted reads the same after rewind() (rollback reads it twice: check, then apply).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "convert/journal.hpp"
#include "lockbridge/error.hpp"

namespace convert = lockbridge::tools::convert;

namespace {

// The batches as a string that tells them apart: keys, actions, values and outcomes.
std::string digest(convert::JournalReader& reader) {
  std::string out;
  std::vector<convert::JournalRecord> batch;
  while (reader.next_batch(batch)) {
    out += '|';
    for (const convert::JournalRecord& record : batch) {
      const convert::JournalEntry& entry = record.entry;
      out += std::to_string(entry.number) + ',' + entry.key + ',' + std::to_string(static_cast<int>(entry.action)) +
             ',' + entry.old_value + ',' + std::to_string(entry.old_expire_at_ms) + ',' + entry.new_value + ',' +
             std::to_string(entry.new_expire_at_ms) + ',' + record.outcome.value_or("-") + ';';
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A regular file in memory (the reader refuses pipes: it reads the journal twice).
  const int fd = memfd_create("journal", 0);
  if (fd < 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    convert::JournalReader reader(path);
    const std::string first = digest(reader);
    reader.rewind();
    if (digest(reader) != first) std::abort();  // the check and the rollback would read different journals
  } catch (const lockbridge::Error&) {
    // Refused, naming the line: before rollback sends anything.
  } catch (const lockbridge::tools::FileError&) {
  }
  close(fd);
  return 0;
}
