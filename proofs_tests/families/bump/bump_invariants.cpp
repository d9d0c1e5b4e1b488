// The bump family's invariant catalog (bump_invariants.hpp).
#include "bump_invariants.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace heaplab::bump_family {

namespace {

constexpr char const* kInsideArena   = "bump-inside-arena";
constexpr char const* kAligned       = "bump-aligned";
constexpr char const* kDisjoint      = "bump-disjoint";
constexpr char const* kPacked        = "bump-packed";
constexpr char const* kNullJustified = "bump-null-justified";
constexpr char const* kTopMatches    = "bump-top-matches";
constexpr char const* kFreeAllResets = "bump-free-all-resets";

/// "[16, 40) of thread 5 (step 2)"
std::string show(Range const& r) {
  return "[" + std::to_string(r.offset) + ", " + std::to_string(r.end()) + ") of thread " +
         std::to_string(r.thread) + " (step " + std::to_string(r.step) + ")";
}

/// Collects at most kMaxViolations violations of one invariant.
class Report {
 public:
  explicit Report(char const* name) : name_(name) {}
  [[nodiscard]] bool full() const { return out_.size() >= kMaxViolations; }
  void add(std::string message) {
    if (full()) return;
    check::Violation v;
    v.invariant = name_;
    v.message   = std::move(message);
    out_.push_back(std::move(v));
  }
  std::vector<check::Violation> take() { return std::move(out_); }

 private:
  char const* name_;
  std::vector<check::Violation> out_;
};

std::vector<Range> sorted_by_offset(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](Range const& a, Range const& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.thread < b.thread;
  });
  return ranges;
}

bool is_alloc(BumpState const& s) { return s.step == BumpState::Step::alloc; }

}  // namespace

std::uint64_t align_up(std::uint64_t x, std::uint64_t align) {
  std::uint64_t const mask = align - 1;
  return x > kNull - mask ? kNull : (x + mask) & ~mask;
}

bool fits(std::uint64_t top, std::uint64_t size, std::uint64_t align, std::uint64_t arena) {
  std::uint64_t const start = align_up(top, align);
  return start <= arena && size <= arena - start;
}

std::vector<Range> const& BumpState::live_ranges() const {
  static std::vector<Range> const none;
  return live ? *live : none;
}

std::uint64_t BumpState::top_after() const {
  if (step == Step::free_all) return 0;
  std::uint64_t top = top_before;
  for (Range const& g : granted) top = std::max(top, g.end());
  return top;
}

std::vector<check::Violation> inside_arena(BumpState const& s) {
  Report r(kInsideArena);
  for (Range const& g : s.granted)
    if (g.offset > s.arena || g.size > s.arena - g.offset)
      r.add(show(g) + " ends beyond the arena of " + std::to_string(s.arena) + " bytes");
  return r.take();
}

std::vector<check::Violation> aligned(BumpState const& s) {
  Report r(kAligned);
  for (Range const& g : s.granted)
    if (g.offset % s.align != 0)
      r.add(show(g) + " is not aligned to " + std::to_string(s.align) + " bytes");
  return r.take();
}

std::vector<check::Violation> disjoint(BumpState const& s) {
  Report r(kDisjoint);
  std::vector<Range> const grants = sorted_by_offset(s.granted);
  // Sorted by offset, a grant overlaps an earlier one iff it begins before the largest end so far.
  for (std::size_t i = 1, widest = 0; i < grants.size(); ++i) {
    if (grants[i].offset < grants[widest].end())
      r.add(show(grants[i]) + " overlaps " + show(grants[widest]));
    if (grants[i].end() > grants[widest].end()) widest = i;
  }
  // The live ranges are sorted and disjoint, so their ends are sorted too: the first one ending
  // after g begins is the only one that can overlap g without an earlier one doing so.
  std::vector<Range> const& live = s.live_ranges();
  for (Range const& g : grants) {
    auto const it = std::partition_point(
        live.begin(), live.end(), [&](Range const& l) { return l.end() <= g.offset; });
    if (it != live.end() && it->offset < g.end())
      r.add(show(g) + " overlaps the live range " + show(*it));
  }
  return r.take();
}

std::vector<check::Violation> packed(BumpState const& s) {
  Report r(kPacked);
  std::uint64_t expected = align_up(s.top_before, s.align);
  for (Range const& g : sorted_by_offset(s.granted)) {
    if (g.offset != expected)
      r.add(show(g) + " starts at " + std::to_string(g.offset) + "; the bump pointer hands out " +
            std::to_string(expected) + " next (the wave began at " + std::to_string(s.top_before) +
            ")");
    expected = align_up(g.end(), s.align);
  }
  return r.take();
}

std::vector<check::Violation> null_justified(BumpState const& s) {
  Report r(kNullJustified);
  std::uint64_t const top = s.top_after();
  for (NullAnswer const& n : s.nulls)
    if (fits(top, n.size, s.align, s.arena))
      r.add("thread " + std::to_string(n.thread) + " got null for " + std::to_string(n.size) +
            " bytes, which still fit at offset " + std::to_string(align_up(top, s.align)) +
            " after the wave (arena " + std::to_string(s.arena) + " bytes)");
  return r.take();
}

std::vector<check::Violation> top_matches(BumpState const& s) {
  Report r(kTopMatches);
  if (is_alloc(s) && s.reported_top != s.top_after())
    r.add("the bump pointer is " + std::to_string(s.reported_top) +
          " after the wave; its grants end at " + std::to_string(s.top_after()));
  return r.take();
}

std::vector<check::Violation> free_all_resets(BumpState const& s) {
  Report r(kFreeAllResets);
  if (is_alloc(s)) return r.take();
  if (s.reported_top != 0)
    r.add("the bump pointer is " + std::to_string(s.reported_top) + " after free_all (expected 0)");
  std::size_t const live = s.live_ranges().size() + s.granted.size();
  if (live != 0) r.add(std::to_string(live) + " ranges still live after free_all (expected none)");
  return r.take();
}

std::vector<BumpInvariant> const& bump_catalog() {
  static std::vector<BumpInvariant> const catalog = {
      {kInsideArena, "every grant lies inside [0, arena)", &inside_arena},
      {kAligned, "every grant's offset is a multiple of its wave's alignment", &aligned},
      {kDisjoint, "grants are disjoint from each other and from every live range", &disjoint},
      {kPacked,
       "sorted by offset, a wave's grants start at align_up(top) and each next one at "
       "align_up(end of the previous): no gap but alignment padding",
       &packed},
      {kNullJustified,
       "a null only for a request that does not fit above the bump pointer after its wave",
       &null_justified},
      {kTopMatches, "after a wave the bump pointer is the end of its highest grant", &top_matches},
      {kFreeAllResets,
       "after free_all nothing is live and the bump pointer is 0",
       &free_all_resets},
  };
  return catalog;
}

std::vector<check::Violation> check_all(BumpState const& state) {
  std::vector<check::Violation> out;
  for (BumpInvariant const& inv : bump_catalog()) {
    auto v = inv.check(state);
    out.insert(out.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  }
  return out;
}

}  // namespace heaplab::bump_family
