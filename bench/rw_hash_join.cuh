// The hash join of `heaplab_bench rw fig12` (rw_hash_join.cu; docs/rw.md "Benchmarks"): its probe
// kernel, generic over the page source, and what the probe and its check share. In a header
// because two translation units instantiate the probe: rw_hash_join.cu (RW, RW-BM, CoRW, the queue,
// DO) and ouroboros_bench.cu (Ouroboros, in a build with it). nvcc-only.
#pragma once

#include <cstdint>

#include "heaplab/core/mix.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/page_sources.cuh"

namespace heaplab::bench::join {

inline constexpr std::uint64_t kEmptyEntry = ~std::uint64_t{0};

/// The checksum term of one output record.
__host__ __device__ inline std::uint64_t record_mix(std::uint32_t key,
                                                    std::uint32_t r,
                                                    std::uint32_t s) {
  return core::splitmix64((std::uint64_t{r} << 32 | s) ^ (std::uint64_t{key} * core::kGoldenGamma));
}

__host__ __device__ inline std::uint32_t key_hash(std::uint32_t key) {
  return static_cast<std::uint32_t>(core::splitmix64(key) >> 32);
}

/// One thread per S tuple; a match takes one output page from `source` and writes its record.
template <class Source>
__global__ void probe_kernel(Source source,
                             std::uint32_t const* s_key,
                             std::uint32_t n,
                             std::uint64_t const* table,
                             std::uint32_t mask,
                             std::uint64_t seed,
                             std::uint32_t* data,
                             std::uint32_t page_words,
                             std::uint32_t* out_page,
                             unsigned long long* failed) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto const s            = static_cast<std::uint32_t>(i);
  std::uint32_t const key = s_key[s];
  std::uint32_t r         = rw::kNoPage;
  for (std::uint32_t slot = key_hash(key) & mask;; slot = (slot + 1) & mask) {
    std::uint64_t const e = table[slot];
    if (e == kEmptyEntry) break;
    if (static_cast<std::uint32_t>(e >> 32) == key) {
      r = static_cast<std::uint32_t>(e);
      break;
    }
  }
  std::uint32_t page = rw::kNoPage;
  if (r != rw::kNoPage) {  // only threads with output ask for a page
    rw::PageRng rng           = rw::thread_rng(seed, s);
    rw::GetPageResult const g = source(rng, 1);
    page                      = g.page;
    if (g.ok()) {
      std::uint32_t* record = data + std::uint64_t{page} * page_words;
      record[0] = key, record[1] = r, record[2] = s;
    } else {
      atomicAdd(failed, 1ull);
    }
  }
  out_page[s] = page;
}

}  // namespace heaplab::bench::join
