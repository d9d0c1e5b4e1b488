// Failure files: a failing schedule together with everything needed to reproduce and triage it
// (docs/replay.md "Failure files").
//
//   {"format": "heaplab-failure", "version": 1,
//    "created": "2026-11-22T10:11:12Z", "git_commit": "f375faa-dirty", "gpu": "none",
//    "runner": "model", "seed": 1234, "rapidcheck": {"seed": 1234, "size": 37},
//    "origin": {"command": "stress", "run_seed": 7, "case": 12, "profile": "small",
//               "heap_mib": 16},
//    "failure": {"step": 5, "kind": "invariant_violation", "check": "defrag-iff-low-fill",
//                "message": "..."},
//    "schedule": { ...a complete heaplab-schedule document (schedule/json.hpp)... }}
//
// The configuration is the embedded schedule's `config` (not repeated, so the two cannot
// disagree). This layer knows nothing of GPUs or models: runner and GPU are names, the failure
// is a kind, a check name and a message. Reading is as strict as for schedule files: unknown or
// duplicate keys, wrong types, missing fields and a failing step outside the schedule are errors
// (schedule_error) naming the file, line, column and field path; errors inside the embedded
// schedule carry the path "schedule.steps[3]...".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "heaplab/schedule/rw_schedule.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::schedule {

inline constexpr char const* kFailureFormatName      = "heaplab-failure";
inline constexpr std::uint32_t kFailureFormatVersion = 1;

/// How a run failed. Every runner reports one of these (runner/runner.hpp).
enum class FailureKind {
  invariant_violation,  // a catalog invariant or a CompactGpu obligation failed on a snapshot
  divergence,           // the implementation and the model disagree (a check::diff, an illegal
                        // placement, roots, a pass count)
  digest_mismatch,      // a check step's graph or snapshot digest differs
  hang,                 // a kernel did not finish within the watchdog's budget
  crash,                // an exception or a CUDA error while executing a step
};
char const* to_string(FailureKind kind);
std::optional<FailureKind> failure_kind_from_string(std::string const& s);

/// The RapidCheck parameters that generated the schedule: gen(rc::Random(seed), size).
struct RapidCheckParams {
  std::uint64_t seed = 0;
  std::uint32_t size = 0;
  friend bool operator==(RapidCheckParams const& a, RapidCheckParams const& b) {
    return a.seed == b.seed && a.size == b.size;
  }
};

/// Where the failure came from. Only `command` is required.
struct FailureOrigin {
  std::string command;                          // "stress", "minimize", "property", ...
  std::optional<std::uint64_t> run_seed;        // stress: the --seed of the whole run
  std::optional<std::uint64_t> case_index;      // stress: the case number within the run
  std::string profile;                          // stress: small, large, near-oom ("" when none)
  std::optional<std::uint32_t> heap_mib;        // stress: --heap-mib
  std::string minimized_from;                   // minimize: the input file ("" when none)
  std::optional<std::uint64_t> original_steps;  // minimize: steps before minimizing
  friend bool operator==(FailureOrigin const& a, FailureOrigin const& b) {
    return a.command == b.command && a.run_seed == b.run_seed && a.case_index == b.case_index &&
           a.profile == b.profile && a.heap_mib == b.heap_mib &&
           a.minimized_from == b.minimized_from && a.original_steps == b.original_steps;
  }
};

/// The first failure of the run.
struct FailureRecord {
  std::uint64_t step = 0;  // index into schedule.steps
  FailureKind kind   = FailureKind::invariant_violation;
  std::string check;    // invariant or check name ("defrag-iff-low-fill", "snapshot-diff")
  std::string message;  // one line
  friend bool operator==(FailureRecord const& a, FailureRecord const& b) {
    return a.step == b.step && a.kind == b.kind && a.check == b.check && a.message == b.message;
  }
};

/// Everything of a failure file but its schedule (shared by heap and random-walk failure files).
struct FailureHeader {
  std::string created;                 // UTC, ISO 8601: "2026-11-22T10:11:12Z"
  std::string git_commit = "unknown";  // `git describe --always --dirty` of the build
  std::string gpu        = "none";     // device name, or "none"
  std::string runner;                  // "model", "gpu", "differential-model", "rw-cpu", ...
  std::uint64_t seed = 0;              // the seed of this case
  std::optional<RapidCheckParams> rapidcheck;
  FailureOrigin origin;
  FailureRecord failure;
};
bool operator==(FailureHeader const& a, FailureHeader const& b);

