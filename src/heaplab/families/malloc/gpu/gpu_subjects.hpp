// The malloc family's GPU subjects (subject.hpp): CUDA's device malloc and heaplab's RW_malloc,
// each run by the generic GpuSubject<Adapter> of adapter.cuh. Host-only header: no CUDA in it, so
// plain C++ code (the family, the runner, tools) can make and hold them. GPU builds only (the
// library heaplab::malloc_gpu exists only when HEAPLAB_HAVE_CUDA).
//
//   GpuSubjectOptions o;                        // device 0, 5 s watchdog, perturbation on
//   if (std::string why = runner::gpu_unavailable_reason(); !why.empty()) skip(why);
//   std::unique_ptr<Subject> s = make_rw_malloc_subject(o);
//   s->reset(1 << 20);                          // a fresh pool of 1 MiB
//   std::vector<std::uint64_t> got = s->alloc_wave(plan);
//
// Errors (subject.hpp): a wave that does not finish within the watchdog's budget throws
// subject_hang; a CUDA error (a device trap, an illegal address) throws a std::runtime_error with
// the CUDA error's name and text. After either, usable() is false and every further call throws
// (the device still runs the stuck kernel, or its context is lost): a process that saw one should
// report it and end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "heaplab/families/malloc/subject.hpp"
#include "heaplab/runner/family.hpp"

namespace heaplab::malloc_family {

struct GpuSubjectOptions {
  int device           = 0;  // the CUDA device every call of the subject runs on
  unsigned watchdog_ms = 0;  // budget of one kernel (0: HEAPLAB_WATCHDOG_MS, the subject's, 5 s)
  /// Warp-order perturbation (core/perturb.hpp): one warp in four sleeps 0.25 to 8 us at the start
  /// of each alloc and free wave, drawn from `seed` and the wave's number (a replay of a schedule
  /// draws the same delays; the hardware's interleaving itself is never replayed).
  bool perturb       = true;
  std::uint64_t seed = 1;  // perturbation delays and the allocator's random walks (rw-malloc)
};

/// The options of the command line's runner options (device, watchdog, perturbation, seed).
inline GpuSubjectOptions gpu_subject_options(runner::RunnerOptions const& o) {
  GpuSubjectOptions g;
  g.device      = o.device;
  g.watchdog_ms = o.watchdog_ms;
  g.perturb     = o.perturb;
  g.seed        = o.seed;
  return g;
}

/// CUDA's device malloc/free (the heap of cudaLimitMallocHeapSize). SubjectInfo: "cuda-malloc",
/// alignment 16, nulls measured only (null_floor 0, no exact gaps), recovery 0.5; pool() unknown.
///
/// The heap's size is fixed per process and device: cudaLimitMallocHeapSize can be set only
/// before the first kernel that uses device malloc runs in the CUDA context (CUDA's rule). So
/// reset(pool_bytes) sets the limit when it can (the limit already equals pool_bytes, or no
/// malloc kernel ran yet) and otherwise throws a std::runtime_error: a process must use ONE pool
/// size for cuda-malloc (the first one it resets to). reset frees every allocation still live
/// from the previous run (the subject records them), so runs in one process do not leak the heap;
/// the heap's internal state (its fragmentation) still carries over from run to run.
std::unique_ptr<Subject> make_cuda_malloc_subject(GpuSubjectOptions const& options);

/// heaplab's RW_malloc (rw/rw_malloc.cuh, RW Alg. 3) as a general-purpose allocator: a random-walk
/// page pool of 16-byte pages over the pool's bytes (64-bit bitmap words); malloc(b) is a run of
/// ceil(b / 16) pages. SubjectInfo: "rw-malloc", alignment 16, nulls measured only, recovery 0.5;
/// pool() is the data area's device address range. A request above max_run_pages(64) x 16 bytes
/// (2048 pages: 32 KiB) gets null without a walk (RW_malloc serves runs of at most one warp's
/// region).
std::unique_ptr<Subject> make_rw_malloc_subject(GpuSubjectOptions const& options);

}  // namespace heaplab::malloc_family
