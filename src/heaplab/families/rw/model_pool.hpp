// ModelPool: the model-only random-walk pool executor of the runner `rw-model` (docs/rw.md
// "Schedules and runners"). A sequential, deterministic rw::StepExecutor written for clarity:
// a request of n pages takes the first n consecutive free pages at or after a random start
// (rw::thread_rng(seed, i).below(T)), in thread order, and reports 1 step (max_steps and no page
// when no such run exists). It supports every algorithm (their answers are all legal runs), so
// `heaplab stress --runner rw-model` checks the schedule layer, the model interpreter, the
// differential runner and the catalog against each other everywhere, like `differential-model`
// does for the heap.
#pragma once

#include <string>
#include <vector>

#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw_family {

class ModelPool final : public rw::StepExecutor {
 public:
  explicit ModelPool(rw::PoolConfig const& config);
  [[nodiscard]] rw::PoolConfig const& config() const override { return config_; }
  [[nodiscard]] std::string name() const override { return "model-pool"; }
  void mark_used(std::vector<std::uint32_t> const& pages) override;
  rw::AllocResult allocate(rw::GetPageWave const& wave) override;
  void free(rw::FreePageWave const& wave) override;
  [[nodiscard]] rw::PoolWords words() const override;

 private:
  /// The first page of n free consecutive pages at or after `start` (then from 0), or kNoPage.
  [[nodiscard]] std::uint32_t find_run(std::uint32_t start, std::uint32_t n) const;

  rw::PoolConfig config_;
  std::vector<bool> used_;
};

}  // namespace heaplab::rw_family
