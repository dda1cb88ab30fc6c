# lockbridge_library(NAME <target> EXPORT_NAME <name> INCLUDE_DIRS <dir>... SOURCES ...
#                    [SIBLINGS ...] [PUBLIC ...] [PRIVATE ...])
#
# Compiles SOURCES once, as <target>_objects (position-independent, hidden visibility: only what
# the public headers mark LOCKBRIDGE_API is exported), and links those objects twice:
#   <target>         the shared library, lib<target>.so.${LOCKBRIDGE_SOVERSION} (docs/packaging.md),
#                    lockbridge::<name> once installed: what programs and the packages use;
#   <target>_static  the static library, lib<target>.a, lockbridge::<name>_static: for programs
#                    that link statically, and for the tests, which reach into the internals the
#                    shared library does not export.
# SIBLINGS: lockbridge's own libraries this one's headers use; each variant links the sibling's
# variant of its kind (the shared to <sibling>, the static to <sibling>_static), so a program
# never holds two copies of one library. PUBLIC: other libraries its headers use; PRIVATE: what
# only its code uses. Both variants are in the lockbridgeTargets export set.
function(lockbridge_library)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;EXPORT_NAME" "INCLUDE_DIRS;SOURCES;SIBLINGS;PUBLIC;PRIVATE")
  set(objects ${arg_NAME}_objects)
  add_library(${objects} OBJECT ${arg_SOURCES})
  set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                                              VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(${objects} PUBLIC cxx_std_20)
  target_include_directories(${objects} PUBLIC ${arg_INCLUDE_DIRS} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${objects} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE} lockbridge_warnings lockbridge_sanitize)
  # The standard headers nearly every file includes, parsed once per library rather than once per
  # file (four builds in CI). The packages' consumer builds against the installed headers alone,
  # so a public header that forgets an include still fails there.
  target_precompile_headers(${objects} PRIVATE <algorithm> <chrono> <cstdint> <functional> <memory> <mutex>
                                               <optional> <span> <stop_token> <string> <string_view> <utility>
                                               <vector>)

  add_library(${arg_NAME} SHARED $<TARGET_OBJECTS:${objects}>)
  add_library(${arg_NAME}_static STATIC $<TARGET_OBJECTS:${objects}>)
  add_library(lockbridge::${arg_EXPORT_NAME} ALIAS ${arg_NAME})
  add_library(lockbridge::${arg_EXPORT_NAME}_static ALIAS ${arg_NAME}_static)
  set_target_properties(${arg_NAME} PROPERTIES EXPORT_NAME ${arg_EXPORT_NAME} VERSION ${PROJECT_VERSION}
                                               SOVERSION ${LOCKBRIDGE_SOVERSION})
  set_target_properties(${arg_NAME}_static PROPERTIES EXPORT_NAME ${arg_EXPORT_NAME}_static OUTPUT_NAME ${arg_NAME})
  foreach(variant ${arg_NAME} ${arg_NAME}_static)
    target_compile_features(${variant} PUBLIC cxx_std_20)
    foreach(dir ${arg_INCLUDE_DIRS})
      target_include_directories(${variant} PUBLIC $<BUILD_INTERFACE:${dir}>)
    endforeach()
    target_include_directories(${variant} PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${variant} PUBLIC ${arg_PUBLIC}
                                     PRIVATE ${arg_PRIVATE} $<BUILD_INTERFACE:lockbridge_sanitize>)
  endforeach()
  foreach(sibling ${arg_SIBLINGS})
    target_link_libraries(${objects} PUBLIC ${sibling}_objects)  # its headers, not its objects
    target_link_libraries(${arg_NAME} PUBLIC ${sibling})
    target_link_libraries(${arg_NAME}_static PUBLIC ${sibling}_static)
  endforeach()
  # A shared library that leaves a symbol to be found at load time would fail there, not here.
  # (Not under sanitizers: clang leaves their runtime to the program.)
  if(NOT LOCKBRIDGE_SANITIZE)
    target_link_options(${arg_NAME} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()
