// RW_malloc (RW Alg. 3, sec. 4.3): runs of n consecutive free pages, found by a warp that reads a
// region of consecutive used words and serves its lanes from the free segments in it. Host +
// device core over the atomics policies of core/atomics.hpp (docs/rw.md "RW_malloc"):
//
//   word_segment, leading_free_bits, chunk_segment   free segments (S, L) of a word and of a
//                                                      lane's consecutive words (RW sec. 4.3)
//   Region, continuation_bits, first_fit               the warp round's arithmetic, shared by the
//                                                      GPU warp (rw_malloc.cuh) and the CPU
//                                                      lock-step warp below
//   claim_run / free_run                               the word-by-word claim with rollback, and
//                                                      the release of a run
//   rw_malloc_warp<A, W>                               a group of <= 32 lanes run as ONE logical
//                                                      thread (the explorer's warp)
//
// Ownership. A page is handed out only by PagePoolRef::claim_bits (one acquire fetch_or on its
// used word, returning the bits this call won) and given back only by release_bits (release
// fetch_and). A run is claimed word by word in ascending word order; if a word's claim does not
// win all its bits (another walker took one since the region was read), the run releases what it
// already won (the leftovers: pages never handed out) and the candidate is lost. Everything the
// round computes from the region's words (segments, connections, who takes what) only picks
// candidates, like the relaxed reads of RW Alg. 1 line 3: a wrong segment costs a lost claim,
// never a page handed out twice.
//
// Linearization. A successful claim_run linearizes at its last claim_bits: every bit of the run is
// then set by this call (the earlier words' bits were won by it and nobody but this caller can
// clear them). A failed claim_run has no effect once its rollback is done: the leftovers were
// never visible as allocated to anyone. free_run frees a run word by word; each page's FREEPAGE
// linearizes at its word's fetch_and.
// Memory orders: claims acquire (pair with the release of the pages' previous free or rollback),
// rollback and free release (detail::free_order), region reads relaxed.
#pragma once

#include <cstdint>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/core/protocol_check.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw {

// kWarpLanes (page_pool.hpp): a warp's region has this many used words (RW sec. 4.3).
/// "No lane" (a lane index of 32).
inline constexpr std::uint32_t kNoLane = kWarpLanes;

/// The longest run RW_malloc serves: the region one warp reads, 32 words of w bits (RW sec. 4.3
/// "a large region (e.g., 4096 bits)"). A larger request is a precondition error (host:
/// precondition_error; device: the kernel traps).
HEAPLAB_HD_INLINE constexpr std::uint32_t max_run_pages(std::uint32_t word_bits) {
  return kWarpLanes * word_bits;
}

/// The pages of a request of `bytes` bytes: ceil(bytes / page_bytes) (RW sec. 4.3, n = ceil(X/S)).
HEAPLAB_HD_INLINE constexpr std::uint64_t pages_for_bytes(std::uint64_t bytes,
                                                          std::uint64_t page_bytes) {
  return bytes / page_bytes + (bytes % page_bytes != 0 ? 1u : 0u);
}

/// A free segment (RW Alg. 3's (S, L)): `length` free pages from position `start`; length 0: none.
struct Segment {
  std::uint32_t start  = 0;
  std::uint32_t length = 0;
};

/// Free pages of word v from bit 0 up (w if v is free): how far a segment that reached the previous
/// word's top bit continues into this one.
template <class W>
HEAPLAB_HD_INLINE std::uint32_t low_free_bits(W v) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  return v == 0 ? bits : static_cast<std::uint32_t>(core::find_first_set(v));
}

/// The first free segment of word v at or after bit `from` (RW Alg. 3 lines 7 and 21). Page 0 of
/// a word is our bit 0, so the paper's clz on the complement becomes find-first-set: S = the
/// lowest clear bit >= from, L = the distance to the next set bit above S (or to the word's top).
template <class W>
HEAPLAB_HD_INLINE Segment word_segment(W v, std::uint32_t from) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  if (from >= bits) return Segment{bits, 0};
  std::uint64_t const free = static_cast<W>(~v) & ~core::low_bits(from);
  if (free == 0) return Segment{bits, 0};
  auto const s                   = static_cast<std::uint32_t>(core::find_first_set(free));
  std::uint64_t const used_above = std::uint64_t{v} >> s;  // bit 0 (page s) is clear
  std::uint32_t const l =
      used_above == 0 ? bits - s : static_cast<std::uint32_t>(core::find_first_set(used_above));
  return Segment{s, l};
}

