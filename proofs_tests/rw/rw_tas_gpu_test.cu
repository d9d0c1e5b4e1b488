// TAS and WAS of concurrent RW walkers on the GPU against the paper's model (issue 11 "Verify";
// RW sec. 3.2): a pool of T = 2^20 pages with A/T in {50, 10, 1, 0.7, 0.5} % free (placed at
// random), N = 5000 threads each asking for one page at once (get_page_rw, DeviceAtomics).
//  - Ownership: every thread gets a page, the pages are distinct and were free.
//  - TAS: the mean step count lies within 5 standard errors of Eq. 2's exact form
//    (analysis::tas; the standard error from analysis::tas_variance over the runs), plus the
//    expected collisions per thread (RW sec. 3.2.2), which the sequential model leaves out.
//  - WAS: the mean over warps of the warp's largest step count stays below Eq. 3's bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/rw/analysis.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "rw_test_support.hpp"

namespace core     = heaplab::core;
namespace cudart   = heaplab::cudart;
namespace rw       = heaplab::rw;
namespace analysis = heaplab::rw::analysis;

namespace {

__global__ void one_request_each(rw::PoolStorage<std::uint32_t> pool,
                                 std::uint64_t seed,
                                 std::uint32_t n,
                                 std::uint32_t* pages,
                                 std::uint32_t* steps) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  rw::PagePoolRef<core::DeviceAtomics, std::uint32_t> const ref(pool);
  rw::PageRng rng{core::splitmix64(seed) ^ (std::uint64_t{i} << 20)};
  rw::GetPageResult const r = ref.get_page_rw(rng);
  pages[i]                  = r.page;
  steps[i]                  = r.steps;
}

struct RunResult {
  double tas = 0;  // mean steps per thread
  double was = 0;  // mean over warps of the warp's largest step count
};

/// One run: a fresh pool with `a` random free pages of `t`, `n` threads one request each.
RunResult run_once(std::uint32_t t, std::uint32_t a, std::uint32_t n, std::uint64_t seed) {
  rw::PoolConfig c;
  c.num_pages = t;
  c.word_bits = 32;
  c.max_steps = 1u << 24;
  rw::HostPool<std::uint32_t> host(c);
  std::vector<bool> const free =
      heaplab::rw_test::leave_random_pages_free(host, a, seed * 7919u + 1);
  // The same pool in device memory.
  rw::PoolStorage<std::uint32_t> s = host.storage();
  cudart::device_buffer<std::uint32_t> used(s.num_words, "used bitmap");
  cudart::device_buffer<std::uint32_t> locks(s.num_lock_words, "lock map");
  cudart::device_buffer<std::uint32_t> pages(n, "pages"), steps(n, "steps");
  cudart::copy_to_device_async(used.data(), s.used, s.num_words, nullptr);
  cudart::copy_to_device_async(locks.data(), s.locks, s.num_lock_words, nullptr);
  s.used  = used.data();
  s.locks = locks.data();
  one_request_each<<<cudart::ceil_div(n, 256), 256>>>(s, seed, n, pages.data(), steps.data());
  HEAPLAB_CHECK_LAUNCH();
  std::vector<std::uint32_t> const got = cudart::to_host(pages.data(), n);
  std::vector<std::uint32_t> const x   = cudart::to_host(steps.data(), n);
  std::set<std::uint32_t> distinct;
  RunResult r;
  std::uint32_t warp_max = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    EXPECT_LT(got[i], t) << "thread " << i << " got no page (" << x[i] << " steps)";
    if (got[i] < t) EXPECT_TRUE(free[got[i]]) << "page " << got[i] << " was in use";
    distinct.insert(got[i]);
    r.tas += x[i];
    warp_max = std::max(warp_max, x[i]);
    if (i % 32 == 31 || i + 1 == n) {
      r.was += warp_max;
      warp_max = 0;
    }
  }
  EXPECT_EQ(distinct.size(), n) << "a page went to two threads";
  r.tas /= n;
  r.was /= cudart::ceil_div(n, 32);
  return r;
}

TEST(RwTasGpu, ConcurrentWalkersMatchEq2AndStayBelowTheEq3Bound) {
  HEAPLAB_REQUIRE_GPU();
  std::uint32_t const t = 1u << 20, n = 5000;
  unsigned const runs = 4;
  std::printf("%8s %8s %10s %10s %10s %10s %10s\n",
              "A/T %",
              "A",
              "TAS",
              "Eq. 2",
              "tolerance",
              "WAS",
              "Eq. 3");
  for (double percent : {50.0, 10.0, 1.0, 0.7, 0.5}) {
    auto const a = static_cast<std::uint32_t>(std::llround(t * percent / 100.0));
    RunResult mean;
    for (unsigned run = 0; run < runs; ++run) {
      RunResult const r = run_once(t, a, n, 1000u * run + a);
      mean.tas += r.tas / runs;
      mean.was += r.was / runs;
    }
    double const expected  = analysis::tas(t, a, n);
    double const se        = std::sqrt(analysis::tas_variance(t, a, n) / runs);
    double const tolerance = 5 * se + analysis::expected_collisions(t, a, n) / n;
    double const bound     = analysis::was_bound(t, a, n);
    std::printf("%8.1f %8u %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                percent,
                a,
                mean.tas,
                expected,
                tolerance,
                mean.was,
                bound);
    EXPECT_NEAR(mean.tas, expected, tolerance) << "A/T = " << percent << " %";
    EXPECT_LE(mean.was, bound) << "A/T = " << percent << " %";
  }
}

}  // namespace
