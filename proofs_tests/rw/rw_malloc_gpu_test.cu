// RW_malloc (RW Alg. 3, sec. 4.3; rw/rw_malloc.cuh) on the GPU: 5120 threads ask for runs of
// 1..64 pages at once, with divergent lanes (a seventh of the threads ask for nothing; the others
// call rw_malloc from the two branches of an if/else, so a warp's callers form two groups that
// run under independent thread scheduling), on pools of both word widths
//   - at 50 %: free stretches of 1..96 pages between used ones,
//   - near exhaustion: 300 free runs of 1..64 pages in an otherwise full pool.
// The runs are copied back and checked: disjoint, inside the pool, free before (the page model
// accepts each by refinement), every page used, the rw catalog with runs clean, null answers
// counted as out of memory or bounded-walk exhaustion. A second kernel frees every run; the
// pool's words are then those of the start.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/model/page_model.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.cuh"

namespace check  = heaplab::check;
namespace core   = heaplab::core;
namespace cudart = heaplab::cudart;
namespace model  = heaplab::model;
namespace rw     = heaplab::rw;

namespace {

constexpr std::uint32_t kThreads = 5120;

/// Thread i's request: nothing for a seventh of the threads, else 1..64 pages.
__host__ __device__ std::uint32_t request_of(std::uint32_t i) {
  std::uint64_t const h = core::splitmix64(i * 0x9E37u + 17u);
  return i % 7 == 3 ? 0u : 1u + static_cast<std::uint32_t>(h % 64u);
}

template <class W>
__global__ void malloc_kernel(rw::PoolStorage<W> pool,
                              std::uint64_t seed,
                              std::uint32_t* first,
                              std::uint32_t* steps) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kThreads) return;
  rw::PagePoolRef<core::DeviceAtomics, W> const ref(pool);
  rw::PageRng rng          = rw::thread_rng(seed, i);
  std::uint32_t const n    = request_of(i);
  rw::GetPageResult result = {};
  if (n == 0) {
    // These lanes do not call rw_malloc at all.
  } else if (i % 2 == 0) {
    result = rw::rw_malloc(ref, n, rng);  // group 1 of the warp
  } else {
    rw::PageRng other{rng.next()};          // different work, so the branches stay apart
    result = rw::rw_malloc(ref, n, other);  // group 2: the other branch
  }
  first[i] = n == 0 ? rw::kNoPage : result.page;
  steps[i] = result.steps;
}

template <class W>
__global__ void free_kernel(rw::PoolStorage<W> pool, std::uint32_t const* first) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kThreads || first[i] == rw::kNoPage) return;
  rw::PagePoolRef<core::DeviceAtomics, W> const ref(pool);
  rw::free_run(ref, first[i], request_of(i));
}

/// The pool's pages before the kernels: used[p].
std::vector<bool> pattern(std::uint32_t pages, bool near_exhaustion, std::uint64_t seed) {
  rw::PageRng rng{seed};
  std::vector<bool> used(pages, near_exhaustion);
  if (near_exhaustion) {
    for (int k = 0; k < 300; ++k) {
      std::uint32_t const at = rng.below(pages - 64), len = 1 + rng.below(64);
      for (std::uint32_t p = at; p < at + len; ++p) used[p] = false;
    }
  } else {
    for (std::uint32_t p = 0; p < pages;) {
      std::uint32_t const free = 1 + rng.below(96), taken = 1 + rng.below(96);
      for (std::uint32_t q = p + free; q < p + free + taken && q < pages; ++q) used[q] = true;
      p += free + taken;
    }
  }
  return used;
}

template <class W>
check::RwPoolSnapshot snapshot_of(rw::PoolStorage<W> const& s, W const* used, W const* locks) {
  std::vector<W> const u = cudart::to_host(used, s.num_words);
  std::vector<W> const l = cudart::to_host(locks, s.num_lock_words);
  return check::rw_snapshot(s.num_pages, u.data(), u.size(), l.data(), l.size());
}

