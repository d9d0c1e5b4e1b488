#include "heaplab/explore/strategy.hpp"

#include <algorithm>
#include <stdexcept>

#include "heaplab/core/mix.hpp"

namespace heaplab::explore {

std::uint64_t SplitMix64::next() {
  std::uint64_t const z = core::splitmix64(state_);
  state_ += core::kGoldenGamma;
  return z;
}

std::uint64_t SplitMix64::below(std::uint64_t bound) {
  std::uint64_t const limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
  for (;;) {
    std::uint64_t const v = next();
    if (v < limit) return v % bound;
  }
}

std::uint32_t random_read_choice(SplitMix64& rng, std::uint32_t options) {
  if (options <= 1 || rng.below(2) == 0) return 0;
  return 1 + static_cast<std::uint32_t>(rng.below(options - 1));
}

std::uint64_t read_choice_seed(std::uint64_t seed) { return seed ^ 0x7ead7ead7ead7eadull; }

// ---------------------------------------------------------------- random

std::string RandomStrategy::describe() const {
  return "random(seed=" + std::to_string(seed_) + ")";
}

std::uint32_t RandomStrategy::pick(Decision const& d) {
  return d.runnable[rng_.below(d.runnable.size())];
}

// ---------------------------------------------------------------- PCT

PctStrategy::PctStrategy(std::uint64_t seed, std::uint32_t depth, std::uint64_t step_estimate)
    : seed_(seed),
      depth_(std::max<std::uint32_t>(depth, 1)),
      steps_(std::max<std::uint64_t>(step_estimate, 1)) {}

std::string PctStrategy::describe() const {
  return "pct(depth=" + std::to_string(depth_) + ",steps=" + std::to_string(steps_) +
         ",seed=" + std::to_string(seed_) + ")";
}

void PctStrategy::begin_run(std::uint32_t num_threads) {
  read_rng_ = SplitMix64(read_choice_seed(seed_));
  SplitMix64 rng(seed_);
  // Initial priorities d .. d + n - 1 in random order (Fisher-Yates).
  priority_.resize(num_threads);
  for (std::uint32_t i = 0; i < num_threads; ++i) priority_[i] = depth_ + i;
  for (std::uint32_t i = num_threads; i > 1; --i)
    std::swap(priority_[i - 1], priority_[rng.below(i)]);
  // d - 1 change points in [1, k]; the j-th (0-based) lowers the running thread to d - 1 - j.
  change_points_.clear();
  for (std::uint32_t j = 0; j + 1 < depth_; ++j) change_points_.push_back(1 + rng.below(steps_));
  std::sort(change_points_.begin(), change_points_.end());
  next_change_ = 0;
  lowest_      = 0;
}

std::uint32_t PctStrategy::pick(Decision const& d) {
  if (d.current != kNoThread) {
    while (next_change_ < change_points_.size() && change_points_[next_change_] <= d.step) {
      priority_[d.current] =
          static_cast<std::int64_t>(depth_) - 1 - static_cast<std::int64_t>(next_change_);
      ++next_change_;
    }
    // A thread that gave up an attempt must let others run, or PCT would starve the thread it
    // waits for: it drops below every priority given so far.
    if (d.current_yielded) priority_[d.current] = --lowest_;
  }
  std::uint32_t best = d.runnable.front();
  for (std::uint32_t t : d.runnable)
    if (priority_[t] > priority_[best]) best = t;
  return best;
}

// ---------------------------------------------------------------- prefix

std::string PrefixStrategy::describe() const {
  return "prefix(" + std::to_string(prefix_.size()) + " choices)";
}

std::uint32_t PrefixStrategy::pick_read(ReadDecision const& r) {
  if (position_ >= prefix_.size()) {
    ++position_;
    return 0;
  }
  std::uint32_t const choice = prefix_[position_++];
  if ((choice & kReadChoice) == 0 || (choice & ~kReadChoice) >= r.options)
    throw std::logic_error(
        "exhaustive search: replaying a prefix reached a load where the prefix has no valid read "
        "choice; the program under test is not deterministic");
  return choice & ~kReadChoice;
}

std::uint32_t PrefixStrategy::pick(Decision const& d) {
  if (position_ < prefix_.size()) {
    std::uint32_t const choice = prefix_[position_++];
    if (!std::binary_search(d.runnable.begin(), d.runnable.end(), choice))
      throw std::logic_error(
          "exhaustive search: replaying a prefix reached a decision where thread " +
          std::to_string(choice) + " is not runnable; the program under test is not deterministic");
    return choice;
  }
  ++position_;
  if (d.current_runnable && !d.current_yielded) return d.current;
  if (d.current == kNoThread) return d.runnable.front();
  for (std::uint32_t t : d.runnable)
    if (t > d.current) return t;
  return d.runnable.front();
}

}  // namespace heaplab::explore
