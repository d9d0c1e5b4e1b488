// The malloc family's runner (docs/malloc.md "Runners"): runs a MallocSchedule on a Subject and
// checks the catalog (catalog.hpp) after every step. Every runner of the family is a MallocRunner
// over a different subject: malloc-model (the reference allocator), malloc-cuda, malloc-rw-gpu,
// the peers, and the planted subjects of the tests.
//
// Per step:
//   alloc, fill  the plan (sizes, ids) goes to the subject, which writes each grant's cookie at
//                once; then every live allocation's content is read back (verify);
//   free         every live allocation is verified, the selected ones are freed (thread i frees
//                the i-th, oldest first), the rest verified again (a free must not touch them);
//   touch        every live allocation is written at a new epoch and verified.
// Then the catalog runs on the state (what the subject answered, what its memory holds) and, when
// it holds, the step's grants join the model's live set. An exception of the subject is a crash
// of the step (check "exception"), a subject_hang a hang (check "watchdog").
//
// Each step's StepReport: live = allocations live, in_use = their bytes, capacity = the pool;
// counts "requests", "granted", "nulls", "bytes" (granted), "freed", "touched", "fills",
// "null_then_success" (a fill's null after which the same request succeeded at once, with nothing
// freed: a finding, not a failure) and, per fill from an empty pool of size S, "fill.S.bytes"
// and "fill.S.pool" (the utilization at the first null, summed).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "heaplab/families/malloc/schedule.hpp"
#include "heaplab/families/malloc/subject.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::malloc_family {

/// Makes the subject of a runner (once; reset() starts each run).
using SubjectFactory = std::function<std::unique_ptr<Subject>()>;

class MallocRunner final : public runner::Runner {
 public:
  MallocRunner(std::string name, SubjectFactory const& make, bool deterministic);

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] bool deterministic() const override { return deterministic_; }
  /// Every valid schedule whose pool is at least the subject's min_pool and, for a subject with a
  /// max_demand, whose demand_bytes keep to it.
  [[nodiscard]] runner::Support supports(runner::AnySchedule const& s) const override;
  [[nodiscard]] runner::Support supports(MallocSchedule const& s) const;
  [[nodiscard]] bool usable() const override { return subject_->usable(); }
  [[nodiscard]] std::string device_name() const override { return subject_->device_name(); }
  /// What the subject declares (its policies, alignment, smallest pool).
  [[nodiscard]] SubjectInfo subject_info() const { return subject_->info(); }

  runner::RunOutcome run(MallocSchedule const& s, runner::StepCallback const& on_step = {});
  runner::RunOutcome run(runner::AnySchedule const& s,
                         runner::StepCallback const& on_step = {}) override;

 private:
  std::string name_;
  std::unique_ptr<Subject> subject_;
  bool deterministic_;
};

}  // namespace heaplab::malloc_family
