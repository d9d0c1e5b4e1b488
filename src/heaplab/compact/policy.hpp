// When to defragment (CompactGpu sec. 3.7): the two policies the paper suggests, as host logic an
// application loop consults once per iteration. compactor.cuh's AutoDefrag wires them to a heap;
// this header is plain C++17 (CPU-tested in proofs_tests/compact/policy_test.cpp).
//
//   DefragPolicy::every(50)                               every 50th iteration
//   DefragPolicy::after_massive_deallocation(10000)       once >= ceil(10000 * n/(n+1)) candidates
//   DefragPolicy::after_massive_deallocation_fraction(0.05)  k2 = ceil(5% of the heap's blocks)
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "heaplab/core/expects.hpp"

namespace heaplab::compact {

class DefragPolicy {
 public:
  enum class Kind : std::uint8_t { every_m_iterations, after_massive_deallocation };

  /// Sec. 3.7 "Every m Iterations": defragment after iterations m, 2m, 3m, ... (m >= 1).
  static DefragPolicy every(std::uint32_t m) {
    HEAPLAB_EXPECTS(m >= 1, "DefragPolicy::every: m must be at least 1");
    DefragPolicy p;
    p.kind_ = Kind::every_m_iterations;
    p.m_    = m;
    return p;
  }

  /// Sec. 3.7 "After Massive Deallocations": defragment once there are at least k2 candidates,
  /// k2 scaled by n/(n+1) (candidate_threshold). k2 >= 1.
  static DefragPolicy after_massive_deallocation(std::uint64_t k2) {
    HEAPLAB_EXPECTS(k2 >= 1, "DefragPolicy::after_massive_deallocation: k2 must be at least 1");
    DefragPolicy p;
    p.kind_ = Kind::after_massive_deallocation;
    p.k2_   = k2;
    return p;
  }

  /// The same with k2 given as a fraction of the heap: k2 = ceil(fraction * M) for a heap of M
  /// blocks (candidates are blocks). 0 < fraction <= 1.
  static DefragPolicy after_massive_deallocation_fraction(double fraction) {
    HEAPLAB_EXPECTS(fraction > 0.0 && fraction <= 1.0,
                    "DefragPolicy::after_massive_deallocation_fraction: the fraction must be in "
                    "(0, 1], got " +
                        std::to_string(fraction));
    DefragPolicy p;
    p.kind_     = Kind::after_massive_deallocation;
    p.fraction_ = fraction;
    return p;
  }

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] bool needs_candidate_count() const {
    return kind_ == Kind::after_massive_deallocation;
  }

  /// k2 in candidates before scaling: the absolute value, or ceil(fraction * num_blocks).
  [[nodiscard]] std::uint64_t k2(std::uint32_t num_blocks) const {
    if (fraction_ <= 0.0) return k2_;
    auto const k = static_cast<std::uint64_t>(std::ceil(fraction_ * num_blocks));
    return k < 1 ? 1 : k;
  }

  /// The candidate count that triggers a defragmentation with factor n: ceil(k2 * n / (n + 1)),
  /// at least 1. Sec. 3.7: "CompactGpu scales k2 by n/(n+1) to account for the fact that a
  /// larger value of n usually leads to more defragmentation candidates." n >= 1.
  [[nodiscard]] std::uint64_t candidate_threshold(std::uint32_t n, std::uint32_t num_blocks) const {
    HEAPLAB_EXPECTS(n >= 1, "DefragPolicy: the defragmentation factor n must be at least 1");
    std::uint64_t const k   = k2(num_blocks);
    std::uint64_t const num = k * n;
    std::uint64_t const t   = (num + n) / (n + std::uint64_t{1});  // ceil(k * n / (n + 1))
    return t < 1 ? 1 : t;
  }

  /// Whether the iteration with 1-based number `iteration` triggers "every m". (The massive-
  /// deallocation policy decides on candidate counts: triggers_on_candidates.)
  [[nodiscard]] bool triggers_on_iteration(std::uint64_t iteration) const {
    return kind_ == Kind::every_m_iterations && iteration >= 1 && iteration % m_ == 0;
  }
  [[nodiscard]] bool triggers_on_candidates(std::uint64_t candidates,
                                            std::uint32_t n,
                                            std::uint32_t num_blocks) const {
    return kind_ == Kind::after_massive_deallocation &&
           candidates >= candidate_threshold(n, num_blocks);
  }

 private:
  DefragPolicy()    = default;
  Kind kind_        = Kind::every_m_iterations;
  std::uint32_t m_  = 1;
  std::uint64_t k2_ = 1;
  double fraction_  = 0.0;
};

/// The per-iteration state of a policy: counts completed iterations and answers "defragment
/// now?" at the end of each one.
class PolicyClock {
 public:
  explicit PolicyClock(DefragPolicy policy) : policy_(policy) {}

  /// One application iteration ended. `count_candidates()` (the candidates of the type for
  /// factor n; may synchronize the GPU) is called only by the massive-deallocation policy.
  template <class CountCandidates>
  bool end_iteration(std::uint32_t n,
                     std::uint32_t num_blocks,
                     CountCandidates&& count_candidates) {
    ++iterations_;
    if (policy_.needs_candidate_count())
      return policy_.triggers_on_candidates(count_candidates(), n, num_blocks);
    return policy_.triggers_on_iteration(iterations_);
  }

  [[nodiscard]] std::uint64_t iterations() const { return iterations_; }
  [[nodiscard]] DefragPolicy const& policy() const { return policy_; }

 private:
  DefragPolicy policy_;
  std::uint64_t iterations_ = 0;
};

}  // namespace heaplab::compact
