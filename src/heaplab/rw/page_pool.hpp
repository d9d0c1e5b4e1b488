// Random-walk page allocation (Pham et al., "Dynamic Memory Management in Massively Parallel
// Systems: A Case on GPUs", ICS'22; ../shared/papers/random-walk-allocator-ics2022.txt),
// written from the paper as a header-only, host+device core over the atomics layer of
// src/heaplab/core (docs/rw.md):
//
//   PoolConfig        T pages of page_bytes each, the used bitmap's word width (32 or 64) and the
//                     bound on steps per request; validate() names what is wrong.
//   PoolStorage<W>    the used bitmap (T bits in words of W; bits >= T permanently set) and the
//                     LockMap (one bit per used word, RW sec. 4.1; clear at quiescence, used by
//                     CoRW later). Plain pointers and numbers, passed by value into kernels.
//   PageRng           the per-thread PRNG of the walk (splitmix64, core/mix.hpp).
//   PagePoolRef<A,W>  get_page_rw (RW Alg. 1, GETPAGE), get_page_bm (RW-BM, sec. 4.1) and
//                     free_page (FREEPAGE, sec. 3.1); each request returns its step count X_i.
//   HostPool<W>       owning host storage in the initial state (every page free).
//
// Memory orders. A page's claim is an acquire fetch_or on its used word, its release a release
// fetch_and on the same word; the claim that sets the bit reads the value the free wrote (or a
// later RMW of the same word, which continues the free's release sequence), so the previous
// owner's accesses to the page happen before the next owner's. The walk's reads of a used word
// before the claim are relaxed: they only pick a candidate, the RMW decides.
#pragma once

#include <cstdint>
#include <type_traits>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/core/protocol_check.hpp"

#include <string>
#include <vector>

namespace heaplab::rw {

/// "No page": a request that gave up after max_steps steps (bounded-walk exhaustion).
inline constexpr std::uint32_t kNoPage = 0xFFFFFFFFu;
/// Lanes of a warp: a lock-step warp (CoRW, RW_malloc) has at most this many.
inline constexpr std::uint32_t kWarpLanes = 32;
/// Largest pool: page ids and the step count stay below kNoPage.
inline constexpr std::uint32_t kMaxPages = 1u << 30;

struct PoolConfig {
  std::uint32_t num_pages  = 0;     // T
  std::uint64_t page_bytes = 4096;  // a power of two (the page's address is base + p * bytes)
  std::uint32_t word_bits  = 32;    // used-bitmap word width: 32 or 64 (RW sec. 4.1)
  std::uint32_t max_steps  = 1000;  // steps per request before it returns kNoPage

  /// Words of the used bitmap: ceil(T / word_bits).
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t used_words() const {
    return (num_pages + word_bits - 1) / word_bits;
  }
  /// Words of the LockMap: one bit per used word.
  [[nodiscard]] HEAPLAB_HD_INLINE std::uint32_t lock_words() const {
    return (used_words() + word_bits - 1) / word_bits;
  }

  /// Throws core::precondition_error naming the first bad field.
  void validate() const {
    HEAPLAB_EXPECTS(num_pages > 0, "PoolConfig: the pool needs at least one page (T = 0)");
    HEAPLAB_EXPECTS(num_pages <= kMaxPages,
                    "PoolConfig: T = " + std::to_string(num_pages) + " pages exceeds the limit " +
                        std::to_string(kMaxPages));
    HEAPLAB_EXPECTS(page_bytes > 0, "PoolConfig: page size 0");
    HEAPLAB_EXPECTS(
        (page_bytes & (page_bytes - 1)) == 0,
        "PoolConfig: page size " + std::to_string(page_bytes) + " bytes is not a power of two");
    HEAPLAB_EXPECTS(
        word_bits == 32 || word_bits == 64,
        "PoolConfig: bitmap word width " + std::to_string(word_bits) + " bits (expected 32 or 64)");
    HEAPLAB_EXPECTS(max_steps > 0, "PoolConfig: max_steps 0 (a request could take no step)");
  }
};

/// The pool's shared state. W: the used-bitmap word (uint32_t or uint64_t).
template <class W>
struct PoolStorage {
  static_assert(std::is_same_v<W, std::uint32_t> || std::is_same_v<W, std::uint64_t>,
                "the used bitmap has 32- or 64-bit words (RW sec. 4.1)");
  static constexpr std::uint32_t kWordBits = sizeof(W) * 8;
  W* used                 = nullptr;  // bit p % kWordBits of word p / kWordBits: page p in use
  W* locks                = nullptr;  // LockMap: bit w of the lock words locks used word w (CoRW)
  std::uint32_t num_pages = 0;
  std::uint32_t num_words = 0;  // used words
  std::uint32_t num_lock_words = 0;
  std::uint32_t max_steps      = 0;
};

/// The value of used word w in the initial state: bits of pages >= T set (never handed out).
template <class W>
HEAPLAB_HD_INLINE constexpr W initial_used_word(std::uint32_t w, std::uint32_t num_pages) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  std::uint64_t const first    = std::uint64_t{w} * bits;
  if (first + bits <= num_pages) return W{0};
  if (first >= num_pages) return static_cast<W>(~W{0});
  auto const valid = static_cast<std::uint32_t>(num_pages - first);  // 1 .. bits-1
  // MUTANT rw_returns_page_beyond_pool: the last word's bits >= T start clear, so RW-BM can
  // claim a page beyond the pool (RW Alg. 1 draws p < T and never sees them).
  if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_returns_page_beyond_pool) return W{0};
  return static_cast<W>(~W{0} << valid);
}

