// The scatteralloc subjects (peers.hpp): ScatterAlloc through mallocMC as two GpuSubject
// adapters, "scatteralloc" (the Noop distribution) and "scatteralloc-xmalloc" (XMallocSIMD<>);
// the adapter, its configuration and what the peer's code assumes are in scatteralloc_adapter.cuh.
// Built only with HEAPLAB_MALLOCMC_DIR (gpu/CMakeLists.txt).
#include <memory>

#include "heaplab/families/malloc/gpu/peers.hpp"
#include "heaplab/families/malloc/gpu/scatteralloc_adapter.cuh"

namespace heaplab::malloc_family {

std::unique_ptr<Subject> make_scatteralloc_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<scatteralloc::NoopAdapter>>(options);
}

std::unique_ptr<Subject> make_scatteralloc_xmalloc_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<scatteralloc::XMallocAdapter>>(options);
}

}  // namespace heaplab::malloc_family
