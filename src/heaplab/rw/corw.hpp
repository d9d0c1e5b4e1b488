// CoRW, the collaborative random walk (RW Alg. 2, RW sec. 4.2; docs/rw.md "CoRW (RW Alg. 2)"):
// the lanes of a warp walk the used bitmap together and share the free pages they find, so that
// a lane whose word was full is served by a lane whose word had several free pages (the paper's
// point: TAS ~ WAS). Header-only, __host__ __device__ over the atomics policy A of
// core/atomics.hpp:
//
//   corw::fks, lanes_below, provider_of, offer_taken, first_zero_bit
//                          the lane arithmetic of Alg. 2 lines 9-17 (pure functions of masks),
//                          shared by the GPU warp code (corw.cuh) and the CPU lock-step warp;
//   corw::LaneRound<W>     one lane's state in one round (registers on the GPU);
//   corw::start_round, offer, take, settle_offer, claim_and_unlock, keeps
//                          the per-lane phases of a round;
//   corw::distribute       the distribution (Alg. 2 lines 9-17) of a whole group on the host;
//   corw_get_pages         the CPU "lock-step warp": one logical thread runs the round structure
//                          for a group of <= 32 lanes, lane by lane, issuing the atomics the GPU
//                          lanes would issue, in lane order (what the explorer and the unit tests
//                          run; corw.cuh is the GPU version).
//
// One round (outer loop iteration; one step for every lane that still needs a page):
//   1. every lane of the group picks a random used word p and tries to lock it (LockMap, Alg. 2
//      line 6); if the lock was taken P = all ones (the lane is a consumer only), else
//      P = load_word(p) (relaxed, line 7);
//   2. distribution on local values only (lines 9-17): each provider (a lane with a zero bit in P)
//      offers its first zero bit; the needy lane with s needy lanes below it takes the offer of
//      the (s+1)-th provider (fks(has, s+1)); a provider whose offer was taken sets that bit in
//      its P and in its `taken` mask; repeated while some lane needs and some lane has;
//   3. each provider claims its `taken` bits with ONE claim_bits(p, taken) and gets `won`; a
//      receiver keeps its page only if the page's bit is in its provider's `won`, else it is
//      needy again next round. Alg. 2 as printed never writes BitMap back: this claim is ours;
//   4. lock holders unlock p (line 18).
// Bounded: at most max_steps rounds; lanes still needy then get kNoPage with max_steps steps.
//
// Why the lock is only a hint. Page ownership is decided by claim_bits alone: a page is handed
// out only if the provider's fetch_or found its bit clear. The LockMap (relaxed fetch_or /
// fetch_and) steers the walkers of different warps to different words so that their offers do
// not collide; it protects no data. A walker that ignores it (RW, RW-BM on the same pool), a
// stale relaxed read of P, or a lock holder that read P before another warp's claim, can only
// make a claim lose bits, which sends their receivers back to the walk.
//
// Linearization points and memory orders. The GETPAGE of a lane that keeps page b linearizes at
// its provider's claim_bits fetch_or (acquire: pairs with the release fetch_and of b's previous
// FREEPAGE, RW sec. 3.1). Lock, unlock and the read of P are relaxed and are no linearization
// point. On the GPU the receiver learns its page through __shfl_sync, which is not a memory
// fence, so corw.cuh puts a __syncwarp(group) after the claims and before any receiver uses its
// page: __syncwarp orders the memory accesses of the participating threads, so the provider's
// acquire happens before the receiver's accesses. On the host the lock-step warp is one thread.
#pragma once

#include <cstdint>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw {

/// A set of lanes of one warp (bit i: lane i), as __ballot_sync returns it.
using LaneMask = std::uint32_t;