/// Free pages at the start of words[0 .. count): whole free words, then the low free bits of the
/// first word that is not free.
template <class W>
HEAPLAB_HD_INLINE std::uint32_t leading_free_bits(W const* words, std::uint32_t count) {
  std::uint32_t n = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    n += low_free_bits(words[k]);
    if (words[k] != 0) break;
  }
  return n;
}

/// The first free segment of words[0 .. count) (a lane's consecutive words) at or after position
/// `from` (bit from % w of word from / w). A segment that reaches a word's top bit continues into
/// the next word (RW sec. 4.3: "free segments running across two neighboring words are also
/// connected"); the length counts only the pages inside these words.
template <class W>
HEAPLAB_HD_INLINE Segment chunk_segment(W const* words, std::uint32_t count, std::uint32_t from) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  for (std::uint32_t k = from / bits; k < count; ++k) {
    Segment const s = word_segment(words[k], k == from / bits ? from % bits : 0u);
    if (s.length == 0) continue;
    std::uint32_t length = s.length;
    if (s.start + s.length == bits) length += leading_free_bits(words + k + 1, count - k - 1);
    return Segment{k * bits + s.start, length};
  }
  return Segment{count * bits, 0};
}

/// One round's region: `words` used words from `first`; lane rank r of the group covers the
/// `per_lane` words from first + begin(r) (the last ranks fewer or none). With 32 lanes each lane
/// reads one word, as in RW Alg. 3 line 6 (P <- BitMap[p + t]); a smaller group reads the same
/// 32-word region with more words per lane, so every group can serve runs up to max_run_pages.
struct Region {
  std::uint32_t first    = 0;
  std::uint32_t words    = 0;
  std::uint32_t per_lane = 0;
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t begin(std::uint32_t rank) const {
    return rank * per_lane < words ? rank * per_lane : words;
  }
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t count(std::uint32_t rank) const {
    return begin(rank + 1) - begin(rank);
  }
};

/// The region of a round whose leader drew `first` for a group of `lanes` lanes.
HEAPLAB_HD_INLINE Region region_at(std::uint32_t first,
                                   std::uint32_t num_words,
                                   std::uint32_t lanes) {
  std::uint32_t const words = num_words < kWarpLanes ? num_words : kWarpLanes;
  return Region{first, words, (words + lanes - 1) / lanes};
}

/// The leader's random region start (RW Alg. 3 line 5), clamped so that the region's 32 words (or
/// the whole bitmap) lie inside the used bitmap: no run goes beyond the last word, and bits >= T
/// are set, so none goes beyond T.
HEAPLAB_HD_INLINE std::uint32_t draw_region_start(std::uint32_t num_words, PageRng& rng) {
  std::uint32_t const words = num_words < kWarpLanes ? num_words : kWarpLanes;
  return rng.below(num_words - words + 1);
}

/// Rank of `lane` in `group`: the group's lanes below it.
HEAPLAB_HD_INLINE std::uint32_t lane_rank(std::uint32_t group, std::uint32_t lane) {
  return static_cast<std::uint32_t>(core::popcount(group & core::low_bits(lane)));
}

/// The group's next lane above `lane` that is not in `full` (kNoLane: none).
HEAPLAB_HD_INLINE std::uint32_t next_partial_lane(std::uint32_t group,
                                                  std::uint32_t lane,
                                                  std::uint32_t full) {
  std::uint64_t const above = group & ~full & ~core::low_bits(lane + 1);
  return above == 0 ? kNoLane : static_cast<std::uint32_t>(core::find_first_set(above));
}

/// The group's lane just below `lane` (kNoLane: none).
HEAPLAB_HD_INLINE std::uint32_t previous_lane(std::uint32_t group, std::uint32_t lane) {
  std::uint64_t const below = group & core::low_bits(lane);
  if (below == 0) return kNoLane;
  return static_cast<std::uint32_t>(core::nth_set_bit(below, core::popcount(below) - 1));
}

