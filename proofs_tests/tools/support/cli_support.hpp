// Helpers for the tests of the heaplab command line: run the tool (stdout not a terminal, or on a
// pseudo-terminal), count occurrences. The tool is found relative to the test binary, so a build
// folder copied elsewhere still works.
#pragma once

#include <gtest/gtest.h>

#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
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

/// What run_and_signal saw: the output, how the process ended, and whether the signal was sent.
struct SignalledRun {
  std::string output;
  bool exited    = false;  // exited (rather than killed by a signal)
  int status     = -1;     // exit status, or the signal that killed it
  bool sent      = false;  // the trigger appeared and the signal went out
  double seconds = 0;
};

/// Runs `executable` with `args` (stdout and stderr into one pipe) and sends `signal` once the
/// output contains `trigger`: how a test plays Ctrl-C, `timeout` (SIGTERM), a dropped ssh session
/// (SIGHUP) or `kill -9` at a chosen moment.
inline SignalledRun run_and_signal(std::string const& executable,
                                   std::vector<std::string> const& args,
                                   std::string const& trigger,
                                   int signal) {
  SignalledRun r;
  int out[2];
  if (pipe(out) != 0) return r;
  auto const start = std::chrono::steady_clock::now();
  pid_t const pid  = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    std::vector<char*> argv{const_cast<char*>(executable.c_str())};
    for (auto const& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  std::array<char, 4096> buf{};
  for (;;) {
    ssize_t const n = read(out[0], buf.data(), buf.size());
    if (n <= 0) break;
    r.output.append(buf.data(), static_cast<std::size_t>(n));
    if (!r.sent && r.output.find(trigger) != std::string::npos) {
      kill(pid, signal);
      r.sent = true;
    }
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exited  = WIFEXITED(status);
  r.status  = r.exited ? WEXITSTATUS(status) : WTERMSIG(status);
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
