// Helpers for the tests of the heaplab command line: run the tool (stdout not a terminal, or on a
// pseudo-terminal), count occurrences. The tool is found relative to the test binary, so a build
// folder copied elsewhere still works.
#pragma once

#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "heap_schedules.hpp"
#include "heaplab/families/heap/family.hpp"
#include "heaplab/runner/failure_file.hpp"
#include "heaplab/schedule/json.hpp"
#include "run_command.hpp"

#if !defined(HEAPLAB_TOOL_RELATIVE)
#error "HEAPLAB_TOOL_RELATIVE must name the heaplab executable (proofs_tests/tools/CMakeLists.txt)"
#endif

namespace heaplab::test {

/// The heaplab executable, found relative to this test binary (the build folder may have moved).
inline std::string const& tool() {
  static std::string const path = beside_test_binary(HEAPLAB_TOOL_RELATIVE);
  return path;
}

/// Runs `args` (a shell command line after the tool's path) with stdout not a terminal; `env`
/// (e.g. "CUDA_VISIBLE_DEVICES=-1 ") is prefixed to the command line.
inline Result run(std::string const& args, std::string const& env = "") {
  return run_command(env + "'" + tool() + "' " + args + " 2>&1");
}

/// Runs the tool with stdout and stderr on a pseudo-terminal.
inline Result run_on_terminal(std::vector<std::string> const& args) {
  Result r;
  int master      = -1;
  pid_t const pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return r;
  if (pid == 0) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(tool().c_str()));
    for (auto const& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(tool().c_str(), argv.data());
    _exit(127);
  }
  std::array<char, 4096> buf{};
  for (;;) {
    ssize_t const n = read(master, buf.data(), buf.size());
    if (n <= 0) break;  // EIO once the child has closed the terminal
    r.output.append(buf.data(), static_cast<std::size_t>(n));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

/// A heap failure file recorded by `runner` (origin "test") with `record`, whose schedule is the
/// data file `schedule_file` (under proofs_tests/).
inline runner::FailureFile heap_failure(std::string const& runner,
                                        runner::FailureRecord record,
                                        std::string const& schedule_file) {
  runner::FailureFile f;
  f.created        = "2026-11-22T10:11:12Z";
  f.runner         = runner;
  f.origin.command = "test";
  f.failure        = std::move(record);
  f.schedule       = heap_family::family().wrap(schedule::load(data_file(schedule_file)));
  return f;
}

/// The heap schedule of a heap failure file.
inline schedule::Schedule const& heap_schedule(runner::FailureFile const& f) {
  return heap_family::HeapFamily::unwrap(f.schedule);
}

/// A failure file from a model run whose pinned digest is wrong (proofs_tests/model/data), written
/// as `name` in `dir`.
inline std::filesystem::path digest_failure_file(TempDir const& dir,
                                                 std::string const& name = "digest.json") {
  runner::FailureFile f =
      heap_failure("model",
                   {2, runner::FailureKind::digest_mismatch, "graph-digest", "planted"},
                   "model/data/fails_digest.json");
  f.seed          = 77;
  auto const path = dir.path() / name;
  runner::write_failure(f, path);
  return path;
}

inline std::size_t count(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace heaplab::test

namespace heaplab::test {

/// Runs `args` (a shell command line after the tool's path) like run(), with limits that apply to
/// the heaplab process itself: `ulimit -v` (address space, inherited by the processes the shell
/// starts) of `memory_mib` MiB, and `timeout -s KILL` after `seconds` (status 137 when it fires).
/// `prefix` goes right before the command, e.g. "HEAPLAB_MAX_FILE_MIB=1 " or "yes | ".
inline Result run_limited(std::string const& args,
                          std::size_t memory_mib,
                          int seconds,
                          std::string const& prefix = "") {
  return run_command("ulimit -v " + std::to_string(memory_mib * 1024) + " && " + prefix +
                     "timeout -s KILL " + std::to_string(seconds) + " '" + tool() + "' " + args +
                     " 2>&1");
}

}  // namespace heaplab::test
