// The registrations of the malloc family's peer runners (docs/malloc.md "Peers"): each only when
// its peer was built (HEAPLAB_HAVE_PEER_*, PUBLIC on heaplab::malloc_gpu, set by
// gpu/CMakeLists.txt when the peer's folder variable is set). In the family's OBJECT library, so
// that the registrations are always linked. Without any peer this file registers nothing.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "heaplab/families/malloc/family.hpp"

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"
#include "heaplab/families/malloc/gpu/peers.hpp"
#endif

namespace heaplab::malloc_family {

namespace {

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME)
/// A GPU runner over make's subject, with the command line's options.
template <std::unique_ptr<Subject> (*Make)(GpuSubjectOptions const&)>
[[maybe_unused]] runner::RunnerInfo peer_info(std::string name, std::string help) {
  // One per process: a peer's device code may keep state in globals of its module.
  return gpu_runner_info(
      std::move(name),
      std::move(help),
      [](runner::RunnerOptions const& o) { return Make(gpu_subject_options(o)); },
      true);
}
#endif

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME) && defined(HEAPLAB_HAVE_PEER_GALLATIN)
runner::RunnerRegistration const malloc_gallatin{with_min_pool(
    peer_info<&make_gallatin_subject>(
        "malloc-gallatin",
        "Gallatin (peer; 16 MiB segments, slices 16 B .. 4 KiB; the pool rounded up to whole "
        "segments) against the catalog"),
    gallatin_subject_info())};
#endif

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME) && defined(HEAPLAB_HAVE_PEER_OUROBOROS)
runner::RunnerRegistration const malloc_ouroboros_page{peer_info<&make_ouroboros_page_subject>(
    "malloc-ouroboros-page",
    "Ouroboros' standard page queues (peer; OuroPQ, 8 KiB chunks; requests above 8 KiB get null) "
    "against the catalog")};
runner::RunnerRegistration const malloc_ouroboros_chunk{peer_info<&make_ouroboros_chunk_subject>(
    "malloc-ouroboros-chunk",
    "Ouroboros' standard chunk queues (peer; OuroCQ, 8 KiB chunks; requests above 8 KiB get "
    "null) against the catalog")};
#endif

#if defined(HEAPLAB_HAVE_CUDA_RUNTIME) && defined(HEAPLAB_HAVE_PEER_SCATTERALLOC)
runner::RunnerRegistration const malloc_scatteralloc{peer_info<&make_scatteralloc_subject>(
    "malloc-scatteralloc",
    "ScatterAlloc through mallocMC (peer; Scatter with a 2 MiB access block, Noop distribution) "
    "against the catalog")};
runner::RunnerRegistration const malloc_scatteralloc_xmalloc{
    peer_info<&make_scatteralloc_xmalloc_subject>(
        "malloc-scatteralloc-xmalloc",
        "ScatterAlloc through mallocMC (peer; Scatter with a 2 MiB access block, XMallocSIMD "
        "distribution: a warp's small requests combined) against the catalog")};
#endif

}  // namespace

}  // namespace heaplab::malloc_family
