// The host-side checks of a wave against a pool (docs/rw.md "The GPU pool"), shared by every
// StepExecutor: bad input becomes a core::precondition_error before anything runs, never a device
// trap or a hang. Host only, plain C++17.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.hpp"
#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw {

/// True for the algorithms that hand out one page per request (RW, RW-BM, CoRW).
inline bool one_page_algorithm(core::RwAlgorithm a) { return a != core::RwAlgorithm::rw_malloc; }

/// Block size a multiple of 32 in 32..1024 (whole warps); pages[i] <= 1 for a one-page
/// algorithm; pages[i] <= T, and <= max_run_pages (32 w) for RW_malloc, whose device code traps
/// on a longer run.
inline void validate_alloc_wave(PoolConfig const& c, GetPageWave const& wave) {
  HEAPLAB_EXPECTS(
      wave.block_threads >= 32 && wave.block_threads <= 1024 && wave.block_threads % 32 == 0,
      "allocation wave: block_threads " + std::to_string(wave.block_threads) +
          " (expected a multiple of 32 in 32..1024)");
  for (std::size_t i = 0; i < wave.pages.size(); ++i) {
    std::uint32_t const n = wave.pages[i];
    HEAPLAB_EXPECTS(!one_page_algorithm(wave.algorithm) || n <= 1,
                    "allocation wave: thread " + std::to_string(i) + " asks for " +
                        std::to_string(n) + " pages, but " +
                        core::rw_algorithm_name(wave.algorithm) +
                        " hands out one page per request (pages[i] must be 0 or 1)");
    HEAPLAB_EXPECTS(
        wave.algorithm != core::RwAlgorithm::rw_malloc || n <= max_run_pages(c.word_bits),
        "allocation wave: thread " + std::to_string(i) + " asks for a run of " + std::to_string(n) +
            " pages; RW_malloc serves at most " + std::to_string(max_run_pages(c.word_bits)) +
            " (32 words of " + std::to_string(c.word_bits) + " pages)");
    HEAPLAB_EXPECTS(n <= c.num_pages,
                    "allocation wave: thread " + std::to_string(i) + " asks for " +
                        std::to_string(n) + " pages, more than the pool's " +
                        std::to_string(c.num_pages));
  }
}

/// first and count of equal length; every run [first, first + count) inside the pool.
inline void validate_free_wave(PoolConfig const& c, FreePageWave const& wave) {
  HEAPLAB_EXPECTS(wave.first.size() == wave.count.size(),
                  "free wave: first has " + std::to_string(wave.first.size()) +
                      " entries but count has " + std::to_string(wave.count.size()));
  for (std::size_t i = 0; i < wave.first.size(); ++i) {
    std::uint64_t const end = std::uint64_t{wave.first[i]} + wave.count[i];
    HEAPLAB_EXPECTS(wave.count[i] == 0 || end <= c.num_pages,
                    "free wave: thread " + std::to_string(i) + " frees pages " +
                        std::to_string(wave.first[i]) + ".." + std::to_string(end - 1) +
                        ", beyond the pool (T = " + std::to_string(c.num_pages) + ")");
  }
}

/// Every page the wave names is in use in `used` (the used words, widened to 64 bits, of width
/// c.word_bits) and named once in the wave: otherwise the free would be a double free.
inline void check_free_wave_pages(PoolConfig const& c,
                                  FreePageWave const& wave,
                                  std::vector<std::uint64_t> const& used) {
  validate_free_wave(c, wave);
  HEAPLAB_EXPECTS(used.size() == c.used_words(), "free check: the used words do not fit the pool");
  std::unordered_set<std::uint32_t> named;
  for (std::size_t i = 0; i < wave.first.size(); ++i) {
    for (std::uint32_t k = 0; k < wave.count[i]; ++k) {
      std::uint32_t const p = wave.first[i] + k;
      bool const in_use     = ((used[p / c.word_bits] >> (p % c.word_bits)) & 1u) != 0;
      HEAPLAB_EXPECTS(in_use,
                      "free wave: thread " + std::to_string(i) + " frees page " +
                          std::to_string(p) + ", which is not in use (a double free)");
      HEAPLAB_EXPECTS(named.insert(p).second,
                      "free wave: page " + std::to_string(p) +
                          " is freed twice in one wave (thread " + std::to_string(i) + ")");
    }
  }
}

/// The pages a benchmark run's requests hold (the output check of `heaplab_bench rw fig8` ..
/// `fig11`, docs/rw.md "Benchmarks"): one bit per page of a pool of T pages. take(first, count)
/// records the run [first, first + count) of one successful request and answers "" if it is inside
/// the pool and disjoint from every run taken since the last clear(), otherwise the violation
/// (and records nothing). O(count / 64 + 1) per run.
class RunLedger {
 public:
  explicit RunLedger(std::uint32_t num_pages) : t_(num_pages), bits_((num_pages + 63) / 64, 0) {}

  void clear() {
    std::fill(bits_.begin(), bits_.end(), 0);
    held_ = 0;
  }

  [[nodiscard]] std::string take(std::uint32_t first, std::uint32_t count) {
    std::uint64_t const end = std::uint64_t{first} + count;
    // The message only on a violation: take() runs once per request of a wave (2^20 and more).
    auto const run = [&] {
      return "pages " + std::to_string(first) + ".." + std::to_string(end - 1);
    };
    if (count == 0) return "an empty run at page " + std::to_string(first);
    if (end > t_) return run() + " reach beyond the pool (T = " + std::to_string(t_) + ")";
    for (std::uint64_t w = first / 64; w * 64 < end; ++w) {
      std::uint64_t const overlap = bits_[w] & mask(w, first, end);
      if (overlap != 0)
        return run() + ": page " + std::to_string(w * 64 + core::find_first_set(overlap)) +
               " is already held by another request";
    }
    for (std::uint64_t w = first / 64; w * 64 < end; ++w) bits_[w] |= mask(w, first, end);
    held_ += count;
    return "";
  }

  /// Pages taken since the last clear().
  [[nodiscard]] std::uint64_t held_pages() const { return held_; }

 private:
  /// The bits of word w that lie in [first, end).
  static std::uint64_t mask(std::uint64_t w, std::uint64_t first, std::uint64_t end) {
    std::uint64_t const lo       = std::max(first, w * 64) - w * 64;
    std::uint64_t const hi       = std::min(end, w * 64 + 64) - w * 64;
    std::uint64_t const below_hi = hi == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << hi) - 1;
    return below_hi & ~((std::uint64_t{1} << lo) - 1);
  }

  std::uint64_t t_;
  std::vector<std::uint64_t> bits_;
  std::uint64_t held_ = 0;
};

}  // namespace heaplab::rw
