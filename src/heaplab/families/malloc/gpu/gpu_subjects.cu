// The rw-malloc subject (gpu_subjects.hpp): heaplab's RW_malloc as a GpuSubject over
// RwMallocAdapter (rw_malloc_adapter.cuh: the allocator, its linearization points and memory
// orders). (cuda-malloc is in cuda_malloc_subject.cu: its kernels must be a module of their own.)
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"

#include <memory>

#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/gpu/rw_malloc_adapter.cuh"

namespace heaplab::malloc_family {

std::unique_ptr<Subject> make_rw_malloc_subject(GpuSubjectOptions const& options) {
  return std::make_unique<gpu::GpuSubject<RwMallocAdapter>>(options);
}

}  // namespace heaplab::malloc_family
