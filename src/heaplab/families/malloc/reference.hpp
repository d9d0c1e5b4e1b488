// The malloc family's reference subject (docs/malloc.md "The reference"): a sequential first-fit
// allocator over a host arena of the pool's bytes, the model runner's allocator (malloc-model).
// Requests are 16-byte aligned and rounded up to 16 bytes; a wave's requests run one at a time,
// round k of every thread (in an order fixed by the wave's first id) before round k + 1, so a
// fill's threads compete for the pool as concurrent ones would. It manages the pool's bytes
// exactly (no headers), so its out-of-memory policy is exact_gaps: a null only when no free gap
// holds the request. Its memory is real: cookies are written into and read from the arena, and
// writes and reads outside the arena are refused, never made.
#pragma once

#include <memory>

#include "heaplab/families/malloc/subject.hpp"

namespace heaplab::malloc_family {

std::unique_ptr<Subject> make_reference_subject();

/// RW_malloc (RW Alg. 3) on `threads` OS threads (0: min(4, hardware threads)) as malloc/free over
/// 16-byte pages of a host arena (rw_cpu.cpp): the code the GPU runs, on std::threads.
std::unique_ptr<Subject> make_rw_cpu_subject(unsigned threads);

/// A planted bug of a subject adapter (planted.cpp): what a wrapper around any subject gets
/// wrong, so that the tests can show the generic checks catch it.
enum class PlantedBug {
  overlap,     // every 7th grant of a wave is answered with the previous grant's address
  lost_free,   // three of every four frees are dropped (the memory never comes back)
  misaligned,  // every 5th grant is answered 8 bytes past what the allocator returned
  overrun,     // every grant is written 16 bytes past its end (a neighbour's cookie suffers)
};
char const* to_string(PlantedBug bug);

/// `inner` with `bug` planted in its adapter.
std::unique_ptr<Subject> make_planted_subject(std::unique_ptr<Subject> inner, PlantedBug bug);

}  // namespace heaplab::malloc_family
