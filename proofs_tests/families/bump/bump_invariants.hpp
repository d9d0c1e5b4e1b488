// The bump family's invariant catalog: what every runner checks after every step, on the state
// the model (bump_model.hpp) builds from the implementation's answers. Each invariant is a named
// function from that state to its violations, so a test can feed it a broken state.
//
// The catalog is also the model's refinement rule: a wave's answers are accepted exactly when the
// whole catalog holds on the state after it. What that accepts (bump_model.hpp says why it is
// exactly the outcomes of some sequential order of the wave's requests):
//   bump-inside-arena     every grant lies inside [0, arena)
//   bump-aligned          every grant's offset is a multiple of the wave's alignment
//   bump-disjoint         grants are disjoint from each other and from every live range
//   bump-packed           sorted by offset, a wave's grants start at align_up(top_before) and each
//                         next one at align_up(end of the previous): a prefix of what was left,
//                         handed out in some order, with no gap but alignment padding
//   bump-null-justified   a null only for a request that does not fit above the wave's final top
//   bump-top-matches      after a wave the implementation's bump pointer is the end of the highest
//                         grant (or unchanged when nothing was granted)
//   bump-free-all-resets  after free_all nothing is live and the bump pointer is 0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "heaplab/check/invariants.hpp"

namespace heaplab::bump_family {

/// An offset that stands for "no memory" (a null answer).
inline constexpr std::uint64_t kNull = ~std::uint64_t{0};

/// The range [offset, offset + size) granted to thread `thread` of step `step`.
struct Range {
  std::uint64_t offset = 0;
  std::uint64_t size   = 0;
  std::uint32_t thread = 0;
  std::size_t step     = 0;
  /// offset + size, saturated (an implementation may answer any offset).
  [[nodiscard]] std::uint64_t end() const { return offset > kNull - size ? kNull : offset + size; }
};

/// A request of thread `thread` for `size` bytes that was answered null.
struct NullAnswer {
  std::uint32_t thread = 0;
  std::uint64_t size   = 0;
};

/// The smallest multiple of `align` (a power of two) that is >= x, saturated at kNull.
std::uint64_t align_up(std::uint64_t x, std::uint64_t align);
/// Whether `size` bytes aligned to `align` fit in an arena of `arena` bytes above `top`.
bool fits(std::uint64_t top, std::uint64_t size, std::uint64_t align, std::uint64_t arena);

/// What the catalog checks after one step.
struct BumpState {
  enum class Step { alloc, free_all };
  Step step                = Step::alloc;
  std::uint64_t arena      = 0;
  std::uint64_t align      = 1;  // alloc: the wave's alignment
  std::uint64_t top_before = 0;  // the model's bump pointer before the step
  /// The ranges that were live before the step and still are after it (none after a free_all),
  /// sorted by offset and disjoint: each passed the catalog when it was granted. Not owned (the
  /// model's list); null means none.
  std::vector<Range> const* live = nullptr;
  std::vector<Range> granted;      // alloc: the step's grants, in thread order
  std::vector<NullAnswer> nulls;   // alloc: the requests answered null, in thread order
  std::uint64_t reported_top = 0;  // the implementation's bump pointer after the step

  [[nodiscard]] std::vector<Range> const& live_ranges() const;
  /// The model's bump pointer after the step: 0 after a free_all; else the end of the highest
  /// grant, or top_before when nothing was granted.
  [[nodiscard]] std::uint64_t top_after() const;
};

/// One invariant of the catalog.
struct BumpInvariant {
  std::string_view name;
  std::string_view statement;
  std::vector<check::Violation> (*check)(BumpState const&);
};

/// Each reports at most kMaxViolations violations.
inline constexpr std::size_t kMaxViolations = 32;

std::vector<check::Violation> inside_arena(BumpState const& state);
std::vector<check::Violation> aligned(BumpState const& state);
std::vector<check::Violation> disjoint(BumpState const& state);
std::vector<check::Violation> packed(BumpState const& state);
std::vector<check::Violation> null_justified(BumpState const& state);
std::vector<check::Violation> top_matches(BumpState const& state);
std::vector<check::Violation> free_all_resets(BumpState const& state);

/// Every invariant, in the order the runners check them.
std::vector<BumpInvariant> const& bump_catalog();
/// The whole catalog's violations, in catalog order (empty: the state is legal).
std::vector<check::Violation> check_all(BumpState const& state);

}  // namespace heaplab::bump_family
