// Running a shell command in a test: its exit status and everything it printed (stdout and
// stderr together when the command says `2>&1`), and how long it took. One implementation for
// every test that drives a tool (the heaplab CLI, heaplab_explore, a mutant build).
#pragma once

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace heaplab::test {

struct Result {
  int status = -1;     // the exit status; 128 + N for a command killed by signal N
  std::string output;  // what the command printed on the pipe
  double seconds = 0;  // wall time
};

/// A file relative to this test binary's folder (a tool the build put beside it), so that a build
/// folder copied elsewhere still works.
inline std::string beside_test_binary(std::string const& relative) {
  std::error_code ec;
  auto const self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / relative).lexically_normal().string();
}

/// Runs `command` with /bin/sh (popen) and reads its stdout to the end.
inline Result run_command(std::string const& command) {
  Result r;
  auto const start = std::chrono::steady_clock::now();
  FILE* pipe       = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::size_t const n = std::fread(buf.data(), 1, buf.size(), pipe))
    r.output.append(buf.data(), n);
  int const status = pclose(pipe);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status  = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace heaplab::test
