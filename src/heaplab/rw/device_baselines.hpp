// The baselines on the GPU (docs/rw.md "Baselines"), host API only (no CUDA in this header):
//   DeviceQueue         the queue-based page allocator (queue_pool.hpp; --allocator queue)
//   DeviceDirectOutput  DO, a global counter into an output buffer, pages never freed
//                       (direct_output.hpp; RW sec. 5.2.3)
//   DeviceSizeClassQueue the size-class queue, RW_malloc's figures' baseline (size_class_queue.hpp;
//                       "queue" in fig8-11)
// Their allocation waves run the same kernel as DevicePool's (rw/detail/wave.cuh), one page per
// active thread (a chunk of pages[i] pages for the size-class queue), so the benchmarks compare
// like with like.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "heaplab/rw/direct_output.hpp"
#include "heaplab/rw/queue_pool.hpp"
#include "heaplab/rw/size_class_queue.hpp"
#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw {

class DeviceQueue {
 public:
  /// A ring of capacity T for page ids below T (1 <= T <= kMaxPages), empty.
  explicit DeviceQueue(std::uint32_t num_pages);
  ~DeviceQueue();
  DeviceQueue(DeviceQueue&&) noexcept;
  DeviceQueue& operator=(DeviceQueue&&) noexcept;
  DeviceQueue(DeviceQueue const&)            = delete;
  DeviceQueue& operator=(DeviceQueue const&) = delete;

  [[nodiscard]] std::uint32_t num_pages() const;
  /// The ring holds exactly `free_pages` pages, PagePermutation(T, seed)(0 .. free_pages - 1):
  /// the same free pages as DevicePool::preset_free(free_pages, seed). Built on the device.
  void preset_free(std::uint32_t free_pages, std::uint64_t seed);
  /// One kernel: thread i with pages[i] == 1 asks for one page, 0 does not ask (precondition:
  /// pages[i] <= 1, block_threads a multiple of 32 in 32..1024).
  AllocResult allocate(std::vector<std::uint32_t> const& pages, std::uint32_t block_threads = 256);
  /// One kernel: thread i frees pages[i] (kNoPage: nothing). Pages must be below T.
  void free(std::vector<std::uint32_t> const& pages);
  /// Pages in the ring (the count, read back at quiescence).
  [[nodiscard]] std::int64_t available() const;
  [[nodiscard]] float last_wave_ms() const;
  /// The device storage for kernels written elsewhere (the hash-join probe).
  [[nodiscard]] QueueStorage storage() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class DeviceDirectOutput {
 public:
  /// An output buffer of `capacity` pages (>= 1), nothing handed out.
  explicit DeviceDirectOutput(std::uint32_t capacity);
  ~DeviceDirectOutput();
  DeviceDirectOutput(DeviceDirectOutput&&) noexcept;
  DeviceDirectOutput& operator=(DeviceDirectOutput&&) noexcept;
  DeviceDirectOutput(DeviceDirectOutput const&)            = delete;
  DeviceDirectOutput& operator=(DeviceDirectOutput const&) = delete;

  /// Nothing handed out: the counter back to 0.
  void reset();
  /// As DeviceQueue::allocate.
  AllocResult allocate(std::vector<std::uint32_t> const& pages, std::uint32_t block_threads = 256);
  /// The counter: pages handed out, plus the requests that found the buffer full.
  [[nodiscard]] std::uint64_t counter() const;
  [[nodiscard]] float last_wave_ms() const;
  [[nodiscard]] DirectOutputStorage storage() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class DeviceSizeClassQueue {
 public:
  /// T pages (1 <= T <= kMaxPages) and C size classes (1 .. kMaxSizeClasses): requests of 1 ..
  /// 2^(C-1) pages. Every ring empty, nothing carved. The rings take 8 bytes per slot, about
  /// 16 T bytes in all.
  DeviceSizeClassQueue(std::uint32_t num_pages, std::uint32_t num_classes);
  ~DeviceSizeClassQueue();
  DeviceSizeClassQueue(DeviceSizeClassQueue&&) noexcept;
  DeviceSizeClassQueue& operator=(DeviceSizeClassQueue&&) noexcept;
  DeviceSizeClassQueue(DeviceSizeClassQueue const&)            = delete;
  DeviceSizeClassQueue& operator=(DeviceSizeClassQueue const&) = delete;

  [[nodiscard]] std::uint32_t num_pages() const;
  [[nodiscard]] std::uint32_t num_classes() const;
  /// 2^(C-1).
  [[nodiscard]] std::uint32_t max_request_pages() const;
  /// Back to the initial state (rings empty, nothing carved), on the device.
  void reset();
  /// One kernel (the shared wave kernel): thread i with pages[i] != 0 gets the first page of a
  /// chunk of 2^ceil(log2 pages[i]) pages, or kNoPage. Precondition (precondition_error):
  /// pages[i] <= max_request_pages(), block_threads a multiple of 32 in 32..1024.
  AllocResult allocate(std::vector<std::uint32_t> const& pages, std::uint32_t block_threads = 256);
  /// One kernel: thread i frees the chunk a request of count[i] pages got at first[i] (count 0:
  /// nothing). Each chunk must be held and named once (not checked); chunks inside the pool and
  /// counts <= max_request_pages() (precondition_error).
  void free(FreePageWave const& wave);
  /// At quiescence: chunks in ring c.
  [[nodiscard]] std::int64_t available(std::uint32_t c) const;
  /// At quiescence: the bump counter (pages carved, plus carves that overshot).
  [[nodiscard]] std::uint64_t carved() const;
  [[nodiscard]] float last_wave_ms() const;
  [[nodiscard]] SizeClassStorage storage() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace heaplab::rw