namespace corw {

/// fks (RW Alg. 2 line 13, "find the k-th set bit"): the position (0..63) of the k-th set bit of
/// `mask`, k >= 1 counted from the least significant bit; -1 if mask has fewer than k set bits
/// (or k < 1). log2(64) = 6 popc halvings (core::nth_set_bit, which counts from 0). The paper's
/// fks answers a 1-based position, hence its "- 1"; ours is 0-based already.
HEAPLAB_HD_INLINE int fks(std::uint64_t mask, int k) {
  return k < 1 ? -1 : core::nth_set_bit(mask, k - 1);
}

/// The lanes below `lane` (the GPU's %lanemask_lt), lane < 32.
HEAPLAB_HD_INLINE LaneMask lanes_below(std::uint32_t lane) {
  return static_cast<LaneMask>((std::uint64_t{1} << lane) - 1u);
}

/// RW Alg. 2 lines 12-13: the lane whose offer needy lane `lane` takes in a distribution step.
/// s = the needy lanes below it; the first s offers go to them, so it takes the (s+1)-th
/// provider's. -1 if the lane is not needy or fewer than s+1 lanes have an offer.
HEAPLAB_HD_INLINE int provider_of(LaneMask need, LaneMask has, std::uint32_t lane) {
  if (((need >> lane) & 1u) == 0) return -1;
  int const s = core::popcount(need & lanes_below(lane));
  return fks(has, s + 1);
}

/// Whether provider `lane`'s offer is taken in a distribution step: the providers of rank
/// 0 .. popc(need) - 1 are exactly the ones provider_of names, so a provider knows it from the
/// two masks alone (on the GPU no lane tells it).
HEAPLAB_HD_INLINE bool offer_taken(LaneMask need, LaneMask has, std::uint32_t lane) {
  if (((has >> lane) & 1u) == 0) return false;
  int const rank = core::popcount(has & lanes_below(lane));
  // MUTANT corw_offer_taken_off_by_one: one provider too many believes its offer was taken; it
  // claims a page that no lane received (a leaked page: used, owned by nobody).
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::corw_offer_taken_off_by_one)
    return rank <= core::popcount(need);
  return rank < core::popcount(need);
}

/// RW Alg. 2 line 10: the first zero bit of P, -1 if P is all ones.
template <class W>
HEAPLAB_HD_INLINE int first_zero_bit(W p) {
  return core::find_first_set(static_cast<W>(~p));
}

/// One lane's state in one round (registers on the GPU).
template <class W>
struct LaneRound {
  std::uint32_t word = 0;        // p (Alg. 2 line 5)
  bool locked        = false;    // r == 0 (line 6): this lane set LockMap[p] and must clear it
  bool word_full     = false;    // the lane locked p and read it with no zero bit
  W view             = ~W{0};    // P (line 7); all ones: a consumer only
  W taken            = 0;        // bits of P whose offer a lane took (to be claimed)
  W won              = 0;        // the bits of `taken` that this lane's claim_bits won
  int provider       = -1;       // the lane whose offer this lane took this round; -1: none
  std::uint32_t page = kNoPage;  // the page that offer named
};

/// Phase 1 of a round (Alg. 2 lines 5-7): a random used word, its lock, and P.
template <class A, class W>
HEAPLAB_HD_INLINE void start_round(PagePoolRef<A, W> const& pool, LaneRound<W>& r, PageRng& rng) {
  r        = LaneRound<W>{};
  r.word   = rng.below(pool.storage().num_words);
  r.locked = pool.try_lock_word(r.word);  // relaxed: a hint, see the file comment
  if (r.locked) {
    r.view      = pool.load_word(r.word);  // relaxed candidate read; claim_bits decides
    r.word_full = r.view == static_cast<W>(~W{0});
  }
}

/// Whether the lane has a page to offer (Alg. 2 lines 8 and 16: P != all ones).
template <class W>
HEAPLAB_HD_INLINE bool has_offer(LaneRound<W> const& r) {
  return r.view != static_cast<W>(~W{0});
}

/// The page the lane offers (b, Alg. 2 lines 10-11): its first zero bit; kNoPage if none.
template <class W>
HEAPLAB_HD_INLINE std::uint32_t offer(LaneRound<W> const& r) {
  int const b = first_zero_bit(r.view);
  return b < 0 ? kNoPage : r.word * static_cast<std::uint32_t>(sizeof(W) * 8) + std::uint32_t(b);
}

