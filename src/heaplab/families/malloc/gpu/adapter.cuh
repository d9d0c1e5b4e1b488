// GpuSubject<Adapter>: a malloc-family Subject (subject.hpp) over ANY device allocator with
// malloc(bytes) / free(ptr), given as one adapter struct. The kernels and the host class are
// written once here; an allocator (CUDA's device malloc, RW_malloc, later Gallatin, Ouroboros,
// ScatterAlloc) is an adapter plus a make_* function (gpu_subjects.cu, cuda_malloc_subject.cu).
//
// An adapter:
//
//   struct MyAdapter {
//     struct State { ... };   // trivially copyable; passed to every kernel by value
//     __device__ static void* malloc(State const&, std::uint64_t bytes);   // null: no memory
//     __device__ static void free(State const&, void* p);                  // p: a live grant
//     static SubjectInfo info();
//     /// true: GpuSubject frees the still-live allocations of a run (one free kernel) before the
//     /// pool is dropped at reset and in the destructor (an allocator whose heap outlives the
//     /// Pool, e.g. CUDA's); false: dropping the Pool gives everything back.
//     static constexpr bool kFreeLiveOnReset = false;
//     class Pool {            // host: owns one run's pool, from reset(pool_bytes) to the next
//      public:
//       Pool(std::uint64_t pool_bytes, int device);   // a fresh allocator; throws if it can't
//       State state(std::uint64_t seed) const;         // for one launch; seed: the wave's own
//       AddressRange range() const;                    // where the pool lies ({}: unknown)
//     };
//   };
//
// Kernels (subject.hpp's semantics, 256-thread blocks, one launch per wave, each waited for under
// the watchdog): alloc_wave_kernel (thread t makes its requests k in order; a grant is written
// with its cookie at epoch 0 by the thread that got it, at once; `fill` as AllocPlan says),
// free_wave_kernel (thread i frees addresses[i]), write_kernel and verify_kernel (one thread per
// block). With perturbation on, alloc and free waves start with core/perturb.hpp's warp delays.
//
// Ordering. GpuSubject relies on kernel boundaries only: a kernel starts after the previous one on
// its stream completed, and everything a completed kernel wrote is visible to later kernels and
// (after the watchdog saw the completion event) to the host's copies. So a grant's cookie, written
// in an alloc wave, is read by a later verify; an allocator's side records written by malloc in
// one wave are read by free in a later free wave. Within a wave, only the allocator's own
// atomics order its threads (the adapter states them).
//
// Errors: a kernel past the watchdog's budget throws subject_hang (and the subject is unusable:
// no CUDA call may wait on the stuck kernel, so the destructor leaks the device memory); a kernel
// fault or another sticky CUDA error throws std::runtime_error with the CUDA error's name and text
// (usable() false: the context is lost); a failed buffer allocation throws cudart::out_of_memory
// and leaves the subject usable.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "heaplab/core/mix.hpp"
#include "heaplab/core/perturb.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/cuda/watchdog.hpp"
#include "heaplab/families/malloc/cookie.hpp"
#include "heaplab/families/malloc/gpu/gpu_subjects.hpp"
#include "heaplab/families/malloc/subject.hpp"

