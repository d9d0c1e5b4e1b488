// CpuThreadsPool (rw_cpu_pool.hpp): the random-walk pool on free-running CPU threads.
#include "heaplab/families/rw/cpu_pool.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/rw/corw.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.hpp"
#include "heaplab/rw/wave_checks.hpp"

namespace heaplab::rw_family {

namespace {

/// Runs body(begin, end) on `workers` OS threads over contiguous slices of [0, n); rethrows the
/// first exception a slice threw, after every OS thread has joined (the join is what publishes
/// the slices' results to the caller).
template <class Body>
void run_slices(std::uint32_t n, unsigned workers, Body const& body) {
  workers = std::max(1u, std::min<unsigned>(workers, std::max<std::uint32_t>(n, 1)));
  std::vector<std::exception_ptr> errors(workers);
  std::vector<std::thread> threads;
  threads.reserve(workers);
  std::uint32_t const per = (n + workers - 1) / workers;
  for (unsigned t = 0; t < workers; ++t) {
    std::uint32_t const begin = std::min<std::uint32_t>(n, t * per);
    std::uint32_t end         = std::min<std::uint32_t>(n, begin + per);
    // MUTANT rw_cpu_slice_drops_last: each slice stops one item early, so the last warp of
    // every slice never runs (its active threads report 0 steps and no page).
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_cpu_slice_drops_last)
      if (end > begin) --end;
    threads.emplace_back([&, t, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto const& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

struct CpuThreadsPool::Impl {
  std::unique_ptr<rw::HostPool<std::uint32_t>> p32;
  std::unique_ptr<rw::HostPool<std::uint64_t>> p64;

  /// f(pool) with the pool of the config's word type.
  template <class F>
  decltype(auto) visit(F const& f) {
    return p32 ? f(*p32) : f(*p64);
  }
  template <class F>
  decltype(auto) visit(F const& f) const {
    return p32 ? f(static_cast<rw::HostPool<std::uint32_t> const&>(*p32))
               : f(static_cast<rw::HostPool<std::uint64_t> const&>(*p64));
  }
};

CpuThreadsPool::CpuThreadsPool(rw::PoolConfig const& config, unsigned os_threads)
    : config_(config),
      os_threads_(os_threads ? os_threads
                             : std::clamp(std::thread::hardware_concurrency(), 1u, 4u)),
      impl_(std::make_unique<Impl>()) {
  config.validate();
  if (config.word_bits == 32)
    impl_->p32 = std::make_unique<rw::HostPool<std::uint32_t>>(config);
  else
    impl_->p64 = std::make_unique<rw::HostPool<std::uint64_t>>(config);
}

CpuThreadsPool::~CpuThreadsPool() = default;

void CpuThreadsPool::mark_used(std::vector<std::uint32_t> const& pages) {
  impl_->visit([&](auto& pool) {
    for (std::uint32_t p : pages) pool.mark_used(p);
  });
}

namespace {

/// Warp k of a wave: threads [32 k, min(32 k + 32, n)).
struct WarpRange {
  std::uint32_t begin, end;
};
WarpRange warp_range(std::uint32_t k, std::uint32_t n) {
  std::uint32_t const begin = k * rw::kWarpLanes;
  return {begin, std::min(n, begin + rw::kWarpLanes)};
}

/// RW / RW-BM: thread i alone (inactive threads do not call).
template <class Ref>
void run_walkers(Ref const& ref, rw::GetPageWave const& wave, rw::AllocResult& out, WarpRange r) {
  bool const bm = wave.algorithm == core::RwAlgorithm::rw_bm;
  for (std::uint32_t i = r.begin; i < r.end; ++i) {
    if (wave.pages[i] == 0) continue;  // inactive (divergence)
    rw::PageRng rng           = rw::thread_rng(wave.seed, i);
    rw::GetPageResult const g = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
    out.first[i]              = g.page;  // index i is this OS thread's alone
    out.steps[i]              = g.steps;
  }
}

/// CoRW (RW Alg. 2): the warp's active threads as one lock-step warp (rw/corw.hpp).
template <class Ref>
void run_corw_warp(Ref const& ref, rw::GetPageWave const& wave, rw::AllocResult& out, WarpRange r) {
  rw::CorwLane lanes[rw::kWarpLanes];
  for (std::uint32_t i = r.begin; i < r.end; ++i)
    lanes[i - r.begin] = rw::CorwLane{rw::thread_rng(wave.seed, i), wave.pages[i] != 0, {}};
  rw::corw_get_pages(ref, lanes, r.end - r.begin);
  for (std::uint32_t i = r.begin; i < r.end; ++i) {
    out.first[i] = lanes[i - r.begin].result.page;
    out.steps[i] = lanes[i - r.begin].result.steps;
  }
}

/// RW_malloc (RW Alg. 3): the warp's threads as one lock-step warp (rw/rw_malloc.hpp; a lane
/// asking for 0 pages is not in the group).
template <class Ref>
void run_malloc_warp(Ref const& ref,
                     rw::GetPageWave const& wave,
                     rw::AllocResult& out,
                     WarpRange r) {
  std::vector<rw::MallocLane> lanes;
  for (std::uint32_t i = r.begin; i < r.end; ++i)
    lanes.push_back(rw::MallocLane{wave.pages[i], rw::thread_rng(wave.seed, i)});
  std::vector<rw::GetPageResult> const got = rw::rw_malloc_warp(ref, lanes);
  for (std::uint32_t i = r.begin; i < r.end; ++i) {
    if (wave.pages[i] == 0) continue;
    out.first[i] = got[i - r.begin].page;
    out.steps[i] = got[i - r.begin].steps;
  }
}

}  // namespace

rw::AllocResult CpuThreadsPool::allocate(rw::GetPageWave const& wave) {
  rw::validate_alloc_wave(config_, wave);
  auto const n = static_cast<std::uint32_t>(wave.pages.size());
  rw::AllocResult out;
  out.first.assign(n, rw::kNoPage);
  out.steps.assign(n, 0);
  std::uint32_t const warps = (n + rw::kWarpLanes - 1) / rw::kWarpLanes;
  impl_->visit([&](auto& pool) {
    auto const ref = pool.template ref<core::HostAtomics>();
    // OS threads take slices of whole warps (CoRW and RW_malloc are warp-collective).
    run_slices(warps, os_threads_, [&](std::uint32_t begin, std::uint32_t end) {
      for (std::uint32_t k = begin; k < end; ++k) {
        WarpRange const r = warp_range(k, n);
        switch (wave.algorithm) {
          case core::RwAlgorithm::corw:
            run_corw_warp(ref, wave, out, r);
            break;
          case core::RwAlgorithm::rw_malloc:
            run_malloc_warp(ref, wave, out, r);
            break;
          default:
            run_walkers(ref, wave, out, r);
            break;
        }
      }
    });
  });
  return out;
}

void CpuThreadsPool::free(rw::FreePageWave const& wave) {
  rw::validate_free_wave(config_, wave);
  auto const n = static_cast<std::uint32_t>(wave.first.size());
  impl_->visit([&](auto& pool) {
    auto const ref = pool.template ref<core::HostAtomics>();
    run_slices(n, os_threads_, [&](std::uint32_t begin, std::uint32_t end) {
      for (std::uint32_t i = begin; i < end; ++i) {
        if (wave.count[i] == 1) ref.free_page(wave.first[i]);
        if (wave.count[i] > 1) rw::free_run(ref, wave.first[i], wave.count[i]);
      }
    });
  });
}

rw::PoolWords CpuThreadsPool::words() const {
  return impl_->visit([](auto const& pool) {
    rw::PoolWords w;
    w.used.assign(pool.used_words().begin(), pool.used_words().end());
    w.locks.assign(pool.lock_words().begin(), pool.lock_words().end());
    return w;
  });
}

}  // namespace heaplab::rw_family