/// The walk's per-thread random numbers: splitmix64 over a Weyl sequence (core/mix.hpp).
struct PageRng {
  std::uint64_t state = 0;
  HEAPLAB_HD_INLINE std::uint64_t next() {
    std::uint64_t const r = core::splitmix64(state);
    state += core::kGoldenGamma;
    return r;
  }
  /// Uniform in [0, n) for n < 2^32 (multiply-high of the upper 32 bits; bias < n / 2^32).
  HEAPLAB_HD_INLINE std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32);
  }
};

/// The PageRng of thread i of a wave with `seed` (the same on every executor, so a wave's seed
/// names its walks).
HEAPLAB_HD_INLINE PageRng thread_rng(std::uint64_t seed, std::uint32_t thread) {
  return PageRng{core::splitmix64(seed ^ (std::uint64_t{thread} * core::kGoldenGamma))};
}

/// One GETPAGE's answer: the page (kNoPage after max_steps unsuccessful steps) and X_i, the
/// number of steps (loop iterations) it took, for TAS / WAS (RW sec. 3.2.1).
struct GetPageResult {
  std::uint32_t page  = kNoPage;
  std::uint32_t steps = 0;
  [[nodiscard]] HEAPLAB_HD_INLINE bool ok() const { return page != kNoPage; }
};

namespace detail {

/// The claim's order (acquire: pairs with the previous owner's release free).
HEAPLAB_HD_INLINE constexpr core::MemoryOrder claim_order() { return core::MemoryOrder::acquire; }

/// The free's order. MUTANT rw_free_relaxed: relaxed, so the next owner of the page does not
/// synchronize with the previous one (found only by the explorer's weak-memory mode).
HEAPLAB_HD_INLINE HEAPLAB_MUTANT_CONSTEXPR core::MemoryOrder free_order() {
  return core::mutant::rw_free_relaxed ? core::MemoryOrder::relaxed : core::MemoryOrder::release;
}

/// The lowest zero bit of v at or after position `from` (cyclically); v must have a zero bit.
template <class W>
HEAPLAB_HD_INLINE std::uint32_t zero_bit_from(W v, std::uint32_t from) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  std::uint64_t const free     = static_cast<W>(~v);
  std::uint64_t const rotated =
      from == 0 ? free
                : static_cast<W>((free >> from) | (free << (bits - from)));  // bit i: bit i+from
  auto const i = static_cast<std::uint32_t>(core::find_first_set(rotated));
  return (i + from) % bits;
}

}  // namespace detail

/// The pool's operations with atomics policy A on words W. Trivially copyable (by value into
/// kernels).
template <class A, class W>
class PagePoolRef {
 public:
  static constexpr std::uint32_t kWordBits = sizeof(W) * 8;

  PagePoolRef() = default;
  HEAPLAB_HD_INLINE explicit PagePoolRef(PoolStorage<W> s) : s_(s) {}
  [[nodiscard]] HEAPLAB_HD_INLINE PoolStorage<W> const& storage() const { return s_; }

  /// RW Alg. 1 (GETPAGE): pick a random page p in [0, T) (line 2); if its used bit is clear
  /// (line 3), try to set it with one fetch_or (line 4); success when the RMW's old value had
  /// the bit clear (line 5). A step is one loop iteration. Unlike the printed `while True` the
  /// loop is bounded by max_steps and then returns kNoPage (the pool may be full).
  /// Linearization: the successful fetch_or (acquire: the previous owner's release free happens
  /// before everything this owner does with the page).
  HEAPLAB_HD_INLINE GetPageResult get_page_rw(PageRng& rng) const {
    GetPageResult r;
    while (core::mutant::rw_steps_unbounded || r.steps < s_.max_steps) {
      ++r.steps;
      std::uint32_t const p = rng.below(s_.num_pages);
      W* const word         = s_.used + p / kWordBits;
      W const bit           = static_cast<W>(W{1} << (p % kWordBits));
      if ((A::load(word, core::MemoryOrder::relaxed) & bit) != 0) {
        A::backoff(core::Backoff::retry);
        continue;
      }
      if (claim(word, bit)) {
        r.page = p;
        return r;
      }
      A::backoff(core::Backoff::retry);  // lost the race for p: a new random page
    }
    return r;
  }

