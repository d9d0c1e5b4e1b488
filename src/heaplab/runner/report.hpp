// Readable failure reports for the command line (replay, stress, minimize) and for tests.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/runner/runner.hpp"

namespace heaplab::runner {

struct ReportOptions {
  std::size_t max_violations  = 10;
  std::size_t max_differences = 20;
  bool dump_snapshot          = true;   // the part of the actual snapshot the failure is about
  bool full_dump              = false;  // the whole snapshot instead
  std::string runner;                   // named in the diff header ("actual = gpu")
};

/// The failure as text:
///
///   FIRST FAILURE at step 5: free Fish fraction 0.5 seed 3
///     kind divergence, check snapshot-diff
///     message: ...
///     violations: (one per line)
///     diff (expected = model, actual = gpu): 2 differences
///       step 5, block 3 slot 7: refs[1]: expected 2:4, actual 2:5
///       step 5, allocated[Fish] level 0 container 0: bits {3}: expected ..., actual ...
///     snapshot after step 5 (the blocks the failure is about; --full-dump for all): ...
std::string format_failure(Failure const& failure, ReportOptions const& options = {});

/// One line per difference: "step S, WHERE: FIELD: expected E, actual A".
std::string format_diff(std::size_t step, check::SnapshotDiff const& diff, std::size_t max_lines);

/// Blocks a failure is about: the blocks of its violations (and of their objects) and of its
/// first differences.
std::set<std::uint32_t> relevant_blocks(Failure const& failure, check::HeapSnapshot const& s);

/// check::dump cut to `blocks`: the header, the type table, those blocks' lines and object
/// records, the per-type counts (all block lines, no records, when `blocks` is empty).
std::string relevant_dump(check::HeapSnapshot const& s, std::set<std::uint32_t> const& blocks);

}  // namespace heaplab::runner
