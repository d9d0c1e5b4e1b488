// Page sources for GPU kernels: one functor type per allocator, each with
//   __device__ GetPageResult operator()(PageRng& rng, std::uint32_t pages) const
// so that one kernel template (the allocation wave, the hash-join probe) runs every allocator the
// same way: the random-walk pool (RW, RW-BM; CoRW and RW_malloc once merged), the queue baseline
// and DO. A thread that asks for nothing does not call its source (how a wave expresses
// divergence; CoRW is warp-collective among the lanes that call it).
//
// THE place where the algorithms plug in (docs/rw.md "The GPU pool"): `dispatch_algorithm`
// (host: which kernel instantiation to launch) and `get_page_device` (device: what a thread
// calls). CoRW and RW_malloc are written elsewhere and not in this tree yet: their host cases throw
// not_built_error; wiring one is "include its header, return its call in get_page_device, replace
// the throw with f(tag)" at the two places marked PLUG-IN below.
#pragma once

#include <cstdint>
#include <utility>

#include "heaplab/core/atomics.hpp"
#include "heaplab/rw/backend.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/direct_output.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/queue_pool.hpp"

namespace heaplab::rw {

/// An Algorithm as a type, for kernel templates.
template <Algorithm kAlgorithm>
struct AlgorithmTag {
  static constexpr Algorithm value = kAlgorithm;
};

/// Calls f(AlgorithmTag<a>{}) for an algorithm this tree has; throws not_built_error otherwise.
template <class F>
void dispatch_algorithm(Algorithm a, F&& f) {
  switch (a) {
    case Algorithm::rw:
      std::forward<F>(f)(AlgorithmTag<Algorithm::rw>{});
      return;
    case Algorithm::rw_bm:
      std::forward<F>(f)(AlgorithmTag<Algorithm::rw_bm>{});
      return;
    case Algorithm::corw:
      // PLUG-IN corw (RW Alg. 2, src/heaplab/rw/corw.cuh):
      // std::forward<F>(f)(AlgorithmTag<Algorithm::corw>{}); return;
      throw not_built_error(Algorithm::corw);
    case Algorithm::rw_malloc:
      // PLUG-IN rw_malloc (RW Alg. 3, src/heaplab/rw/rw_malloc.cuh): as for corw.
      throw not_built_error(Algorithm::rw_malloc);
  }
  throw not_built_error(a);
}

/// What thread calls for `pages` pages with algorithm kAlgorithm (pages == 1 for the one-page
/// algorithms: the host checks it).
template <Algorithm kAlgorithm, class W>
__device__ __forceinline__ GetPageResult
get_page_device(PagePoolRef<core::DeviceAtomics, W> const& ref, PageRng& rng, std::uint32_t pages) {
  (void)pages;
  if constexpr (kAlgorithm == Algorithm::rw) {
    return ref.get_page_rw(rng);
  } else if constexpr (kAlgorithm == Algorithm::rw_bm) {
    return ref.get_page_bm(rng);
  } else {
    // PLUG-IN corw: if constexpr (kAlgorithm == Algorithm::corw) return corw_get_page(ref, rng);
    // PLUG-IN rw_malloc: if constexpr (kAlgorithm == Algorithm::rw_malloc)
    //                      return rw_malloc(ref, pages, rng);
    static_assert(kAlgorithm == Algorithm::rw || kAlgorithm == Algorithm::rw_bm,
                  "not built in this tree (dispatch_algorithm never instantiates it)");
    return GetPageResult{};
  }
}

/// The random-walk pool with algorithm kAlgorithm on words W.
template <Algorithm kAlgorithm, class W>
struct PoolSource {
  PagePoolRef<core::DeviceAtomics, W> ref;
  __device__ __forceinline__ GetPageResult operator()(PageRng& rng, std::uint32_t pages) const {
    return get_page_device<kAlgorithm, W>(ref, rng, pages);
  }
};

/// The queue baseline (queue_pool.hpp); one page per call.
struct QueueSource {
  QueueRef<core::DeviceAtomics> ref;
  __device__ __forceinline__ GetPageResult operator()(PageRng&, std::uint32_t) const {
    return ref.get_page();
  }
};

/// DO (direct_output.hpp); one page per call.
struct DirectOutputSource {
  DirectOutputRef<core::DeviceAtomics> ref;
  __device__ __forceinline__ GetPageResult operator()(PageRng&, std::uint32_t) const {
    return ref.get_page();
  }
};

/// Calls f(PoolSource<a, W>{pool's storage}) with W the pool's word type; throws not_built_error
/// for an algorithm this tree does not have.
template <class F>
void with_pool_source(DevicePool const& pool, Algorithm a, F&& f) {
  dispatch_algorithm(a, [&](auto tag) {
    constexpr Algorithm kA = decltype(tag)::value;
    if (pool.config().word_bits == 32) {
      f(PoolSource<kA, std::uint32_t>{
          PagePoolRef<core::DeviceAtomics, std::uint32_t>(pool.storage32())});
    } else {
      f(PoolSource<kA, std::uint64_t>{
          PagePoolRef<core::DeviceAtomics, std::uint64_t>(pool.storage64())});
    }
  });
}

}  // namespace heaplab::rw
