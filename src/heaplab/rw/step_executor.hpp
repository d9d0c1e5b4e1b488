// A random-walk page pool as the runners see it (docs/rw.md "Waves"): allocation and free waves
// of many threads against one pool, whatever executes them. Host code, plain C++17; the GPU
// implementation (rw::DevicePool) and the CPU one (free-running threads) both implement it, so
// the schedule runner, stress, replay and the benchmarks drive either through one interface.
//
// A wave is one kernel launch (GPU) or one batch of threads (CPU): thread i asks for
// `pages[i]` pages. 0 means thread i does not take part (it is inactive, which is how a wave
// expresses divergence: the threads that call GETPAGE are a subset of each warp). RW, RW-BM and
// CoRW hand out one page per request (pages[i] is 0 or 1); RW_malloc hands out a run of
// pages[i] consecutive pages (RW Alg. 3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heaplab/core/rw_algorithm.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw {

/// One allocation wave.
struct GetPageWave {
  core::RwAlgorithm algorithm = core::RwAlgorithm::rw;
  std::vector<std::uint32_t> pages;   // per thread: pages wanted, 0 = inactive
  std::uint32_t block_threads = 256;  // threads per block (GPU); lanes of a warp are 32 apart
  std::uint64_t seed          = 0;    // thread i walks with thread_rng(seed, i)
};

/// Per thread of the wave: the first page of what it got (kNoPage: nothing, or inactive) and its
/// step count X_i (0 for an inactive thread).
struct AllocResult {
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> steps;
};

/// One free wave: thread i frees count[i] pages starting at first[i] (a page: count 1; a run of
/// RW_malloc: its length). Every named page must be in use.
struct FreePageWave {
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> count;
};

/// The pool's words at quiescence, widened to 64 bits (check::rw_snapshot builds the catalog's
/// snapshot from them).
struct PoolWords {
  std::vector<std::uint64_t> used;
  std::vector<std::uint64_t> locks;
};

class StepExecutor {
 public:
  virtual ~StepExecutor()                                = default;
  [[nodiscard]] virtual PoolConfig const& config() const = 0;
  /// "gpu", "cpu-threads", ...
  [[nodiscard]] virtual std::string name() const = 0;
  /// Setup before any wave (not concurrent): these pages are in use (held by "the pool").
  virtual void mark_used(std::vector<std::uint32_t> const& pages) = 0;
  virtual AllocResult allocate(GetPageWave const& wave)           = 0;
  virtual void free(FreePageWave const& wave)                     = 0;
  [[nodiscard]] virtual PoolWords words() const                   = 0;
};

}  // namespace heaplab::rw