/// The receiving side of Alg. 2 line 14: this lane takes `page`, offered by lane `provider`.
template <class W>
HEAPLAB_HD_INLINE void take(LaneRound<W>& r, int provider, std::uint32_t page) {
  r.provider = provider;
  r.page     = page;
}

/// The providing side of a distribution step: if the offer was taken, its bit is set in P (it is
/// not offered again) and added to `taken`.
template <class W>
HEAPLAB_HD_INLINE void settle_offer(LaneRound<W>& r,
                                    LaneMask need,
                                    LaneMask has,
                                    std::uint32_t lane) {
  if (!offer_taken(need, has, lane)) return;
  W const bit = static_cast<W>(W{1} << first_zero_bit(r.view));
  r.taken     = static_cast<W>(r.taken | bit);
  // MUTANT corw_offer_not_marked: P keeps the bit clear, so the next distribution step offers
  // the same page again: two lanes receive it, and the one claim covers both.
  if HEAPLAB_MUTANT_CONSTEXPR (!core::mutant::corw_offer_not_marked)
    r.view = static_cast<W>(r.view | bit);
}

/// Phases 3-4 of a round: one claim_bits of the taken bits (acquire; linearization point of each
/// page it wins), then the lock's release (Alg. 2 line 18, relaxed). Claiming before unlocking
/// keeps the hint accurate: the next lock holder reads P after the claim.
template <class A, class W>
HEAPLAB_HD_INLINE void claim_and_unlock(PagePoolRef<A, W> const& pool, LaneRound<W>& r) {
  if (r.taken != 0) r.won = pool.claim_bits(r.word, r.taken);
  // MUTANT corw_lock_not_released: a lane whose locked word had no zero bit forgets its lock
  // (it had nothing to offer); the LockMap is not clear at quiescence.
  if (core::mutant::corw_lock_not_released && r.word_full) return;
  if (r.locked) pool.unlock_word(r.word);
}

/// Whether a receiver keeps its page: only if its provider's claim won the page's bit. A lost
/// bit was claimed by a walker that ignores the lock (or read a stale P); the lane is needy again.
template <class W>
HEAPLAB_HD_INLINE bool keeps(LaneRound<W> const& r, W provider_won) {
  if (r.provider < 0) return false;
  // MUTANT corw_keeps_lost_claim: the receiver keeps the page whether or not its provider's
  // claim won it: a page another walker claimed first is owned twice.
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::corw_keeps_lost_claim) return true;
  return ((provider_won >> (r.page % (sizeof(W) * 8))) & 1u) != 0;
}

/// The lanes of `group` whose LaneRound satisfies `pred` (a __ballot_sync on the host).
template <class W, class Pred>
inline LaneMask ballot(LaneRound<W> const* lanes, LaneMask group, Pred pred) {
  LaneMask m = 0;
  for (std::uint32_t l = 0; l < kWarpLanes; ++l)
    if (((group >> l) & 1u) != 0 && pred(lanes[l])) m |= LaneMask{1} << l;
  return m;
}

/// The distribution of one round (RW Alg. 2 lines 9-17) for the lanes of `group`, on the host:
/// the lanes of `need` receive offers (take) and the providers settle them, step by step, until
/// no lane needs or none has. Every step serves min(popc(need), popc(has)) >= 1 lanes, so at
/// most 32 steps. Returns the number of distribution steps (the rows of RW Figure 5).
template <class W>
inline std::uint32_t distribute(LaneRound<W>* lanes, LaneMask group, LaneMask need) {
  auto const waiting = [](LaneRound<W> const& r) { return r.provider < 0; };
  need &= ballot(lanes, group, waiting);
  LaneMask has        = ballot(lanes, group, has_offer<W>);
  std::uint32_t steps = 0;
  while (need != 0 && has != 0) {
    ++steps;
    std::uint32_t offers[kWarpLanes];  // b of every lane, read before any provider settles
    for (std::uint32_t l = 0; l < kWarpLanes; ++l)
      offers[l] = ((group >> l) & 1u) != 0 ? offer(lanes[l]) : kNoPage;
    for (std::uint32_t l = 0; l < kWarpLanes; ++l) {
      if (((group >> l) & 1u) == 0) continue;
      int const src = provider_of(need, has, l);
      if (src >= 0) take(lanes[l], src, offers[src]);
    }
    for (std::uint32_t l = 0; l < kWarpLanes; ++l)
      if (((group >> l) & 1u) != 0) settle_offer(lanes[l], need, has, l);
    need &= ballot(lanes, group, waiting);
    has = ballot(lanes, group, has_offer<W>);
  }
  return steps;
}

}  // namespace corw

