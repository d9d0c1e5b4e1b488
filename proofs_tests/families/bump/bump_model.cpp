// The bump family's sequential allocator and refinement model (bump_model.hpp).
#include "bump_model.hpp"

#include <algorithm>
#include <string>

#include "heaplab/core/expects.hpp"

namespace heaplab::bump_family {

std::uint64_t SequentialBump::alloc(std::uint64_t size, std::uint64_t align) {
  if (!fits(top_, size, align, arena_)) return kNull;
  std::uint64_t const start = align_up(top_, align);
  top_                      = start + size;
  return start;
}

BumpState BumpModel::after_alloc(std::size_t step,
                                 BumpAlloc const& wave,
                                 std::vector<std::uint64_t> const& answers,
                                 std::uint64_t reported_top) const {
  HEAPLAB_EXPECTS(answers.size() == wave.threads,
                  "BumpModel::after_alloc: " + std::to_string(answers.size()) +
                      " answers for a wave of " + std::to_string(wave.threads) + " threads");
  BumpState s;
  s.step         = BumpState::Step::alloc;
  s.arena        = arena_;
  s.align        = wave.align;
  s.top_before   = top_;
  s.live         = &live_;
  s.reported_top = reported_top;
  for (std::uint32_t t = 0; t < wave.threads; ++t) {
    if (answers[t] == kNull)
      s.nulls.push_back({t, wave.size_of(t)});
    else
      s.granted.push_back({answers[t], wave.size_of(t), t, step});
  }
  return s;
}

BumpState BumpModel::after_free_all(std::uint64_t reported_top) const {
  BumpState s;
  s.step         = BumpState::Step::free_all;
  s.arena        = arena_;
  s.top_before   = top_;
  s.reported_top = reported_top;
  return s;  // live: none
}

void BumpModel::commit(BumpState const& state) {
  if (state.step == BumpState::Step::free_all) {
    live_.clear();
    top_ = 0;
    return;
  }
  // bump-packed held: every grant begins at or above top_before, which no live range passes, so
  // appending the grants in offset order keeps live_ sorted.
  std::vector<Range> grants = state.granted;
  std::sort(grants.begin(), grants.end(), [](Range const& a, Range const& b) {
    return a.offset < b.offset;
  });
  live_.insert(live_.end(), grants.begin(), grants.end());
  top_ = state.top_after();
}

}  // namespace heaplab::bump_family
