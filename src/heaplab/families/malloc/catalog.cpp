// The malloc family's invariant catalog (catalog.hpp).
#include "heaplab/families/malloc/catalog.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace heaplab::malloc_family {

namespace {

constexpr char const* kAligned       = "malloc-aligned";
constexpr char const* kInsidePool    = "malloc-inside-pool";
constexpr char const* kDisjoint      = "malloc-disjoint";
constexpr char const* kCookies       = "malloc-cookies-intact";
constexpr char const* kNullJustified = "malloc-null-justified";
constexpr char const* kRecovers      = "malloc-recovers";

std::string hex(std::uint64_t v) {
  static char const digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[v % 16]);
    v /= 16;
  } while (v != 0);
  return "0x" + out;
}

/// "[0x7f00, +64) id 12 of thread 5 (step 2)"
std::string show(Allocation const& a) {
  return "[" + hex(a.address) + ", +" + std::to_string(a.size) + ") id " + std::to_string(a.id) +
         " of thread " + std::to_string(a.thread) + " (step " + std::to_string(a.step) + ")";
}

/// Collects at most kMaxViolations violations of one invariant.
class Report {
 public:
  explicit Report(char const* name) : name_(name) {}
  void add(std::string message, std::uint64_t id) {
    if (out_.size() >= kMaxViolations) return;
    check::Violation v;
    v.invariant = name_;
    v.message   = std::move(message);
    v.object_id = static_cast<std::int64_t>(id);
    out_.push_back(std::move(v));
  }
  std::vector<check::Violation> take() { return std::move(out_); }

 private:
  char const* name_;
  std::vector<check::Violation> out_;
};

std::vector<Allocation> live_by_address(MallocState const& s) {
  std::vector<Allocation> all = s.kept_allocations();
  all.insert(all.end(), s.granted.begin(), s.granted.end());
  std::sort(all.begin(), all.end(), [](Allocation const& a, Allocation const& b) {
    return a.address != b.address ? a.address < b.address : a.id < b.id;
  });
  return all;
}

std::uint64_t align_up(std::uint64_t x, std::uint64_t alignment) {
  return (x + alignment - 1) / alignment * alignment;
}

}  // namespace

std::vector<Allocation> const& MallocState::kept_allocations() const {
  static std::vector<Allocation> const none;
  return kept ? *kept : none;
}

std::uint64_t MallocState::live_bytes() const {
  std::uint64_t bytes = 0;
  for (Allocation const& a : kept_allocations()) bytes += a.size;
  for (Allocation const& a : granted) bytes += a.size;
  return bytes;
}

std::vector<check::Violation> aligned(MallocState const& s) {
  Report r(kAligned);
  std::uint64_t const alignment = std::max<std::uint64_t>(s.subject.alignment, 1);
  for (Allocation const& g : s.granted)
    if (g.address % alignment != 0)
      r.add(show(g) + " is not a multiple of " + std::to_string(alignment) + " (" + s.subject.name +
                "'s alignment)",
            g.id);
  return r.take();
}

std::vector<check::Violation> inside_pool(MallocState const& s) {
  Report r(kInsidePool);
  if (!s.pool.known()) return r.take();
  for (Allocation const& g : s.granted)
    if (g.address < s.pool.begin || g.address > s.pool.end || g.size > s.pool.end - g.address)
      r.add(
          show(g) + " is not inside the pool [" + hex(s.pool.begin) + ", " + hex(s.pool.end) + ")",
          g.id);
  return r.take();
}

std::vector<check::Violation> disjoint(MallocState const& s) {
  Report r(kDisjoint);
  std::vector<Allocation> const all = live_by_address(s);
  // Sorted by address, an allocation overlaps an earlier one iff it starts below the largest end
  // so far; report it against the one that reaches furthest.
  std::size_t reach = 0;
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].address < all[reach].end())
      r.add(show(all[i]) + " overlaps " + show(all[reach]), all[i].id);
    if (all[i].end() > all[reach].end()) reach = i;
  }
  return r.take();
}

