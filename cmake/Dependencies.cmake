# Every dependency is a Debian package; scripts/bootstrap.sh installs the missing ones.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.10 REQUIRED)
# libssl: the TLS transport (hiredis 0.14 has none). libcrypto: the SHA1 of each Lua script,
# computed here, so EVALSHA needs no SCRIPT LOAD (which an ACL may deny while it allows EVAL).
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto SSL)

include(${CMAKE_CURRENT_LIST_DIR}/Hiredis.cmake)

# prometheus-cpp (prometheus-cpp-dev): lockbridge::prometheus (prometheus/). AUTO builds it when
# found, ON requires it (CI), OFF skips it.
set(LOCKBRIDGE_PROMETHEUS AUTO CACHE STRING "Build lockbridge::prometheus: AUTO, ON or OFF")
if(LOCKBRIDGE_PROMETHEUS STREQUAL "ON")
  find_package(prometheus-cpp CONFIG REQUIRED)  # Debian ships no version file
elseif(LOCKBRIDGE_PROMETHEUS STREQUAL "AUTO")
  find_package(prometheus-cpp CONFIG QUIET)
endif()
if(prometheus-cpp_FOUND)
  set(LOCKBRIDGE_WITH_PROMETHEUS ON)
else()
  set(LOCKBRIDGE_WITH_PROMETHEUS OFF)
endif()