/// A failure of a heap schedule (runners model, differential-model, gpu).
struct FailureFile : FailureHeader {
  Schedule schedule;
};

/// A failure of a random-walk pool schedule (runners rw-model, rw-cpu, rw-gpu; docs/rw.md
/// "Schedules and runners"): the same file format, whose embedded schedule is a
/// "heaplab-rw-schedule" document (rw_json.hpp); failure.step is the wave, and the message names
/// the thread where one is to blame.
struct RwFailureFile : FailureHeader {
  RwSchedule schedule;
};

bool operator==(FailureFile const& a, FailureFile const& b);
bool operator==(RwFailureFile const& a, RwFailureFile const& b);
inline bool operator!=(RwFailureFile const& a, RwFailureFile const& b) { return !(a == b); }
inline bool operator!=(FailureFile const& a, FailureFile const& b) { return !(a == b); }

/// Checks the fields that to_json/from_json cannot check by type: non-empty created, runner,
/// check and origin.command; failure.step < schedule.steps.size(); the schedule (validate()).
/// Throws schedule_error naming the field.
void validate(FailureFile const& file);

/// The canonical form (keys in the order of the example above).
nlohmann::ordered_json to_json(FailureFile const& file);
/// Strict reader of a parsed document (errors name the field path).
FailureFile failure_from_json(nlohmann::json const& document);
/// Parses JSON text strictly; errors carry the line and column.
FailureFile parse_failure(std::string_view text);
/// Reads a file; errors start with the file name.
FailureFile load_failure(std::filesystem::path const& file);
/// The canonical text: to_json(file).dump(2) plus a final newline.
std::string dump(FailureFile const& file);

/// What a replayable file holds: a plain schedule or a failure file.
using Replayable = std::variant<Schedule, FailureFile>;
/// Reads a schedule file or a failure file, telling them apart by their "format" field; errors
/// as load() and load_failure(); a document with another or no "format" names both formats.
Replayable load_replayable(std::filesystem::path const& file);
/// The schedule of either kind of file.
Schedule const& schedule_of(Replayable const& r);

/// The random-walk forms of the functions above (same format; the schedule is an rw schedule).
void validate(RwFailureFile const& file);
nlohmann::ordered_json to_json(RwFailureFile const& file);
RwFailureFile rw_failure_from_json(nlohmann::json const& document);
std::string dump(RwFailureFile const& file);
void write_failure(RwFailureFile const& file, std::filesystem::path const& path);
std::filesystem::path save_failure(RwFailureFile const& file,
                                   std::filesystem::path const& directory);

/// A random-walk schedule file or a random-walk failure file.
using RwReplayable = std::variant<RwSchedule, RwFailureFile>;
RwSchedule const& schedule_of(RwReplayable const& r);
/// Any file heaplab replays: heap or random-walk, schedule or failure.
using AnyReplayable = std::variant<Replayable, RwReplayable>;
/// Reads any of the four kinds, telling them apart by "format" (and, for a failure file, by its
/// schedule's "format"); errors as load_replayable.
AnyReplayable load_any_replayable(std::filesystem::path const& file);

/// "20261122T101112Z-1234.json": the file name of a failure (UTC time, no ':' for portability).
std::string failure_file_name(std::string const& created_iso, std::uint64_t seed);

/// Writes `file` into `directory` (created if missing) under failure_file_name(); if that name
/// is taken, appends "-2", "-3", ... before ".json". Writes to a temporary name and renames, so
/// a reader never sees half a file. Returns the path written. Throws std::runtime_error naming
/// the path when it cannot write.
std::filesystem::path save_failure(FailureFile const& file, std::filesystem::path const& directory);

/// Writes `file` to exactly `path` (temporary name, then rename).
void write_failure(FailureFile const& file, std::filesystem::path const& path);

/// The current UTC time as "2026-11-22T10:11:12Z".
std::string utc_now_iso8601();

}  // namespace heaplab::schedule
