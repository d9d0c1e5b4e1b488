// Snapshot diff: the first differences between an expected snapshot (e.g. the model's prediction)
// and an actual one (e.g. the GPU's), each named precisely enough to start debugging from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/check/snapshot.hpp"

namespace heaplab::check {

struct DiffOptions {
  /// Iteration bitmaps matter only during a parallel_do (DynaSOAr sec. 3.1: they are overwritten
  /// with the allocation bitmap before every do-all), so by default they are not compared.
  bool compare_iteration_bitmaps = false;
  /// Compare object records; only done when both snapshots have payloads.
  bool compare_payloads = true;
  /// At most this many differences are kept (all are counted in SnapshotDiff::total).
  std::size_t max_differences = 20;
};

struct Difference {
  /// "config", "config type 1", "block 5", "block 5 slot 3", "allocated[Fish] level 0 container 2".
  std::string where;
  /// What differs there: "num_blocks", "type", "alloc_bitmap bits {3, 7}", "object", "id",
  /// "cookie", "refs[1]", "bits {130}", "shape" ...
  std::string field;
  std::string expected;
  std::string actual;
  std::int64_t block = -1;  // the block the difference is about, -1 if none
  std::int64_t slot  = -1;  // the object slot, -1 if none
  [[nodiscard]] std::string to_string() const;
};

struct SnapshotDiff {
  std::vector<Difference> differences;  // the first max_differences, in comparison order
  std::size_t total = 0;                // every difference found
  [[nodiscard]] bool empty() const { return total == 0; }
  /// "no differences" or "N differences (first K shown):" followed by one line per difference.
  [[nodiscard]] std::string to_string() const;
};

/// Compares `actual` with `expected`, in this order: the config (M, n, k1, every type's name,
/// size, base, abstractness and pointer fields; if M or the number of types differ, nothing else
/// is compared because blocks and bitmaps do not line up); then block by block: header type
/// (only when the block is allocated in both: free blocks keep a stale type), allocation
/// bitmap, iteration bitmap (if enabled), object records slot by slot (if enabled and both have
/// payloads: presence, id, cookie, number of refs, each ref); then the state bitmaps: free, and
/// for each type allocated, active, defrag, each level by level and container by container
/// (a bitmap whose shape differs is reported once as "shape").
SnapshotDiff diff(HeapSnapshot const& expected,
                  HeapSnapshot const& actual,
                  DiffOptions const& options = {});

}  // namespace heaplab::check
