// The malloc family's peer subjects (docs/malloc.md "Peers"): other groups' GPU allocators, each
// a GpuSubject adapter (adapter.cuh) over the peer's own device API, each built only when its
// CMake folder variable is set (HEAPLAB_GALLATIN_DIR, HEAPLAB_OUROBOROS_DIR,
// HEAPLAB_MALLOCMC_DIR; the code comes from tools/fetch-*, into the ignored .peers/). Host-only
// header: no CUDA and nothing of a peer in it. A make_* function exists exactly when its
// HEAPLAB_HAVE_PEER_* macro is defined (PUBLIC on heaplab::malloc_gpu).
//
// Every peer subject: nulls measured only (null_floor 0, no exact gaps); alignment and recovery
// as each function says. Each throws std::runtime_error when options.device is not usable, and
// its reset throws std::runtime_error when the device has too little free memory for the pool and
// the peer's metadata (the peers do not check their own cudaMalloc calls).
#pragma once

#include <memory>

#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"
#include "heaplab/families/malloc/subject.hpp"

namespace heaplab::malloc_family {

#if defined(HEAPLAB_HAVE_PEER_GALLATIN)
/// Gallatin (github.com/saltsystemslab/gallatin; peer_gallatin.cu): its standard configuration
/// (16 MiB segments, slices of 16 B .. 4 KiB), one fresh allocator per reset. SubjectInfo:
/// "gallatin", alignment 16, recovery 0.5. Gallatin hands out memory in 16 MiB segments: the pool
/// is rounded UP to whole segments (at least one), so a pool under 16 MiB has 16 MiB behind it;
/// pool() is the segments' device range.
std::unique_ptr<Subject> make_gallatin_subject(GpuSubjectOptions const& options);
/// Its SubjectInfo without making one (no GPU needed): min_pool 1 GiB (peer_gallatin.cu says why).
SubjectInfo gallatin_subject_info();
#endif

#if defined(HEAPLAB_HAVE_PEER_OUROBOROS)
/// Ouroboros (github.com/GPUPeople/Ouroboros; peer_ouroboros.cu), its standard (not virtualized)
/// queues with the repository's parameters: 8 KiB chunks, pages of 16 B .. 8 KiB in 10 queues.
/// "page": OuroPQ (queues of free pages); "chunk": OuroCQ (queues of chunks with free pages).
/// SubjectInfo: "ouroboros-page" / "ouroboros-chunk", alignment 16, recovery 0.5; pool() is the
/// chunks' device range. A request above 8 KiB gets null without a call (Ouroboros hands those to
/// CUDA's device malloc, which is not this subject).
std::unique_ptr<Subject> make_ouroboros_page_subject(GpuSubjectOptions const& options);
std::unique_ptr<Subject> make_ouroboros_chunk_subject(GpuSubjectOptions const& options);
#endif

#if defined(HEAPLAB_HAVE_PEER_SCATTERALLOC)
/// ScatterAlloc through mallocMC (github.com/alpaka-group/mallocMC; peer_mallocmc.cu): the
/// Scatter creation policy with a 2 MiB access block (its 2 GiB default gives a pool under 2 GiB
/// no pages), ReturnNull, a cudaMalloc'ed pool (AlpakaBuf) and Shrink alignment. "scatteralloc":
/// Noop distribution (mallocMC's examples and tests); "scatteralloc-xmalloc": XMallocSIMD<>
/// (mallocMC's Usage.md), which combines a warp's small requests. SubjectInfo: alignment 16,
/// recovery 0.5, min_pool one access block of pages (about 2 MiB); pool() is mallocMC's heap.
std::unique_ptr<Subject> make_scatteralloc_subject(GpuSubjectOptions const& options);
std::unique_ptr<Subject> make_scatteralloc_xmalloc_subject(GpuSubjectOptions const& options);
#endif

}  // namespace heaplab::malloc_family
