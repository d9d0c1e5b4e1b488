// RapidCheck generators of heap configurations and schedules (target heaplab::schedule_gen).
//
// Everything generated is valid (schedule::validate accepts it) and small: 1-4 types (sometimes
// an abstract base with derived types, sometimes concrete inheritance), pointer fields including
// fixed-size arrays, M in [2, 32], a valid defragmentation factor, and at most 100 episodes (keep
// RapidCheck's max_size <= 100, docs/testing.md). Generation is deterministic in RapidCheck's
// seed, so shrinking and reproduce= work.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/schedule/rw_schedule.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::schedule::gen {

/// A valid HeapConfig: 1-4 types, sizes within a factor 16 of the smallest (every capacity >= 4),
/// 0-2 pointer fields per type with array counts 1-3, M in [2, 32], 1 <= n <= min(cap - 1, 6)
/// (mostly 1 or 2), k1 in [0, 4] (mostly 0 or 1).
rc::Gen<core::HeapConfig> config();

/// One valid step for `config`.
rc::Gen<Step> step(core::HeapConfig const& config);

/// Steps for `config`: episodes whose count grows with RapidCheck's size (at most 100), each
/// either one random step or (1 in 10) a fragment-then-defragment episode: an alloc wave filling
/// about half the heap with one type, a free wave removing 3/8..7/8 of that type, and a defrag of
/// it; so up to 300 steps.
rc::Gen<std::vector<Step>> steps(core::HeapConfig const& config);

/// A config and steps for it.
rc::Gen<Schedule> schedule();

/// A schedule over `config`.
rc::Gen<Schedule> schedule_for(core::HeapConfig const& config);

// ---- profiles: schedules shaped for `heaplab stress --profile` (profiles.cpp)
//
// small: configs from `configs` (M capped by heap_mib and max_blocks) and schedule_for() (the
//        property tests' distribution);
// large: M from heap_mib (at least half of it), waves scaled to the heap (fills of 1/16..4/16 of
//        its capacity, thinning frees of 2/8..7/8, defrags, and fill-half/thin/defrag episodes)
//        mixed with random steps;
// near-oom: small heaps (M in [2, 48]) driven to and past exhaustion: waves asking for 90-130%
//        of the remaining capacity, child allocations, frees and defrags near full;
// mixed: 1-, 2- and 3-level bitmap hierarchies (M in [2, 64], [65, 4096], [4097, 8192], drawn
//        5:3:2, log-uniform within a class, capped by max_blocks and heap_mib). One-level heaps
//        get the small profile's schedules; deeper ones random steps, waves of up to 1/4 of the
//        heap (at most 6144 objects), thinning frees and fill-thin-defrag episodes, and end with
//        a defragmentation.

/// "small", "mixed", "large", "near-oom".
std::vector<std::string> const& profile_names();

/// Schedules of `profile` over configs drawn from `configs` (the profile then sets M from
/// heap_mib and max_blocks). Throws core::precondition_error for an unknown profile.
rc::Gen<Schedule> profile_schedule(std::string const& profile,
                                   std::uint32_t heap_mib,
                                   std::uint32_t max_blocks,
                                   rc::Gen<core::HeapConfig> configs);

/// Bytes of one block's object area: 64 objects of the smallest type (DynaSOAr sec. 3.2).
std::uint64_t block_bytes(core::HeapConfig const& config);
/// How many blocks of `config` fit into heap_mib MiB (at least 1).
std::uint32_t blocks_for_heap(core::HeapConfig const& config, std::uint32_t heap_mib);

// ---- random-walk pool schedules (rw_generators.cpp; docs/rw.md "Schedules and runners")

/// Every algorithm of rw_schedule.hpp.
std::vector<core::RwAlgorithm> all_rw_algorithms();

/// A valid random-walk pool: T in [1, 4096], 32- or 64-bit words, max_steps 4..2000, a few
/// pre-taken pages (a count or a list).
rc::Gen<RwPool> rw_pool();

/// One alloc wave of one of `algorithms` (1..512 threads; lanes all, every k-th, or a random
/// subset per warp; rw-malloc: fixed, cycled or uniform sizes up to 8 pages).
rc::Gen<RwAllocWave> rw_alloc_wave(std::vector<core::RwAlgorithm> const& algorithms);
/// One free wave: all, a fraction, or the oldest k held handles.
rc::Gen<RwFreeWave> rw_free_wave();

/// Schedules of four shapes: getpage/freepage mixes on small pools; divergent waves (every lane
/// pattern); near exhaustion (T in [512, 4096], pre-taken pages leaving 0.5 % free, waves asking
/// for 1-3 times what is left); mixed sizes (rw-malloc with cycled and uniform sizes, when
/// allowed). Waves grow with RapidCheck's size (at most 24). Only `algorithms` appear.
rc::Gen<RwSchedule> rw_schedule(std::vector<core::RwAlgorithm> const& algorithms);
rc::Gen<RwSchedule> rw_schedule();

}  // namespace heaplab::schedule::gen

// How RapidCheck prints a counterexample: the canonical JSON, ready to save as a file and replay
// with `heaplab replay --model FILE`.
namespace heaplab::schedule {
void showValue(Schedule const& schedule, std::ostream& os);
void showValue(RwSchedule const& schedule, std::ostream& os);
}  // namespace heaplab::schedule
namespace heaplab::core {
void showValue(HeapConfig const& config, std::ostream& os);
}  // namespace heaplab::core
