# Every dependency is a Debian package; scripts/bootstrap.sh installs the missing ones.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.10 REQUIRED)
# libssl: the TLS transport (hiredis 0.14 has none). libcrypto: the SHA1 of each Lua script,
# computed here, so EVALSHA needs no SCRIPT LOAD (which an ACL may deny while it allows EVAL).
find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto SSL)

include(${CMAKE_CURRENT_LIST_DIR}/Hiredis.cmake)
