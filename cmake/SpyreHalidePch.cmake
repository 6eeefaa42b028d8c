# One precompiled Halide.h for the whole tree. Halide.h is 32.7k lines (about 4 s to parse) and
# the compiler, the schedules, the generators and most test files include it; each target that
# does calls spyre_use_halide_pch(<target>) and reuses a PCH built once (REUSE_FROM, as Halide's
# own tests do) instead of parsing the header in every file.
#
# GCC uses a PCH only if it was built with the same options and macros as the file that uses it
# (-Winvalid-pch, which CMake adds, warns when one is rejected and the header is parsed after
# all). So there are two, each built with exactly the flags of the targets that reuse it:
#   spyre_halide_pch       Halide.h, for the libraries and executables;
#   spyre_halide_test_pch  Halide.h and gtest.h, for the test binaries, which GTest compiles with
#                          -DGTEST_HAS_PTHREAD=1. Their paths are in a generated header, not -D
#                          flags (tests/CMakeLists.txt, spyre_test_paths).
# Configure with -DSPYRE_PCH=OFF to build without.
include_guard(GLOBAL)

option(SPYRE_PCH "precompile Halide.h once and reuse it in every target that includes it" ON)

# ccache hashes GCC's preprocessed output; with -fpch-preprocess that output names the PCH used
# instead of failing, so the files that use one are cached too (ccache's manual, "Precompiled
# headers"). Only those files get it: the others keep their flags, and their cache entries.
set(_spyre_pch_options "")
if(CCACHE_PROGRAM AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_spyre_pch_options -fpch-preprocess)
endif()

if(SPYRE_PCH)
  add_library(spyre_halide_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/halide_pch.cpp)
  target_link_libraries(spyre_halide_pch PRIVATE Halide::Halide)
  target_precompile_headers(spyre_halide_pch PRIVATE <Halide.h>)
  target_compile_options(spyre_halide_pch PRIVATE ${_spyre_pch_options})

  add_library(spyre_halide_test_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/halide_pch.cpp)
  target_link_libraries(spyre_halide_test_pch PRIVATE Halide::Halide GTest::gtest)
  target_precompile_headers(spyre_halide_test_pch PRIVATE <Halide.h> <gtest/gtest.h>)
  target_compile_options(spyre_halide_test_pch PRIVATE ${_spyre_pch_options})
endif()

# spyre_use_halide_pch(TARGET [TESTS] [NOT_IN source...]): TARGET includes Halide.h (it links
# Halide::Halide, directly or through spyre_compiler); TESTS: it is a GoogleTest binary. The
# sources after NOT_IN do not include Halide.h and do not load the PCH either.
function(spyre_use_halide_pch TARGET)
  cmake_parse_arguments(ARG "TESTS" "" "NOT_IN" ${ARGN})
  if(NOT SPYRE_PCH)
    return()
  endif()
  target_compile_options(${TARGET} PRIVATE ${_spyre_pch_options})
  if(ARG_TESTS)
    target_precompile_headers(${TARGET} REUSE_FROM spyre_halide_test_pch)
  else()
    target_precompile_headers(${TARGET} REUSE_FROM spyre_halide_pch)
  endif()
  if(ARG_NOT_IN)
    set_source_files_properties(${ARG_NOT_IN} TARGET_DIRECTORY ${TARGET} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()
