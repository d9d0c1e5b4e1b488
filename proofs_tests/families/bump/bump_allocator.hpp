// The bump family's implementations: the concurrent bump allocator (AtomicBump) that CPU threads
// share, the way a wave runs on OS threads, and the backends a runner drives (the sequential
// model for bump-model, OS threads over a ConcurrentBump for bump-cpu).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "bump_invariants.hpp"
#include "bump_model.hpp"
#include "bump_schedule.hpp"

namespace heaplab::bump_family {

/// A bump allocator that several threads use at once.
class ConcurrentBump {
 public:
  virtual ~ConcurrentBump() = default;
  /// Thread-safe: the offset of `size` bytes aligned to `align` (a power of two), or kNull when
  /// they do not fit.
  virtual std::uint64_t alloc(std::uint64_t size, std::uint64_t align) = 0;
  /// At quiescence only (no alloc in flight): releases everything, the pointer goes back to 0.
  virtual void free_all() = 0;
  /// At quiescence: the bump pointer.
  [[nodiscard]] virtual std::uint64_t top() const = 0;
};

/// The lock-free bump allocator: one std::atomic<std::uint64_t> pointer advanced by
/// compare-and-swap (align up, check the end against the arena, CAS; retry from the value the
/// failed CAS saw).
///
/// Linearization points: a grant at its successful CAS (top: start -> start + size); a null at
/// the load (the first one, or a failed CAS) that returned the pointer above which it did not
/// fit -- the pointer only grows, so it never fits later in the wave either.
///
/// Memory orders: relaxed throughout. The allocator's whole state is one location, and every
/// CAS reads the latest value in that location's modification order, so no two grants start
/// from the same pointer value: grants are disjoint without any ordering of other memory. The
/// allocator never touches the bytes it hands out; a caller that passes data through them
/// orders it itself (here every wave ends with std::thread::join, which orders everything).
/// free_all and top() run at quiescence, after those joins.
class AtomicBump final : public ConcurrentBump {
 public:
  explicit AtomicBump(std::uint64_t arena) : arena_(arena) {}
  std::uint64_t alloc(std::uint64_t size, std::uint64_t align) override;
  void free_all() override { top_.store(0, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t top() const override { return top_.load(std::memory_order_relaxed); }

 private:
  std::uint64_t const arena_;
  std::atomic<std::uint64_t> top_{0};
};

/// OS threads per wave when RunnerOptions::threads is 0: min(4, hardware threads), at least 2
/// (two OS threads interleave even on one core).
unsigned default_os_threads();

/// Runs one wave on min(os_threads, wave.threads) OS threads (the calling one included) that
/// start together: worker w runs the wave's threads order[w], order[w + W], ... (order =
/// wave_order(wave)), each one alloc(size_of(t), align). answers[t]: thread t's offset or kNull.
/// Throws std::system_error when an OS thread cannot be started (after joining those that were).
std::vector<std::uint64_t> run_wave_on_threads(ConcurrentBump& allocator,
                                               BumpAlloc const& wave,
                                               unsigned os_threads);

/// What a runner drives: one allocator over one arena, step by step.
class BumpBackend {
 public:
  virtual ~BumpBackend() = default;
  /// Runs an alloc wave; answers[t]: thread t's offset or kNull.
  virtual std::vector<std::uint64_t> alloc_wave(BumpAlloc const& wave) = 0;
  virtual void free_all()                                              = 0;
  /// The bump pointer between steps.
  [[nodiscard]] virtual std::uint64_t top() const = 0;
};

/// bump-model's backend: SequentialBump, the wave's threads one at a time in wave_order.
class SequentialBackend final : public BumpBackend {
 public:
  explicit SequentialBackend(std::uint64_t arena) : bump_(arena) {}
  std::vector<std::uint64_t> alloc_wave(BumpAlloc const& wave) override;
  void free_all() override { bump_.free_all(); }
  [[nodiscard]] std::uint64_t top() const override { return bump_.top(); }

 private:
  SequentialBump bump_;
};

/// A ConcurrentBump on OS threads (run_wave_on_threads): bump-cpu's backend, and the planted one's.
class ThreadsBackend final : public BumpBackend {
 public:
  ThreadsBackend(std::unique_ptr<ConcurrentBump> allocator, unsigned os_threads);
  std::vector<std::uint64_t> alloc_wave(BumpAlloc const& wave) override {
    return run_wave_on_threads(*allocator_, wave, os_threads_);
  }
  void free_all() override { allocator_->free_all(); }
  [[nodiscard]] std::uint64_t top() const override { return allocator_->top(); }

 private:
  std::unique_ptr<ConcurrentBump> allocator_;
  unsigned os_threads_;
};

}  // namespace heaplab::bump_family