/// How far a segment that reaches the end of `lane`'s words continues into the following lanes'
/// words: all words of the following lanes in `full` (every page free), then `next_low_free`, the
/// leading free pages of the first following lane that is not full (`next`; kNoLane: none).
HEAPLAB_HD_INLINE std::uint32_t continuation_bits(Region const& region,
                                                  std::uint32_t word_bits,
                                                  std::uint32_t group,
                                                  std::uint32_t lane,
                                                  std::uint32_t next,
                                                  std::uint32_t next_low_free) {
  std::uint32_t const from       = lane_rank(group, lane) + 1;
  std::uint32_t const to         = next == kNoLane ? kWarpLanes : lane_rank(group, next);
  std::uint32_t const free_words = region.begin(to) - region.begin(from);
  return free_words * word_bits + (next == kNoLane ? 0u : next_low_free);
}

/// First fit with the warp's aggregation (RW sec. 4.3 last paragraph): the needy lanes `need`,
/// lowest first, take consecutive sub-runs of a free segment of `length` pages while their
/// request fits in what is left. n_of(lane) is a lane's request (on the GPU a shuffle, so every
/// lane of the group runs this loop identically: need and length are equal across the group);
/// on_take(lane, offset) records a taker. Returns the pages taken: one aggregated run, claimed
/// by one lane with one claim per word.
template <class NOf, class OnTake>
HEAPLAB_HD_INLINE std::uint32_t first_fit(std::uint32_t need,
                                          std::uint32_t length,
                                          NOf&& n_of,
                                          OnTake&& on_take) {
  std::uint32_t total = 0;
  for (std::uint32_t m = need; m != 0; m &= m - 1) {
    auto const lane       = static_cast<std::uint32_t>(core::find_first_set(m));
    std::uint32_t const n = n_of(lane);
    if (n <= length - total) {
      on_take(lane, total);
      total += n;
    }
  }
  return total;
}

/// The bits of used word `word` that pages [first, first + n) cover.
template <class W>
HEAPLAB_HD_INLINE W run_word_mask(std::uint32_t first, std::uint32_t n, std::uint32_t word) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  std::uint64_t const lo       = std::uint64_t{word} * bits;
  std::uint64_t const a        = first > lo ? first : lo;
  std::uint64_t const end      = std::uint64_t{first} + n;
  std::uint64_t const b        = end < lo + bits ? end : lo + bits;
  if (b <= a) return W{0};
  return static_cast<W>(core::low_bits(static_cast<unsigned>(b - a)) << (a - lo));
}

/// Gives back the leftovers of a lost claim: the words before `lost` (won whole) and the bits
/// `won` of word `lost` (release, like a free: these pages were never handed out).
template <class A, class W>
HEAPLAB_HD_INLINE void roll_back_run(PagePoolRef<A, W> const& pool,
                                     std::uint32_t first,
                                     std::uint32_t n,
                                     std::uint32_t lost,
                                     W won) {
  // MUTANT rw_malloc_no_rollback: the leftovers of a lost run are never released: pages stay
  // used with nobody holding them (a leak).
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_malloc_no_rollback) return;
  constexpr std::uint32_t bits = sizeof(W) * 8;
  for (std::uint32_t w = first / bits; w < lost; ++w)
    pool.release_bits(w, run_word_mask<W>(first, n, w));
  // MUTANT rw_malloc_rollback_all_bits: the lost word's whole mask is released, not only the bits
  // this claim won: a page another walker holds becomes free under it.
  W const give_back =
      core::mutant::rw_malloc_rollback_all_bits ? run_word_mask<W>(first, n, lost) : won;
  if (give_back != 0) pool.release_bits(lost, give_back);
}

/// Claims pages [first, first + n) word by word in ascending word order (claim_bits, acquire). If
/// a word's claim does not win all its bits, rolls back (roll_back_run) and returns false.
/// Linearization of a true answer: the last claim_bits (the whole run is then set by this call).
template <class A, class W>
HEAPLAB_HD_INLINE bool claim_run(PagePoolRef<A, W> const& pool,
                                 std::uint32_t first,
                                 std::uint32_t n) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  HEAPLAB_EXPECTS(
      n >= 1 && first < pool.storage().num_pages && n <= pool.storage().num_pages - first,
      "claim_run: the run is empty or reaches beyond the pool");
  std::uint32_t const last = (first + n - 1) / bits;
  for (std::uint32_t w = first / bits; w <= last; ++w) {
    W const mask = run_word_mask<W>(first, n, w);
    W const won  = pool.claim_bits(w, mask);
    // MUTANT rw_malloc_partial_claim_wins: a word's claim counts as won if it won any bit, so a
    // run whose page another walker claimed first is handed out (that page has two owners).
    bool const whole = core::mutant::rw_malloc_partial_claim_wins ? won != 0 : won == mask;
    if (!whole) {
      roll_back_run(pool, first, n, w, won);
      return false;
    }
  }
  return true;
}

