// The malloc family's invariant catalog (docs/malloc.md "Invariants"): what every runner checks
// after every step, on the state built from what the subject answered and what its memory holds.
// Each invariant is a named function from that state to its violations, so a test can feed it a
// broken state. The model is the refinement rule these say: a subject's answers are accepted
// exactly when the whole catalog holds, and then they become the model's state (the live set).
//
//   malloc-aligned         every grant is a multiple of the subject's alignment
//   malloc-inside-pool     every grant lies inside the subject's pool, where the subject says where
//   malloc-disjoint        grants overlap neither each other nor any live allocation
//   malloc-cookies-intact  every live allocation holds its cookie (cookie.hpp) after every step:
//                          nothing the program wrote is lost until its free
//   malloc-null-justified  a null only as the subject's out-of-memory policy allows (subject.hpp)
//   malloc-recovers        a fill from an empty pool reaches the subject's recovery fraction of the
//                          first such fill of the same size: freed memory comes back
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/families/malloc/subject.hpp"

namespace heaplab::malloc_family {

/// An allocation the model tracks.
struct Allocation {
  std::uint64_t address = 0;
  std::uint64_t size    = 0;
  std::uint64_t id      = 0;  // unique in a run; the cookie's seed
  std::uint32_t epoch   = 0;  // the epoch its content was last written at
  std::size_t step      = 0;  // the step that granted it
  std::uint32_t thread  = 0;  // the thread that got it
  [[nodiscard]] std::uint64_t end() const { return address + size; }
  [[nodiscard]] Block block() const { return {address, size, id, epoch}; }
};

/// A request answered null.
struct NullAnswer {
  std::uint32_t thread = 0;
  std::uint64_t size   = 0;
};

/// A live allocation whose bytes are not its cookie: the first bad offset.
struct Corruption {
  Allocation allocation;
  std::uint64_t offset = 0;
};

/// What the catalog checks after one step.
struct MallocState {
  std::uint64_t pool_bytes = 0;  // the schedule's pool
  SubjectInfo subject;
  AddressRange pool;  // where the subject's pool lies (unknown: empty)
  /// Allocations live before the step that still are after it. Not owned; null: none.
  std::vector<Allocation> const* kept = nullptr;
  std::vector<Allocation> granted;  // the step's grants
  std::vector<NullAnswer> nulls;    // the step's null answers (a fill's final retry excluded)
  std::vector<Corruption> corrupt;  // live allocations whose content is not their cookie
  /// A fill that started from an empty pool: the bytes it reached, and what the first such fill
  /// of the same size in the run reached (absent for this first one).
  std::optional<std::uint64_t> fill_from_empty;
  std::optional<std::uint64_t> first_fill;

  [[nodiscard]] std::vector<Allocation> const& kept_allocations() const;
  /// Bytes live after the step (kept + granted, requested sizes).
  [[nodiscard]] std::uint64_t live_bytes() const;
};

struct MallocInvariant {
  std::string_view name;
  std::string_view statement;
  std::vector<check::Violation> (*check)(MallocState const&);
};

/// Each reports at most kMaxViolations violations.
inline constexpr std::size_t kMaxViolations = 32;

std::vector<check::Violation> aligned(MallocState const& state);
std::vector<check::Violation> inside_pool(MallocState const& state);
std::vector<check::Violation> disjoint(MallocState const& state);
std::vector<check::Violation> cookies_intact(MallocState const& state);
std::vector<check::Violation> null_justified(MallocState const& state);
std::vector<check::Violation> recovers(MallocState const& state);

/// Every invariant, in the order the runners check them.
std::vector<MallocInvariant> const& malloc_catalog();
/// The whole catalog's violations, in catalog order (empty: the state is legal).
std::vector<check::Violation> check_all(MallocState const& state);

/// The largest free gap of [begin, end) aligned to `alignment` that the sorted, disjoint
/// allocations leave: the largest request a gap could hold.
std::uint64_t largest_aligned_gap(std::vector<Allocation> const& by_address,
                                  AddressRange range,
                                  std::uint64_t alignment);

}  // namespace heaplab::malloc_family
