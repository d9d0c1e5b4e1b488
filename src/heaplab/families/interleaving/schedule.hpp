// Schedules of the interleaving family (docs/explorer.md "Failure files"): one controlled run of
// one of the explorer's workloads, and how its logical threads interleave.
//
//   {"format": "heaplab-interleaving", "version": 1, "description": "...",
//    "workload": {"kind": "heap", "seed": 7},
//    "memory_model": "sequential_consistency", "step_budget": 50000,
//    "strategy": {"name": "pct", "seed": 7, "depth": 1, "step_estimate": 150},
//    "steps": []}
//
// How the threads interleave is either a seeded strategy (random, or PCT with depth d and step
// estimate k; explore::RandomStrategy, explore::PctStrategy) and no steps: a generated schedule,
// whose interleaving the strategy chooses while the run goes; or no strategy and an explicit list
// of decisions, the steps: {"thread": t} at a scheduling decision (the thread that runs next), and
// in the weak-memory mode {"read": k} at a load that may read more than one store (it reads the
// store k stores older than the latest). The run follows the decisions, then continues without
// preemption (explore::replay_schedule, explore::PrefixStrategy). A decision never refers to
// another by index, so any subset of the steps is a valid schedule (ddmin may drop any); where a
// decision does not fit the program (a thread that cannot run there), the list ends and the run
// goes on without preemption (explore_runner.hpp).
//
// The workload is a pure function of its kind and seed (workloads/programs.hpp; turnover ignores
// the seed), so a schedule with decisions is an exact reproduction of one run.
// "stale_read_bound" (release_acquire only, optional) is the exhaustive search's bound on loads
// that read an older store: a schedule that records it may not have more read decisions with
// k > 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heaplab/explore/memory_model.hpp"
#include "heaplab/families/interleaving/workloads/workload_kind.hpp"

namespace heaplab::interleaving_family {

using workloads::WorkloadKind;

inline constexpr char const* kFormatName      = "heaplab-interleaving";
inline constexpr std::uint32_t kFormatVersion = 1;

/// Limits of the file format (a hostile file cannot exhaust memory or run forever).
inline constexpr std::uint64_t kMaxStepBudget = 10'000'000;  // atomic operations of one run
inline constexpr std::size_t kMaxDecisions    = 1u << 22;    // steps of a schedule
inline constexpr std::uint32_t kMaxThread     = 1u << 16;    // a thread index in a decision
inline constexpr std::uint32_t kMaxPctDepth   = 64;

/// The default step budget (explore::RunOptions) and PCT step estimate (ExploreOptions).
inline constexpr std::uint64_t kDefaultStepBudget = 50'000;
inline constexpr std::uint64_t kDefaultPctSteps   = 150;
inline constexpr std::uint32_t kDefaultPctDepth   = 3;

/// A seeded strategy: random (uniform among runnable threads) or PCT (Burckhardt et al.,
/// ASPLOS 2010) with depth and step estimate; read choices from the same seed.
struct SeededStrategy {
  enum class Name : std::uint8_t { random, pct };
  Name name                   = Name::random;
  std::uint64_t seed          = 1;
  std::uint32_t depth         = kDefaultPctDepth;  // pct only
  std::uint64_t step_estimate = kDefaultPctSteps;  // pct only
  friend bool operator==(SeededStrategy const& a, SeededStrategy const& b) {
    return a.name == b.name && a.seed == b.seed &&
           (a.name == Name::random || (a.depth == b.depth && a.step_estimate == b.step_estimate));
  }
};

/// One decision of a run: the thread that runs next, or (weak-memory mode) which store a load
/// reads, as the number of newer stores it skips.
struct Decision {
  enum class Kind : std::uint8_t { thread, read };
  Kind kind           = Kind::thread;
  std::uint32_t value = 0;
  friend bool operator==(Decision const& a, Decision const& b) {
    return a.kind == b.kind && a.value == b.value;
  }
  /// As explore::DecisionRecord::chosen and PrefixStrategy's prefix: t, or kReadChoice | k.
  [[nodiscard]] std::uint32_t encoded() const;
  [[nodiscard]] static Decision decode(std::uint32_t chosen);
};

struct InterleavingSchedule {
  std::string description;
  WorkloadKind workload             = WorkloadKind::heap;
  std::uint64_t workload_seed       = 1;
  explore::MemoryModel memory_model = explore::MemoryModel::sequential_consistency;
  std::uint64_t step_budget         = kDefaultStepBudget;
  std::optional<std::uint32_t> stale_read_bound;  // release_acquire only
  std::optional<SeededStrategy> strategy;         // set: a generated schedule (no steps)
  std::vector<Decision> steps;                    // the decisions (no strategy)

  friend bool operator==(InterleavingSchedule const& a, InterleavingSchedule const& b);
};

/// Throws schedule::schedule_error naming the field for a schedule that breaks the rules above
/// (a strategy with steps, read decisions outside release_acquire, a stale-read bound outside it
/// or exceeded, values beyond the limits).
void validate(InterleavingSchedule const& s);

/// The canonical document (keys in the order of the example above; "description",
/// "stale_read_bound" and "strategy" only when set).
nlohmann::ordered_json to_json(InterleavingSchedule const& s);
/// Strict reader (schedule/strict_json.hpp): errors name the field path.
InterleavingSchedule from_json(nlohmann::json const& document);

/// "random(seed=7)", "pct(depth=1,steps=150,seed=7)": explore::Strategy::describe()'s words.
std::string describe(SeededStrategy const& s);
/// "T1", "read r2 (skips 2 newer stores)".
std::string describe(Decision const& d);
/// The decisions run-length encoded as heaplab_explore --schedule takes them ("0*12,r1*1,1*5").
std::string schedule_text(std::vector<Decision> const& steps);
/// The decisions as explore's choices (Decision::encoded, in order).
std::vector<std::uint32_t> encoded(std::vector<Decision> const& steps);

/// "sequential_consistency" or "release_acquire", or nullopt.
std::optional<explore::MemoryModel> parse_memory_model(std::string const& name);

}  // namespace heaplab::interleaving_family