template <class W>
void run_case(bool near_exhaustion, std::uint64_t seed) {
  rw::PoolConfig c;
  c.num_pages = 1u << 16;
  c.word_bits = sizeof(W) * 8;
  c.max_steps = 256;
  rw::HostPool<W> host(c);
  model::PageModel m(c.num_pages);
  std::vector<bool> const used = pattern(c.num_pages, near_exhaustion, seed);
  for (std::uint32_t p = 0; p < c.num_pages; ++p)
    if (used[p]) {
      host.mark_used(p);
      m.get_page(kThreads, p);  // owner kThreads: the setup
    }
  rw::PoolStorage<W> s = host.storage();
  cudart::device_buffer<W> words(s.num_words, "used bitmap"), locks(s.num_lock_words, "lock map");
  cudart::device_buffer<std::uint32_t> first(kThreads, "first"), steps(kThreads, "steps");
  cudart::copy_to_device_async(words.data(), s.used, s.num_words, nullptr);
  cudart::copy_to_device_async(locks.data(), s.locks, s.num_lock_words, nullptr);
  s.used  = words.data();
  s.locks = locks.data();
  malloc_kernel<W><<<cudart::ceil_div(kThreads, 256), 256>>>(s, seed, first.data(), steps.data());
  HEAPLAB_CHECK_LAUNCH();
  std::vector<std::uint32_t> const got = cudart::to_host(first.data(), kThreads);
  std::vector<std::uint32_t> const x   = cudart::to_host(steps.data(), kThreads);
  std::uint32_t served                 = 0;
  std::uint64_t served_pages = 0, free_before = 0;
  for (bool u : used) free_before += u ? 0 : 1;
  for (std::uint32_t i = 0; i < kThreads; ++i) {
    if (request_of(i) == 0) continue;
    served_pages += got[i] != rw::kNoPage ? request_of(i) : 0;
    ASSERT_TRUE(got[i] != rw::kNoPage || x[i] == c.max_steps) << "thread " << i;
    ASSERT_NO_THROW(m.get_run(i, got[i], request_of(i)))
        << "thread " << i;  // free, inside, disjoint
    served += got[i] != rw::kNoPage ? 1 : 0;
  }
  auto const v = check::rw_check_all(
      snapshot_of(host.storage(), words.data(), locks.data()), m.owners(kThreads + 1), m.runs());
  EXPECT_TRUE(v.empty()) << v[0].to_string();
  std::printf(
      "w = %u, %s: %u of %u requests served, %llu of %llu free pages; null: %llu out of memory, "
      "%llu exhaustions\n",
      c.word_bits,
      near_exhaustion ? "near exhaustion" : "50 % free",
      served,
      kThreads - kThreads / 7,
      static_cast<unsigned long long>(served_pages),
      static_cast<unsigned long long>(free_before),
      static_cast<unsigned long long>(m.out_of_pages()),
      static_cast<unsigned long long>(m.bounded_walk_exhaustions()));
  // The wave asks for about 4,400 x 32.5 pages, four times the free pages: most requests must
  // fail. A liveness check, not a derived bound: the wave fills at least 80 % of the free pages
  // (measured 93-97 % on an H100, 2026-11-24; a walk that gave up early, or claims that never win,
  // would leave them free).
  EXPECT_GE(served_pages * 10, free_before * 8);
  free_kernel<W><<<cudart::ceil_div(kThreads, 256), 256>>>(s, first.data());
  HEAPLAB_CHECK_LAUNCH();
  EXPECT_EQ(cudart::to_host(words.data(), s.num_words), host.used_words()) << "not the start";
  EXPECT_EQ(cudart::to_host(locks.data(), s.num_lock_words), host.lock_words());
}

TEST(RwMallocGpu, MixedRunsFromDivergentLanesAreDisjointAndFreeBackToTheStart) {
  HEAPLAB_REQUIRE_GPU();
  for (std::uint64_t seed : {1u, 2u}) {
    run_case<std::uint32_t>(false, seed);
    run_case<std::uint64_t>(false, seed);
    run_case<std::uint32_t>(true, seed);
    run_case<std::uint64_t>(true, seed);
  }
}

}  // namespace