/// Frees the run [first, first + n) (FREEPAGE for each page, one release fetch_and per word, in
/// ascending word order). A page not in use is a protocol violation (a double free); a run beyond
/// the pool a precondition error.
template <class A, class W>
HEAPLAB_HD_INLINE void free_run(PagePoolRef<A, W> const& pool,
                                std::uint32_t first,
                                std::uint32_t n) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  HEAPLAB_EXPECTS(
      n >= 1 && first < pool.storage().num_pages && n <= pool.storage().num_pages - first,
      "free_run: the run is empty or reaches beyond the pool");
  for (std::uint32_t w = first / bits; w <= (first + n - 1) / bits; ++w)
    pool.release_bits(w, run_word_mask<W>(first, n, w));
}

/// A lane's part of the region as read in one round (relaxed loads: candidates only).
template <class W>
struct LaneWords {
  static constexpr std::uint32_t kBits = sizeof(W) * 8;
  W words[kWarpLanes]{};
  std::uint32_t count = 0;

  template <class A>
  HEAPLAB_HD_INLINE void load(PagePoolRef<A, W> const& pool, std::uint32_t first) {
    for (std::uint32_t k = 0; k < count; ++k) words[k] = pool.load_word(first + k);
  }
  [[nodiscard]] HEAPLAB_HD_INLINE bool full() const {
    bool all = count > 0;
    for (std::uint32_t k = 0; k < count; ++k) all = all && words[k] == 0;
    return all;
  }
  [[nodiscard]] HEAPLAB_HD_INLINE bool top_free() const {
    return count > 0 && (words[count - 1] >> (kBits - 1)) == 0;
  }
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t low_free() const {
    return leading_free_bits(words, count);
  }
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t bits() const { return count * kBits; }
};

/// One lane of a CPU lock-step warp: its request in pages (0: the lane did not call RW_malloc)
/// and its walk's random numbers (the group's lowest lane draws the regions).
struct MallocLane {
  std::uint32_t n = 0;
  PageRng rng{};
};

namespace detail {

/// RW Alg. 3 for a group of lanes as one logical thread: every lane's part of a round is done lane
/// by lane in lane order, with the same atomics the GPU lanes issue (rw_malloc.cuh), so the CPU
/// explorer interleaves other threads at each of them. Lane data the GPU shares with shuffles and
/// ballots is read from arrays here; the arithmetic is the shared helpers above.
template <class A, class W>
class MallocLockStepWarp {
 public:
  static constexpr std::uint32_t kBits = sizeof(W) * 8;

  MallocLockStepWarp(PagePoolRef<A, W> const& pool, std::vector<MallocLane>& lanes)
      : pool_(pool), lanes_(lanes), out_(lanes.size()) {
    HEAPLAB_EXPECTS(lanes.size() <= kWarpLanes, "rw_malloc_warp: more than 32 lanes");
    for (std::uint32_t l = 0; l < lanes.size(); ++l) {
      HEAPLAB_EXPECTS(lanes[l].n <= max_run_pages(kBits),
                      "rw_malloc: a request of more than max_run_pages(w) = 32 * w pages");
      if (lanes[l].n > 0) group_ |= 1u << l;
    }
    need_ = group_;
  }

  std::vector<GetPageResult> run() {
    std::uint32_t const max = pool_.storage().max_steps;
    std::uint32_t round     = 1;
    for (; need_ != 0 && round <= max; ++round) one_round(round);
    for (std::uint32_t m = need_; m != 0; m &= m - 1)
      out_[core::find_first_set(m)].steps = round - 1;
    return out_;
  }

