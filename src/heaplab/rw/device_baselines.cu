// rw::DeviceQueue and rw::DeviceDirectOutput (device_baselines.hpp).
#include "heaplab/rw/device_baselines.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
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

namespace heaplab::rw {

namespace {

constexpr unsigned kBlock = 256;
// The queue's counters in one buffer, 64 words (512 B) apart: each on its own cache lines.
constexpr std::size_t kHead = 0, kTail = 64, kCount = 128, kCounterWords = 129;

/// The ring's initial slots: the first `filled` hold perm(0), ..., perm(filled - 1).
__global__ void queue_preset_kernel(QueueStorage q, std::uint32_t filled, PagePermutation perm) {
  std::uint64_t const stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < q.capacity;
       i += stride)
    q.slots[i] = initial_queue_slot(static_cast<std::uint32_t>(i), filled, perm);
}

/// Free wave of the queue: thread i frees pages[i] unless it is kNoPage.
__global__ void queue_free_kernel(QueueStorage q, std::uint32_t const* pages, std::uint32_t n) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n || pages[i] == kNoPage) return;
  QueueRef<core::DeviceAtomics>(q).free_page(pages[i]);
}

/// pages[i] <= 1 and a whole-warp block size.
void validate_one_page_wave(std::vector<std::uint32_t> const& pages, std::uint32_t block_threads) {
  PoolConfig c;
  c.num_pages = kMaxPages;
  AllocWave w;
  w.algorithm     = Algorithm::rw;  // a one-page algorithm: the same rule
  w.block_threads = block_threads;
  w.pages         = pages;
  validate_alloc_wave(c, w);
}

}  // namespace

// ---------------------------------------------------------------- DeviceQueue

struct DeviceQueue::Impl {
  std::uint32_t num_pages;
  cudart::device_buffer<std::uint64_t> slots;
  cudart::device_buffer<std::uint64_t> counters;
  float last_ms = 0;

  explicit Impl(std::uint32_t t)
      : num_pages(t), slots(t, "queue ring"), counters(kCounterWords, "queue counters") {}

  [[nodiscard]] QueueStorage storage() const {
    return QueueStorage{slots.data(),
                        counters.data() + kHead,
                        counters.data() + kTail,
                        counters.data() + kCount,
                        num_pages,
                        num_pages};
  }
};

DeviceQueue::DeviceQueue(std::uint32_t num_pages) {
  HEAPLAB_EXPECTS(num_pages > 0, "DeviceQueue: the pool needs at least one page (T = 0)");
  HEAPLAB_EXPECTS(num_pages <= kMaxPages,
                  "DeviceQueue: T = " + std::to_string(num_pages) + " pages exceeds the limit");
  impl_ = std::make_unique<Impl>(num_pages);
  preset_free(0, 0);
}

DeviceQueue::~DeviceQueue()                                 = default;
DeviceQueue::DeviceQueue(DeviceQueue&&) noexcept            = default;
DeviceQueue& DeviceQueue::operator=(DeviceQueue&&) noexcept = default;

std::uint32_t DeviceQueue::num_pages() const { return impl_->num_pages; }

void DeviceQueue::preset_free(std::uint32_t free_pages, std::uint64_t seed) {
  HEAPLAB_EXPECTS(free_pages <= impl_->num_pages,
                  "DeviceQueue::preset_free: " + std::to_string(free_pages) +
                      " free pages asked of a pool of " + std::to_string(impl_->num_pages));
  std::vector<std::uint64_t> counters(kCounterWords, 0);
  counters[kTail] = counters[kCount] = free_pages;
  cudart::copy_to_device_async(impl_->counters.data(), counters.data(), kCounterWords, nullptr);
  QueueStorage const q = impl_->storage();
  queue_preset_kernel<<<cudart::grid_size(q.capacity, kBlock, 8192), kBlock>>>(
      q, free_pages, PagePermutation(impl_->num_pages, seed));
  HEAPLAB_CHECK_LAUNCH();
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
}

AllocResult DeviceQueue::allocate(std::vector<std::uint32_t> const& pages,
                                  std::uint32_t block_threads) {
  validate_one_page_wave(pages, block_threads);
  QueueSource const source{QueueRef<core::DeviceAtomics>(impl_->storage())};
  return detail::run_getpage_wave(source, pages, block_threads, 0, &impl_->last_ms);
}

void DeviceQueue::free(std::vector<std::uint32_t> const& pages) {
  for (std::size_t i = 0; i < pages.size(); ++i)
    HEAPLAB_EXPECTS(pages[i] == kNoPage || pages[i] < impl_->num_pages,
                    "DeviceQueue::free: thread " + std::to_string(i) + " frees page " +
                        std::to_string(pages[i]) + ", beyond the pool");
  auto const n   = static_cast<std::uint32_t>(pages.size());
  impl_->last_ms = 0;
  if (n == 0) return;
  cudart::device_buffer<std::uint32_t> d(n, "queue free wave");
  cudart::copy_to_device_async(d.data(), pages.data(), n, nullptr);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  detail::EventTimer timer;
  timer.start();
  queue_free_kernel<<<static_cast<unsigned>(cudart::ceil_div(n, kBlock)), kBlock>>>(
      impl_->storage(), d.data(), n);
  HEAPLAB_CHECK_LAUNCH();
  impl_->last_ms = timer.stop();
}

std::int64_t DeviceQueue::available() const {
  return static_cast<std::int64_t>(cudart::value_to_host(impl_->counters.data() + kCount));
}

float DeviceQueue::last_wave_ms() const { return impl_->last_ms; }

QueueStorage DeviceQueue::storage() const { return impl_->storage(); }

// ---------------------------------------------------------------- DeviceDirectOutput

struct DeviceDirectOutput::Impl {
  std::uint32_t capacity;
  cudart::device_buffer<std::uint64_t> next{1, "DO counter"};
  float last_ms = 0;
  explicit Impl(std::uint32_t c) : capacity(c) {}
};

DeviceDirectOutput::DeviceDirectOutput(std::uint32_t capacity) {
  HEAPLAB_EXPECTS(capacity > 0, "DeviceDirectOutput: the output buffer needs at least one page");
  impl_ = std::make_unique<Impl>(capacity);
  reset();
}

DeviceDirectOutput::~DeviceDirectOutput()                                        = default;
DeviceDirectOutput::DeviceDirectOutput(DeviceDirectOutput&&) noexcept            = default;
DeviceDirectOutput& DeviceDirectOutput::operator=(DeviceDirectOutput&&) noexcept = default;

void DeviceDirectOutput::reset() {
  impl_->next.set_zero_async(nullptr);
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
}

AllocResult DeviceDirectOutput::allocate(std::vector<std::uint32_t> const& pages,
                                         std::uint32_t block_threads) {
  validate_one_page_wave(pages, block_threads);
  DirectOutputSource const source{DirectOutputRef<core::DeviceAtomics>(storage())};
  return detail::run_getpage_wave(source, pages, block_threads, 0, &impl_->last_ms);
}

std::uint64_t DeviceDirectOutput::counter() const {
  return cudart::value_to_host(impl_->next.data());
}

float DeviceDirectOutput::last_wave_ms() const { return impl_->last_ms; }

DirectOutputStorage DeviceDirectOutput::storage() const {
  return DirectOutputStorage{impl_->next.data(), impl_->capacity};
}

}  // namespace heaplab::rw
