// The invariant catalog (docs/invariants.md): named checks over a HeapSnapshot, each returning
// violations with their location and citing the paper section it comes from. Adding an invariant
// is one function plus one line in the catalog (invariants.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "heaplab/check/snapshot.hpp"

namespace heaplab::check {

struct Violation {
  std::string invariant;  // catalog name, e.g. "hierarchy-consistent"
  std::string message;    // what is wrong, with the expected and actual values
  // Location; -1 where not applicable.
  std::int64_t block     = -1;
  std::int64_t bit       = -1;  // slot bit in a block's bitmap, or bit index in a state bitmap
  std::int64_t type      = -1;
  std::int64_t level     = -1;  // hierarchy level of a state bitmap
  std::int64_t object_id = -1;
  [[nodiscard]] std::string to_string() const;
};

struct Invariant {
  std::string_view name;       // stable, kebab-case; used by failure files and --only
  std::string_view citation;   // e.g. "DynaSOAr App. A.5 Def. 1"
  std::string_view statement;  // one line, in the words of the paper where possible
  bool needs_payloads;         // skipped (not failed) on snapshots without payloads
  void (*check)(HeapSnapshot const&, std::vector<Violation>&);
};

/// Every invariant that must hold at quiescence, in catalog order.
std::vector<Invariant> const& catalog();

/// Runs the whole catalog (payload invariants only when the snapshot has payloads).
std::vector<Violation> check_all(HeapSnapshot const& snapshot);

/// Runs one named invariant; throws core::precondition_error for an unknown name.
std::vector<Violation> check_one(std::string_view name, HeapSnapshot const& snapshot);

}  // namespace heaplab::check
