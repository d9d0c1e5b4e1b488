// The heap family's reductions for minimize (HeapFamily::reduce, family.hpp): the smallest M that
// still fails, then, step by step, smaller waves (runner/minimize.hpp runs them after ddmin).
#include <algorithm>
#include <string>

#include "heaplab/families/heap/family.hpp"
#include "heaplab/runner/minimize.hpp"

namespace heaplab::heap_family {

namespace {

using schedule::Schedule;

/// The reductions of one round on reducer.best(), typed.
class HeapReductions {
 public:
  explicit HeapReductions(runner::Reducer& reducer) : reducer_(reducer) {}

  /// The smallest M (binary search) that still fails.
  void reduce_config() {
    runner::shrink_number(
        reducer_,
        best().config.num_blocks,
        1,
        [&](std::uint64_t m) {
          Schedule s          = best();
          s.config.num_blocks = static_cast<std::uint32_t>(m);
          return family().wrap(std::move(s));
        },
        "config M");
  }

  /// Every reduction of one step, in this order (each kept only if the schedule still fails
  /// the same way; a reduction of another kind of step does nothing).
  void reduce_step(std::size_t i) {
    reduce_alloc_wave(i);
    reduce_free_wave(i);
    halve_fraction<schedule::ParallelDo>(
        i, &schedule::ParallelDo::fraction, "parallel_do fraction");
    drop(i, &schedule::ParallelDo::null_fraction, "null_fraction -> 0");
    drop(i, &schedule::ParallelDo::child_slot, "child_slot removed");
    try_edit<schedule::Defrag>(
        i,
        [](schedule::Defrag& d) {
          if (!d.n && !d.k1 && d.variant == core::RewriteVariant::forwarding &&
              d.order == core::CandidateOrder::block_id)
            return false;
          d.n.reset();
          d.k1.reset();
          d.variant = core::RewriteVariant::forwarding;
          d.order   = core::CandidateOrder::block_id;
          return true;
        },
        "defrag overrides dropped");
    drop(i, &schedule::Check::snapshot_digest, "snapshot digest dropped");
    drop(i, &schedule::Check::graph_digest, "graph digest dropped");
  }

  [[nodiscard]] std::size_t steps() const { return best().steps.size(); }

 private:
  [[nodiscard]] Schedule const& best() const { return HeapFamily::unwrap(reducer_.best()); }
  bool test(Schedule s) { return reducer_.try_candidate(family().wrap(std::move(s))); }

  /// Tries `edit` on a copy of step i; keeps it if the result fails the same way.
  template <class StepType, class Edit>
  bool try_edit(std::size_t i, Edit const& edit, std::string const& what) {
    if (i >= best().steps.size()) return false;
    auto const* current = std::get_if<StepType>(&best().steps[i]);
    if (!current) return false;
    StepType changed = *current;
    if (!edit(changed)) return false;  // nothing to change
    Schedule s = best();
    s.steps[i] = changed;
    if (!test(s)) return false;
    reducer_.log("step " + std::to_string(i) + ": " + what);
    return true;
  }

  template <class StepType, class Get, class Set>
  void shrink_field(
      std::size_t i, std::uint64_t lo, Get const& get, Set const& set, std::string const& what) {
    if (i >= best().steps.size()) return;
    auto const* current = std::get_if<StepType>(&best().steps[i]);
    if (!current) return;
    std::optional<std::uint64_t> const value = get(*current);
    if (!value) return;
    runner::shrink_number(
        reducer_,
        *value,
        lo,
        [&](std::uint64_t v) {
          Schedule s       = best();
          StepType changed = std::get<StepType>(s.steps[i]);
          set(changed, v);
          s.steps[i] = changed;
          return family().wrap(std::move(s));
        },
        "step " + std::to_string(i) + " " + what);
  }

  template <class StepType>
  void halve_fraction(std::size_t i, double StepType::*field, std::string const& what) {
    for (int k = 0; k < 6; ++k)
      if (!try_edit<StepType>(
              i,
              [&](StepType& s) {
                if (s.*field <= 0) return false;
                s.*field /= 2;
                return true;
              },
              what + " halved"))
        break;
  }

