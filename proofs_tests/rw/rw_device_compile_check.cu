// Build-time check that the random-walk page pool (src/heaplab/rw) compiles as device code with
// -Werror, both walks, CoRW's warp code (corw.cuh), RW_malloc's (rw_malloc.cuh) and both word
// widths with DeviceAtomics. Nothing runs here (the gpu-tier tests run kernels).
#include "heaplab/rw/corw.cuh"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.cuh"

namespace core = heaplab::core;
namespace rw   = heaplab::rw;

template <class W>
__device__ void walk_and_free(rw::PoolStorage<W> pool, std::uint32_t* steps) {
  rw::PagePoolRef<core::DeviceAtomics, W> const ref(pool);
  rw::PageRng rng{blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x};
  rw::GetPageResult const a = ref.get_page_rw(rng);
  rw::GetPageResult const b = ref.get_page_bm(rng);
  if (a.ok()) ref.free_page(a.page);
  if (b.ok()) ref.free_page(b.page);
  rw::GetPageResult const c = rw::corw_get_page(ref, rng);
  if (c.ok()) ref.free_page(c.page);
  steps[threadIdx.x] = a.steps + b.steps + c.steps;
  // RW_malloc (RW Alg. 3), divergent callers: two groups of one warp.
  rw::GetPageResult const d = threadIdx.x % 3 == 0 ? rw::rw_malloc(ref, 1 + threadIdx.x % 5, rng)
                                                   : rw::rw_malloc(ref, 7u, rng);
  if (d.ok()) rw::free_run(ref, d.page, threadIdx.x % 3 == 0 ? 1 + threadIdx.x % 5 : 7u);
}

__global__ void rw_device_compile_check(rw::PoolStorage<std::uint32_t> p32,
                                        rw::PoolStorage<std::uint64_t> p64,
                                        std::uint32_t* steps) {
  walk_and_free(p32, steps);
  walk_and_free(p64, steps);
}
