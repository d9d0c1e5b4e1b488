// Failure files: a failing schedule of any family together with everything needed to reproduce
// and triage it (docs/replay.md "Failure files"). One format for every family:
//
//   {"format": "heaplab-failure", "version": 2, "family": "heap",
//    "created": "2026-11-22T10:11:12Z", "git_commit": "f375faa-dirty", "gpu": "none",
//    "runner": "model", "seed": 1234, "rapidcheck": {"seed": 1234, "size": 37},
//    "origin": {"command": "stress", "run_seed": 7, "case": 12, "profile": "small",
//               "heap_mib": 16},
//    "failure": {"step": 5, "kind": "invariant_violation", "check": "defrag-iff-low-fill",
//                "message": "..."},
//    "schedule": { ...a complete schedule document of the family (its own "format")... }}
//
// Version 1 files (written before families had names) have no "family": it is the family whose
// schedule format the embedded schedule has. Reading is strict: unknown or duplicate keys, wrong
// types, missing fields, an unknown family, a schedule of another family and a failing step
// outside the schedule are schedule_errors naming the file, line, column and field path; errors
// inside the embedded schedule carry the path "schedule.steps[3]...".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "heaplab/runner/family.hpp"
#include "heaplab/runner/outcome.hpp"

namespace heaplab::runner {

inline constexpr char const* kFailureFormatName      = "heaplab-failure";
inline constexpr std::uint32_t kFailureFormatVersion = 2;

/// The RapidCheck parameters that generated the schedule (the family's generate(request, seed,
/// size)).
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
  std::string profile;                          // stress: the profile ("" when none)
  std::optional<std::uint32_t> heap_mib;        // stress: --heap-mib
  std::string minimized_from;                   // minimize: the input file ("" when none)
  std::optional<std::uint64_t> original_steps;  // minimize: steps before minimizing
  friend bool operator==(FailureOrigin const& a, FailureOrigin const& b) {
    return a.command == b.command && a.run_seed == b.run_seed && a.case_index == b.case_index &&
           a.profile == b.profile && a.heap_mib == b.heap_mib &&
           a.minimized_from == b.minimized_from && a.original_steps == b.original_steps;
  }
};

struct FailureFile {
  std::string created;                 // UTC, ISO 8601: "2026-11-22T10:11:12Z"
  std::string git_commit = "unknown";  // the build's commit (environment.hpp)
  std::string gpu        = "none";     // device name, or "none"
  std::string runner;                  // the runner that failed ("model", "gpu", "rw-cpu", ...)
  std::uint64_t seed = 0;              // the seed of this case
  std::optional<RapidCheckParams> rapidcheck;
  FailureOrigin origin;
  FailureRecord failure;
  /// The failing schedule; its family is the file's family.
  AnySchedule schedule;

  [[nodiscard]] Family const& family() const { return schedule.family(); }
  /// "gpu: divergence, check roots" (replay's "recorded" column).
  [[nodiscard]] std::string recorded() const;
};
/// Same header and the same schedule (by its canonical JSON).
bool operator==(FailureFile const& a, FailureFile const& b);
inline bool operator!=(FailureFile const& a, FailureFile const& b) { return !(a == b); }

/// The header every stress failure file starts with: when, which build and device, which runner,
/// which case of which run (origin "stress").
FailureFile stress_failure_file(std::string const& device,
                                std::string const& runner,
                                std::uint64_t case_seed,
                                RapidCheckParams const& rapidcheck,
                                std::uint64_t run_seed,
                                std::uint64_t case_index);

/// Checks what the JSON types cannot: non-empty created, runner, check and origin.command;
/// failure.step below the schedule's steps. Throws schedule::schedule_error naming the field.
void validate(FailureFile const& file);

/// The canonical form (keys in the order of the example above).
nlohmann::ordered_json to_json(FailureFile const& file);
/// The canonical text: to_json(file).dump(2) plus a final newline.
std::string dump(FailureFile const& file);
/// Strict reader of a parsed document (errors name the field path); the family comes from the
/// registry (registry.hpp).
FailureFile failure_from_json(nlohmann::json const& document);

/// What heaplab replays, minimizes and shows: a schedule file of some family, or a failure file.
struct Replayable {
  AnySchedule schedule;
  std::optional<FailureFile> failure_file;  // set for a failure file (its schedule is `schedule`)
  [[nodiscard]] Family const& family() const { return schedule.family(); }
};

/// Reads JSON text as a failure file or as the schedule file of any registered family, telling
/// them apart by "format"; errors carry the field path, line and column, and name both kinds of
/// file (and every family's format) when the format is unknown.
Replayable parse_replayable(std::string_view text);
/// Reads a file (bounded: schedule::read_text_file); errors start with the file name.
Replayable load_replayable(std::filesystem::path const& file);
/// Parses JSON text that must be a failure file; errors carry the field path, line and column.
FailureFile parse_failure(std::string_view text);
/// As load_replayable, for a file that must be a failure file.
FailureFile load_failure(std::filesystem::path const& file);

/// "20261122T101112Z-1234.json": the file name of a failure (UTC time, no ':' for portability).
std::string failure_file_name(std::string const& created_iso, std::uint64_t seed);

/// Writes `file` into `directory` (created if missing) under failure_file_name(), or with "-2",
/// "-3", ... before ".json" when that name is taken. The text is complete and synced before it
/// gets its name and no existing file is ever replaced (schedule::write_new_text_file), so
/// parallel shards and processes never overwrite each other and no reader sees half a file.
/// Returns the path written; throws std::runtime_error naming the path when it cannot write.
std::filesystem::path save_failure(FailureFile const& file, std::filesystem::path const& directory);

/// Writes `file` to exactly `path` (temporary name, then rename).
void write_failure(FailureFile const& file, std::filesystem::path const& path);

/// The current UTC time as "2026-11-22T10:11:12Z".
std::string utc_now_iso8601();

}  // namespace heaplab::runner