  /// Resets an optional part of step i (an optional, a flag, a fraction) if it is set.
  template <class StepType, class Member>
  void drop(std::size_t i, Member StepType::*member, std::string const& what) {
    try_edit<StepType>(
        i,
        [member](StepType& s) {
          if (!(s.*member)) return false;
          s.*member = Member{};
          return true;
        },
        what);
  }

  /// Removes the elements of a list of step i one at a time, keeping at least `keep`.
  template <class StepType, class Element>
  void remove_each(std::size_t i,
                   std::vector<Element> StepType::*list,
                   std::size_t keep,
                   std::string const& what) {
    for (std::size_t e = 0;; ++e) {
      auto const* s = i < best().steps.size() ? std::get_if<StepType>(&best().steps[i]) : nullptr;
      if (!s || (s->*list).size() <= keep || e >= (s->*list).size()) break;
      auto const erase = [&](StepType& w) {
        (w.*list).erase((w.*list).begin() + static_cast<std::ptrdiff_t>(e));
        return true;
      };
      if (try_edit<StepType>(i, erase, what)) --e;  // the next element moved to index e
    }
  }

  /// An alloc wave: fewer threads, fewer objects, no divergence, fewer link rules and lane
  /// types, no roots.
  void reduce_alloc_wave(std::size_t i) {
    using schedule::AllocWave;
    using schedule::Divergence;
    shrink_field<AllocWave>(
        i,
        1,
        [](AllocWave const& a) { return std::optional<std::uint64_t>(a.threads); },
        [](AllocWave& a, std::uint64_t v) { a.threads = static_cast<std::uint32_t>(v); },
        "threads");
    shrink_field<AllocWave>(
        i,
        1,
        [](AllocWave const& a) {
          return a.count ? std::optional<std::uint64_t>(*a.count) : std::nullopt;
        },
        [](AllocWave& a, std::uint64_t v) { a.count = static_cast<std::uint32_t>(v); },
        "count");
    try_edit<AllocWave>(
        i,
        [](AllocWave& a) {
          if (a.divergence == Divergence::all) return false;
          if (a.divergence == Divergence::per_lane_counts) {
            std::uint32_t const most =
                *std::max_element(a.lane_counts.begin(), a.lane_counts.end());
            a.count = std::max<std::uint32_t>(most, 1);
          }
          if (a.divergence == Divergence::mixed_types) {
            a.type = a.lane_types.front();
            std::vector<schedule::LinkRule> kept;
            for (auto const& l : a.links)
              if (l.type == *a.type) kept.push_back(l);
            a.links = kept;
          }
          a.divergence = Divergence::all;
          a.lane_counts.clear();
          a.lane_types.clear();
          a.mask_seed = 0;
          return true;
        },
        "divergence -> all");
    remove_each(i, &AllocWave::links, 0, "link rule removed");
    remove_each(i, &AllocWave::lane_types, 1, "lane type removed");
    drop(i, &AllocWave::roots, "roots off");
  }

  /// A free wave that frees a fraction: the fraction halved, up to six times.
  void reduce_free_wave(std::size_t i) {
    if (i >= best().steps.size()) return;
    auto const* f = std::get_if<schedule::FreeWave>(&best().steps[i]);
    if (!f || f->select.pattern != schedule::SelectPattern::fraction) return;
    for (int k = 0; k < 6; ++k)
      if (!try_edit<schedule::FreeWave>(
              i,
              [](schedule::FreeWave& w) {
                if (w.select.fraction <= 0) return false;
                w.select.fraction /= 2;
                return true;
              },
              "free fraction halved"))
        break;
  }

  runner::Reducer& reducer_;
};

}  // namespace

void HeapFamily::reduce(runner::Reducer& reducer, runner::ReductionOptions const& options) const {
  HeapReductions r(reducer);
  if (options.heap) r.reduce_config();
  if (options.sizes)
    for (std::size_t i = 0; i < r.steps(); ++i) r.reduce_step(i);
}

}  // namespace heaplab::heap_family
