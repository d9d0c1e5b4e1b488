// Ouroboros (github.com/GPUPeople/Ouroboros, fetched by tools/fetch-ouroboros into
// .peers/ouroboros) for heaplab's code that runs it: its headers in the order they need, and a
// fresh instance of a given number of chunks. nvcc-only; include it only where Ouroboros' include/
// is on the path (HEAPLAB_OUROBOROS_DIR). Two translation units do, never linked into one program:
// the malloc family's peer (peer_ouroboros.cu: the stress subjects) and heaplab_bench's
// (bench/ouroboros_bench.cu: RW Figs. 7-12 with Ouroboros beside the random-walk allocators).
// Ouroboros' headers define non-inline functions (e.g. the kernel printCompute), so a program
// holding both would not link.
//
// CUDA 13. Ouroboros' Statistics.h has an inline writeGPUInfo (never called here) that reads
// cudaDeviceProp::clockRate, which CUDA 13 removed ("class cudaDeviceProp has no member
// clockRate"). Without touching Ouroboros' files, this header maps that one member name to
// multiProcessorCount while Ouroboros' headers are read (after CUDA's own headers, so that no CUDA
// structure is renamed), and Statistics.h's use of std::cout gets <iostream> first (as Ouroboros'
// own src/main.cu includes it).
//
// Two process-wide effects of Ouroboros that make_instance keeps away: Ouroboros::initialize sets
// cudaLimitMallocHeapSize to 500 MiB once per process (its static cuda_initialized; set first
// here, so it never touches CUDA's heap limit), and prints its configuration on stdout (its
// Parameters.h's printDebug; stdout goes to /dev/null while it runs).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

// Ouroboros' headers depend on this order (its src/main.cu's), which clang-format must keep.
// clang-format off
#if CUDART_VERSION >= 13000
#define clockRate multiProcessorCount  // CUDA 13 (see the top of this file)
#endif
#include "device/Ouroboros_impl.cuh"
#include "device/MemoryInitialization.cuh"
#include "InstanceDefinitions.cuh"
#undef clockRate
// clang-format on

#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/ouroboros_geometry.hpp"

namespace heaplab::malloc_family::ouroboros {

/// stdout to /dev/null for this object's life (flushed first, restored after).
class QuietStdout {
 public:
  QuietStdout() {
    std::fflush(stdout);
    saved_         = dup(STDOUT_FILENO);
    int const sink = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && sink >= 0) (void)dup2(sink, STDOUT_FILENO);
    if (sink >= 0) (void)close(sink);
  }
  ~QuietStdout() {
    std::fflush(stdout);
    if (saved_ < 0) return;
    (void)dup2(saved_, STDOUT_FILENO);
    (void)close(saved_);
  }
  QuietStdout(QuietStdout const&)            = delete;
  QuietStdout& operator=(QuietStdout const&) = delete;

 private:
  int saved_ = -1;
};

/// Ouroboros' geometry as heaplab's code knows it (ouroboros_geometry.hpp) is Ouroboros' own.
static_assert(OuroPQ::ChunkBase::size() == kChunkStride &&
                  OuroCQ::ChunkBase::size() == kChunkStride &&
                  OuroPQ::ChunkBase::meta_data_size_ == kChunkMetadata,
              "Ouroboros' chunks are not the geometry's (ouroboros_geometry.hpp)");
static_assert(OuroPQ::ConcreteOuroboros::SmallestPageSize_ == kSmallestPage &&
                  OuroPQ::ConcreteOuroboros::LargestPageSize_ == kLargestPage &&
                  OuroCQ::ConcreteOuroboros::LargestPageSize_ == kLargestPage &&
                  OuroPQ::ConcreteOuroboros::NumberQueues_ == kQueues,
              "Ouroboros' pages are not the geometry's (ouroboros_geometry.hpp)");

/// A fresh Ouroboros O with exactly `chunks` chunks (its queues and locator outside them): its
/// initialize's maxChunks is (instantiation - required) / chunk, required being the allocator
/// and its queues rounded up to a chunk (MemoryInitialization.cuh). Throws std::runtime_error
/// when the device lacks the memory (Ouroboros checks none of its cudaMalloc calls).
template <class O>
std::unique_ptr<O> make_instance(std::uint64_t chunks, char const* name) {
  auto host = std::make_unique<O>();
  std::uint64_t const required =
      Ouro::alignment<std::size_t>(O::size_() + host->totalMemoryManagerSize(), kChunkStride);
  std::uint64_t const instantiation = required + chunks * kChunkStride;
  std::size_t free_bytes = 0, total_bytes = 0;
  HEAPLAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::uint64_t const need = instantiation + instantiation / 8 + (16ull << 20);  // + the locator
  if (free_bytes < need)
    throw std::runtime_error(std::string(name) + ": " + std::to_string(chunks) +
                             " chunks need about " + std::to_string(need) +
                             " bytes of device memory (Ouroboros' queues included); " +
                             std::to_string(free_bytes) + " are free");
  O::cuda_initialized = true;  // keep Ouroboros off cudaLimitMallocHeapSize (the top)
  {
    QuietStdout const quiet;
    host->initialize(static_cast<std::size_t>(instantiation));
  }
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  if (host->memory.maxChunks != chunks)
    throw std::logic_error(std::string(name) + ": Ouroboros made " +
                           std::to_string(host->memory.maxChunks) + " chunks, not " +
                           std::to_string(chunks));
  return host;
}

/// Drops an instance: Ouroboros' Memory destructor exits the process on a CUDA error
/// (HANDLE_ERROR), so after a sticky error (the context is lost) the block is left to the process's
/// end.
template <class O>
void drop_instance(std::unique_ptr<O>& host) {
  if (host && cudaDeviceSynchronize() != cudaSuccess) (void)host.release();
  host.reset();
}

}  // namespace heaplab::malloc_family::ouroboros
