// rw::DeviceQueue, rw::DeviceDirectOutput and rw::DeviceSizeClassQueue (device_baselines.hpp).
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
  GetPageWave w;
  w.algorithm     = core::RwAlgorithm::rw;  // a one-page algorithm: the same rule
  w.block_threads = block_threads;
  w.pages         = pages;
  validate_alloc_wave(c, w);
}

/// The size-class queue's initial rings: every slot empty for lap 0.
__global__ void size_class_reset_kernel(std::uint64_t* slots, std::uint64_t n) {
  std::uint64_t const stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    slots[i] = queue_detail::empty_slot(0);
}

/// Free wave of the size-class queue: thread i frees the chunk of a request of count[i] pages at
/// first[i] (count 0: nothing).
__global__ void size_class_free_kernel(SizeClassStorage s,
                                       std::uint32_t const* first,
                                       std::uint32_t const* count,
                                       std::uint32_t n) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n || count[i] == 0) return;
  SizeClassQueueRef<core::DeviceAtomics>(s).free(first[i], count[i]);
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

// ---------------------------------------------------------------- DeviceSizeClassQueue

struct DeviceSizeClassQueue::Impl {
  std::uint32_t num_pages;
  std::uint32_t num_classes;
  std::uint64_t num_slots = 0;
  cudart::device_buffer<std::uint64_t> slots;
  cudart::device_buffer<std::uint64_t> counters;
  float last_ms = 0;

  Impl(std::uint32_t t, std::uint32_t c) : num_pages(t), num_classes(c) {
    num_slots = size_class_slot_words(t, c);
    slots     = cudart::device_buffer<std::uint64_t>(num_slots, "size-class rings");
    counters =
        cudart::device_buffer<std::uint64_t>(size_class_counter_words(c), "size-class counters");
  }

  [[nodiscard]] SizeClassStorage storage() const {
    return size_class_storage(slots.data(), counters.data(), num_pages, num_classes);
  }
};

DeviceSizeClassQueue::DeviceSizeClassQueue(std::uint32_t num_pages, std::uint32_t num_classes) {
  HEAPLAB_EXPECTS(num_pages > 0, "DeviceSizeClassQueue: the pool needs at least one page (T = 0)");
  HEAPLAB_EXPECTS(
      num_pages <= kMaxPages,
      "DeviceSizeClassQueue: T = " + std::to_string(num_pages) + " pages exceeds the limit");
  HEAPLAB_EXPECTS(num_classes >= 1 && num_classes <= kMaxSizeClasses,
                  "DeviceSizeClassQueue: " + std::to_string(num_classes) +
                      " size classes (expected 1 .. " + std::to_string(kMaxSizeClasses) + ")");
  impl_ = std::make_unique<Impl>(num_pages, num_classes);
  reset();
}

DeviceSizeClassQueue::~DeviceSizeClassQueue()                                          = default;
DeviceSizeClassQueue::DeviceSizeClassQueue(DeviceSizeClassQueue&&) noexcept            = default;
DeviceSizeClassQueue& DeviceSizeClassQueue::operator=(DeviceSizeClassQueue&&) noexcept = default;

std::uint32_t DeviceSizeClassQueue::num_pages() const { return impl_->num_pages; }
std::uint32_t DeviceSizeClassQueue::num_classes() const { return impl_->num_classes; }
std::uint32_t DeviceSizeClassQueue::max_request_pages() const {
  return class_chunk_pages(impl_->num_classes - 1);
}

void DeviceSizeClassQueue::reset() {
  impl_->counters.set_zero_async(nullptr);
  size_class_reset_kernel<<<cudart::grid_size(impl_->num_slots, kBlock, 8192), kBlock>>>(
      impl_->slots.data(), impl_->num_slots);
  HEAPLAB_CHECK_LAUNCH();
  HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
}

AllocResult DeviceSizeClassQueue::allocate(std::vector<std::uint32_t> const& pages,
                                           std::uint32_t block_threads) {
  HEAPLAB_EXPECTS(block_threads >= 32 && block_threads <= 1024 && block_threads % 32 == 0,
                  "DeviceSizeClassQueue::allocate: block_threads " + std::to_string(block_threads) +
                      " (expected a multiple of 32 in 32..1024)");
  for (std::size_t i = 0; i < pages.size(); ++i)
    HEAPLAB_EXPECTS(pages[i] <= max_request_pages(),
                    "DeviceSizeClassQueue::allocate: thread " + std::to_string(i) + " asks for " +
                        std::to_string(pages[i]) + " pages, more than the largest class's " +
                        std::to_string(max_request_pages()));
  SizeClassQueueSource const source{SizeClassQueueRef<core::DeviceAtomics>(impl_->storage())};
  return detail::run_getpage_wave(source, pages, block_threads, 0, &impl_->last_ms);
}

void DeviceSizeClassQueue::free(FreePageWave const& wave) {
  HEAPLAB_EXPECTS(wave.first.size() == wave.count.size(),
                  "DeviceSizeClassQueue::free: first and count differ in length");
  for (std::size_t i = 0; i < wave.first.size(); ++i) {
    if (wave.count[i] == 0) continue;
    HEAPLAB_EXPECTS(
        wave.count[i] <= max_request_pages() &&
            std::uint64_t{wave.first[i]} + class_chunk_pages(size_class_of(wave.count[i])) <=
                impl_->num_pages,
        "DeviceSizeClassQueue::free: thread " + std::to_string(i) + " frees a chunk of " +
            std::to_string(wave.count[i]) + " pages at " + std::to_string(wave.first[i]) +
            ", not a chunk inside the pool");
  }
  impl_->last_ms = 0;
  impl_->last_ms = detail::run_free_wave(wave, [&](auto const* first, auto const* count, auto n) {
    size_class_free_kernel<<<static_cast<unsigned>(cudart::ceil_div(n, kBlock)), kBlock>>>(
        impl_->storage(), first, count, n);
    HEAPLAB_CHECK_LAUNCH();
  });
}

std::int64_t DeviceSizeClassQueue::available(std::uint32_t c) const {
  HEAPLAB_EXPECTS(c < impl_->num_classes, "DeviceSizeClassQueue::available: no such class");
  return static_cast<std::int64_t>(
      cudart::value_to_host(impl_->counters.data() + size_class_count_word(c)));
}

std::uint64_t DeviceSizeClassQueue::carved() const {
  return cudart::value_to_host(impl_->counters.data() + size_class_carved_word(impl_->num_classes));
}

float DeviceSizeClassQueue::last_wave_ms() const { return impl_->last_ms; }

SizeClassStorage DeviceSizeClassQueue::storage() const { return impl_->storage(); }

}  // namespace heaplab::rw
