// The heap family's failure reports: the snapshot diff and the part of the snapshot a failure is
// about (HeapFailureDetail::report prints them below the generic part, runner/outcome.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "heaplab/check/diff.hpp"
#include "heaplab/check/snapshot.hpp"
#include "heaplab/families/heap/heap_runner.hpp"

namespace heaplab::heap_family {

/// One line per difference: "step S, WHERE: FIELD: expected E, actual A".
std::string format_diff(std::size_t step, check::SnapshotDiff const& diff, std::size_t max_lines);

/// Blocks a failure is about: the blocks of its violations (and of their objects) and of its
/// first differences.
std::set<std::uint32_t> relevant_blocks(Failure const& failure, check::HeapSnapshot const& s);

/// check::dump cut to `blocks`: the header, the type table, those blocks' lines and object
/// records, the per-type counts (all block lines, no records, when `blocks` is empty).
std::string relevant_dump(check::HeapSnapshot const& s, std::set<std::uint32_t> const& blocks);

}  // namespace heaplab::heap_family
