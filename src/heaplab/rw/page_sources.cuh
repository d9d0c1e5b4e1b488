// Page sources for GPU kernels: one functor type per allocator, each with
//   __device__ GetPageResult operator()(PageRng& rng, std::uint32_t pages) const
// so that one kernel template (the allocation wave, the hash-join probe) runs every allocator the
// same way: the random-walk pool (RW, RW-BM, CoRW, RW_malloc), the queue baseline, its size-class
// variant and DO. A thread
// that asks for nothing does not call its source (how a wave expresses divergence; CoRW is
// warp-collective among the lanes that call it).
//
// The one place where an algorithm is chosen (docs/rw.md "The GPU pool"): `dispatch_algorithm`
// (host: which kernel instantiation to launch) and `get_page_device` (device: what a thread
// calls).
#pragma once

#include <cstdint>
#include <utility>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/corw.cuh"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/direct_output.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/queue_pool.hpp"
#include "heaplab/rw/rw_malloc.cuh"
#include "heaplab/rw/size_class_queue.hpp"
#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw {

/// A core::RwAlgorithm as a type, for kernel templates.
template <core::RwAlgorithm kAlgorithm>
struct AlgorithmTag {
  static constexpr core::RwAlgorithm value = kAlgorithm;
};

/// Calls f(AlgorithmTag<a>{}).
template <class F>
void dispatch_algorithm(core::RwAlgorithm a, F&& f) {
  switch (a) {
    case core::RwAlgorithm::rw:
      std::forward<F>(f)(AlgorithmTag<core::RwAlgorithm::rw>{});
      return;
    case core::RwAlgorithm::rw_bm:
      std::forward<F>(f)(AlgorithmTag<core::RwAlgorithm::rw_bm>{});
      return;
    case core::RwAlgorithm::corw:
      std::forward<F>(f)(AlgorithmTag<core::RwAlgorithm::corw>{});
      return;
    case core::RwAlgorithm::rw_malloc:
      std::forward<F>(f)(AlgorithmTag<core::RwAlgorithm::rw_malloc>{});
      return;
  }
  HEAPLAB_EXPECTS(false, "dispatch_algorithm: unknown algorithm");
}

/// What a thread calls for `pages` pages with algorithm kAlgorithm (pages == 1 for the one-page
/// algorithms, 1..max_run_pages for RW_malloc: the host checks it, validate_alloc_wave). CoRW and
/// RW_malloc are warp-collective among the lanes that call them (corw.cuh, rw_malloc.cuh).
template <core::RwAlgorithm kAlgorithm, class W>
__device__ __forceinline__ GetPageResult
get_page_device(PagePoolRef<core::DeviceAtomics, W> const& ref, PageRng& rng, std::uint32_t pages) {
  if constexpr (kAlgorithm == core::RwAlgorithm::rw) {
    return ref.get_page_rw(rng);
  } else if constexpr (kAlgorithm == core::RwAlgorithm::rw_bm) {
    return ref.get_page_bm(rng);
  } else if constexpr (kAlgorithm == core::RwAlgorithm::corw) {
    return corw_get_page(ref, rng);
  } else {
    static_assert(kAlgorithm == core::RwAlgorithm::rw_malloc);
    return rw_malloc(ref, pages, rng);
  }
}

/// The random-walk pool with algorithm kAlgorithm on words W.
template <core::RwAlgorithm kAlgorithm, class W>
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

/// The size-class queue (size_class_queue.hpp): a chunk of 2^ceil(log2 pages) pages per call.
struct SizeClassQueueSource {
  SizeClassQueueRef<core::DeviceAtomics> ref;
  __device__ __forceinline__ GetPageResult operator()(PageRng&, std::uint32_t pages) const {
    return ref.get(pages);
  }
};

/// Calls f(PoolSource<a, W>{pool's storage}) with W the pool's word type.
template <class F>
void with_pool_source(DevicePool const& pool, core::RwAlgorithm a, F&& f) {
  dispatch_algorithm(a, [&](auto tag) {
    constexpr core::RwAlgorithm kA = decltype(tag)::value;
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
