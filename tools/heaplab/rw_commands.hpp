// The random-walk pool's side of heaplab stress, replay, minimize and show (docs/rw.md
// "Schedules and runners", docs/cli.md): the rw runners (rw-model, rw-cpu, rw-gpu) on rw
// schedule files and rw failure files. stress.cpp, replay.cpp and minimize.cpp hand over here
// when the runner or the file is a random-walk one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/schedule/failure_file.hpp"

namespace heaplab::cli {

struct RwStressArgs {
  std::string runner;
  double seconds      = 60;
  std::uint64_t seed  = 0;
  bool seed_given     = false;
  std::uint64_t cases = 0;
  std::optional<std::uint64_t> only_case;
  std::string out_dir      = "failures";
  std::size_t max_failures = 10;
  double progress_every    = 10;
  bool quiet               = false;
  unsigned os_threads      = 0;  // --jobs: OS threads per wave of rw-cpu
  bool dump                = false;
};
/// `heaplab stress --runner rw-*`: exit status as docs/cli.md says for stress.
int rw_stress(RwStressArgs const& args);

struct RwReplayArgs {
  std::vector<std::string> runners;  // --runner (explicit), else the default set
  bool model_only = false;           // --model: rw-model alone
};
struct RwReplayOutcome {
  int status = 2;
  std::string verdict;   // "still fails", "fails differently", "fails", "not checked", ...
  std::string recorded;  // "rw-cpu: divergence, check rw-getpage-refinement" or "schedule"
  std::vector<std::string> sides;  // "rw-cpu: fails"
};
/// Replays an rw file on the rw runners and prints as replay does for heap files.
RwReplayOutcome rw_replay(std::string const& file,
                          schedule::RwReplayable const& loaded,
                          RwReplayArgs const& args,
                          bool detailed);

struct RwMinimizeArgs {
  std::string file;
  std::string runner;        // default: the failure file's, else rw-model
  std::string out;           // checked by the caller
  unsigned reruns      = 0;  // default: 1 for deterministic runners, 5 otherwise
  std::size_t max_runs = 20000;
  double seconds       = 600;
  bool quiet           = false;
};
int rw_minimize(RwMinimizeArgs const& args, schedule::RwReplayable const& loaded);

/// `heaplab show` of an rw file.
int rw_show(std::string const& file, schedule::RwReplayable const& loaded, bool as_json);

}  // namespace heaplab::cli
