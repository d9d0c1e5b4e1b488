// The bump family's model: the sequential bump allocator (the executable specification) and the
// refinement model every runner checks an implementation against.
//
// SequentialBump. One bump pointer `top` (bytes handed out so far) over an arena of `arena`
// bytes. alloc(size, align): start = align_up(top, align); if start + size > arena the answer is
// null and top stays; else the answer is start and top = start + size. free_all(): top = 0.
//
// BumpModel (refinement). It does not choose the implementation's answers; it follows them. After
// an alloc wave it builds the state the catalog checks (bump_invariants.hpp) from the grants and
// nulls the implementation gave and the bump pointer it reports, and the runner commits that state
// only when the whole catalog holds. What the model accepts for a wave W of requests (size s_t,
// alignment a, from the model's pointer top_before):
//   * every grant inside the arena, aligned to a, disjoint from the others and every live range;
//   * sorted by offset, the grants are packed from align_up(top_before): each starts at
//     align_up(end of the previous one) -- a prefix of what was left, handed out in some order;
//   * with top_after = the end of the highest grant (top_before when none), a null for request t
//     only when align_up(top_after, a) + s_t > arena;
//   * the implementation's own bump pointer equals top_after.
// This is exactly the set of outcomes of SequentialBump running W's requests one at a time in
// some order. The accepted answers are such a run: the grants in offset order (packing), then the
// null requests, which do not fit above top_after. Conversely, in any sequential order the pointer
// only grows and align_up is monotone, so a request refused at some point does not fit above
// top_after either. A compare-and-swap bump allocator (bump_allocator.hpp) gives such an outcome:
// its successful CASes are the run's order, and a null did not fit above the pointer its last load
// saw, which is at most top_after.
//
// After free_all the model holds nothing and expects the implementation's pointer to be 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bump_invariants.hpp"
#include "bump_schedule.hpp"

namespace heaplab::bump_family {

/// The sequential bump allocator (not thread-safe).
class SequentialBump {
 public:
  explicit SequentialBump(std::uint64_t arena) : arena_(arena) {}
  /// The offset of `size` bytes aligned to `align` (a power of two), or kNull when they do not
  /// fit above the bump pointer; a grant moves the pointer to its end.
  std::uint64_t alloc(std::uint64_t size, std::uint64_t align);
  void free_all() { top_ = 0; }
  [[nodiscard]] std::uint64_t top() const { return top_; }
  [[nodiscard]] std::uint64_t arena() const { return arena_; }

 private:
  std::uint64_t arena_;
  std::uint64_t top_ = 0;
};

class BumpModel {
 public:
  explicit BumpModel(std::uint64_t arena) : arena_(arena) {}

  /// The state after alloc wave `wave` (step `step`) in which thread t was answered answers[t]
  /// (an offset or kNull) and after which the implementation reports the bump pointer
  /// `reported_top`. Its `live` refers to this model's ranges until the next commit. Throws
  /// core::precondition_error when answers.size() != wave.threads.
  [[nodiscard]] BumpState after_alloc(std::size_t step,
                                      BumpAlloc const& wave,
                                      std::vector<std::uint64_t> const& answers,
                                      std::uint64_t reported_top) const;
  /// The state after a free_all after which the implementation reports `reported_top`.
  [[nodiscard]] BumpState after_free_all(std::uint64_t reported_top) const;
  /// Adopts a state built by this model on which the catalog held: its grants become live (a
  /// free_all releases everything) and the pointer moves to state.top_after().
  void commit(BumpState const& state);

  [[nodiscard]] std::uint64_t arena() const { return arena_; }
  [[nodiscard]] std::uint64_t top() const { return top_; }
  /// The live ranges, sorted by offset and disjoint.
  [[nodiscard]] std::vector<Range> const& live() const { return live_; }

 private:
  std::uint64_t arena_;
  std::uint64_t top_ = 0;
  std::vector<Range> live_;
};

}  // namespace heaplab::bump_family
