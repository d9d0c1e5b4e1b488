// The random-walk family's runner (docs/rw.md "Schedules and runners"): runs an RwSchedule on any
// rw::StepExecutor next to the model (model::RwModelInterpreter) and reports the first failure.
// rw-model, rw-cpu and rw-gpu are RwRunners over different executors (family.cpp).
//
// Per wave: expand the schedule step (schedule::rw_requests / the model's free selection) to an
// rw::GetPageWave or rw::FreePageWave, run it on the executor, check each request
// (rw-request-steps), feed the answers to the model (refinement: any legal page or run is accepted,
// an illegal one is rw-getpage-refinement), then snapshot the executor's words
// (rw::StepExecutor::words -> check::RwPoolSnapshot) and run the catalog (check::rw_check_all)
// against the model's owners: ownership must match exactly. The pool is also checked once after
// setup (pre-taken pages), before wave 0; a failure there is reported at step 0.
//
// Failure kinds (runner::FailureKind): a catalog invariant, rw-request-steps and
// rw-wave-result-shape are invariant_violation; rw-getpage-refinement is divergence; an
// exception of the executor (a protocol_error of FREEPAGE, an algorithm not built) is crash
// (check "exception"). A failure's message names the wave and the thread where one is to blame
// ("wave 3 thread 17: ..."); its detail (RwFailureDetail) keeps the thread.
//
// Each wave's StepReport: live = handles held, in_use / capacity = pages in use / T, and the
// counts "requests", "pages", "granted", "nulls", "out_of_pages", "exhaustions", "freed",
// "walk_steps" (sum of X_i).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "heaplab/runner/family.hpp"
#include "heaplab/rw/step_executor.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::rw_family {

using runner::Failure;
using runner::FailureKind;
using runner::RunOutcome;
using runner::StepCallback;
using runner::StepReport;
using runner::Support;

namespace checks {
using runner::checks::kException;
/// Each request's step count X_i: 1..max_steps for an active thread (RW sec. 3.2.1), 0 and no
/// page for an inactive one; a null of rw / rw-bm took exactly max_steps (the bound was reached).
inline constexpr char const* kRwRequestSteps = "rw-request-steps";       // invariant_violation
inline constexpr char const* kRwRefinement   = "rw-getpage-refinement";  // divergence
inline constexpr char const* kRwResultShape  = "rw-wave-result-shape";   // invariant_violation
}  // namespace checks

/// The pool of a schedule as rw::PoolConfig.
rw::PoolConfig to_pool_config(schedule::RwPool const& pool);

/// What an rw failure carries beyond its record: the thread to blame, where there is one.
struct RwFailureDetail final : runner::FailureDetail {
  std::optional<std::uint32_t> thread;
  [[nodiscard]] std::string report(Failure const& failure,
                                   runner::ReportOptions const& options) const override;
};
/// The thread an rw failure blames (nullopt when none, or not an rw failure).
std::optional<std::uint32_t> thread_of(Failure const& failure);

/// Makes the executor of one run (a fresh pool in its initial state).
using RwExecutorFactory = std::function<std::unique_ptr<rw::StepExecutor>(rw::PoolConfig const&)>;
/// "" when the executor runs algorithm a in this tree, else why not.
using RwSupport = std::function<std::string(core::RwAlgorithm)>;

class RwRunner final : public runner::Runner {
 public:
  RwRunner(std::string name,
           RwExecutorFactory make,
           RwSupport support,
           bool deterministic,
           std::string device = "none");

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] bool deterministic() const override { return deterministic_; }
  [[nodiscard]] std::string device_name() const override { return device_; }

  /// "" when this runner can run every wave of `s`, else why not (the first unsupported one).
  [[nodiscard]] std::string unsupported(schedule::RwSchedule const& s) const;
  /// From a fresh pool, every wave in order; the first failure ends the run. Throws
  /// schedule_error for an invalid schedule and core::precondition_error for an unsupported one;
  /// failures of the executor never escape as exceptions (they are crash failures).
  RunOutcome run(schedule::RwSchedule const& s, StepCallback const& on_step = {});

  RunOutcome run(runner::AnySchedule const& s, StepCallback const& on_step = {}) override;
  [[nodiscard]] Support supports(runner::AnySchedule const& s) const override;

 private:
  std::string name_;
  RwExecutorFactory make_;
  RwSupport support_;
  bool deterministic_;
  std::string device_;
};

}  // namespace heaplab::rw_family
