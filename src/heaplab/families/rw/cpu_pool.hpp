// CpuThreadsPool: the random-walk pool on free-running CPU threads (docs/rw.md "Schedules and
// runners"), a rw::StepExecutor over rw::HostPool and core::HostAtomics, so the very code the GPU
// runs (rw/page_pool.hpp) runs here on std::threads and under ThreadSanitizer.
//
// A wave runs on a small set of OS threads (os_threads, default min(4, hardware threads)): OS
// thread t takes a contiguous slice of the wave's threads and runs them one after another, so a
// wave of 100K threads needs no 100K OS threads. Thread i of the wave walks with
// rw::thread_rng(seed, i) whichever OS thread runs it. Results go to index i of the result
// vectors, which no other OS thread writes; the join publishes them to the caller.
//
// Algorithms: rw (RW Alg. 1) and rw-bm (RW sec. 4.1) per thread; corw (RW Alg. 2) and rw-malloc
// (RW Alg. 3) as one lock-step warp (rw/corw.hpp, rw/rw_malloc.hpp) per 32 consecutive threads,
// as the GPU's warps are; OS threads take slices of whole warps. Bad waves are the shared
// rw::validate_alloc_wave / validate_free_wave precondition errors.
//
// Linearization points and memory orders are those of rw/page_pool.hpp (docs/rw.md table): a
// claim is the acquire fetch_or whose old value had the bit clear, a free the release
// fetch_and. Nothing else is shared between the OS threads during a wave.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw_family {

class CpuThreadsPool final : public rw::StepExecutor {
 public:
  /// os_threads 0: min(4, std::thread::hardware_concurrency()).
  explicit CpuThreadsPool(rw::PoolConfig const& config, unsigned os_threads = 0);
  ~CpuThreadsPool() override;
  CpuThreadsPool(CpuThreadsPool const&)            = delete;
  CpuThreadsPool& operator=(CpuThreadsPool const&) = delete;

  [[nodiscard]] rw::PoolConfig const& config() const override { return config_; }
  [[nodiscard]] std::string name() const override { return "cpu-threads"; }
  void mark_used(std::vector<std::uint32_t> const& pages) override;
  rw::AllocResult allocate(rw::GetPageWave const& wave) override;
  void free(rw::FreePageWave const& wave) override;
  [[nodiscard]] rw::PoolWords words() const override;
  [[nodiscard]] unsigned os_threads() const { return os_threads_; }

 private:
  struct Impl;
  rw::PoolConfig config_;
  unsigned os_threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace heaplab::rw_family
