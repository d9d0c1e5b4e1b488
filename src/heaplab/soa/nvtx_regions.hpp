// The heap's block area as an NVTX memory pool, so that compute-sanitizer's memcheck reports a
// kernel touching the storage of a free block (docs/allocator.md "Use after free under
// memcheck"; NVTX API for Compute Sanitizer, "Suballocation API").
//
// memcheck treats a registered pool (NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR) like a cudaMalloc
// whose only valid bytes are its registered regions: a device access to pool bytes outside every
// region is an "Invalid __global__ read/write". heaplab registers one region per block (its
// block_bytes of object data). Registration is host-side and takes effect for the kernels
// launched after it; nothing here runs on the device or changes what the allocator does.
//
// Granularity is the block, not the object: an object's fields are spread over its block's SOA
// arrays, so per-object regions would be one region per field per object. A touch of a freed
// slot is reported when its whole block is free (every object of the block was deleted and the
// block returned to the free bitmap) and has not been reused yet.
//
// A pool registered without the sanitizer costs one call into NVTX's no-op stubs per change.
// Plain host C++ (NVTX is header-only; it loads the tool with dlopen when one is injected).
#pragma once

#include <nvtx3/nvToolsExtMem.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace heaplab::soa {

class NvtxBlockPool {
 public:
  /// Registers [base, base + num_blocks * block_bytes) as a sub-allocator pool named `name`,
  /// with every block registered as a region (nothing is reported until set_registered()
  /// unregisters blocks). The CUDA runtime must be initialized (the heap's cudaMalloc did).
  NvtxBlockPool(void const* base,
                std::uint64_t block_bytes,
                std::uint32_t num_blocks,
                std::string const& name)
      : base_(static_cast<unsigned char const*>(base)),
        block_bytes_(block_bytes),
        registered_(num_blocks, false) {
    domain_ = nvtxDomainCreateA("heaplab");
    nvtxMemVirtualRangeDesc_t range{};
    range.ptr  = base_;
    range.size = static_cast<std::size_t>(block_bytes_ * num_blocks);
    nvtxMemHeapDesc_t desc{};
    desc.extCompatID          = NVTX_EXT_COMPATID_MEM;
    desc.structSize           = sizeof desc;
    desc.usage                = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type                 = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof range;
    desc.typeSpecificDesc     = &range;
    desc.messageType          = NVTX_MESSAGE_TYPE_ASCII;
    desc.message.ascii        = name.c_str();
    pool_                     = nvtxMemHeapRegister(domain_, &desc);
    set_registered(std::vector<bool>(num_blocks, true));
  }

  NvtxBlockPool(NvtxBlockPool const&)            = delete;
  NvtxBlockPool& operator=(NvtxBlockPool const&) = delete;

  ~NvtxBlockPool() {
    nvtxMemHeapUnregister(domain_, pool_);  // drops its regions too
    nvtxDomainDestroy(domain_);
  }

  /// Makes block b a region iff want[b]: registers the blocks that turn on, unregisters those
  /// that turn off (two batched calls). want.size() must be the number of blocks.
  void set_registered(std::vector<bool> const& want) {
    std::vector<nvtxMemVirtualRangeDesc_t> add;
    std::vector<nvtxMemRegionRef_t> remove;
    for (std::size_t b = 0; b < registered_.size() && b < want.size(); ++b) {
      if (want[b] == registered_[b]) continue;
      void const* p = base_ + b * block_bytes_;
      if (want[b]) {
        nvtxMemVirtualRangeDesc_t r{};
        r.ptr  = p;
        r.size = static_cast<std::size_t>(block_bytes_);
        add.push_back(r);
      } else {
        nvtxMemRegionRef_t ref{};
        ref.pointer = p;
        remove.push_back(ref);
      }
      registered_[b] = want[b];
    }
    if (!remove.empty()) {
      nvtxMemRegionsUnregisterBatch_t batch{};
      batch.extCompatID    = NVTX_EXT_COMPATID_MEM;
      batch.structSize     = sizeof batch;
      batch.refType        = NVTX_MEM_REGION_REF_TYPE_POINTER;
      batch.refCount       = remove.size();
      batch.refElementSize = sizeof(nvtxMemRegionRef_t);
      batch.refElements    = remove.data();
      nvtxMemRegionsUnregister(domain_, &batch);
    }
    if (!add.empty()) {
      nvtxMemRegionsRegisterBatch_t batch{};
      batch.extCompatID           = NVTX_EXT_COMPATID_MEM;
      batch.structSize            = sizeof batch;
      batch.regionType            = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
      batch.heap                  = pool_;
      batch.regionCount           = add.size();
      batch.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
      batch.regionDescElements    = add.data();
      nvtxMemRegionsRegister(domain_, &batch);
    }
  }

  /// Which blocks are regions now.
  [[nodiscard]] std::vector<bool> const& registered() const { return registered_; }

 private:
  unsigned char const* base_ = nullptr;
  std::uint64_t block_bytes_ = 0;
  std::vector<bool> registered_;
  nvtxDomainHandle_t domain_ = nullptr;
  nvtxMemHeapHandle_t pool_  = nullptr;
};

}  // namespace heaplab::soa
