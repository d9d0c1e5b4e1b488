// Scheduling strategies of the controlled scheduler: at every decision point (before each atomic
// operation, at thread start and exit) a strategy picks which logical thread runs next.
//
//   RandomStrategy   uniform among runnable threads, from a seed.
//   PctStrategy      PCT (Burckhardt et al., ASPLOS 2010): random distinct priorities, d - 1
//                    random priority-change points among the first k steps; the highest-priority
//                    runnable thread runs. Finds any bug of depth d with probability >= 1/(n
//                    k^(d-1)).
//   PrefixStrategy   follows a given list of choices, then continues without preemption; the
//                    building block of bounded exhaustive search (explore.hpp).
// In the weak-memory mode (memory_model.hpp) a strategy also picks, at every load that may read
// more than one store, which one it reads (pick_read): random and PCT from a second generator of
// the same seed (so the interleaving of a seed does not depend on its read choices), the prefix
// strategy from its list (the latest store once the list is used up).
// Every strategy is deterministic given its parameters: a seed replays the same interleaving.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heaplab/explore/trace.hpp"

namespace heaplab::explore {

/// A scheduling decision point.
struct Decision {
  std::uint64_t step    = 0;          // atomic operations executed before this point
  std::uint32_t current = kNoThread;  // the thread that reached it; kNoThread at the start
  /// `current` may run on: alive and not waiting for a memory change
  /// (Backoff::until_memory_changes).
  bool current_runnable = false;
  /// `current` just gave up an attempt (Backoff::retry): switching away is not a preemption.
  bool current_yielded = false;
  std::vector<std::uint32_t> runnable;  // ascending, never empty

  /// Whether running `choice` here is a preemption (a switch away from a thread that could run
  /// on and did not yield); the exhaustive search bounds their number.
  [[nodiscard]] bool is_preemption(std::uint32_t choice) const {
    return current_runnable && !current_yielded && choice != current;
  }
};

/// A read decision (weak-memory mode): which of the stores a load may read it returns.
struct ReadDecision {
  std::uint64_t step    = 0;  // atomic operations executed before this load
  std::uint32_t thread  = kNoThread;
  std::uint32_t options = 1;  // >= 2: choice 0 is the latest store, k the k-th older one
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  /// "random(seed=7)", "pct(depth=3,steps=400,seed=7)": printed with failures.
  [[nodiscard]] virtual std::string describe() const = 0;
  virtual void begin_run(std::uint32_t num_threads)  = 0;
  /// Must return an element of d.runnable.
  virtual std::uint32_t pick(Decision const& d) = 0;
  /// Must return a value below r.options. The default reads the latest store.
  virtual std::uint32_t pick_read(ReadDecision const& r) {
    (void)r;
    return 0;
  }
};

/// Deterministic 64-bit generator (splitmix64); identical on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, bound) (bound > 0), by rejection: no modulo bias.
  std::uint64_t below(std::uint64_t bound);

 private:
  std::uint64_t state_;
};

/// The read choice of the seeded strategies: the latest store with probability 1/2, else one of
/// the older ones, uniformly.
std::uint32_t random_read_choice(SplitMix64& rng, std::uint32_t options);
/// The seed of the read-choice generator of a strategy seeded with `seed`.
std::uint64_t read_choice_seed(std::uint64_t seed);

class RandomStrategy final : public Strategy {
 public:
  explicit RandomStrategy(std::uint64_t seed)
      : seed_(seed), rng_(seed), read_rng_(read_choice_seed(seed)) {}
  [[nodiscard]] std::string describe() const override;
  void begin_run(std::uint32_t) override {
    rng_      = SplitMix64(seed_);
    read_rng_ = SplitMix64(read_choice_seed(seed_));
  }
  std::uint32_t pick(Decision const& d) override;
  std::uint32_t pick_read(ReadDecision const& r) override {
    return random_read_choice(read_rng_, r.options);
  }

 private:
  std::uint64_t seed_;
  SplitMix64 rng_;
  SplitMix64 read_rng_;
};

class PctStrategy final : public Strategy {
 public:
  /// depth d >= 1 (d - 1 change points), step_estimate k >= 1 (change points fall in [1, k]).
  PctStrategy(std::uint64_t seed, std::uint32_t depth, std::uint64_t step_estimate);
  [[nodiscard]] std::string describe() const override;
  void begin_run(std::uint32_t num_threads) override;
  std::uint32_t pick(Decision const& d) override;
  std::uint32_t pick_read(ReadDecision const& r) override {
    return random_read_choice(read_rng_, r.options);
  }

 private:
  std::uint64_t seed_;
  SplitMix64 read_rng_{0};
  std::uint32_t depth_;
  std::uint64_t steps_;
  std::vector<std::int64_t> priority_;
  std::vector<std::uint64_t> change_points_;  // ascending
  std::size_t next_change_ = 0;
  std::int64_t lowest_     = 0;  // decreases each time a thread yields
};

/// In a prefix (and in DecisionRecord::chosen), a read choice k is kReadChoice | k; a scheduling
/// choice is the thread index.
inline constexpr std::uint32_t kReadChoice = 0x80000000u;

class PrefixStrategy final : public Strategy {
 public:
  explicit PrefixStrategy(std::vector<std::uint32_t> prefix) : prefix_(std::move(prefix)) {}
  [[nodiscard]] std::string describe() const override;
  void begin_run(std::uint32_t) override { position_ = 0; }
  /// The prefix's next choice (throws std::logic_error if it is not runnable or is a read
  /// choice: the program is not deterministic), then: current if it may run on and did not
  /// yield, else the next runnable thread after current in round-robin order.
  std::uint32_t pick(Decision const& d) override;
  /// The prefix's next choice (a read choice below r.options, else std::logic_error), then 0
  /// (the latest store).
  std::uint32_t pick_read(ReadDecision const& r) override;

 private:
  std::vector<std::uint32_t> prefix_;
  std::size_t position_ = 0;
};

}  // namespace heaplab::explore
