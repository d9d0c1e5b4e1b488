// heaplab::survey::AdapterManager<Adapter, Base>: any allocator that heaplab checks through the
// malloc family's adapter interface (src/heaplab/families/malloc/gpu/adapter.cuh: a trivially
// copyable State, device malloc/free, a host Pool) as a memory manager of the GPU memory-manager
// survey (docs/survey.md). The survey's programs construct a manager with the pool size in bytes,
// pass it BY VALUE to their kernels and call mm.malloc(bytes) / mm.free(p) there; Base is the
// suite's MemoryManagerBase (TestInstance.cuh) in the survey's programs and NoBase in heaplab's
// own test, which needs no survey.
//
// Ownership. The survey copies the manager into every kernel launch, and each copy's destructor
// runs on the host when the launch returns. The manager made by the constructor owns the Pool;
// copies share the pointer and own nothing. The owner's destructor waits for the device
// (cudaDeviceSynchronize: no kernel may still use the pool) and then frees it.
//
// Semantics beyond the adapter's: free(nullptr) does nothing (C's free; the adapters require a
// live grant), so a survey program that frees a null it got at out-of-memory does not trap.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace heaplab::survey {

/// The base for a manager outside the survey (the survey's MemoryManagerBase takes the size too).
struct NoBase {
  explicit NoBase(std::size_t /*pool_bytes*/) {}
};

template <class Adapter, class Base = NoBase>
struct AdapterManager : Base {
  using Pool  = typename Adapter::Pool;
  using State = typename Adapter::State;

  /// The walks' seed (RwMallocAdapter mixes in the thread and clock64 per call).
  static constexpr std::uint64_t kSeed = 0x5eed5eedULL;

  explicit AdapterManager(std::size_t pool_bytes)
      : Base(pool_bytes), pool_(new Pool(pool_bytes, current_device())), owner_(true) {
    state_ = pool_->state(kSeed);
  }
  AdapterManager(AdapterManager const& other)
      : Base(other), pool_(other.pool_), owner_(false), state_(other.state_) {}
  AdapterManager& operator=(AdapterManager const&) = delete;
  ~AdapterManager() {
    if (!owner_) return;
    cudaDeviceSynchronize();  // no launch may still use the pool; errors are the program's to see
    delete pool_;
  }

  /// A grant of `bytes` bytes, or null (Adapter::malloc).
  __device__ __forceinline__ void* malloc(std::size_t bytes) {
    return Adapter::malloc(state_, static_cast<std::uint64_t>(bytes));
  }
  /// Gives p back (Adapter::free); null is ignored.
  __device__ __forceinline__ void free(void* p) {
    if (p != nullptr) Adapter::free(state_, p);
  }

 private:
  static int current_device() {
    int device = 0;
    cudaGetDevice(&device);
    return device;
  }

  Pool* pool_ = nullptr;  // host: the owner's pool; copies share it
  bool owner_ = false;
  State state_{};
};

}  // namespace heaplab::survey
