// The random-walk paper's performance model (RW sec. 3.2, 4.1.1), as functions, so that measured
// step counts (GetPageResult::steps, X_i) can be checked against it: TAS = E(X_i), the per-thread
// average steps, and the bound on WAS = E(max X_i over a warp of 32). Host only, plain C++17.
//
// Notation (RW Table 1): T pages, A of them free, N requesting threads, w bits read per step
// (w = 1: RW, w = 32 / 64: RW-BM). Every formula models the N requests as if they ran one after
// another (RW sec. 3.2.2): request j sees A - j free pages, placed independently at random.
// Preconditions: 1 <= N <= A <= T, w >= 1 (the WAS bound needs A > N: at A = N it is infinite).
//
// What the model does not capture (docs/rw.md "TAS and WAS"): collisions of concurrent walkers
// (expected_collisions), and, for RW-BM, that claims empty words unevenly, so the free pages left
// cluster in fewer words than independent placement predicts: with N close to A the measured TAS
// exceeds Eq. 4 (get_page_bm, T = 4096, A = 64, N = 48, w = 32: 4.53 steps against 4.15).
// rw_bm_occupancy models that effect (4.53); was_bound_occupancy is Eq. 5 with it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "heaplab/core/expects.hpp"

namespace heaplab::rw::analysis {

/// Queue-based allocation (RW sec. 3.2.1, Eq. 1's setting): E(X_i) = (N + 1) / 2.
inline double queue_tas(std::uint64_t n) { return (static_cast<double>(n) + 1.0) / 2.0; }

/// Queue-based allocation, WAS (RW Eq. 1): a warp's `warp` requests take `warp` distinct places
/// among N, uniformly, and wait for the last of them: E(max) = warp (N + 1) / (warp + 1), the
/// exact form of Eq. 1's approximation 32 N / 33. N >= warp.
inline double queue_was(std::uint64_t n, unsigned warp = 32) {
  HEAPLAB_EXPECTS(warp >= 1 && n >= warp, "analysis::queue_was: needs N >= warp >= 1");
  return static_cast<double>(warp) * (static_cast<double>(n) + 1.0) / (warp + 1.0);
}

/// Eq. 4: TAS of RW-BM reading w bits per step, (1/N) sum_{j<N} 1 / (1 - ((T - A + j) / T)^w).
/// w = 1 is RW's exact form (T/N) sum_{j<N} 1 / (A - j) = (T/N) (H_A - H_{A-N}).
inline double tas(std::uint64_t t, std::uint64_t a, std::uint64_t n, unsigned w = 1) {
  HEAPLAB_EXPECTS(n >= 1 && n <= a && a <= t && w >= 1, "analysis::tas: needs 1 <= N <= A <= T");
  double sum = 0;
  for (std::uint64_t j = 0; j < n; ++j) {
    double const used = static_cast<double>(t - a + j) / static_cast<double>(t);
    sum += 1.0 / (1.0 - std::pow(used, static_cast<double>(w)));
  }
  return sum / static_cast<double>(n);
}

/// Eq. 2: RW's TAS with H_n ~ gamma + ln n, (T/N) ln(A / (A - N)); A > N.
inline double rw_tas_approx(std::uint64_t t, std::uint64_t a, std::uint64_t n) {
  HEAPLAB_EXPECTS(n >= 1 && n < a && a <= t, "analysis::rw_tas_approx: needs 1 <= N < A <= T");
  return static_cast<double>(t) / static_cast<double>(n) *
         std::log(static_cast<double>(a) / static_cast<double>(a - n));
}

/// Variance of the mean of the N sequential requests' step counts under the same model (each X_j
/// geometric with success probability p_j = 1 - ((T - A + j) / T)^w, Var = (1 - p) / p^2):
/// (1/N^2) sum_j (1 - p_j) / p_j^2. A test's tolerance for a measured TAS follows from it.
inline double tas_variance(std::uint64_t t, std::uint64_t a, std::uint64_t n, unsigned w = 1) {
  HEAPLAB_EXPECTS(n >= 1 && n <= a && a <= t && w >= 1,
                  "analysis::tas_variance: needs 1 <= N <= A <= T");
  double sum = 0;
  for (std::uint64_t j = 0; j < n; ++j) {
    double const used = static_cast<double>(t - a + j) / static_cast<double>(t);
    double const p    = 1.0 - std::pow(used, static_cast<double>(w));
    sum += (1.0 - p) / (p * p);
  }
  return sum / (static_cast<double>(n) * static_cast<double>(n));
}

/// E(max of `warp` independent geometric step counts whose steps each fail with probability
/// fail < 1): sum_{k>=0} [1 - (1 - fail^k)^warp], summed until a term is below `tolerance`. The
/// form of Eq. 3 / Eq. 5 (there fail = ((T - A + N) / T)^w); infinite when fail >= 1.
inline double max_geometric_mean(double fail, unsigned warp = 32, double tolerance = 1e-12) {
  HEAPLAB_EXPECTS(fail >= 0 && warp >= 1, "analysis::max_geometric_mean: bad arguments");
  if (fail >= 1.0) return std::numeric_limits<double>::infinity();
  if (fail == 0.0) return 1.0;
  double const log_fail = std::log(fail);
  double sum            = 0;
  for (std::uint64_t k = 0;; ++k) {
    double const qk   = std::exp(static_cast<double>(k) * log_fail);
    double const term = 1.0 - std::pow(1.0 - qk, static_cast<double>(warp));
    sum += term;
    if (k > 0 && term < tolerance) return sum;
  }
}

/// Eq. 3 (w = 1) and Eq. 5: the upper bound on WAS for a warp of `warp` threads,
/// sum_{k>=0} [1 - (1 - q^{wk})^warp] with q = (T - A + N) / T. Infinite when A <= N.
inline double was_bound(std::uint64_t t,
                        std::uint64_t a,
                        std::uint64_t n,
                        unsigned w       = 1,
                        unsigned warp    = 32,
                        double tolerance = 1e-12) {
  HEAPLAB_EXPECTS(n >= 1 && a <= t && w >= 1 && warp >= 1, "analysis::was_bound: bad arguments");
  if (a <= n) return std::numeric_limits<double>::infinity();
  double const log_q = std::log(static_cast<double>(t - a + n) / static_cast<double>(t));
  return max_geometric_mean(std::exp(static_cast<double>(w) * log_q), warp, tolerance);
}

/// RW-BM with the word occupancy tracked (ours, not the paper's; docs/rw.md "TAS and WAS"). Eq. 4
/// assumes the A - j free pages left are placed independently, so a word is full with
/// probability ((T - A + j) / T)^w. RW-BM claims a page of a uniformly chosen non-full word,
/// whatever its number of free bits, so words with few free bits empty faster than independent
/// placement predicts, and full words become more frequent. This mean-field model starts from the
/// binomial occupancy of independent placement (h_k = (T / w) C(w, k) f^k (1 - f)^(w - k),
/// f = A / T words with k free pages) and applies each of the N requests in expectation: the
/// request succeeds with p_j = (words not full) / (all words) per step and takes a page of a
/// uniformly chosen non-full word (h_k loses h_k / M, h_{k-1} gains it). w = 1 is Eq. 2 exactly.
struct OccupancyModel {
  double tas          = 0;  // (1/N) sum_j 1 / p_j: TAS, as Eq. 4 with p_j from the occupancy
  double tas_variance = 0;  // (1/N^2) sum_j (1 - p_j) / p_j^2, as tas_variance
  double full_end     = 0;  // the fraction of full words after the N requests
  /// The largest, over the requests, probability that a second walker reading the same random
  /// word in the same step targets the same page as the first: sum_{k>=1} (h_k / words) x
  /// min(1, 2 / (k + 1)) (two random rotations over k free bits placed at random pick the same
  /// one with probability ~ the sum of the squared gaps, 2 / (k + 1)). w = 1: A / T at the
  /// start, RW sec. 3.2.2's factor.
  double collide_rate = 0;
};

inline OccupancyModel rw_bm_occupancy(std::uint64_t t,
                                      std::uint64_t a,
                                      std::uint64_t n,
                                      unsigned w = 32) {
  HEAPLAB_EXPECTS(n >= 1 && n <= a && a <= t && w >= 1 && w <= 64,
                  "analysis::rw_bm_occupancy: needs 1 <= N <= A <= T and w <= 64");
  double const words = static_cast<double>(t) / w;
  double const f     = static_cast<double>(a) / static_cast<double>(t);
  double h[65]       = {};  // h[k]: words with k free pages
  double binom       = 1;   // C(w, k)
  for (unsigned k = 0; k <= w; ++k) {
    h[k]  = words * binom * std::pow(f, k) * std::pow(1.0 - f, static_cast<double>(w - k));
    binom = binom * (w - k) / (k + 1.0);
  }
  OccupancyModel m;
  for (std::uint64_t j = 0; j < n; ++j) {
    double rate = 0;
    for (unsigned k = 1; k <= w; ++k) rate += h[k] / words * std::min(1.0, 2.0 / (k + 1.0));
    m.collide_rate       = std::max(m.collide_rate, rate);
    double const nonfull = words - h[0];
    double const p       = nonfull / words;
    m.tas += 1.0 / p;
    m.tas_variance += (1.0 - p) / (p * p);
    // A request takes one page: h[k] / M of the words with k free pages move to k - 1. With
    // fewer than one non-full word left (the last requests at N = A) the mean field would move
    // more than there is; then every non-full word moves (a word, not a fraction of one).
    double const share = 1.0 / std::max(nonfull, 1.0);
    double moved       = 0;  // what the previous (higher) k moved down
    for (unsigned k = w; k >= 1; --k) {
      double const out = h[k] * share;
      h[k] += moved - out;
      moved = out;
    }
    h[0] += moved;
  }
  m.tas /= static_cast<double>(n);
  m.tas_variance /= static_cast<double>(n) * static_cast<double>(n);
  m.full_end = h[0] / words;
  return m;
}

/// Eq. 5 with the occupancy model's end state: the WAS bound when a step fails with the
/// probability that a word is full after the N requests (rw_bm_occupancy().full_end) instead of
/// ((T - A + N) / T)^w. Above Eq. 5 by the uneven emptying (e.g. T = 2^20, A/T = 10 %, N = 5000,
/// w = 64: 1.144 against 1.052); infinite when A <= N, as Eq. 5.
inline double was_bound_occupancy(
    std::uint64_t t, std::uint64_t a, std::uint64_t n, unsigned w = 32, unsigned warp = 32) {
  if (a <= n) return std::numeric_limits<double>::infinity();
  return max_geometric_mean(rw_bm_occupancy(t, a, n, w).full_end, warp);
}

/// RW sec. 3.2.2 "Independence Among Threads": the expected number of atomic collisions,
/// bounded by N (N - 1) / (2T) x A / T.
inline double expected_collisions(std::uint64_t t, std::uint64_t a, std::uint64_t n) {
  double const td = static_cast<double>(t);
  return static_cast<double>(n) * static_cast<double>(n - 1) / (2.0 * td) *
         (static_cast<double>(a) / td);
}

}  // namespace heaplab::rw::analysis
