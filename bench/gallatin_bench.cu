// The Gallatin peer baseline (gallatin_bench.hpp). The only translation unit that includes
// Gallatin: global_allocator.cuh defines non-inline __device__ variables and host functions, so
// it may be included once per program, and its include directory is a SYSTEM one that only this
// file's target sees (bench/CMakeLists.txt), which keeps Gallatin's warnings out of heaplab's
// -Werror. Gallatin needs no relocatable device code (that is only for its calloc, GAL_DYNAMIC).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "alloc_bench.hpp"
#include "gallatin_bench.hpp"

#include "heaplab/cuda/error.hpp"

#if HEAPLAB_HAVE_GALLATIN
#include <gallatin/allocators/global_allocator.cuh>

#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/grid.hpp"
#include "object_check.cuh"
#endif

namespace heaplab::bench {

namespace {
/// Gallatin's own device memory besides the pool (vEB trees, memory table, block storage;
/// generous: 1/64 of the pool plus 64 MiB).
constexpr std::uint64_t gallatin_overhead_bytes(std::uint64_t pool_bytes) {
  return pool_bytes / 64 + (64ull << 20);
}
}  // namespace

#if HEAPLAB_HAVE_GALLATIN

namespace {

namespace gal = gallatin::allocators;

/// Gallatin's vEB trees take a seed; a fixed one makes runs repeatable.
constexpr std::uint64_t kGallatinSeed = 0x5EED;

/// The object check's Access (object_check.cuh) for Gallatin: the object is `bytes` plain bytes
/// at p, checked through its first and last Word (8 bytes; 4 for a 4-byte object, where they are
/// one word); owned when Gallatin's memory table says so and Word-aligned; the key is the
/// address, and two objects must start at least `bytes` apart.
template <class Word>
struct GallatinObjectAccess {
  std::uint64_t bytes        = 0;
  std::uint64_t min_distance = 0;

  __device__ bool owns(std::uint64_t p) const {
    return p % sizeof(Word) == 0 && gal::global_gallatin->owns_allocation(
                                        reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)));
  }
  __device__ Word& first(std::uint64_t p) const {
    return *reinterpret_cast<Word*>(static_cast<std::uintptr_t>(p));
  }
  __device__ Word& last(std::uint64_t p) const {
    return *reinterpret_cast<Word*>(static_cast<std::uintptr_t>(p + bytes - sizeof(Word)));
  }
  __device__ std::uint64_t key(std::uint64_t p) const { return p; }
};

/// The size of object i of thread tid: `bytes`, or in the mixed row (bytes 0) kMixedSizes[(tid +
/// i) % 3], as heaplab's mixed row.
__device__ inline std::uint64_t object_bytes(std::uint64_t bytes, std::uint64_t tid, int i) {
  // Copied into constants: device code reads no host array.
  constexpr std::uint64_t small = kMixedSizes[0], middle = kMixedSizes[1], large = kMixedSizes[2];
  if (bytes != 0) return bytes;
  switch ((tid + static_cast<std::uint64_t>(i)) % 3) {
    case 0:
      return small;
    case 1:
      return middle;
    default:
      return large;
  }
}

/// The allocation kernel: heaplab's make_objects with global_malloc(size) in place of make<T>
/// (bytes 0: the mixed row's sizes).
__global__ void gallatin_make(std::uint64_t* slots,
                              std::uint64_t threads,
                              int per_thread,
                              std::uint64_t bytes) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < per_thread; ++i)
    slots[tid * per_thread + i] = static_cast<std::uint64_t>(
        reinterpret_cast<std::uintptr_t>(gal::global_malloc(object_bytes(bytes, tid, i))));
}

/// The free kernel: global_free on every non-null pointer (heaplab's destroy ignores nullptr).
__global__ void gallatin_destroy(std::uint64_t const* slots,
                                 std::uint64_t threads,
                                 int per_thread) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= threads) return;
  for (int i = 0; i < per_thread; ++i) {
    std::uint64_t const p = slots[tid * per_thread + i];
    if (p != 0) gal::global_free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)));
  }
}

/// Gallatin's global allocator over a pool of `bytes`, created fresh by fresh() (any previous
/// one torn down first) and torn down by the destructor. Gallatin does not check its cudaMalloc
/// calls, so fresh() checks the free device memory first (for the pool, Gallatin's metadata and
/// the object check of `objects` pointers that runs while the pool lives) and the last error
/// after.
class GallatinPool {
 public:
  GallatinPool(std::uint64_t bytes, std::uint64_t objects) : bytes_(bytes), objects_(objects) {}
  GallatinPool(GallatinPool const&)            = delete;
  GallatinPool& operator=(GallatinPool const&) = delete;
  ~GallatinPool() {
    if (live_) gal::free_global_allocator();
  }

  void fresh() {
    teardown();
    std::size_t free_bytes  = 0;
    std::size_t total_bytes = 0;
    HEAPLAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::uint64_t const need =
        bytes_ + gallatin_overhead_bytes(bytes_) + object_check_bytes(objects_);
    if (free_bytes < need)
      throw std::runtime_error("Gallatin: a pool of " + std::to_string(bytes_ >> 20) +
                               " MiB needs about " + std::to_string(need >> 20) +
                               " MiB but the device has " + std::to_string(free_bytes >> 20) +
                               " MiB free; choose a smaller --gallatin-pool-gib");
    gal::init_global_allocator(bytes_, kGallatinSeed, /*print_info=*/false);
    live_ = true;
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }

 private:
  void teardown() {
    if (!live_) return;
    gal::free_global_allocator();
    live_ = false;
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }

  std::uint64_t bytes_   = 0;
  std::uint64_t objects_ = 0;
  bool live_             = false;
};

GallatinAllocResult run(std::uint64_t threads,
                        int per_thread,
                        std::uint64_t bytes,
                        std::uint64_t pool_bytes,
                        int warmup,
                        int repeats) {
  std::uint64_t const objects = threads * static_cast<std::uint64_t>(per_thread);
  GallatinPool pool(pool_bytes, objects);
  cudart::device_buffer<std::uint64_t> slots(objects, "Gallatin pointer slots");
  unsigned const block = kAllocBlockThreads;
  auto const grid      = static_cast<unsigned>(cudart::ceil_div(threads, block));
  auto alloc           = [&] {
    gallatin_make<<<grid, block>>>(slots.data(), threads, per_thread, bytes);
    HEAPLAB_CHECK_LAUNCH();
  };
  GallatinAllocResult r;
  r.alloc = time_repeated(
      warmup, repeats, [&] { pool.fresh(); }, alloc);
  // Untimed: the objects of the last timed run, written and read back (object_check.cuh). The
  // mixed row's objects are checked as the smallest size's (16 B): their first 16 bytes.
  std::uint64_t const checked = bytes == 0 ? kMixedSizes[0] : bytes;
  r.check                     = checked < 8
                                    ? check_objects(
                      slots.data(), objects, GallatinObjectAccess<std::uint32_t>{checked, checked})
                                    : check_objects(
                      slots.data(), objects, GallatinObjectAccess<std::uint64_t>{checked, checked});
  r.free                      = time_repeated(
      warmup,
      repeats,
      [&] {
        pool.fresh();
        alloc();
      },
      [&] {
        gallatin_destroy<<<grid, block>>>(slots.data(), threads, per_thread);
        HEAPLAB_CHECK_LAUNCH();
      });
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  return r;
}

}  // namespace

bool gallatin_built() { return true; }

std::string gallatin_description() {
  return "Gallatin<16 MiB segments, 16 .. 4096 B slices> (global_allocator.cuh) from " +
         std::string(HEAPLAB_GALLATIN_SOURCE);
}

GallatinAllocResult gallatin_linux_scalability(
    int threads, int per_thread, std::uint64_t pool_bytes, int warmup, int repeats) {
  return run(static_cast<std::uint64_t>(threads), per_thread, 64, pool_bytes, warmup, repeats);
}

GallatinAllocResult gallatin_allocation_wave(std::uint64_t threads,
                                             std::uint64_t pool_bytes,
                                             int warmup,
                                             int repeats) {
  return run(threads, 1, 16, pool_bytes, warmup, repeats);
}

GallatinAllocResult gallatin_object_size(std::uint32_t bytes,
                                         int threads,
                                         int per_thread,
                                         std::uint64_t pool_bytes,
                                         int warmup,
                                         int repeats) {
  if (bytes == 0) throw std::invalid_argument("Gallatin: an object of 0 bytes");
  return run(static_cast<std::uint64_t>(threads), per_thread, bytes, pool_bytes, warmup, repeats);
}

GallatinAllocResult gallatin_mixed(
    int threads, int per_thread, std::uint64_t pool_bytes, int warmup, int repeats) {
  return run(static_cast<std::uint64_t>(threads), per_thread, 0, pool_bytes, warmup, repeats);
}

#else  // not built with Gallatin

namespace {
[[noreturn]] void not_built() {
  throw std::runtime_error(
      "Gallatin: not built (configure with -DHEAPLAB_GALLATIN_DIR=..., docs/gpu.md)");
}
}  // namespace

bool gallatin_built() { return false; }

std::string gallatin_description() { return "Gallatin: not built"; }

GallatinAllocResult gallatin_linux_scalability(int, int, std::uint64_t, int, int) { not_built(); }

GallatinAllocResult gallatin_allocation_wave(std::uint64_t, std::uint64_t, int, int) {
  not_built();
}

GallatinAllocResult gallatin_object_size(std::uint32_t, int, int, std::uint64_t, int, int) {
  not_built();
}

GallatinAllocResult gallatin_mixed(int, int, std::uint64_t, int, int) { not_built(); }

#endif

void require_gallatin_fits(std::uint64_t pool_bytes, std::uint64_t other_bytes) {
  std::size_t free_bytes  = 0;
  std::size_t total_bytes = 0;
  HEAPLAB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::uint64_t const need = pool_bytes + other_bytes;
  if (need <= free_bytes) return;
  throw std::runtime_error(
      "--gallatin-pool-gib " + std::to_string(pool_bytes >> 30) + ": Gallatin's pool (" +
      std::to_string(pool_bytes >> 20) + " MiB) together with CUDA's malloc heap, heaplab's " +
      "largest heap and both runs' pointers, checks and metadata (" +
      std::to_string(other_bytes >> 20) + " MiB) needs " + std::to_string(need >> 20) +
      " MiB, but the device has " + std::to_string(free_bytes >> 20) + " MiB free of " +
      std::to_string(total_bytes >> 20) + "; choose a smaller --gallatin-pool-gib");
}

std::uint64_t gallatin_run_bytes(std::uint64_t objects, std::uint64_t pool_bytes) {
  return 8 * objects + object_check_bytes(objects) + gallatin_overhead_bytes(pool_bytes);
}

}  // namespace heaplab::bench