  /// RW-BM (RW sec. 4.1): a step reads one random used word; if it has a zero bit, claim the
  /// first zero bit at or after a random rotation with fetch_or; a claim that lost the race ends
  /// the step (the next step picks a new word). Bounded by max_steps like get_page_rw.
  /// Linearization: the successful fetch_or (acquire, as above).
  HEAPLAB_HD_INLINE GetPageResult get_page_bm(PageRng& rng) const {
    GetPageResult r;
    while (core::mutant::rw_steps_unbounded || r.steps < s_.max_steps) {
      ++r.steps;
      std::uint64_t const x = rng.next();
      auto const w          = static_cast<std::uint32_t>(((x >> 32) * s_.num_words) >> 32);
      W* const word         = s_.used + w;
      W const v             = A::load(word, core::MemoryOrder::relaxed);
      if (v == static_cast<W>(~W{0})) {
        A::backoff(core::Backoff::retry);
        continue;
      }
      std::uint32_t const b = detail::zero_bit_from(v, static_cast<std::uint32_t>(x % kWordBits));
      W const bit           = static_cast<W>(W{1} << b);
      W const old           = claim_word(word, bit);
      // MUTANT rw_bm_success_from_word: success judged from the whole word (some bit was still
      // free), not from the claimed bit: a page another thread claimed first is handed out again.
      bool const won =
          core::mutant::rw_bm_success_from_word ? old != static_cast<W>(~W{0}) : (old & bit) == 0;
      if (won) {
        r.page = w * kWordBits + b;
        HEAPLAB_PROTOCOL_CHECK(r.page < s_.num_pages,
                               "RW-BM claimed a bit beyond the pool (bits >= T must stay set)");
        return r;
      }
      A::backoff(core::Backoff::retry);
    }
    return r;
  }

  /// FREEPAGE (RW sec. 3.1): clear the page's used bit with one release fetch_and (pairs with the
  /// next claimer's acquire fetch_or). Linearization: the fetch_and. A page >= T is a caller
  /// error (precondition_error / trap); a page not in use is a protocol violation.
  HEAPLAB_HD_INLINE void free_page(std::uint32_t p) const {
    HEAPLAB_EXPECTS(p < s_.num_pages, "free_page: page id beyond the pool (p >= T)");
    W const bit = static_cast<W>(W{1} << (p % kWordBits));
    W const old = A::fetch_and(s_.used + p / kWordBits, static_cast<W>(~bit), detail::free_order());
    HEAPLAB_PROTOCOL_CHECK((old & bit) != 0, "free_page: the page was not in use (double free)");
  }

  // ---- word-level primitives shared by CoRW (RW Alg. 2) and RW_malloc (RW Alg. 3) ----

  /// Used word w, relaxed: a candidate read (the claim's RMW decides, as in get_page_rw).
  [[nodiscard]] HEAPLAB_HD_INLINE W load_word(std::uint32_t w) const {
    return A::load(s_.used + w, core::MemoryOrder::relaxed);
  }

  /// Claims the pages `mask` of used word w with one fetch_or (acquire, like a single claim) and
  /// returns the bits this call won: those clear before the RMW. Bits already set belonged to
  /// someone else and stay theirs. Linearization of each won page's GETPAGE: this fetch_or.
  HEAPLAB_HD_INLINE W claim_bits(std::uint32_t w, W mask) const {
    return static_cast<W>(mask & ~claim_word(s_.used + w, mask));
  }

  /// Frees the pages `mask` of used word w with one release fetch_and (FREEPAGE for several pages
  /// of one word; every bit must be set: a clear one is a protocol violation, a double free).
  HEAPLAB_HD_INLINE void release_bits(std::uint32_t w, W mask) const {
    W const old = A::fetch_and(s_.used + w, static_cast<W>(~mask), detail::free_order());
    HEAPLAB_PROTOCOL_CHECK((old & mask) == mask, "release_bits: a page was not in use");
  }