namespace heaplab::malloc_family::gpu {

/// Threads per block of every kernel.
inline constexpr unsigned kBlockThreads = 256;

/// An alloc wave on the device (AllocPlan's arrays uploaded; out zeroed before the launch).
struct AllocArgs {
  std::uint64_t const* sizes = nullptr;  // threads x per_thread
  std::uint64_t const* ids   = nullptr;  // threads x per_thread
  std::uint64_t* out         = nullptr;  // threads x per_thread: the address request i got
  std::uint32_t threads      = 0;
  std::uint32_t per_thread   = 0;
  bool fill                  = false;
  std::uint64_t perturb_seed = 0;  // 0: no perturbation
};

namespace detail {

__device__ __forceinline__ std::uint64_t global_thread() {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}

/// Warp-order perturbation (core/perturb.hpp): every lane of a warp computes the same delay from
/// (seed, warp, point), so the warp's lanes sleep together; seed 0 returns at once.
__device__ __forceinline__ void perturb_warp(std::uint64_t seed, core::PerturbPoint point) {
  if (seed == 0) return;
  std::uint32_t const ns = core::perturb_delay_ns(seed, global_thread() / 32u, point);
  if (ns != 0) __nanosleep(ns);
}

/// One request: malloc, and a grant's cookie at epoch 0 written at once by this thread. The
/// cookie's plain stores come after malloc returned (program order); the allocator's own ordering
/// (its linearization point) must make the bytes this thread's alone from then on.
template <class Adapter>
__device__ std::uint64_t grant(typename Adapter::State const& state,
                               std::uint64_t bytes,
                               std::uint64_t id) {
  void* const p = Adapter::malloc(state, bytes);
  if (p != nullptr) write_cookie(static_cast<std::uint8_t*>(p), bytes, id, 0);
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

/// A fill thread (AllocPlan): sizes[base] bytes again and again (request k with ids[base + k])
/// until its first null or per_thread - 1 grants; after the first null once more, into the next
/// slot. Slots not asked stay 0 (the host zeroed them).
template <class Adapter>
__device__ void fill_thread(typename Adapter::State const& state,
                            AllocArgs const& a,
                            std::uint64_t base) {
  std::uint64_t const bytes = a.sizes[base];
  if (bytes == 0) return;  // no request (as in an alloc wave)
  std::uint32_t grants = 0;
  for (std::uint32_t k = 0; k < a.per_thread && grants + 1 < a.per_thread; ++k) {
    std::uint64_t const p = grant<Adapter>(state, bytes, a.ids[base + k]);
    a.out[base + k]       = p;
    if (p == 0) {
      if (k + 1 < a.per_thread)
        a.out[base + k + 1] = grant<Adapter>(state, bytes, a.ids[base + k + 1]);
      return;
    }
    ++grants;
  }
}

}  // namespace detail

/// One alloc (or fill) wave: thread t makes requests t * per_thread .. t * per_thread +
/// per_thread - 1 in order (size 0: no request, the answer stays 0).
template <class Adapter>
__global__ void alloc_wave_kernel(typename Adapter::State const state, AllocArgs const a) {
  detail::perturb_warp(a.perturb_seed, core::PerturbPoint::allocate);
  std::uint64_t const t = detail::global_thread();
  if (t >= a.threads) return;
  std::uint64_t const base = t * a.per_thread;
  if (a.fill) {
    detail::fill_thread<Adapter>(state, a, base);
    return;
  }
  for (std::uint32_t k = 0; k < a.per_thread; ++k) {
    std::uint64_t const bytes = a.sizes[base + k];
    if (bytes != 0) a.out[base + k] = detail::grant<Adapter>(state, bytes, a.ids[base + k]);
  }
}

/// One free wave: thread i frees addresses[i] (0: nothing, as free(NULL)).
template <class Adapter>
__global__ void free_wave_kernel(typename Adapter::State const state,
                                 std::uint64_t const* addresses,
                                 std::uint32_t n,
                                 std::uint64_t perturb_seed) {
  detail::perturb_warp(perturb_seed, core::PerturbPoint::free);
  std::uint64_t const i = detail::global_thread();
  if (i >= n || addresses[i] == 0) return;
  Adapter::free(state, reinterpret_cast<void*>(static_cast<std::uintptr_t>(addresses[i])));
}

/// Thread i writes blocks[i]'s cookie at its epoch over its bytes. A template on the adapter only
/// so that each adapter's kernels live in its own translation unit (module).
template <class Adapter>
__global__ void write_kernel(Block const* blocks, std::uint32_t n) {
  std::uint64_t const i = detail::global_thread();
  if (i >= n) return;
  Block const b = blocks[i];
  write_cookie(reinterpret_cast<std::uint8_t*>(static_cast<std::uintptr_t>(b.address)),
               b.size,
               b.id,
               b.epoch);
}

/// Thread i: the first offset of blocks[i] whose byte is not its cookie at its epoch (its size
/// when all are).
template <class Adapter>
__global__ void verify_kernel(Block const* blocks, std::uint32_t n, std::uint64_t* first_bad) {
  std::uint64_t const i = detail::global_thread();
  if (i >= n) return;
  Block const b = blocks[i];
  first_bad[i] =
      first_bad_byte(reinterpret_cast<std::uint8_t const*>(static_cast<std::uintptr_t>(b.address)),
                     b.size,
                     b.id,
                     b.epoch);
}

/// A Subject over Adapter (see the top of this file). Every call runs on options.device, on the
/// subject's own stream, one kernel at a time, each waited for under the watchdog.
template <class Adapter>
class GpuSubject final : public Subject {
 public:
  using State = typename Adapter::State;
  using Pool  = typename Adapter::Pool;
  static_assert(std::is_trivially_copyable_v<State>,
                "an adapter's State is passed to kernels by value: it must be trivially copyable");

  /// Throws std::runtime_error when options.device is not a usable CUDA device.
  explicit GpuSubject(GpuSubjectOptions const& options)
      : options_(options),
        dog_(watchdog_budget(options.watchdog_ms, Adapter::info())),
        name_(Adapter::info().name),
        seed_base_(core::splitmix64(options.seed)) {
    cudart::DeviceInfo const d = cudart::probe_device(options.device);
    if (!d.available) throw std::runtime_error(name_ + ": " + d.reason);
    device_name_ = d.name;
    HEAPLAB_CUDA_TRY(cudaSetDevice(options.device));
    HEAPLAB_CUDA_TRY(cudaStreamCreate(&stream_));
  }

