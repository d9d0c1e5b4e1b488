// "DO" (Direct Output buffer), the baseline of RW sec. 5.2.3: the hash join's original output
// scheme assumes pages are never freed, so GETPAGE is one atomic add on a global counter into an
// output buffer of `capacity` pages. Written by us. Header-only, __host__ __device__ over an
// atomics policy A (core/atomics.hpp).
//
// Linearization point of get_page: the fetch_add (relaxed: the counter only hands out distinct
// numbers; a page is never freed, so no owner's data must be ordered before another's). A result
// at or beyond `capacity` is kNoPage (the buffer is full); the counter is 64 bits wide, so it
// cannot wrap around into the buffer again. Steps: always 1.
#pragma once

#include <cstdint>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/rw/page_pool.hpp"

namespace heaplab::rw {

struct DirectOutputStorage {
  std::uint64_t* next    = nullptr;  // pages handed out so far (may pass capacity)
  std::uint32_t capacity = 0;        // pages of the output buffer
};

template <class A>
class DirectOutputRef {
 public:
  DirectOutputRef() = default;
  HEAPLAB_HD_INLINE explicit DirectOutputRef(DirectOutputStorage s) : s_(s) {}

  HEAPLAB_HD_INLINE GetPageResult get_page() const {
    GetPageResult r;
    r.steps                 = 1;
    std::uint64_t const old = A::fetch_add(s_.next, std::uint64_t{1}, core::MemoryOrder::relaxed);
    if (old < s_.capacity) r.page = static_cast<std::uint32_t>(old);
    return r;
  }

 private:
  DirectOutputStorage s_{};
};

}  // namespace heaplab::rw
