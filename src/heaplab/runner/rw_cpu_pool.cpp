// CpuThreadsPool (rw_cpu_pool.hpp): the random-walk pool on free-running CPU threads.
#include "heaplab/runner/rw_cpu_pool.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::runner {

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
    // MUTANT rw_cpu_slice_drops_last: each slice stops one thread early, so the last thread of
    // every slice never runs (an active thread reports 0 steps and no page).
    if constexpr (core::mutant::rw_cpu_slice_drops_last)
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

std::string cpu_pool_unsupported(rw::Algorithm a) {
  switch (a) {
    case rw::Algorithm::rw:
    case rw::Algorithm::rw_bm:
      return {};
    case rw::Algorithm::corw:
      return "corw on cpu-threads is not built in this tree (rw/corw.hpp: corw_get_pages, one "
             "lock-step warp per 32 threads, plugs in at rw_cpu_pool.cpp)";
    case rw::Algorithm::rw_malloc:
      return "rw-malloc on cpu-threads is not built in this tree (rw/rw_malloc.hpp, one "
             "lock-step warp per 32 threads, plugs in at rw_cpu_pool.cpp)";
  }
  return "unknown algorithm";
}

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

rw::AllocResult CpuThreadsPool::allocate(rw::AllocWave const& wave) {
  if (auto const why = cpu_pool_unsupported(wave.algorithm); !why.empty()) {
    // PLUG-IN corw: rw::corw_get_pages (rw/corw.hpp), one lock-step warp per 32 consecutive
    // threads (run_slices over warps instead of threads), goes here.
    // PLUG-IN rw-malloc: the RW_malloc warp of rw/rw_malloc.hpp goes here likewise.
    throw rw_not_built(why);
  }
  auto const n = static_cast<std::uint32_t>(wave.pages.size());
  rw::AllocResult out;
  out.first.assign(n, rw::kNoPage);
  out.steps.assign(n, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    HEAPLAB_EXPECTS(wave.pages[i] <= 1,
                    std::string(rw::algorithm_name(wave.algorithm)) +
                        " hands out one page per request; thread " + std::to_string(i) +
                        " asks for " + std::to_string(wave.pages[i]));
  impl_->visit([&](auto& pool) {
    auto const ref = pool.template ref<core::HostAtomics>();
    bool const bm  = wave.algorithm == rw::Algorithm::rw_bm;
    run_slices(n, os_threads_, [&](std::uint32_t begin, std::uint32_t end) {
      for (std::uint32_t i = begin; i < end; ++i) {
        if (wave.pages[i] == 0) continue;  // inactive (divergence)
        rw::PageRng rng           = rw::thread_rng(wave.seed, i);
        rw::GetPageResult const r = bm ? ref.get_page_bm(rng) : ref.get_page_rw(rng);
        out.first[i]              = r.page;  // index i is this OS thread's alone
        out.steps[i]              = r.steps;
      }
    });
  });
  return out;
}

void CpuThreadsPool::free(rw::FreeWave const& wave) {
  HEAPLAB_EXPECTS(wave.first.size() == wave.count.size(), "FreeWave: first and count differ");
  auto const n = static_cast<std::uint32_t>(wave.first.size());
  impl_->visit([&](auto& pool) {
    auto const ref = pool.template ref<core::HostAtomics>();
    run_slices(n, os_threads_, [&](std::uint32_t begin, std::uint32_t end) {
      for (std::uint32_t i = begin; i < end; ++i)
        for (std::uint32_t j = 0; j < wave.count[i]; ++j) ref.free_page(wave.first[i] + j);
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

}  // namespace heaplab::runner
