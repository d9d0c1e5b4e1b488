// Build-time check that the whole portable core compiles as device code for the configured
// architectures (sm_90 by default) with -Werror: every protocol entry point the GPU layer uses,
// instantiated with DeviceAtomics. Nothing runs; core_gpu_test.cu runs the protocol on a GPU.
#include "heaplab/core/heap_protocol.hpp"

namespace core = heaplab::core;

__global__ void core_device_compile_check(core::HeapProtocol<core::DeviceAtomics> heap,
                                          core::SlotRef* out,
                                          std::uint32_t t,
                                          std::uint32_t k) {
  std::uint64_t const seed = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  core::BlockPick const p  = heap.find_or_claim_block(t, 1, seed);
  std::uint32_t const b    = p.block;
  if (b == core::kNotFound) return;
  core::ReserveResult const r = heap.blocks().try_reserve(b, k, p.reserve_seed);
  if (r.ok() && heap.commit_reservation(t, b, r)) {
    out[seed] = core::SlotRef{b, static_cast<std::uint32_t>(core::find_first_set(r.slots))};
    heap.release_slots(t, b, r.slots);
  }
  core::SlotRef const one = heap.allocate(t, seed);
  if (!one.is_null()) heap.deallocate(t, one);
  out[seed].slot += heap.free_blocks().get(0) ? 1u : 0u;
  out[seed].slot +=
      heap.active(t).clear_any(seed, core::MemoryOrder::acquire) == core::kNotFound ? 1u : 0u;
}