 private:
  void one_round(std::uint32_t round) {
    auto const leader         = static_cast<std::uint32_t>(core::find_first_set(group_));
    std::uint32_t const start = draw_region_start(pool_.storage().num_words, lanes_[leader].rng);
    region_                   = region_at(start, pool_.storage().num_words, core::popcount(group_));
    std::uint32_t full = 0, top = 0;
    for (std::uint32_t m = group_; m != 0; m &= m - 1) {
      auto const l          = static_cast<std::uint32_t>(core::find_first_set(m));
      std::uint32_t const r = lane_rank(group_, l);
      words_[l].count       = region_.count(r);
      words_[l].load(pool_, region_.first + region_.begin(r));
      full |= words_[l].full() ? 1u << l : 0u;
      top |= words_[l].top_free() ? 1u << l : 0u;
    }
    for (std::uint32_t m = group_; m != 0; m &= m - 1) {
      auto const l             = static_cast<std::uint32_t>(core::find_first_set(m));
      std::uint32_t const next = next_partial_lane(group_, l, full);
      cont_[l]                 = continuation_bits(
          region_, kBits, group_, l, next, next == kNoLane ? 0u : words_[next].low_free());
      std::uint32_t const prev = previous_lane(group_, l);
      cursor_[l] = prev != kNoLane && ((top >> prev) & 1u) != 0 ? words_[l].low_free() : 0u;
    }
    visit_segments(round);
  }

  /// The paper's inner loop (RW Alg. 3 lines 9-22): each lane's next segment, visited lane by
  /// lane, until no lane has one or no lane is needy.
  void visit_segments(std::uint32_t round) {
    while (true) {
      std::uint32_t has = 0;
      for (std::uint32_t m = group_; m != 0; m &= m - 1) {
        auto const l = static_cast<std::uint32_t>(core::find_first_set(m));
        seg_[l]      = chunk_segment(words_[l].words, words_[l].count, cursor_[l]);
        length_[l] =
            seg_[l].length +
            (seg_[l].length != 0 && seg_[l].start + seg_[l].length == words_[l].bits() ? cont_[l]
                                                                                       : 0u);
        has |= length_[l] != 0 ? 1u << l : 0u;
      }
      if (has == 0 || need_ == 0) return;
      for (std::uint32_t m = has; m != 0 && need_ != 0; m &= m - 1)
        serve(static_cast<std::uint32_t>(core::find_first_set(m)), round);
      for (std::uint32_t m = group_; m != 0; m &= m - 1) {
        auto const l = static_cast<std::uint32_t>(core::find_first_set(m));
        cursor_[l]   = seg_[l].start + seg_[l].length;
      }
    }
  }

  /// Lane t's segment: the needy lanes take sub-runs (first fit), the lowest taker claims them.
  void serve(std::uint32_t t, std::uint32_t round) {
    std::uint32_t const first =
        (region_.first + region_.begin(lane_rank(group_, t))) * kBits + seg_[t].start;
    std::uint32_t takers = 0;
    std::uint32_t offset[kWarpLanes]{};
    std::uint32_t const total = first_fit(
        need_,
        length_[t],
        [&](std::uint32_t l) { return lanes_[l].n; },
        [&](std::uint32_t l, std::uint32_t off) {
          takers |= 1u << l;
          offset[l] = off;
        });
    if (total == 0 || !claim_run(pool_, first, total)) return;
    for (std::uint32_t m = takers; m != 0; m &= m - 1) {
      auto const l = static_cast<std::uint32_t>(core::find_first_set(m));
      out_[l]      = GetPageResult{first + offset[l], round};
    }
    need_ &= ~takers;
  }

  PagePoolRef<A, W> pool_;
  std::vector<MallocLane>& lanes_;
  std::vector<GetPageResult> out_;
  std::uint32_t group_ = 0;
  std::uint32_t need_  = 0;
  Region region_{};
  LaneWords<W> words_[kWarpLanes]{};
  std::uint32_t cont_[kWarpLanes]{};
  std::uint32_t cursor_[kWarpLanes]{};
  Segment seg_[kWarpLanes]{};
  std::uint32_t length_[kWarpLanes]{};
};

}  // namespace detail

/// RW_malloc for a group of lanes on the CPU (host code): lane l asks for lanes[l].n consecutive
/// pages (0: the lane is not in the group). Runs RW Alg. 3's rounds, bounded by max_steps, as ONE
/// logical thread; answer l is the first page of lane l's run (kNoPage: none within max_steps, or
/// not in the group) and its step count = the round that served it (max_steps if none; 0 if not
/// in the group). A request above max_run_pages(w) throws precondition_error.
template <class A, class W>
std::vector<GetPageResult> rw_malloc_warp(PagePoolRef<A, W> const& pool,
                                          std::vector<MallocLane>& lanes) {
  return detail::MallocLockStepWarp<A, W>(pool, lanes).run();
}

}  // namespace heaplab::rw
