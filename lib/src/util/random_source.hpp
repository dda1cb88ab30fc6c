// Random bytes for lock tokens and owner ids, drawn from the kernel's CSPRNG.
#pragma once

#include <span>

namespace lockbridge::detail {

// Fills `out` with bytes from getrandom(2). Draws of up to 64 bytes (tokens, ids) come from a page
// drawn ahead per thread: one system call per about 250 tokens instead of one per token (per lock
// cycle); larger draws go to the kernel directly. Never hands a forked child its parent's next
// bytes: the page is wiped in the child (MADV_WIPEONFORK). Throws Error(Errc::io) when the kernel
// gives none.
void fill_random(std::span<unsigned char> out);

}  // namespace lockbridge::detail