  ~GpuSubject() override {
    if (!dead_) {
      try {
        if (cudaSetDevice(options_.device) == cudaSuccess) free_live();
      } catch (...) {  // a destructor reports nothing; a hang is handled below
      }
    }
    if (hung_) {  // the device still runs the stuck kernel: no CUDA call may wait on it
      (void)pool_.release();
      (void)buffers_.release();
      return;
    }
    pool_.reset();
    buffers_.reset();
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }

  GpuSubject(GpuSubject const&)            = delete;
  GpuSubject& operator=(GpuSubject const&) = delete;

  [[nodiscard]] SubjectInfo info() const override { return Adapter::info(); }

  void reset(std::uint64_t pool_bytes) override {
    guarded("reset", [&] {
      free_live();
      pool_.reset();  // the previous pool's memory goes back before the new pool is made
      wave_ = 0;
      pool_ = std::make_unique<Pool>(pool_bytes, options_.device);
    });
  }

  [[nodiscard]] AddressRange pool() const override {
    return pool_ ? pool_->range() : AddressRange{};
  }

  std::vector<std::uint64_t> alloc_wave(AllocPlan const& plan) override {
    return guarded("alloc wave", [&]() -> std::vector<std::uint64_t> {
      Pool const& pool      = require_pool("alloc wave");
      std::uint64_t const n = std::uint64_t{plan.threads} * plan.per_thread;
      if (plan.sizes.size() != n || plan.ids.size() != n)
        throw std::invalid_argument(name_ + " alloc wave: sizes and ids must hold threads x " +
                                    "per_thread = " + std::to_string(n) + " entries");
      if (n == 0) return {};
      AllocArgs a;
      a.sizes = upload(buffers_->sizes, plan.sizes, "alloc wave sizes");
      a.ids   = upload(buffers_->ids, plan.ids, "alloc wave ids");
      a.out   = room(buffers_->words, n, "alloc wave answers");
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(a.out, 0, n * sizeof(std::uint64_t), stream_));
      a.threads         = plan.threads;
      a.per_thread      = plan.per_thread;
      a.fill            = plan.fill;
      WaveSeeds const s = next_seeds();
      a.perturb_seed    = s.perturb;
      alloc_wave_kernel<Adapter>
          <<<blocks_for(plan.threads), kBlockThreads, 0, stream_>>>(pool.state(s.allocator), a);
      finish(plan.fill ? "fill wave" : "alloc wave");
      std::vector<std::uint64_t> out = cudart::to_host(a.out, n, stream_);
      for (std::uint64_t const p : out)
        if (p != 0) live_.insert(p);
      return out;
    });
  }

  void free_wave(std::vector<std::uint64_t> const& addresses) override {
    guarded("free wave", [&] {
      require_pool("free wave");
      WaveSeeds const s = next_seeds();
      launch_free(addresses, s, "free wave");
      for (std::uint64_t const p : addresses) live_.erase(p);
    });
  }

  void write(std::vector<Block> const& blocks) override {
    guarded("write", [&] {
      auto const n = count_of(blocks.size(), "write");
      if (n == 0) return;
      Block const* const d = upload(buffers_->blocks, blocks, "blocks to write");
      write_kernel<Adapter><<<blocks_for(n), kBlockThreads, 0, stream_>>>(d, n);
      finish("write");
    });
  }

  std::vector<std::uint64_t> verify(std::vector<Block> const& blocks) override {
    return guarded("verify", [&]() -> std::vector<std::uint64_t> {
      auto const n = count_of(blocks.size(), "verify");
      if (n == 0) return {};
      Block const* const d     = upload(buffers_->blocks, blocks, "blocks to verify");
      std::uint64_t* const out = room(buffers_->words, n, "verify answers");
      verify_kernel<Adapter><<<blocks_for(n), kBlockThreads, 0, stream_>>>(d, n, out);
      finish("verify");
      return cudart::to_host(out, n, stream_);
    });
  }

  [[nodiscard]] std::string device_name() const override { return device_name_; }
  [[nodiscard]] bool usable() const override { return !dead_; }

 private:
  struct Buffers {
    cudart::device_buffer<std::uint64_t> sizes, ids;
    cudart::device_buffer<std::uint64_t> words;  // free addresses, alloc / verify answers
    cudart::device_buffer<Block> blocks;
  };
  struct WaveSeeds {
    std::uint64_t perturb   = 0;  // 0: off
    std::uint64_t allocator = 0;  // the adapter's State (e.g. rw-malloc's walks)
  };

