# Helpers shared by every CMakeLists.txt of heaplab.
#
#   heaplab_configure_target(<target>)     warnings, -Werror, CUDA flags, debug checks, mutant
#   heaplab_add_test(<name> SOURCES ... [LIBS ...] LABEL cpu|gpu [TIMEOUT s] [FAMILIES])
#                                          a GoogleTest binary registered per test case with CTest;
#                                          FAMILIES links every allocator family of the tree in
#                                          (heaplab_link_families, src/heaplab/families)
#
# Labels: cpu (CI), gpu (skips with "no CUDA device" where none is present), sanitize (gpu
# binaries under compute-sanitizer). Long randomized runs are `heaplab stress`, not a label.
# docs/testing.md.

# ---------------------------------------------------------------- host sanitizers (tsan/asan presets)
if(HEAPLAB_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -g -O1)
  add_link_options(-fsanitize=thread)
elseif(HEAPLAB_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -g -O1)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT HEAPLAB_SANITIZER STREQUAL "")
  message(FATAL_ERROR "HEAPLAB_SANITIZER must be '', 'thread' or 'address', not '${HEAPLAB_SANITIZER}'")
endif()

# ---------------------------------------------------------------- mutants (docs/mutants.md)
# One named bug planted at compile time: -DHEAPLAB_MUTANT=invalidate_no_rollback defines
# HEAPLAB_MUTANT_NAME="invalidate_no_rollback" for every heaplab target; core/mutants.hpp turns
# it into the constexpr switch mutant::invalidate_no_rollback (an unknown name fails to compile).
# -DHEAPLAB_MUTANT=runtime is a planting build instead: every switch is compiled as a run-time one
# (device code included) and the programs and tests plant the bug that the environment variable
# HEAPLAB_PLANT names (docs/mutants.md "One build for every planted bug"; tools/mutant-sweep
# --planting). The apps are not built there: their planted bugs are per-app libraries of the
# real build.
set(HEAPLAB_MUTANT_DEFINE "")
if(HEAPLAB_MUTANT STREQUAL "runtime")
  set(HEAPLAB_MUTANT_DEFINE "HEAPLAB_MUTANT_RUNTIME_BUILD=1")
  message(WARNING "heaplab: PLANTING BUILD: every planted bug is compiled in, chosen at run time "
                  "by HEAPLAB_PLANT=<name> (none when it is unset)")
elseif(NOT HEAPLAB_MUTANT STREQUAL "")
  set(HEAPLAB_MUTANT_DEFINE "HEAPLAB_MUTANT_NAME=\"${HEAPLAB_MUTANT}\"")
  message(WARNING "heaplab: MUTANT BUILD: planted bug '${HEAPLAB_MUTANT}' is compiled in")
endif()

# GCC 13+ warns -Wdangling-reference for every reference bound to the result of a function that
# takes a temporary argument, including functions that return one of their other (lvalue)
# arguments (GCC bug 107532; e.g. schedule/json.cpp's as_array). With -Werror that breaks builds
# with newer compilers (the GPU box's g++ is newer than Debian's), so it is off there.
set(HEAPLAB_HAVE_WNO_DANGLING_REFERENCE OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 13)
  set(HEAPLAB_HAVE_WNO_DANGLING_REFERENCE ON)
endif()

