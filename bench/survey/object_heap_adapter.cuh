// ObjectHeapAdapter: heaplab's object heap (soa::Heap, DynaSOAr's allocator; docs/allocator.md) as
// a general-purpose malloc/free, wrapped the way the GPU memory-manager survey wraps DynaSOAr: one
// heap type per size class (docs/survey.md). It has the malloc family's adapter interface
// (State, device malloc/free, a host Pool), so survey_instance.cuh's AdapterManager makes it a
// survey memory manager (frameworks/object_heap.cuh). The wrapper:
// - A request of b bytes gets an object of the size class 2^ceil(log2 max(b, 16)), 16 B .. 8 KiB:
//   a type Chunk<N> of ONE field of N bytes (a trivially copyable struct, so the SOA layout keeps
//   an object's bytes together; an array field would become N arrays of one byte). malloc returns
//   the address of that field.
// - One heap cannot hold 16 B and 8 KiB: a block holds 64 objects of its smallest type and at
//   least 2 of every type (DynaSOAr sec. 3.2), so a heap's sizes may differ 32x. Two heaps: 16 ..
//   512 B (blocks of 1 KiB) and 1 .. 8 KiB (blocks of 64 KiB), each given half of the pool's bytes
//   as its block area (its metadata on top): a survey test of one size can use at most half of it.
// - free(p) has an address, not an object pointer: the block is (p - block area) / block size; the
//   block's type comes from a side table written by malloc (block_types below), the slot from the
//   type's field offset and size; the object pointer made from them must give p back (else trap).
//
// Memory orders (side table). block_types[b] is stored (relaxed) by every allocation that gets a
// slot of block b, after HeapRef::allocate_raw linearized (DynaSOAr Alg. 1's slot reservation),
// with b's type; a free of an object of b loads it (relaxed). While that object is live, b holds
// objects of its type only (a block takes another type only after every slot is free and it was
// invalidated, DynaSOAr Alg. 2 and 9), so every store in that time writes the same value; the
// store of the object's own allocation happens before its free (the survey frees in a later
// kernel; any program must hand the pointer over), so the load reads that value. Relaxed atomics
// make the concurrent equal-value stores race-free.
#pragma once

#include <cuda/atomic>

#include <cstdint>
#include <string>

#include "heaplab/core/expects.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap.cuh"

namespace heaplab::survey {

/// N bytes as one field (16-byte aligned, as the survey's programs expect of any grant).
template <std::uint32_t N>
struct alignas(16) Bytes {
  unsigned char b[N];
};

#define HEAPLAB_SURVEY_CHUNK(N)                                          \
  class Chunk##N {                                                       \
   public:                                                               \
    HEAPLAB_SOA_FIELDS(Chunk##N, (::heaplab::survey::Bytes<N>, bytes_)); \
  };
HEAPLAB_SURVEY_CHUNK(16)
HEAPLAB_SURVEY_CHUNK(32)
HEAPLAB_SURVEY_CHUNK(64)
HEAPLAB_SURVEY_CHUNK(128)
HEAPLAB_SURVEY_CHUNK(256)
HEAPLAB_SURVEY_CHUNK(512)
HEAPLAB_SURVEY_CHUNK(1024)
HEAPLAB_SURVEY_CHUNK(2048)
HEAPLAB_SURVEY_CHUNK(4096)
HEAPLAB_SURVEY_CHUNK(8192)
#undef HEAPLAB_SURVEY_CHUNK

/// Size classes 16 .. 512 B (type id k: 16 << k) and 1 .. 8 KiB (type id k: 1024 << k).
struct SmallChunks : soa::HeapTypes<Chunk16, Chunk32, Chunk64, Chunk128, Chunk256, Chunk512> {};
struct LargeChunks : soa::HeapTypes<Chunk1024, Chunk2048, Chunk4096, Chunk8192> {};

struct ObjectHeapAdapter {
  static constexpr std::uint64_t kMaxBytes = 8192;

