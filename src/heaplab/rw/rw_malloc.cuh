// RW_malloc on the GPU (RW Alg. 3, sec. 4.3): the warp code. The arithmetic (segments, the
// region, connections across words, first fit, the claim with rollback) is rw_malloc.hpp's, shared
// with the CPU lock-step warp that the explorer checks; this file adds only the ballots and
// shuffles that share lane data (docs/rw.md "RW_malloc").
//
// Independent thread scheduling (Volta and later; Hopper). Lanes of a warp need not execute in
// lock step: lanes that were together at one instruction need not be at the next, and the
// lanes that call rw_malloc together can be any subset of the warp (divergent callers, an if/else
// whose branches both call it). The discipline, as in soa/heap_ref.cuh allocate_raw:
//  (1) `group = __activemask()` is evaluated ONCE, at entry: the lanes executing that instance of
//      the call. Every later collective (__shfl_sync, __ballot_sync, __reduce_min_sync) names
//      exactly `group`; no other mask is ever named, and no mask seen at one point is assumed to
//      hold at a later one (there is no __activemask() after entry).
//  (2) Every branch or loop that contains a collective depends only on values equal across the
//      group: the round counter, `need` (updated only from shuffled / ballot values), ballot
//      results (`has`, `full`, `top`), values broadcast by __shfl_sync (the region start, each
//      visited segment, the claim's outcome) and __reduce_min_sync results. So every lane of the
//      group executes the same sequence of collectives with the same mask, which is what their
//      contract requires; the collectives themselves make the named lanes wait for each other.
//  (3) Lane-private work between collectives (the region reads, the one lane's claim_run) contains
//      no collective; the other lanes simply wait at the next __shfl_sync. No lane spins on
//      another lane's progress and nothing is exchanged through memory between lanes.
//  (4) Lanes outside `group` (not calling, or calling in another instance) are never named, so
//      two groups of one warp run independently; they contend only through the pool's atomics,
//      like two warps.
//  (5) Termination: at most max_steps rounds; each round visits finitely many segments (a
//      lane's cursor only grows).
// Memory orders: region reads relaxed, claims acquire, rollback and free release (rw_malloc.hpp).
#pragma once

#include <cstdint>

#include "heaplab/rw/rw_malloc.hpp"