std::vector<check::Violation> cookies_intact(MallocState const& s) {
  Report r(kCookies);
  for (Corruption const& c : s.corrupt)
    r.add(show(c.allocation) + ": byte " + std::to_string(c.offset) + " is not its cookie (epoch " +
              std::to_string(c.allocation.epoch) + "): overwritten while live",
          c.allocation.id);
  return r.take();
}

std::uint64_t largest_aligned_gap(std::vector<Allocation> const& by_address,
                                  AddressRange range,
                                  std::uint64_t alignment) {
  std::uint64_t best = 0, cursor = range.begin;
  auto gap = [&](std::uint64_t until) {
    std::uint64_t const start = align_up(cursor, alignment);
    if (until > start) best = std::max(best, until - start);
  };
  for (Allocation const& a : by_address) {
    if (a.address >= range.end) break;
    gap(std::max(a.address, cursor));
    cursor = std::max(cursor, a.end());
  }
  gap(std::max(range.end, cursor));
  return best;
}

std::vector<check::Violation> null_justified(MallocState const& s) {
  Report r(kNullJustified);
  if (s.nulls.empty()) return r.take();
  std::uint64_t const live = s.live_bytes();
  if (s.subject.null_floor > 0) {
    double const floor = s.subject.null_floor * static_cast<double>(s.pool_bytes);
    for (NullAnswer const& n : s.nulls)
      if (static_cast<double>(live + n.size) <= floor)
        r.add("thread " + std::to_string(n.thread) + " got null for " + std::to_string(n.size) +
                  " B with " + std::to_string(live) + " B live of a " +
                  std::to_string(s.pool_bytes) + " B pool; " + s.subject.name +
                  " promises no null below " + std::to_string(s.subject.null_floor) +
                  " of the pool",
              n.thread);
  }
  if (s.subject.exact_gaps && s.pool.known()) {
    std::uint64_t const gap = largest_aligned_gap(
        live_by_address(s), s.pool, std::max<std::uint64_t>(s.subject.alignment, 1));
    for (NullAnswer const& n : s.nulls)
      if (n.size <= gap)
        r.add("thread " + std::to_string(n.thread) + " got null for " + std::to_string(n.size) +
                  " B although a free gap of " + std::to_string(gap) +
                  " B remains after the wave (" + s.subject.name + " manages the pool exactly)",
              n.thread);
  }
  return r.take();
}

std::vector<check::Violation> recovers(MallocState const& s) {
  Report r(kRecovers);
  if (!s.fill_from_empty || !s.first_fill || s.subject.recovery <= 0) return r.take();
  double const need = s.subject.recovery * static_cast<double>(*s.first_fill);
  if (static_cast<double>(*s.fill_from_empty) < need)
    r.add("a fill from an empty pool reached " + std::to_string(*s.fill_from_empty) +
              " B; the first fill from an empty pool reached " + std::to_string(*s.first_fill) +
              " B and " + s.subject.name + " promises " + std::to_string(s.subject.recovery) +
              " of it: freed memory did not come back",
          0);
  return r.take();
}

std::vector<MallocInvariant> const& malloc_catalog() {
  static std::vector<MallocInvariant> const catalog = {
      {kAligned, "every grant is a multiple of the subject's documented alignment", aligned},
      {kInsidePool, "every grant lies inside the subject's pool, where it says where", inside_pool},
      {kDisjoint, "a grant overlaps neither another grant nor any live allocation", disjoint},
      {kCookies,
       "every live allocation keeps the bytes written into it until its free (cookies)",
       cookies_intact},
      {kNullJustified, "a null only as the subject's out-of-memory policy allows", null_justified},
      {kRecovers,
       "a fill from an empty pool reaches the subject's recovery fraction of the first one",
       recovers},
  };
  return catalog;
}

std::vector<check::Violation> check_all(MallocState const& state) {
  std::vector<check::Violation> out;
  for (MallocInvariant const& inv : malloc_catalog()) {
    auto v = inv.check(state);
    out.insert(out.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  }
  return out;
}

}  // namespace heaplab::malloc_family
