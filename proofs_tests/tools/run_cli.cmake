# Runs a command (the arguments after --) and checks its exit status and output:
#   cmake -DEXPECT_RC=<status>[|<status>...] -DEXPECT_REGEX=<regex> -P run_cli.cmake -- <command> <args...>
# Fails with the whole output when the status differs or stdout+stderr do not match the regex.
cmake_minimum_required(VERSION 3.25)  # IN_LIST
set(cmd "")
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
string(REPLACE "|" ";" allowed "${EXPECT_RC}")
if(NOT rc IN_LIST allowed)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}; output:\n${all}")
endif()
if(NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}':\n${all}")
endif()
message(STATUS "exit status ${rc} and output as expected:\n${all}")
