// rw::DevicePool (device_pool.hpp): the pool's words in device memory and its waves as kernels.
#include "heaplab/rw/device_pool.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/rw/detail/wave.cuh"
#include "heaplab/rw/page_sources.cuh"
#include "heaplab/rw/preset.hpp"
#include "heaplab/rw/rw_malloc.hpp"

namespace heaplab::rw {

namespace {

constexpr unsigned kBlock = 256;

/// A grid-stride loop's grid over n items.
unsigned grid_for(std::uint64_t n) { return cudart::grid_size(n, kBlock, 8192); }

/// The initial state: used word w = initial_used_word (bits >= T set), LockMap clear.
template <class W>
__global__ void init_words_kernel(PoolStorage<W> s) {
  std::uint64_t const stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t w = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; w < s.num_words;
       w += stride)
    s.used[w] = initial_used_word<W>(static_cast<std::uint32_t>(w), s.num_pages);
  for (std::uint64_t w = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; w < s.num_lock_words;
       w += stride)
    s.locks[w] = W{0};
}

/// Preset, first pass: every page used (every bit of every used word set), LockMap clear.
template <class W>
__global__ void fill_used_kernel(PoolStorage<W> s) {
  std::uint64_t const stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t w = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; w < s.num_words;
       w += stride)
    s.used[w] = static_cast<W>(~W{0});
  for (std::uint64_t w = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; w < s.num_lock_words;
       w += stride)
    s.locks[w] = W{0};
}

/// Preset, second pass: pages perm(0), ..., perm(a - 1) free. perm is a bijection, so the a
/// clears hit a distinct bits; several clear bits of one word, hence the atomic fetch_and.
template <class W>
__global__ void preset_free_kernel(PoolStorage<W> s, std::uint32_t a, PagePermutation perm) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  std::uint64_t const stride   = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < a; i += stride) {
    std::uint32_t const p = perm(static_cast<std::uint32_t>(i));
    core::DeviceAtomics::fetch_and(
        s.used + p / bits, static_cast<W>(~(W{1} << (p % bits))), core::MemoryOrder::relaxed);
  }
}

/// Free wave: thread i frees count[i] pages from first[i]: one page with FREEPAGE (RW sec. 3.1),
/// a run of RW_malloc with free_run (word by word).
template <class W>
__global__ void free_wave_kernel(PoolStorage<W> s,
                                 std::uint32_t const* first,
                                 std::uint32_t const* count,
                                 std::uint32_t n) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  PagePoolRef<core::DeviceAtomics, W> const ref(s);
  if (count[i] == 1)
    ref.free_page(first[i]);
  else if (count[i] > 1)
    free_run(ref, first[i], count[i]);
}

}  // namespace

struct DevicePool::Impl {
  PoolConfig config;
  DevicePoolOptions options;
  cudart::device_buffer<std::uint32_t> used32, locks32;
  cudart::device_buffer<std::uint64_t> used64, locks64;
  float last_ms = 0;

  Impl(PoolConfig const& c, DevicePoolOptions o) : config(c), options(o) {
    if (c.word_bits == 32) {
      used32  = cudart::device_buffer<std::uint32_t>(c.used_words(), "rw used bitmap");
      locks32 = cudart::device_buffer<std::uint32_t>(c.lock_words(), "rw LockMap");
    } else {
      used64  = cudart::device_buffer<std::uint64_t>(c.used_words(), "rw used bitmap");
      locks64 = cudart::device_buffer<std::uint64_t>(c.lock_words(), "rw LockMap");
    }
  }

  template <class W>
  [[nodiscard]] PoolStorage<W> storage() const {
    PoolStorage<W> s;
    if constexpr (sizeof(W) == 4) {
      s.used  = used32.data();
      s.locks = locks32.data();
    } else {
      s.used  = used64.data();
      s.locks = locks64.data();
    }
    s.num_pages      = config.num_pages;
    s.num_words      = config.used_words();
    s.num_lock_words = config.lock_words();
    s.max_steps      = config.max_steps;
    return s;
  }

  /// f(storage<W>()) with W the pool's word type.
  template <class F>
  void with_storage(F&& f) const {
    if (config.word_bits == 32) {
      f(storage<std::uint32_t>());
    } else {
      f(storage<std::uint64_t>());
    }
  }

  void initialize() const {
    with_storage([](auto s) {
      init_words_kernel<<<grid_for(s.num_words), kBlock>>>(s);
      HEAPLAB_CHECK_LAUNCH();
    });
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }

  /// Widened to 64 bits: the used words and the lock words, copied back.
  [[nodiscard]] PoolWords words() const {
    PoolWords out;
    with_storage([&](auto s) {
      auto const used  = cudart::to_host(s.used, s.num_words);
      auto const locks = cudart::to_host(s.locks, s.num_lock_words);
      out.used.assign(used.begin(), used.end());
      out.locks.assign(locks.begin(), locks.end());
    });
    return out;
  }

  /// Uploads `used` (64-bit words of the pool's width) as the used bitmap.
  void upload_used(std::vector<std::uint64_t> const& used) const {
    with_storage([&](auto s) {
      using W = std::remove_pointer_t<decltype(s.used)>;
      std::vector<W> narrow(used.begin(), used.end());
      cudart::copy_to_device_async(s.used, narrow.data(), narrow.size(), nullptr);
      HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
    });
  }
};

DevicePool::DevicePool(PoolConfig const& config, DevicePoolOptions options) {
  config.validate();
  impl_ = std::make_unique<Impl>(config, options);
  impl_->initialize();
}

DevicePool::~DevicePool()                                = default;
DevicePool::DevicePool(DevicePool&&) noexcept            = default;
DevicePool& DevicePool::operator=(DevicePool&&) noexcept = default;

PoolConfig const& DevicePool::config() const { return impl_->config; }

std::string DevicePool::name() const { return "gpu"; }

void DevicePool::mark_used(std::vector<std::uint32_t> const& pages) {
  PoolConfig const& c = impl_->config;
  PoolWords w         = impl_->words();
  for (std::uint32_t p : pages) {
    HEAPLAB_EXPECTS(p < c.num_pages,
                    "DevicePool::mark_used: page " + std::to_string(p) +
                        " beyond the pool (T = " + std::to_string(c.num_pages) + ")");
    std::uint64_t const bit = std::uint64_t{1} << (p % c.word_bits);
    HEAPLAB_EXPECTS((w.used[p / c.word_bits] & bit) == 0,
                    "DevicePool::mark_used: page " + std::to_string(p) + " is already in use");
    w.used[p / c.word_bits] |= bit;
  }
  impl_->upload_used(w.used);
}

AllocResult DevicePool::allocate(GetPageWave const& wave) {
  validate_alloc_wave(impl_->config, wave);
  AllocResult result;
  with_pool_source(*this, wave.algorithm, [&](auto const& source) {
    result = detail::run_getpage_wave(
        source, wave.pages, wave.block_threads, wave.seed, &impl_->last_ms);
  });
  return result;
}

void DevicePool::free(FreePageWave const& wave) {
  PoolConfig const& c = impl_->config;
  if (impl_->options.check_frees) {
    check_free_wave_pages(c, wave, impl_->words().used);
  } else {
    validate_free_wave(c, wave);
  }
  impl_->last_ms = 0;
  impl_->last_ms = detail::run_free_wave(wave, [&](auto const* first, auto const* count, auto n) {
    impl_->with_storage([&](auto s) {
      free_wave_kernel<<<static_cast<unsigned>(cudart::ceil_div(n, kBlock)), kBlock>>>(
          s, first, count, n);
      HEAPLAB_CHECK_LAUNCH();
    });
  });
}

PoolWords DevicePool::words() const { return impl_->words(); }

void DevicePool::reset() { impl_->initialize(); }

void DevicePool::preset_free(std::uint32_t free_pages, std::uint64_t seed) {
  PoolConfig const& c = impl_->config;
  HEAPLAB_EXPECTS(free_pages <= c.num_pages,
                  "DevicePool::preset_free: " + std::to_string(free_pages) +
                      " free pages asked of a pool of " + std::to_string(c.num_pages));
  PagePermutation const perm(c.num_pages, seed);
  impl_->with_storage([&](auto s) {
    fill_used_kernel<<<grid_for(s.num_words), kBlock>>>(s);
    HEAPLAB_CHECK_LAUNCH();
    if (free_pages > 0) {
      preset_free_kernel<<<grid_for(free_pages), kBlock>>>(s, free_pages, perm);
      HEAPLAB_CHECK_LAUNCH();
    }
  });
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
}

float DevicePool::last_wave_ms() const { return impl_->last_ms; }

PoolStorage<std::uint32_t> DevicePool::storage32() const {
  HEAPLAB_EXPECTS(impl_->config.word_bits == 32,
                  "DevicePool::storage32: the pool has 64-bit words");
  return impl_->storage<std::uint32_t>();
}

PoolStorage<std::uint64_t> DevicePool::storage64() const {
  HEAPLAB_EXPECTS(impl_->config.word_bits == 64,
                  "DevicePool::storage64: the pool has 32-bit words");
  return impl_->storage<std::uint64_t>();
}

}  // namespace heaplab::rw