  /// LockMap (RW Alg. 2 line 6): sets the lock bit of used word w; true if this call set it.
  /// Relaxed: the lock protects no data. Page ownership is decided by claim_bits alone, so the
  /// lock only steers CoRW walkers to different words (fewer lost claims); a walker that ignores
  /// it stays correct.
  HEAPLAB_HD_INLINE bool try_lock_word(std::uint32_t w) const {
    W const bit = static_cast<W>(W{1} << (w % kWordBits));
    return (A::fetch_or(s_.locks + w / kWordBits, bit, core::MemoryOrder::relaxed) & bit) == 0;
  }
  /// Clears the lock bit of used word w (RW Alg. 2 line 18). The caller holds it.
  HEAPLAB_HD_INLINE void unlock_word(std::uint32_t w) const {
    W const bit = static_cast<W>(W{1} << (w % kWordBits));
    W const old =
        A::fetch_and(s_.locks + w / kWordBits, static_cast<W>(~bit), core::MemoryOrder::relaxed);
    HEAPLAB_PROTOCOL_CHECK((old & bit) != 0, "unlock_word: the word was not locked");
  }

 private:
  /// Sets the bits `bit` of *word (one page for RW / RW-BM, several for claim_bits) and returns
  /// the word's previous value (RW Alg. 1 line 4).
  HEAPLAB_HD_INLINE W claim_word(W* word, W bit) const {
    if HEAPLAB_MUTANT_CONSTEXPR (core::mutant::rw_claim_without_atomic) {
      // MUTANT rw_claim_without_atomic: load-then-store instead of one fetch_or: two walkers
      // that read the same free bit both "claim" it (and a store can undo another's claim).
      W const old = A::load(word, core::MemoryOrder::acquire);
      A::store(word, static_cast<W>(old | bit), core::MemoryOrder::relaxed);
      return old;
    } else {
      return A::fetch_or(word, bit, detail::claim_order());
    }
  }
  HEAPLAB_HD_INLINE bool claim(W* word, W bit) const { return (claim_word(word, bit) & bit) == 0; }

  PoolStorage<W> s_{};
};

/// Owning host storage of a pool in its initial state: every page free, bits >= T set, LockMap
/// clear.
template <class W>
class HostPool {
 public:
  explicit HostPool(PoolConfig const& c) : config_(c) {
    c.validate();
    HEAPLAB_EXPECTS(c.word_bits == sizeof(W) * 8,
                    "HostPool: the config's word width differs from the storage's word type");
    used_.resize(c.used_words());
    for (std::uint32_t w = 0; w < used_.size(); ++w)
      used_[w] = initial_used_word<W>(w, c.num_pages);
    locks_.assign(c.lock_words(), W{0});
  }
  HostPool(HostPool const&)            = delete;
  HostPool& operator=(HostPool const&) = delete;

  [[nodiscard]] PoolConfig const& config() const { return config_; }
  [[nodiscard]] PoolStorage<W> storage() {
    return PoolStorage<W>{used_.data(),
                          locks_.data(),
                          config_.num_pages,
                          static_cast<std::uint32_t>(used_.size()),
                          static_cast<std::uint32_t>(locks_.size()),
                          config_.max_steps};
  }
  template <class A>
  [[nodiscard]] PagePoolRef<A, W> ref() {
    return PagePoolRef<A, W>(storage());
  }
  /// Setup before any thread runs (not atomic): page p is in use, e.g. to start a test with few
  /// free pages. Throws precondition_error if p >= T or p is already used.
  void mark_used(std::uint32_t p) {
    HEAPLAB_EXPECTS(p < config_.num_pages, "HostPool::mark_used: page beyond the pool");
    W const bit = static_cast<W>(W{1} << (p % (sizeof(W) * 8)));
    HEAPLAB_EXPECTS((used_[p / (sizeof(W) * 8)] & bit) == 0, "HostPool::mark_used: page in use");
    used_[p / (sizeof(W) * 8)] |= bit;
  }
  [[nodiscard]] std::vector<W> const& used_words() const { return used_; }
  [[nodiscard]] std::vector<W> const& lock_words() const { return locks_; }
  /// "used[w]" / "locks[w]" for the explorer's trace; "" if a is not in this pool.
  [[nodiscard]] std::string describe_address(void const* a) const {
    auto const p = reinterpret_cast<std::uintptr_t>(a);
    auto const u = reinterpret_cast<std::uintptr_t>(used_.data());
    auto const l = reinterpret_cast<std::uintptr_t>(locks_.data());
    if (p >= u && p < u + used_.size() * sizeof(W))
      return "used[" + std::to_string((p - u) / sizeof(W)) + "]";
    if (p >= l && p < l + locks_.size() * sizeof(W))
      return "locks[" + std::to_string((p - l) / sizeof(W)) + "]";
    return {};
  }

 private:
  PoolConfig config_;
  std::vector<W> used_;
  std::vector<W> locks_;
};

}  // namespace heaplab::rw
