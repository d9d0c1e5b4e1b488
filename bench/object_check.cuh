// The object check's kernels (object_check.hpp), one template for every allocator (nvcc only).
//
// An Access names how the check reaches an object p (the 64-bit value an allocation kernel stored
// in its pointer slot):
//
//   struct Access {
//     __device__ bool owns(std::uint64_t p) const;          // p is one of its objects
//     __device__ Word& first(std::uint64_t p) const;        // the object's first word
//     __device__ Word& last(std::uint64_t p) const;         // its last (first if one word)
//     __device__ std::uint64_t key(std::uint64_t p) const;  // its place, never 0 (sort key)
//     std::uint64_t min_distance;  // two objects' keys differ by at least this much
//   };
//
// Word is std::uint64_t, or std::uint32_t for objects smaller than 8 bytes (the pattern is cut to
// its width). Kernel 1 writes pattern(slot, p, 0) and pattern(slot, p, 1) into the first and last
// word (only the latter where they are one word) of
// every owned object and stores its key; kernel 2 reads both words back. Both run after the
// allocation kernel has completed (stream order) and each thread touches only the objects of its
// own slots, so two slots holding one object, or two objects sharing bytes, are the only way one
// word is written twice: the later write wins and the other slot's read-back mismatches (plain
// stores and loads; kernel 2 starts after kernel 1 has completed, which orders them). Pointers
// that alias without sharing the checked words are caught by the sort: the keys, sorted, must
// differ by at least min_distance between neighbours (count_close_pairs). The counters are
// relaxed atomicAdds read after the kernels complete.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "object_check.hpp"

namespace heaplab::bench {

namespace check_detail {

/// The counters of one check, in device memory.
struct Counters {
  unsigned long long nulls      = 0;
  unsigned long long foreign    = 0;
  unsigned long long mismatches = 0;
};

/// The word written into word `which` (0 first, 1 last) of the object p held by pointer slot
/// `slot`: splitmix64's finalizer over slot, pointer and word, so that neighbouring slots and
/// objects get unrelated values and a stale or foreign value almost never matches.
__host__ __device__ inline std::uint64_t pattern(std::uint64_t slot,
                                                 std::uint64_t p,
                                                 unsigned which) {
  std::uint64_t z = p ^ (slot * 0x9E3779B97F4A7C15ull) ^ (std::uint64_t{which} << 63);
  z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z               = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline constexpr unsigned kCheckBlock = 256;

template <class Access>
__global__ void write_patterns(std::uint64_t const* slots,
                               std::uint64_t n,
                               Access access,
                               std::uint64_t* keys,
                               Counters* counters) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t const p = slots[i];
    keys[i]               = 0;  // null and foreign pointers sort first and are skipped
    if (p == 0) {
      atomicAdd(&counters->nulls, 1ull);
    } else if (!access.owns(p)) {
      atomicAdd(&counters->foreign, 1ull);
    } else {
      auto& first = access.first(p);
      auto& last  = access.last(p);
      using Word  = std::remove_reference_t<decltype(first)>;
      first       = static_cast<Word>(pattern(i, p, 0));
      last        = static_cast<Word>(pattern(i, p, 1));
      keys[i]     = access.key(p);
    }
  }
}

template <class Access>
__global__ void read_patterns(std::uint64_t const* slots,
                              std::uint64_t n,
                              Access access,
                              std::uint64_t const* keys,
                              Counters* counters) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    if (keys[i] == 0) continue;
    std::uint64_t const p = slots[i];
    auto const& first     = access.first(p);
    auto const& last      = access.last(p);
    using Word            = std::remove_cv_t<std::remove_reference_t<decltype(first)>>;
    bool const one_word   = &first == &last;
    if ((!one_word && first != static_cast<Word>(pattern(i, p, 0))) ||
        last != static_cast<Word>(pattern(i, p, 1)))
      atomicAdd(&counters->mismatches, 1ull);
  }
}

}  // namespace check_detail

/// Sorts the n keys (CUB radix sort into a copy; `keys` is left as it is) and counts the
/// neighbours a < b, a != 0, with b - a < min_distance (equal keys included). object_check.cu.
std::uint64_t count_close_pairs(std::uint64_t const* keys,
                                std::uint64_t n,
                                std::uint64_t min_distance);

/// The object check over the n pointer slots `slots` (device memory) of a completed allocation
/// run, on the legacy default stream. Synchronizes.
template <class Access>
ObjectCheck check_objects(std::uint64_t const* slots, std::uint64_t n, Access const& access) {
  using namespace check_detail;
  ObjectCheck r;
  r.objects = n;
  if (n == 0) return r;
  cudart::device_buffer<std::uint64_t> keys(n, "object check keys");
  cudart::device_buffer<Counters> counters(1, "object check counters");
  counters.set_zero_async(nullptr);
  unsigned const grid = cudart::grid_size(n, kCheckBlock, 32ull * cudart::multiprocessor_count());
  write_patterns<<<grid, kCheckBlock>>>(slots, n, access, keys.data(), counters.data());
  HEAPLAB_CHECK_LAUNCH();
  read_patterns<<<grid, kCheckBlock>>>(slots, n, access, keys.data(), counters.data());
  HEAPLAB_CHECK_LAUNCH();
  Counters const c = cudart::value_to_host(counters.data());
  r.nulls          = c.nulls;
  r.foreign        = c.foreign;
  r.mismatches     = c.mismatches;
  r.overlaps       = count_close_pairs(keys.data(), n, access.min_distance);
  return r;
}

}  // namespace heaplab::bench