  /// f() on the subject's device; refuses when the subject is unusable; a CUDA error that left the
  /// context lost (a sticky error) makes it unusable.
  template <class F>
  auto guarded(char const* what, F&& f) -> decltype(f()) {
    if (dead_)
      throw std::runtime_error(name_ + " " + what +
                               ": the subject is unusable after an earlier hang or CUDA error");
    try {
      HEAPLAB_CUDA_TRY(cudaSetDevice(options_.device));
      return f();
    } catch (cudart::out_of_memory const&) {
      throw;  // a buffer's cudaMalloc failed: the context is fine
    } catch (cudart::cuda_error const&) {
      cudaError_t const s = cudaStreamQuery(stream_);
      if (s != cudaSuccess && s != cudaErrorNotReady) dead_ = true;  // sticky: the context is lost
      (void)cudaGetLastError();
      throw;
    }
  }

  Pool const& require_pool(char const* what) const {
    if (!pool_) throw std::logic_error(name_ + " " + what + " before a successful reset");
    return *pool_;
  }

  WaveSeeds next_seeds() {
    ++wave_;
    std::uint64_t const s = core::perturb_seed_for(seed_base_, wave_);
    return WaveSeeds{options_.perturb ? s : 0, core::splitmix64(s ^ 0x6d616c6c6f63ull)};
  }

  std::uint32_t count_of(std::size_t n, char const* what) const {
    if (n > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument(name_ + " " + what + ": more than 2^32 - 1 entries");
    return static_cast<std::uint32_t>(n);
  }

  static unsigned blocks_for(std::uint64_t threads) {
    return static_cast<unsigned>(
        std::max<std::uint64_t>(1, cudart::ceil_div(threads, kBlockThreads)));
  }

  /// Room for n elements in `buffer` (grown to max(n, twice its size) when short).
  template <class T>
  T* room(cudart::device_buffer<T>& buffer, std::size_t n, char const* what) {
    if (buffer.size() < n) buffer = cudart::device_buffer<T>(std::max(n, 2 * buffer.size()), what);
    return buffer.data();
  }

  /// `host` copied into `buffer` (grown as needed), ordered on the subject's stream.
  template <class T>
  T* upload(cudart::device_buffer<T>& buffer, std::vector<T> const& host, char const* what) {
    T* const d = room(buffer, host.size(), what);
    cudart::copy_to_device_async(d, host.data(), host.size(), stream_);
    return d;
  }

  /// After a launch: the launch's error, then the watchdog's wait for the stream.
  void finish(std::string const& what) {
    cudaError_t const launch = cudaGetLastError();
    if (launch != cudaSuccess)
      cudart::throw_cuda_error(launch,
                               name_ + " " + what + ": launch failed: " + cudaGetErrorName(launch) +
                                   ": " + cudaGetErrorString(launch));
    cudart::WaitResult const r = dog_.wait(stream_);
    if (r.timed_out()) {
      hung_ = dead_ = true;
      throw subject_hang(cudart::describe_hang(name_ + " " + what, dog_.budget()));
    }
    if (!r.completed()) {
      dead_ = true;
      throw std::runtime_error(name_ + " " + what + " failed: " + r.error +
                               " (a device fault: the CUDA context is lost; no further GPU work "
                               "can run in this process)");
    }
  }

  void launch_free(std::vector<std::uint64_t> const& addresses,
                   WaveSeeds const& seeds,
                   char const* what) {
    auto const n = count_of(addresses.size(), what);
    if (n == 0) return;
    std::uint64_t const* const d = upload(buffers_->words, addresses, "free wave addresses");
    free_wave_kernel<Adapter><<<blocks_for(n), kBlockThreads, 0, stream_>>>(
        pool_->state(seeds.allocator), d, n, seeds.perturb);
    finish(what);
  }

  /// Adapter::kFreeLiveOnReset: the allocations still live from this run, freed (one kernel,
  /// no perturbation) before the pool is dropped. The record is forgotten either way.
  void free_live() {
    std::vector<std::uint64_t> const addresses(live_.begin(), live_.end());
    live_.clear();
    if (!Adapter::kFreeLiveOnReset || !pool_ || addresses.empty()) return;
    launch_free(addresses, WaveSeeds{}, "free of the live allocations at reset");
  }

  GpuSubjectOptions options_;
  cudart::Watchdog dog_;
  std::string name_;
  std::string device_name_;
  std::uint64_t seed_base_ = 0;
  cudaStream_t stream_     = nullptr;
  std::unique_ptr<Pool> pool_;
  std::unique_ptr<Buffers> buffers_ = std::make_unique<Buffers>();
  /// Every address granted and not yet freed in this run (host side; a duplicate grant of a
  /// faulty allocator is recorded once, so reset frees it once).
  std::unordered_set<std::uint64_t> live_;
  std::uint64_t wave_ = 0;  // waves since reset: names each wave's seeds
  bool dead_          = false;
  bool hung_          = false;
};

}  // namespace heaplab::malloc_family::gpu
