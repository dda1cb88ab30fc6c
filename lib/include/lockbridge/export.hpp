// LOCKBRIDGE_API marks what the shared libraries export: the public API, as these headers declare
// it. Everything else is compiled with hidden visibility (lib/CMakeLists.txt), so the internals
// are no part of the ABI (docs/packaging.md) and no program can link against them by accident.
// ELF needs the same attribute to build and to use a library, so one macro serves both.
#pragma once

#define LOCKBRIDGE_API __attribute__((visibility("default")))