namespace heaplab::rw {
namespace detail {

/// This thread's lane (0..31), independent of the block shape.
__device__ __forceinline__ std::uint32_t warp_lane() {
  std::uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/// One lane's part of RW Alg. 3 for its group. Every member function that contains a
/// collective is called by all lanes of the group in the same order (ITS rule (2) above).
template <class W>
class WarpMalloc {
 public:
  static constexpr std::uint32_t kBits = sizeof(W) * 8;

  __device__ WarpMalloc(PagePoolRef<core::DeviceAtomics, W> const& pool,
                        std::uint32_t group,
                        std::uint32_t n)
      : pool_(pool), group_(group), lane_(warp_lane()), n_(n) {
    need_ = __ballot_sync(group_, n_ > 0);
  }

  __device__ GetPageResult run(PageRng& rng) {
    std::uint32_t const max = pool_.storage().max_steps;
    std::uint32_t round     = 1;
    for (; need_ != 0 && round <= max; ++round) one_round(round, rng);  // need_: uniform
    if (n_ > 0 && result_.page == kNoPage) result_.steps = round - 1;
    return result_;
  }

 private:
  /// RW Alg. 3 lines 5-8: the lowest lane draws the region, each lane reads its words, the lanes
  /// learn which neighbours are free (for segments that cross into them).
  __device__ void one_round(std::uint32_t round, PageRng& rng) {
    auto const leader   = static_cast<std::uint32_t>(__ffs(static_cast<int>(group_)) - 1);
    std::uint32_t start = 0;
    if (lane_ == leader) start = draw_region_start(pool_.storage().num_words, rng);
    start = __shfl_sync(group_, start, static_cast<int>(leader));
    Region const region =
        region_at(start, pool_.storage().num_words, static_cast<std::uint32_t>(__popc(group_)));
    std::uint32_t const rank = lane_rank(group_, lane_);
    words_.count             = region.count(rank);
    words_.load(pool_, start + region.begin(rank));
    page0_                   = (start + region.begin(rank)) * kBits;
    std::uint32_t const full = __ballot_sync(group_, words_.full());
    std::uint32_t const top  = __ballot_sync(group_, words_.top_free());
    std::uint32_t const low  = words_.low_free();
    std::uint32_t const next = next_partial_lane(group_, lane_, full);
    std::uint32_t const next_low =
        __shfl_sync(group_, low, static_cast<int>(next == kNoLane ? lane_ : next));
    cont_                    = continuation_bits(region, kBits, group_, lane_, next, next_low);
    std::uint32_t const prev = previous_lane(group_, lane_);
    cursor_ = prev != kNoLane && ((top >> prev) & 1u) != 0 ? low : 0u;  // a continuation: skip
    visit_segments(round);
  }

  /// RW Alg. 3 lines 9-22: each lane's next segment, visited lane by lane (lowest first), until no
  /// lane has one or no lane is needy.
  __device__ void visit_segments(std::uint32_t round) {
    while (true) {
      Segment const s           = chunk_segment(words_.words, words_.count, cursor_);
      bool const reaches_end    = s.length != 0 && s.start + s.length == words_.bits();
      std::uint32_t const len   = s.length + (reaches_end ? cont_ : 0u);
      std::uint32_t const first = page0_ + s.start;
      std::uint32_t const has   = __ballot_sync(group_, len != 0);
      if (has == 0 || need_ == 0) return;
      std::uint32_t min_need = smallest_need();
      for (std::uint32_t m = has; m != 0 && need_ != 0; m &= m - 1) {
        int const t                 = __ffs(static_cast<int>(m)) - 1;
        std::uint32_t const first_t = __shfl_sync(group_, first, t);
        std::uint32_t const len_t   = __shfl_sync(group_, len, t);
        // Skipping a segment shorter than every need changes nothing (first_fit would take
        // nothing from it); it spares the shuffles.
        if (len_t >= min_need && serve(first_t, len_t, round) && need_ != 0)
          min_need = smallest_need();
      }
      cursor_ = s.start + s.length;
    }
  }

  __device__ std::uint32_t smallest_need() const {
    return __reduce_min_sync(group_, ((need_ >> lane_) & 1u) != 0 ? n_ : ~0u);
  }

  /// A visited segment: the needy lanes take sub-runs (first fit, lowest lane first), the lowest
  /// taker claims the aggregated run (claim_run), the outcome is broadcast. True if it was won.
  __device__ bool serve(std::uint32_t first, std::uint32_t length, std::uint32_t round) {
    std::uint32_t takers = 0, mine = 0;
    std::uint32_t const total = first_fit(
        need_,
        length,
        [&](std::uint32_t l) { return __shfl_sync(group_, n_, static_cast<int>(l)); },
        [&](std::uint32_t l, std::uint32_t offset) {
          takers |= 1u << l;
          if (l == lane_) mine = offset;
        });
    if (total == 0) return false;
    auto const claimer = __ffs(static_cast<int>(takers)) - 1;
    int won            = 0;
    if (static_cast<int>(lane_) == claimer) won = claim_run(pool_, first, total) ? 1 : 0;
    won = __shfl_sync(group_, won, claimer);
    if (won == 0) return false;
    if (((takers >> lane_) & 1u) != 0) result_ = GetPageResult{first + mine, round};
    need_ &= ~takers;
    return true;
  }

  PagePoolRef<core::DeviceAtomics, W> pool_;
  std::uint32_t group_;
  std::uint32_t lane_;
  std::uint32_t n_;
  std::uint32_t need_   = 0;  // equal across the group
  std::uint32_t cont_   = 0;
  std::uint32_t cursor_ = 0;
  std::uint32_t page0_  = 0;
  LaneWords<W> words_{};
  GetPageResult result_{};
};

}  // namespace detail

/// RW_malloc (RW Alg. 3): n consecutive free pages for this lane, found together with whichever
/// lanes of the warp call it at the same time (any subset; ITS-safe, see the top of this file).
/// Returns the run's first page and the number of rounds it took (kNoPage and max_steps if none
/// was found in max_steps rounds; kNoPage and 0 for n = 0). n > max_run_pages(w) is a
/// precondition error: the kernel traps (HEAPLAB_EXPECTS), as for a bad page in free_page.
template <class W>
__device__ GetPageResult rw_malloc(PagePoolRef<core::DeviceAtomics, W> const& pool,
                                   std::uint32_t n,
                                   PageRng& rng) {
  HEAPLAB_EXPECTS(n <= max_run_pages(sizeof(W) * 8),
                  "rw_malloc: a request of more than max_run_pages(w) = 32 * w pages");
  std::uint32_t const group = __activemask();  // (1): once, here
  return detail::WarpMalloc<W>(pool, group, n).run(rng);
}
// A run is freed with free_run (rw_malloc.hpp), by any one thread.

}  // namespace heaplab::rw