function(heaplab_configure_target target)
  set(warn_cxx -Wall -Wextra)
  if(HEAPLAB_HAVE_WNO_DANGLING_REFERENCE)
    list(APPEND warn_cxx -Wno-dangling-reference)
  endif()
  if(HEAPLAB_WERROR)
    list(APPEND warn_cxx -Werror)
  endif()
  list(JOIN warn_cxx "," warn_cuda_host)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${warn_cxx}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${warn_cuda_host}>
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  if(HEAPLAB_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
  if(HEAPLAB_DEBUG_CHECKS)
    target_compile_definitions(${target} PRIVATE HEAPLAB_DEBUG_CHECKS=1)
  endif()
  if(HEAPLAB_MUTANT_DEFINE)
    target_compile_definitions(${target} PRIVATE ${HEAPLAB_MUTANT_DEFINE})
  endif()
  get_target_property(_type ${target} TYPE)
  if(NOT _type STREQUAL "INTERFACE_LIBRARY")
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  endif()
endfunction()

# GPU test binaries, relative to the build folder, for tools/gpu-tier (which must work on a copy
# of the build folder at another path, so nothing here may be absolute).
set_property(GLOBAL PROPERTY HEAPLAB_GPU_TEST_BINARIES "")
set_property(GLOBAL PROPERTY HEAPLAB_CPU_TEST_BINARIES "")
set_property(GLOBAL PROPERTY HEAPLAB_CPU_TEST_TARGETS "")
set_property(GLOBAL PROPERTY HEAPLAB_PLANTED_SANITIZER_CHECKS "")
set_property(GLOBAL PROPERTY HEAPLAB_SANITIZE_ARGS "")

find_program(HEAPLAB_COMPUTE_SANITIZER compute-sanitizer
  HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)

# heaplab_add_test(NAME LABEL cpu|gpu SOURCES ... [LIBS ...] [TIMEOUT S] [FAMILIES]
#                  [SANITIZE_ARGS ...]): SANITIZE_ARGS are extra compute-sanitizer options for
# this binary's sanitize tier (ctest's sanitize.* entries and tools/gpu-tier --sanitize, through
# sanitize-args.txt), e.g. --report-api-errors no for a binary whose tests make CUDA calls fail on
# purpose.
function(heaplab_add_test name)
  cmake_parse_arguments(T "FAMILIES" "LABEL;TIMEOUT" "SOURCES;LIBS;SANITIZE_ARGS" ${ARGN})
  if(NOT T_LABEL MATCHES "^(cpu|gpu)$")
    message(FATAL_ERROR "heaplab_add_test(${name}): LABEL must be cpu or gpu")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${name} ${T_SOURCES})
  # Every test binary reads HEAPLAB_PLANT before its first test: a planting build's plants that
  # bug, any other build's refuses it (docs/mutants.md). One object, compiled once per build.
  if(NOT TARGET heaplab_plant_from_environment)
    add_library(heaplab_plant_from_environment OBJECT
                ${PROJECT_SOURCE_DIR}/proofs_tests/support/plant_from_environment.cpp)
    target_link_libraries(heaplab_plant_from_environment PRIVATE heaplab::core GTest::gtest)
    heaplab_configure_target(heaplab_plant_from_environment)
  endif()
  target_link_libraries(${name} PRIVATE ${T_LIBS} heaplab_plant_from_environment heaplab::testing
                                        GTest::gtest GTest::gtest_main Threads::Threads)
  if(T_FAMILIES)
    heaplab_link_families(${name})
  endif()
  heaplab_configure_target(${name})
  # A test binary's own C++ files are compiled at -O1 in Release builds: half of -O3's compile
  # time (explorer_test.cpp 34 -> 15 s, rw_queue_explorer_test.cpp 18.6 -> 9.6 s), and the
  # longest searches they run took as long as at -O3 (explorer_test's two default-budget
  # explorations 18-25 s either way; runner_gpu_host_test's property pipeline 40 s at -O1,
  # 46 s at -O3; 2-core machine, 2026-12-03). The test files are most of what CI compiles
  # (docs/testing.md "Build time").
  target_compile_options(${name} PRIVATE "$<$<AND:$<CONFIG:Release>,$<COMPILE_LANGUAGE:CXX>>:-O1>")
  if(T_LABEL STREQUAL "cpu" AND NOT HEAPLAB_DEVICE_OPTIMIZE)
    # A CPU test runs its .cu files' host code: optimized although the GPU code is not.
    target_compile_options(${name} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-O3>")
  endif()
  # A gtest SKIPPED line makes CTest report the test as skipped instead of passed. The regex has
  # no ']': gtest_discover_tests writes it into a bracket argument, and CMake 4.x ends that
  # argument at the first ']]' (a regex ending in '\]' broke the whole file there).
  gtest_discover_tests(${name}
    TEST_PREFIX "${name}."
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${T_LABEL}" TIMEOUT ${T_TIMEOUT}
               SKIP_REGULAR_EXPRESSION "\\[  SKIPPED ")
  file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${CMAKE_CURRENT_BINARY_DIR}")
  if(T_LABEL STREQUAL "cpu")
    set_property(GLOBAL APPEND PROPERTY HEAPLAB_CPU_TEST_BINARIES "${rel}/${name}")
    set_property(GLOBAL APPEND PROPERTY HEAPLAB_CPU_TEST_TARGETS ${name})
  endif()
  if(T_LABEL STREQUAL "gpu")
    set_property(GLOBAL APPEND PROPERTY HEAPLAB_GPU_TEST_BINARIES "${rel}/${name}")
    if(T_SANITIZE_ARGS)
      list(JOIN T_SANITIZE_ARGS " " _args)
      set_property(GLOBAL APPEND PROPERTY HEAPLAB_SANITIZE_ARGS "${name}|${_args}")
    endif()
    # Sanitize tier: the whole binary under each compute-sanitizer tool.
    foreach(tool memcheck racecheck synccheck initcheck)
      set(extra "")
      if(tool STREQUAL "memcheck")
        set(extra --leak-check full)
      endif()
      if(HEAPLAB_COMPUTE_SANITIZER)
        add_test(NAME sanitize.${tool}.${name}
                 COMMAND ${HEAPLAB_COMPUTE_SANITIZER} --tool ${tool} ${extra} --error-exitcode 97
                         ${T_SANITIZE_ARGS} $<TARGET_FILE:${name}>)
        # As tools/gpu-tier --sanitize: CompactGpu's passes stepped from the host (the sanitizers
        # misreport kernels inside its conditional CUDA graph, docs/results.md "sanitizer tier"),
        # and the watchdogs told that a tool slows the kernels (cudart::under_cuda_tool).
        set_tests_properties(sanitize.${tool}.${name} PROPERTIES
          LABELS sanitize TIMEOUT 1800 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED "
          ENVIRONMENT "HEAPLAB_PASS_LOOP=host;HEAPLAB_UNDER_CUDA_TOOL=1")
      else()
        add_test(NAME sanitize.${tool}.${name}
                 COMMAND ${CMAKE_COMMAND} -E echo
                         "SKIPPED: compute-sanitizer not found at configure time")
        set_tests_properties(sanitize.${tool}.${name} PROPERTIES
          LABELS sanitize SKIP_REGULAR_EXPRESSION "SKIPPED")
      endif()
    endforeach()
  endif()
endfunction()

# A planted bug that a compute-sanitizer tool must see (docs/testing.md "Planted sanitizer
# checks"): TARGET (a program that exits 0 when it ran) is run under TOOL with --error-exitcode 97.
# EXPECT report: the check passes only if the tool exits 97 and its output matches REGEX.
# EXPECT clean:  the control; the check passes only if the tool exits 0.
# Label sanitize; tools/gpu-tier --sanitize runs the same checks from sanitize-planted.txt.
function(heaplab_add_planted_sanitizer_check name)
  cmake_parse_arguments(P "" "TARGET;TOOL;EXPECT;REGEX" "ARGS" ${ARGN})
  if(NOT P_EXPECT MATCHES "^(report|clean)$" OR (P_EXPECT STREQUAL "report" AND NOT P_REGEX))
    message(FATAL_ERROR "heaplab_add_planted_sanitizer_check(${name}): EXPECT report REGEX ... or EXPECT clean")
  endif()
  file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${CMAKE_CURRENT_BINARY_DIR}")
  list(JOIN P_ARGS " " args_text)
  set_property(GLOBAL APPEND PROPERTY HEAPLAB_PLANTED_SANITIZER_CHECKS
    "${name}|${rel}/${P_TARGET}|${args_text}|${P_TOOL}|${P_EXPECT}|${P_REGEX}")
  if(NOT HEAPLAB_COMPUTE_SANITIZER)
    add_test(NAME sanitize.planted.${name}
             COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: compute-sanitizer not found at configure time")
    set_tests_properties(sanitize.planted.${name} PROPERTIES LABELS sanitize SKIP_REGULAR_EXPRESSION "SKIPPED")
    return()
  endif()
  add_test(NAME sanitize.planted.${name}
           COMMAND ${HEAPLAB_COMPUTE_SANITIZER} --tool ${P_TOOL} --error-exitcode 97
                   $<TARGET_FILE:${P_TARGET}> ${P_ARGS})
  set_tests_properties(sanitize.planted.${name} PROPERTIES LABELS sanitize TIMEOUT 600
                       SKIP_REGULAR_EXPRESSION "SKIPPED")
  if(P_EXPECT STREQUAL "report")
    # CTest ignores the exit status when PASS_REGULAR_EXPRESSION is set: the report is the pass.
    set_tests_properties(sanitize.planted.${name} PROPERTIES PASS_REGULAR_EXPRESSION "${P_REGEX}")
  endif()
endfunction()

# heaplab_uses_any(<target> <names> <out>): TRUE in <out> when <target> links (directly or through
# any library it links, ALIAS names resolved) or depends on (add_dependencies) a target in the list
# <names>; FALSE otherwise. Call it after every target is defined (the top-level CMakeLists.txt).
function(heaplab_uses_any target names out)
  set(_todo ${target})
  set(_seen "")
  set(_found FALSE)
  while(_todo AND NOT _found)
    list(POP_FRONT _todo _t)
    if(NOT TARGET ${_t} OR _t IN_LIST _seen)
      continue()
    endif()
    get_target_property(_real ${_t} ALIASED_TARGET)
    if(_real)
      set(_t ${_real})
    endif()
    list(APPEND _seen ${_t})
    if(_t IN_LIST names)
      set(_found TRUE)
      break()
    endif()
    get_target_property(_type ${_t} TYPE)
    set(_next "")
    foreach(_property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES MANUALLY_ADDED_DEPENDENCIES)
      if(_type STREQUAL "INTERFACE_LIBRARY" AND NOT _property STREQUAL "INTERFACE_LINK_LIBRARIES")
        continue()
      endif()
      get_target_property(_libs ${_t} ${_property})
      if(_libs)
        foreach(_lib IN LISTS _libs)
          string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _lib "${_lib}")
          list(APPEND _next ${_lib})
        endforeach()
      endif()
    endforeach()
    list(APPEND _todo ${_next})
  endwhile()
  set(${out} ${_found} PARENT_SCOPE)
endfunction()

# heaplab_peer_source(<out var> <folder>): the first line of the folder's SOURCE file (what a
# tools/fetch-* script wrote: the repository and commit), or "<folder> (no SOURCE file)".
function(heaplab_peer_source out dir)
  set(_line "${dir} (no SOURCE file)")
  if(EXISTS "${dir}/SOURCE")
    file(STRINGS "${dir}/SOURCE" _line LIMIT_COUNT 1)
  endif()
  set(${out} "${_line}" PARENT_SCOPE)
endfunction()
