// step_arena: the small argument and result arrays of a sequence of GPU steps, without an
// allocation or a synchronizing copy per array. Host only.
//
//   arena.reset();                                   // a new step: earlier arrays are dead
//   std::uint32_t* ids  = arena.put(host_ids);       // device array (valid once flushed)
//   std::uint64_t* out  = arena.zeroed<std::uint64_t>(n);
//   arena.flush(stream);                             // one host-to-device copy per chunk
//   kernel<<<g, b, 0, stream>>>(ids, out);
//   std::uint64_t const* seen = arena.fetch(out, n, stream);  // read after the stream's wait
//
// The arena is a list of chunks, each a device allocation and a page-locked host mirror of the
// same size; an array is a range of one chunk at the same offset on both sides. put() and
// zeroed() write the host mirror; flush() copies what was written since the last flush, per
// chunk, in one cudaMemcpyAsync (page-locked, so truly asynchronous). fetch() copies a device
// range (of the arena or anywhere) into a fresh range of a host mirror, ordered on the stream.
// Chunks persist across steps and grow only when a step needs more than they hold, so a worker
// that has run a few steps allocates nothing more (the GPU runner's workers shared one CUDA
// context through ~20 allocating and synchronizing calls per step before; docs/results.md).
//
// Ordering rules (the caller's side): reset() only when no work that reads or writes the
// arena is in flight (after the step's wait); flush() before the launch that reads the arrays;
// a fetched pointer is read only after the stream's work up to the fetch has completed.
// Not thread-safe: one owner. After a hang call leak(): cudaFree would wait for the kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/pinned_buffer.hpp"

namespace heaplab::cudart {

class step_arena {
 public:
  /// Chunks hold at least `chunk_bytes` (larger arrays get a chunk of their own size).
  explicit step_arena(std::size_t chunk_bytes = std::size_t{1} << 20) : chunk_bytes_(chunk_bytes) {}
  step_arena(step_arena const&)            = delete;
  step_arena& operator=(step_arena const&) = delete;

  /// A new step: every array handed out before is dead. No work touching them may be in flight.
  void reset() {
    for (Chunk& c : chunks_) c.used = c.flushed = 0;
    current_ = 0;
  }

  /// A device array holding `host[0..n)` once flush() has been ordered before its use.
  template <class T>
  [[nodiscard]] T* put(T const* host, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto [chunk, at] = take(n * sizeof(T));
    if (n != 0) std::memcpy(chunk->host.data() + at, host, n * sizeof(T));
    return reinterpret_cast<T*>(chunk->device.data() + at);
  }
  template <class T>
  [[nodiscard]] T* put(std::vector<T> const& host) {
    return put(host.data(), host.size());
  }

  /// A device array of `n` zero elements once flush() has been ordered before its use.
  template <class T>
  [[nodiscard]] T* zeroed(std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto [chunk, at] = take(n * sizeof(T));
    std::memset(chunk->host.data() + at, 0, n * sizeof(T));
    return reinterpret_cast<T*>(chunk->device.data() + at);
  }

  /// Orders, on `stream`, the copies of everything put() or zeroed() since the last flush.
  void flush(cudaStream_t stream) {
    for (std::size_t i = 0; i <= current_ && i < chunks_.size(); ++i) {
      Chunk& c = chunks_[i];
      if (c.used > c.flushed)
        copy_to_device_async(
            c.device.data() + c.flushed, c.host.data() + c.flushed, c.used - c.flushed, stream);
      c.flushed = c.used;
    }
  }

  /// Orders, on `stream`, a copy of device `from[0..n)` into page-locked host memory and returns
  /// where it will be: read it only once the stream's work up to here has completed.
  template <class T>
  [[nodiscard]] T const* fetch(T const* from, std::size_t n, cudaStream_t stream) {
    static_assert(std::is_trivially_copyable_v<T>);
    flush(stream);  // the fetched range must never be copied to the device afterwards
    auto [chunk, at]    = take(n * sizeof(T));
    chunk->flushed      = chunk->used;
    unsigned char* host = chunk->host.data() + at;
    copy_to_host_async(reinterpret_cast<T*>(host), from, n, stream);  // nothing for n == 0
    return reinterpret_cast<T const*>(host);
  }

  /// Device bytes held (all chunks).
  [[nodiscard]] std::size_t capacity() const {
    std::size_t total = 0;
    for (Chunk const& c : chunks_) total += c.capacity;
    return total;
  }

  /// Gives up every chunk without freeing it (after a hang).
  void leak() noexcept {
    for (Chunk& c : chunks_) {
      (void)c.device.release();
      c.host.leak();
    }
    chunks_.clear();
  }

 private:
  static constexpr std::size_t kAlign = 16;

  struct Chunk {
    device_buffer<unsigned char> device;
    pinned_buffer host;
    std::size_t capacity = 0, used = 0, flushed = 0;
  };

  /// `bytes` bytes (aligned) in the current chunk, the next one, or a new one.
  std::pair<Chunk*, std::size_t> take(std::size_t bytes) {
    std::size_t const need = std::max<std::size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    while (current_ < chunks_.size() && chunks_[current_].used + need > chunks_[current_].capacity)
      ++current_;
    if (current_ == chunks_.size()) {
      Chunk c;
      c.capacity = std::max(chunk_bytes_, need);
      c.device   = device_buffer<unsigned char>(c.capacity, "step arena chunk");
      (void)c.host.reserve(c.capacity);
      chunks_.push_back(std::move(c));
    }
    Chunk& c             = chunks_[current_];
    std::size_t const at = c.used;
    c.used += need;
    return {&c, at};
  }

  std::size_t chunk_bytes_;
  std::vector<Chunk> chunks_;
  std::size_t current_ = 0;
};

}  // namespace heaplab::cudart
