// rw::DevicePool: the random-walk page pool in device memory, a StepExecutor (step_executor.hpp)
// whose waves are kernel launches (docs/rw.md "The GPU pool"). Host API only: no CUDA in this
// header (the state lives behind a pointer to an implementation in device_pool.cu), so plain C++
// code (runners, tools) can hold one.
//
//   rw::PoolConfig c;
//   c.num_pages  = 1u << 20;
//   c.page_bytes = 256;
//   rw::DevicePool pool(c);                 // every page free, bits >= T set, LockMap clear
//   pool.preset_free(c.num_pages / 100, 7); // exactly 1 % free, at random places (on the GPU)
//   rw::AllocResult r = pool.allocate({core::RwAlgorithm::rw_bm, std::vector<std::uint32_t>(5000,
//   1)}); float ms = pool.last_wave_ms();         // the allocation kernel alone (CUDA events)
//   rw::PoolWords w = pool.words();         // for check::rw_snapshot / rw_check_all
//
// Errors: bad input is a core::precondition_error thrown on the host before any launch (T = 0,
// a bad word width, a wave with pages[i] > 1 for a one-page algorithm, a free of a page that is
// not in use while free checks are on, a bad block size, an RW_malloc run longer than
// max_run_pages); a CUDA failure is a cudart::cuda_error.
// The walks are bounded by max_steps, so no wave hangs.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/step_executor.hpp"
#include "heaplab/rw/wave_checks.hpp"

namespace heaplab::rw {

struct DevicePoolOptions {
  /// Before a free wave, copy the used words back and check that every named page is in use
  /// (and named once): a bad free is then a precondition_error instead of a device trap.
  bool check_frees = true;
};

class DevicePool final : public StepExecutor {
 public:
  /// Validates `config` (precondition_error naming the bad field) and allocates the used bitmap
  /// and the LockMap in device memory, in the initial state.
  explicit DevicePool(PoolConfig const& config, DevicePoolOptions options = {});
  ~DevicePool() override;
  DevicePool(DevicePool&&) noexcept;
  DevicePool& operator=(DevicePool&&) noexcept;
  DevicePool(DevicePool const&)            = delete;
  DevicePool& operator=(DevicePool const&) = delete;

  [[nodiscard]] PoolConfig const& config() const override;
  [[nodiscard]] std::string name() const override;
  /// Setup (no wave running): these pages become used. Each must be < T and free.
  void mark_used(std::vector<std::uint32_t> const& pages) override;
  /// One kernel launch: thread i with pages[i] != 0 asks for pages[i] pages walking with
  /// thread_rng(wave.seed, i); pages[i] == 0 does not call GETPAGE.
  AllocResult allocate(GetPageWave const& wave) override;
  /// One kernel launch: thread i frees count[i] pages from first[i] (count 0: inactive).
  void free(FreePageWave const& wave) override;
  [[nodiscard]] PoolWords words() const override;

  /// Back to the initial state (every page free, LockMap clear), on the device.
  void reset();
  /// Every page used except exactly `free_pages` of them, PagePermutation(T, seed)(0 ..
  /// free_pages - 1) (preset.hpp): computed on the device, O(T / w + A). LockMap clear.
  void preset_free(std::uint32_t free_pages, std::uint64_t seed);
  /// Milliseconds of the last allocate / free kernel (CUDA events around the launch alone).
  [[nodiscard]] float last_wave_ms() const;

  /// The device storage for kernels written elsewhere (the benchmarks' probe kernel), valid while
  /// the pool lives. storage32 needs word_bits 32, storage64 word_bits 64 (precondition_error).
  [[nodiscard]] PoolStorage<std::uint32_t> storage32() const;
  [[nodiscard]] PoolStorage<std::uint64_t> storage64() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace heaplab::rw