/// One lane of a CPU lock-step warp: its walk's random numbers, whether it asks for a page (a
/// lane that does not is not in the group, like a GPU lane that does not call), and its answer
/// (steps: the rounds until it kept its page; max_steps with kNoPage; 0 if it did not ask).
struct CorwLane {
  PageRng rng{};
  bool wants = false;
  GetPageResult result{};
};

namespace detail {

/// The CPU lock-step warp's rounds (corw_get_pages).
template <class A, class W>
class CorwLockStepWarp {
 public:
  CorwLockStepWarp(PagePoolRef<A, W> const& pool, CorwLane* lanes, std::uint32_t n)
      : pool_(pool), lanes_(lanes), n_(n) {
    for (std::uint32_t l = 0; l < n; ++l)
      if (lanes[l].wants) group_ |= LaneMask{1} << l;
  }

  void run() {
    for (std::uint32_t l = 0; l < n_; ++l) lanes_[l].result = GetPageResult{};
    LaneMask need             = group_;
    std::uint32_t const bound = pool_.storage().max_steps;
    for (std::uint32_t round = 1; need != 0 && round <= bound; ++round) {
      for (std::uint32_t l = 0; l < n_; ++l)  // phase 1, lane by lane
        if (in_group(l)) corw::start_round(pool_, state_[l], lanes_[l].rng);
      corw::distribute(state_, group_, need);  // phase 2, registers only
      for (std::uint32_t l = 0; l < n_; ++l)   // phases 3-4: claims and unlocks
        if (in_group(l)) corw::claim_and_unlock(pool_, state_[l]);
      need = settle(need, round);
    }
    for (std::uint32_t l = 0; l < n_; ++l)
      if (((need >> l) & 1u) != 0) lanes_[l].result = GetPageResult{kNoPage, bound};
  }

 private:
  [[nodiscard]] bool in_group(std::uint32_t l) const { return ((group_ >> l) & 1u) != 0; }

  /// End of a round: receivers whose provider won their page keep it; returns who still needs.
  LaneMask settle(LaneMask need, std::uint32_t round) {
    LaneMask still = 0;
    for (std::uint32_t l = 0; l < n_; ++l) {
      if (((need >> l) & 1u) == 0) continue;
      corw::LaneRound<W> const& r = state_[l];
      W const won                 = r.provider < 0 ? W{0} : state_[r.provider].won;
      if (corw::keeps(r, won))
        lanes_[l].result = GetPageResult{r.page, round};
      else
        still |= LaneMask{1} << l;
    }
    return still;
  }

  PagePoolRef<A, W> pool_;
  CorwLane* lanes_;
  std::uint32_t n_;
  LaneMask group_ = 0;
  corw::LaneRound<W> state_[kWarpLanes]{};
};

}  // namespace detail

/// CoRW GETPAGE for a group of lanes (RW Alg. 2 with the round above) run by one CPU thread as a
/// lock-step warp: lanes[l] for l < n <= 32 is lane l; the lanes with `wants` form the group and
/// each gets a page (or kNoPage after max_steps rounds) in lanes[l].result. The atomics are the
/// GPU lanes' (try_lock_word, load_word, claim_bits, unlock_word), issued phase by phase in lane
/// order, one linearization of what the GPU lanes of a warp may do.
template <class A, class W>
void corw_get_pages(PagePoolRef<A, W> const& pool, CorwLane* lanes, std::uint32_t n) {
  HEAPLAB_EXPECTS(n <= kWarpLanes, "corw_get_pages: a warp has at most 32 lanes");
  detail::CorwLockStepWarp<A, W> warp(pool, lanes, n);
  warp.run();
}

}  // namespace heaplab::rw
