# One compile-fail case of dsl_cases.cpp (run by CTest with cmake -P):
#   -DCXX=<compiler> -DSOURCE=<file> -DINCLUDE=<dir> -DCASE=<n> -DEXPECT=<text>
# The control (without HEAPLAB_BREAK) must compile with -Wall -Wextra -Werror; the broken variant
# must fail and its diagnostics must contain EXPECT.
foreach(var CXX SOURCE INCLUDE CASE EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_fail.cmake: ${var} is not set")
  endif()
endforeach()
set(flags -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I${INCLUDE} -DHEAPLAB_CASE=${CASE})

execute_process(COMMAND ${CXX} ${flags} ${SOURCE}
                RESULT_VARIABLE control_rc ERROR_VARIABLE control_err OUTPUT_QUIET)
if(NOT control_rc EQUAL 0)
  message(FATAL_ERROR "case ${CASE}: the control (without HEAPLAB_BREAK) must compile:\n${control_err}")
endif()

execute_process(COMMAND ${CXX} ${flags} -DHEAPLAB_BREAK ${SOURCE}
                RESULT_VARIABLE broken_rc ERROR_VARIABLE broken_err OUTPUT_QUIET)
if(broken_rc EQUAL 0)
  message(FATAL_ERROR "case ${CASE}: the broken declaration compiled; it must be rejected")
endif()
string(FIND "${broken_err}" "${EXPECT}" where)
if(where EQUAL -1)
  message(FATAL_ERROR "case ${CASE}: rejected, but the diagnostics lack \"${EXPECT}\":\n${broken_err}")
endif()
message(STATUS "case ${CASE}: control compiles; broken variant rejected with \"${EXPECT}\"")
