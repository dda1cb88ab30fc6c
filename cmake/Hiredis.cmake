# Debian's hiredis 0.14 ships a config file without targets: make an imported target ourselves.
# Used by the build and by the installed lockbridgeConfig.cmake.
find_path(LOCKBRIDGE_HIREDIS_INCLUDE_DIR hiredis/hiredis.h REQUIRED)
find_library(LOCKBRIDGE_HIREDIS_LIBRARY NAMES hiredis REQUIRED)
if(NOT TARGET lockbridge_hiredis)
  add_library(lockbridge_hiredis UNKNOWN IMPORTED)
  set_target_properties(lockbridge_hiredis PROPERTIES
    IMPORTED_LOCATION "${LOCKBRIDGE_HIREDIS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LOCKBRIDGE_HIREDIS_INCLUDE_DIR}")
endif()
