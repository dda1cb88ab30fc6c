# Every dependency is a Debian package; scripts/bootstrap.sh installs the missing ones.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.10 REQUIRED)

include(${CMAKE_CURRENT_LIST_DIR}/Hiredis.cmake)
