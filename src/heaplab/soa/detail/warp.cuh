// Warp-level helpers of the GPU allocator (device only). Kept apart from the portable core,
// which never uses warp intrinsics (ARCHITECTURE.md "Portable core").
#pragma once

#include <cstdint>

#include "heaplab/core/perturb.hpp"

namespace heaplab::soa::detail {

/// This thread's lane (0..31), independent of the block shape.
__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// Bits of the lanes below this one.
__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned mask;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

/// Linear index of this thread in its block.
__device__ __forceinline__ std::uint32_t thread_rank_in_block() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/// A grid-wide warp number (DynaSOAr sec. 4.2 rotates bitmaps by warp id): the linear block
/// index times the warps per block plus the warp within the block.
__device__ __forceinline__ std::uint64_t global_warp_id() {
  std::uint64_t const block =
      blockIdx.x + std::uint64_t{gridDim.x} * (blockIdx.y + std::uint64_t{gridDim.y} * blockIdx.z);
  std::uint32_t const threads = blockDim.x * blockDim.y * blockDim.z;
  std::uint32_t const warps   = (threads + 31u) / 32u;
  return block * warps + thread_rank_in_block() / 32u;
}

/// The warp's slot on the GPU: SM id * 64 + the warp's slot on its SM (%warpid, < 64 on every
/// architecture so far). Resident warps have distinct slots; the warps that run on one SM one
/// after another reuse them. The PTX manual calls both values volatile (a warp may be moved):
/// use it only where any value is correct (a block hint, HeapRef::reserve_for_group).
__device__ __forceinline__ std::uint32_t sm_warp_slot() {
  std::uint32_t sm;
  std::uint32_t warp;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  return sm * 64u + warp;
}

/// Global linear thread index for 1-D launches (grid-stride loops of the heap's own kernels).
__device__ __forceinline__ std::uint64_t global_thread_1d() {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::uint64_t grid_stride_1d() {
  return std::uint64_t{gridDim.x} * blockDim.x;
}

/// Warp-order perturbation (core/perturb.hpp): warp `warp` sleeps at `point` for the delay the
/// seed gives it. Every lane of the warp must pass the same seed, warp and point (the lanes then
/// sleep together); seed 0 returns at once.
__device__ __forceinline__ void perturb_warp(std::uint64_t seed,
                                             std::uint64_t warp,
                                             core::PerturbPoint point) {
  if (seed == 0) return;
  std::uint32_t const ns = core::perturb_delay_ns(seed, warp, point);
  if (ns != 0) __nanosleep(ns);
}

}  // namespace heaplab::soa::detail
