// Snapshots of the portable core's heap state (core/heap_protocol.hpp) for the invariant catalog.
//
// The core knows block headers and state bitmaps, not objects: the snapshot has no payloads
// (has_payloads == false), producer "cpu-core". Read at quiescence only (no operation in flight);
// the reads are plain loads of the raw arrays, never the protocol's operations.
#pragma once

#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/host_heap.hpp"

namespace heaplab::check {

/// The snapshot of a HostHeap.
HeapSnapshot from_core(core::HostHeap const& heap);

/// The snapshot of any core heap state in host-readable memory (e.g. device arrays copied back
/// by the GPU heap), described by `config` (types, M, n). Throws core::precondition_error if the
/// storage does not match the config (number of blocks or types, capacities, bitmap layout).
HeapSnapshot from_core(core::HeapConfig const& config, core::HeapStorage const& storage);

}  // namespace heaplab::check
