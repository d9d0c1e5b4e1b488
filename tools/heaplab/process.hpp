// Running a child process with its output captured to a file and a wall-clock budget.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace heaplab::cli {

struct ProcessResult {
  int exit_code  = -1;     // exit status, or 128 + signal when killed by a signal
  bool timed_out = false;  // killed because it ran past its budget
  double seconds = 0.0;
};

/// Runs argv[0] with argv, extra environment entries ("NAME=value") added to ours, stdout and
/// stderr appended to log_path. A child still running after `budget` gets SIGTERM, then SIGKILL
/// two seconds later, and is reported as timed out. The child gets SIGTERM when this process
/// dies (PR_SET_PDEATHSIG), so no suite outlives a `heaplab run` that was killed.
ProcessResult run_process(std::vector<std::string> const& argv,
                          std::vector<std::string> const& extra_env,
                          std::string const& log_path,
                          std::chrono::seconds budget);

}  // namespace heaplab::cli
