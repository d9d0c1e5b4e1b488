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
#pragma once

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
  double sum         = 0;
  for (std::uint64_t k = 0;; ++k) {
    double const qk   = std::exp(static_cast<double>(w) * static_cast<double>(k) * log_q);
    double const term = 1.0 - std::pow(1.0 - qk, static_cast<double>(warp));
    sum += term;
    if (k > 0 && term < tolerance) return sum;
  }
}

/// RW sec. 3.2.2 "Independence Among Threads": the expected number of atomic collisions,
/// bounded by N (N - 1) / (2T) x A / T.
inline double expected_collisions(std::uint64_t t, std::uint64_t a, std::uint64_t n) {
  double const td = static_cast<double>(t);
  return static_cast<double>(n) * static_cast<double>(n - 1) / (2.0 * td) *
         (static_cast<double>(a) / td);
}

}  // namespace heaplab::rw::analysis
