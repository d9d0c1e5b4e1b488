// RapidCheck generators of GPU-runnable configs: a universe's types with random M, n and k1
// (docs/gpu-runner.md). Schedules for them come from schedule::gen::schedule_for(config).
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <cstdint>

#include "heaplab/core/heap_config.hpp"

namespace heaplab::heap_family::gpu {

/// Universe `universe` (an index into universes()) with M in [2, max_blocks] (small heaps more
/// often: half of the cases have M <= 8, so waves reach out of memory), n in
/// [1, min(smallest capacity - 1, 6)] (mostly 1 or 2) and k1 in [0, 4] (mostly 0 or 1).
rc::Gen<core::HeapConfig> universe_config_gen(std::size_t universe, std::uint32_t max_blocks = 48);

/// Any universe, chosen uniformly, as above.
rc::Gen<core::HeapConfig> any_universe_config_gen(std::uint32_t max_blocks = 48);

}  // namespace heaplab::heap_family::gpu
