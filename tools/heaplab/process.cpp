#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace heaplab::cli {

ProcessResult run_process(std::vector<std::string> const& argv,
                          std::vector<std::string> const& extra_env,
                          std::string const& log_path,
                          std::chrono::seconds budget) {
  using clock = std::chrono::steady_clock;
  ProcessResult result;
  auto const start   = clock::now();
  pid_t const parent = getpid();
  pid_t const pid    = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    // The suite dies with us: a `heaplab run` stopped by SIGTERM or SIGHUP (timeout, Slurm,
    // a dropped ssh session) leaves no test binary running unbounded by its budget. The check
    // after prctl covers a parent that died before it.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    int const fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    for (auto const& kv : extra_env) putenv(strdup(kv.c_str()));
    std::vector<char*> args;
    for (auto const& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "heaplab: cannot execute %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  int status     = 0;
  bool term_sent = false;
  auto term_time = clock::now();
  for (;;) {
    pid_t const r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    auto const now = clock::now();
    if (!term_sent && now - start > budget) {
      kill(pid, SIGTERM);
      term_sent        = true;
      term_time        = now;
      result.timed_out = true;
    } else if (term_sent && now - term_time > std::chrono::seconds(2)) {
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.seconds = std::chrono::duration<double>(clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

}  // namespace heaplab::cli
