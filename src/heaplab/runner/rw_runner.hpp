// The differential runner of the random-walk page pool (docs/rw.md "Schedules and runners"):
// runs an RwSchedule on any rw::PoolBackend next to the model (model::RwModelInterpreter) and
// reports the first failure.
//
// Per wave: expand the schedule step (schedule::rw_requests / the model's free selection) to an
// rw::AllocWave or rw::FreeWave, run it on the backend, check each request (rw-request-steps),
// feed the answers to the model (refinement: any legal page or run is accepted, an illegal one is
// rw-getpage-refinement), then snapshot the backend's words (rw::PoolBackend::words ->
// check::RwPoolSnapshot) and run the catalog (check::rw_check_all) against the model's owners:
// ownership must match exactly. The pool is also checked once after setup (pre-taken pages),
// before wave 0; a failure there is reported at step 0.
//
// Failure kinds (schedule::FailureKind): a catalog invariant, rw-request-steps and
// rw-wave-result-shape are invariant_violation; rw-getpage-refinement is divergence; an
// exception of the backend (a protocol_error of FREEPAGE, an algorithm not built) is crash
// (check "exception"). A failure names the wave, the thread where one is to blame, the check and
// a message.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/runner/runner.hpp"
#include "heaplab/rw/backend.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::runner {

namespace checks {
/// Each request's step count X_i: 1..max_steps for an active thread (RW sec. 3.2.1), 0 and no
/// page for an inactive one; a null of rw / rw-bm took exactly max_steps (the bound was reached).
inline constexpr char const* kRwRequestSteps = "rw-request-steps";       // invariant_violation
inline constexpr char const* kRwRefinement   = "rw-getpage-refinement";  // divergence
inline constexpr char const* kRwResultShape  = "rw-wave-result-shape";   // invariant_violation
}  // namespace checks

/// The algorithm of a schedule step as the pool backends know it.
rw::Algorithm to_rw(schedule::RwAlgorithm a);
/// The pool of a schedule as rw::PoolConfig.
rw::PoolConfig to_pool_config(schedule::RwPool const& pool);

/// Makes the backend of one run (a fresh pool in its initial state).
using RwBackendFactory = std::function<std::unique_ptr<rw::PoolBackend>(rw::PoolConfig const&)>;
/// "" when the backend runs algorithm a in this tree, else why not.
using RwSupport = std::function<std::string(rw::Algorithm)>;

struct RwFailure {
  std::size_t step = 0;                 // the wave (0 also for a failure right after setup)
  std::optional<std::uint32_t> thread;  // the thread to blame, where there is one
  schedule::FailureKind kind = schedule::FailureKind::invariant_violation;
  std::string check;
  std::string message;
  std::vector<check::Violation> violations;  // catalog failures: every violation
};

/// What a run did, summed over its waves.
struct RwRunStats {
  std::uint64_t waves          = 0;
  std::uint64_t requests       = 0;  // active threads
  std::uint64_t pages          = 0;  // pages handed out
  std::uint64_t out_of_pages   = 0;  // nulls with nothing (large enough) free
  std::uint64_t exhaustions    = 0;  // nulls with free pages left (the bounded walk gave up)
  std::uint64_t freed          = 0;  // handles freed
  std::uint64_t walk_steps     = 0;  // sum of X_i
  std::uint32_t max_walk_steps = 0;  // the largest X_i
  void add(RwRunStats const& o);
};

/// One wave as it ran (for replay's one line per wave).
struct RwWaveReport {
  std::size_t step = 0;
  std::string description;
  bool ok                  = true;
  std::uint64_t held       = 0;  // handles held after the wave
  std::uint64_t used_pages = 0;  // pages in use after the wave (pre-taken included)
  std::uint64_t granted    = 0;  // alloc: requests that got pages
  std::uint64_t nulls      = 0;  // alloc: requests that got none
  std::uint64_t freed      = 0;  // free: handles freed
  std::uint32_t max_steps  = 0;  // alloc: the largest X_i
};
using RwWaveCallback = std::function<void(RwWaveReport const&)>;

struct RwRunOutcome {
  std::size_t steps_run = 0;
  std::optional<RwFailure> failure;
  RwRunStats stats;
};

class RwRunner {
 public:
  RwRunner(std::string name,
           RwBackendFactory make,
           RwSupport support,
           bool deterministic,
           std::string device = "none");
  [[nodiscard]] std::string const& name() const { return name_; }
  [[nodiscard]] bool deterministic() const { return deterministic_; }
  [[nodiscard]] std::string const& device_name() const { return device_; }
  /// "" when this runner can run every wave of `s`, else why not (the first unsupported one).
  [[nodiscard]] std::string unsupported(schedule::RwSchedule const& s) const;
  /// From a fresh pool, every wave in order; the first failure ends the run. Throws
  /// schedule_error for an invalid schedule and rw_unsupported_error for an unsupported one;
  /// failures of the backend never escape as exceptions (they are crash failures).
  RwRunOutcome run(schedule::RwSchedule const& s, RwWaveCallback const& on_wave = {});

 private:
  std::string name_;
  RwBackendFactory make_;
  RwSupport support_;
  bool deterministic_;
  std::string device_;
};

/// A schedule the runner cannot run here (RwRunner::unsupported said why).
class rw_unsupported_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "wave 3 thread 17: ..." / "wave 3: ..." (the failure's one-line summary).
std::string describe(RwFailure const& f);

}  // namespace heaplab::runner