  struct State {
    soa::HeapRef<SmallChunks> small;
    soa::HeapRef<LargeChunks> large;
    std::uint32_t* small_types = nullptr;  // [small.num_blocks()]: the type of a block's objects
    std::uint32_t* large_types = nullptr;
  };

  /// The size class of b bytes: 0 for 1..16, k for 2^(k+3)+1 .. 2^(k+4).
  __device__ static std::uint32_t size_class(std::uint64_t bytes) {
    return bytes <= 16 ? 0u : static_cast<std::uint32_t>(64 - __clzll(bytes - 1)) - 4u;
  }

  /// An object of the size class of `bytes` (null above 8 KiB or when its heap is full).
  __device__ static void* malloc(State const& s, std::uint64_t bytes) {
    if (bytes == 0 || bytes > kMaxBytes) return nullptr;
    std::uint32_t const c = size_class(bytes);
    if (c < SmallChunks::num_types) return allocate_in(s.small, s.small_types, c);
    return allocate_in(s.large, s.large_types, c - SmallChunks::num_types);
  }

  /// Frees the object whose field p is (see the top of this file); null is the caller's to skip.
  __device__ static void free(State const& s, void* p) {
    auto const a = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
    if (in_area(s.small, a)) {
      free_in(s.small, s.small_types, a);
    } else {
      HEAPLAB_EXPECTS(in_area(s.large, a), "object-heap free: the address is in neither heap");
      free_in(s.large, s.large_types, a);
    }
  }

  /// One run's two heaps and side tables; pool_bytes is split evenly between the block areas.
  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int /*device: current already*/)
        : small_(soa::Heap<SmallChunks>::with_bytes(pool_bytes / 2)),
          large_(soa::Heap<LargeChunks>::with_bytes(pool_bytes / 2)),
          small_types_(small_.num_blocks(), "object-heap small block types"),
          large_types_(large_.num_blocks(), "object-heap large block types") {}

    [[nodiscard]] State state(std::uint64_t /*seed*/) const {
      return State{small_.ref(), large_.ref(), small_types_.data(), large_types_.data()};
    }

   private:
    soa::Heap<SmallChunks> small_;
    soa::Heap<LargeChunks> large_;
    cudart::device_buffer<std::uint32_t> small_types_;
    cudart::device_buffer<std::uint32_t> large_types_;
  };

 private:
  template <class Types>
  __device__ static bool in_area(soa::HeapRef<Types> const& h, std::uint64_t a) {
    return a >= h.block_base() &&
           a - h.block_base() < std::uint64_t{h.num_blocks()} * Types::block_bytes;
  }

  /// Linearization: allocate_raw's slot reservation (DynaSOAr Alg. 1); then the side-table store.
  template <class Types>
  __device__ static void* allocate_in(soa::HeapRef<Types> const& h,
                                      std::uint32_t* types,
                                      std::uint32_t type) {
    std::uint64_t const p = h.allocate_raw(type);
    if (p == 0) return nullptr;
    cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(types[h.locate(p).block])
        .store(type, cuda::memory_order_relaxed);
    return h.field_address(p, 0, 0);
  }

  template <class Types>
  __device__ static void free_in(soa::HeapRef<Types> const& h,
                                 std::uint32_t* types,
                                 std::uint64_t a) {
    auto const block = static_cast<std::uint32_t>((a - h.block_base()) / Types::block_bytes);
    std::uint32_t const type =
        cuda::atomic_ref<std::uint32_t, cuda::thread_scope_device>(types[block])
            .load(cuda::memory_order_relaxed);
    std::uint64_t const first = h.object_pointer(block, 0, type);
    auto const base =
        static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h.field_address(first, 0, 0)));
    std::uint64_t const bytes = h.layout().field(type, 0).element_bytes;
    HEAPLAB_EXPECTS(a >= base && (a - base) % bytes == 0 &&
                        (a - base) / bytes < h.layout().types[type].capacity,
                    "object-heap free: the address is not an object of its block");
    h.destroy_raw(h.object_pointer(block, static_cast<std::uint32_t>((a - base) / bytes), type));
  }
};

}  // namespace heaplab::survey
