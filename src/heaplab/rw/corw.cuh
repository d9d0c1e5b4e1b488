// CoRW on the GPU (RW Alg. 2, sec. 4.2; docs/rw.md "CoRW (RW Alg. 2)"): corw_get_page, a
// warp-collective GETPAGE among whichever lanes of a warp call it. Thin: the round's phases and
// the lane arithmetic are corw.hpp's (shared with the CPU lock-step warp corw_get_pages, which
// the explorer checks); this file adds only the warp intrinsics that move values between lanes.
//
// Correct under independent thread scheduling (Volta and later; Hopper). Lanes of a warp are not
// in lock step: lanes that were together at one instruction need not be at the next. So, as in
// the allocator's request coalescing (soa/heap_ref.cuh, HeapRef::allocate_raw):
//  (1) `group = __activemask()` is evaluated ONCE, at entry. Every lane named in it executed that
//      same instance of the instruction, so all of them hold the same mask. Lanes of the warp
//      that call corw_get_page at another time (the other side of an if/else, a later loop
//      iteration) form another group, disjoint from this one, and are never named here.
//  (2) Every later __ballot_sync, __shfl_sync and __syncwarp names exactly `group`, and every
//      lane of the group executes the same sequence of them: no collective sits under a branch,
//      and the loop conditions are warp-uniform values: `need` and `has` (results of
//      __ballot_sync over the group), `round` (a counter every lane steps alike) and `bound`
//      (max_steps broadcast from the group's lowest lane, so lanes passing different pools
//      cannot disagree on the loop count; they must pass the same pool anyway).
//  (3) No lane leaves early: a lane that kept its page stays in the loop as a provider until
//      `need` is empty; the results are returned after the loop by every lane together.
//  (4) No lane waits for another between collectives: the LockMap is try-only (a lane that finds
//      the word locked becomes a consumer, RW Alg. 2 line 7), so no lane spins on a lock that a
//      lane of its own warp holds. Between collectives the lanes' atomics (lock, read P, claim,
//      unlock) may interleave in any order; correctness does not depend on it, because a page's
//      owner is decided by its provider's claim_bits alone (corw.hpp, "Why the lock is only a
//      hint"). The CPU lock-step warp issues the same atomics in one such order (lane order).
//  (5) Memory order: a receiver learns its page through __shfl_sync, which is not a memory fence.
//      The provider's claim_bits (an acquire fetch_or, the linearization point of the receiver's
//      GETPAGE) is followed by __syncwarp(group) before the receiver reads whether it kept the
//      page; __syncwarp orders memory among the participating threads, so the page's previous
//      owner's accesses (released by FREEPAGE) happen before the receiver's.
//  (6) Termination: at most `bound` (max_steps) rounds; a round's distribution serves
//      min(popc(need), popc(has)) >= 1 lanes per step, so at most 32 steps.
#pragma once

#include <cstdint>

#include "heaplab/core/atomics.hpp"
#include "heaplab/rw/corw.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw {

namespace detail {

/// This thread's lane (0..31), independent of the block shape.
__device__ __forceinline__ std::uint32_t corw_lane_id() {
  std::uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// The distribution of one round (RW Alg. 2 lines 9-17) in the calling lane: `need` are the
/// lanes of `group` that still need a page. Every lane of `group` calls it with the same `group`
/// and `need` and leaves it after the same number of steps ((2) above).
template <class W>
__device__ void corw_distribute(corw::LaneRound<W>& r,
                                LaneMask group,
                                LaneMask need,
                                std::uint32_t lane) {
  LaneMask has = __ballot_sync(group, corw::has_offer(r));       // line 8
  while (need != 0 && has != 0) {                                // line 9: uniform (ballots)
    std::uint32_t const b = corw::offer(r);                      // lines 10-11
    int const src         = corw::provider_of(need, has, lane);  // lines 12-13
    std::uint32_t const got =
        __shfl_sync(group, b, src < 0 ? static_cast<int>(lane) : src);  // line 14
    if (src >= 0) corw::take(r, src, got);
    corw::settle_offer(r, need, has, lane);
    need = __ballot_sync(group, ((need >> lane) & 1u) != 0 && r.provider < 0);  // line 15
    has  = __ballot_sync(group, corw::has_offer(r));                            // line 16
  }
}

}  // namespace detail

/// CoRW GETPAGE (RW Alg. 2 with the round of corw.hpp): warp-collective among the lanes that call
/// it together (any subset of the warp; every lane of that group must pass the same pool). Each
/// lane gets a distinct page, or kNoPage after max_steps rounds; `steps` is the number of rounds
/// until the lane kept its page (max_steps with kNoPage).
template <class W>
__device__ GetPageResult corw_get_page(PagePoolRef<core::DeviceAtomics, W> const& pool,
                                       PageRng& rng) {
  LaneMask const group      = __activemask();  // (1): once, at entry
  std::uint32_t const lane  = detail::corw_lane_id();
  int const leader          = __ffs(static_cast<int>(group)) - 1;
  std::uint32_t const bound = __shfl_sync(group, pool.storage().max_steps, leader);  // (2)
  GetPageResult result{kNoPage, bound};
  LaneMask need = group;  // equal across the group: every caller needs one page
  for (std::uint32_t round = 1; need != 0 && round <= bound; ++round) {
    corw::LaneRound<W> r;
    corw::start_round(pool, r, rng);                // lines 5-7: lock, read P
    detail::corw_distribute(r, group, need, lane);  // lines 8-17
    corw::claim_and_unlock(pool, r);                // our claim_bits of `taken`, line 18
    __syncwarp(group);                              // (5): the claims before the receivers' use
    W const won = __shfl_sync(group, r.won, r.provider < 0 ? static_cast<int>(lane) : r.provider);
    bool const kept = ((need >> lane) & 1u) != 0 && corw::keeps(r, won);
    if (kept) result = GetPageResult{r.page, round};
    need = __ballot_sync(group, ((need >> lane) & 1u) != 0 && !kept);
  }
  return result;
}

}  // namespace heaplab::rw
