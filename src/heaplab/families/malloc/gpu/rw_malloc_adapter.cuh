// RwMallocAdapter: heaplab's RW_malloc (rw/rw_malloc.cuh, RW Alg. 3) as a general-purpose
// allocator, an adapter of adapter.cuh's interface. Used by the rw-malloc subject
// (gpu_subjects.cu) and by the applications' any-allocator heap (apps/common/any_heap.cuh).
//
// The allocator. The pool's bytes are pages of 16 bytes (T = pool_bytes / 16; the random-walk
// page pool of rw/page_pool.hpp, 64-bit bitmap words, in an rw::DevicePool); malloc(b) claims a run
// of n = ceil(b / 16) consecutive pages with rw_malloc and returns the run's first byte in the data
// area (data + 16 x first page). A request above max_run_pages(64) = 2048 pages (32 KiB) gets null
// without a walk: RW_malloc serves runs of at most one warp's region. A walk that finds no run in
// max_steps (1000) rounds is a null. free(p) frees the run with free_run; its length comes from a
// side table, one entry per page, written at the run's first page by malloc.
//
// Linearization points (rw_malloc.hpp). malloc: the last claim_bits (an acquire fetch_or) of the
// run's claim_run: every page of the run is then set by this call; the lane that claims an
// aggregated run for its group hands the other lanes their sub-runs by __shfl_sync. free: each
// page's FREEPAGE at its word's fetch_and (release); the free is complete at the run's last word.
//
// Memory orders. Claims acquire and frees release, so a page's previous owner's accesses happen
// before its next owner's within one kernel (rw_malloc.hpp); the subject's waves never need it
// across threads of one kernel, because an alloc wave only allocates and a free wave only frees:
// a page's frees and its next claim are in different kernels, ordered by the kernel boundary
// (adapter.cuh "Ordering"). The side table is plain memory: its entry run_pages[first] is written
// (plain store) by the allocating thread after its claim linearized, in an alloc wave, and read
// (plain load) by the freeing thread before its free_run, in a LATER free wave; the kernel
// boundary between the two waves makes the write visible to the read. The entry is not written
// again while the run is live (no one else can claim its first page), so the read sees this run's
// length. The cookie bytes are likewise written after the claim, by the granted thread alone.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/families/malloc/gpu/adapter.cuh"
#include "heaplab/families/malloc/subject.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.cuh"

namespace heaplab::malloc_family {

/// RW_malloc over 16-byte pages (see the top of this file).
struct RwMallocAdapter {
  using Word                                  = std::uint64_t;
  static constexpr std::uint64_t kPageBytes   = 16;
  static constexpr std::uint32_t kMaxRunPages = rw::max_run_pages(sizeof(Word) * 8);  // 2048
  static constexpr std::uint64_t kMaxBytes    = std::uint64_t{kMaxRunPages} * kPageBytes;
  static_assert(kMaxRunPages <= 0xFFFFu, "a run's length must fit the side table's 16 bits");

  struct State {
    rw::PoolStorage<Word> pages;         // the page pool's bitmap (device)
    std::uint8_t* data       = nullptr;  // page p is data[16 p .. 16 p + 15]
    std::uint16_t* run_pages = nullptr;  // run_pages[first page of a live run]: its length
    std::uint64_t seed       = 0;        // the wave's seed for the walks
  };

  /// The walk's random numbers: the wave's seed, this thread and clock64 (each call of a thread
  /// draws new regions; the walks are not replayable, like the hardware's interleaving).
  __device__ static rw::PageRng walk_rng(State const& s) {
    std::uint64_t const clock = static_cast<std::uint64_t>(clock64());
    return rw::thread_rng(s.seed ^ core::splitmix64(clock),
                          static_cast<std::uint32_t>(gpu::detail::global_thread()));
  }

  /// A run of ceil(bytes / 16) pages (rw_malloc with the lanes of this warp that call it now), or
  /// null. Linearization: rw_malloc's last claim_bits (acquire). The side-table store comes after
  /// it in program order and is read by a free in a later kernel.
  __device__ static void* malloc(State const& s, std::uint64_t bytes) {
    if (bytes == 0 || bytes > kMaxBytes) return nullptr;
    auto const n    = static_cast<std::uint32_t>(rw::pages_for_bytes(bytes, kPageBytes));
    rw::PageRng rng = walk_rng(s);
    rw::GetPageResult const r =
        rw::rw_malloc(rw::PagePoolRef<core::DeviceAtomics, Word>(s.pages), n, rng);
    if (!r.ok()) return nullptr;
    s.run_pages[r.page] = static_cast<std::uint16_t>(n);
    return s.data + std::uint64_t{r.page} * kPageBytes;
  }

  /// Frees the run that starts at p: its length from the side table (written by malloc in an
  /// earlier kernel), then free_run (release fetch_and per word). An address that is not a page of
  /// the pool traps (HEAPLAB_EXPECTS): the launch fails with an error the host reports.
  __device__ static void free(State const& s, void* p) {
    auto const a     = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
    auto const begin = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s.data));
    HEAPLAB_EXPECTS(
        a >= begin && (a - begin) % kPageBytes == 0 && (a - begin) / kPageBytes < s.pages.num_pages,
        "rw-malloc free: the address is not a page of the pool");
    auto const first = static_cast<std::uint32_t>((a - begin) / kPageBytes);
    rw::free_run(rw::PagePoolRef<core::DeviceAtomics, Word>(s.pages), first, s.run_pages[first]);
  }

  static SubjectInfo info() {
    SubjectInfo i;
    i.name       = "rw-malloc";
    i.alignment  = 16;  // a page; the data area is cudaMalloc'ed (256-byte aligned)
    i.null_floor = 0;   // bounded walks and requests above 32 KiB give nulls: measured only
    i.exact_gaps = false;
    i.recovery   = 0.5;
    return i;
  }

  /// The pool's bitmap and data area go with the Pool.
  static constexpr bool kFreeLiveOnReset = false;

  /// One run's pool: the bitmap (every page free), the data area and the side table.
  class Pool {
   public:
    Pool(std::uint64_t pool_bytes, int /*device: current already*/)
        : pages_(config_for(pool_bytes)),
          data_(std::uint64_t{pages_.config().num_pages} * kPageBytes, "rw-malloc data area"),
          run_pages_(pages_.config().num_pages, "rw-malloc run lengths") {}

    [[nodiscard]] State state(std::uint64_t seed) const {
      return State{pages_.storage64(), data_.data(), run_pages_.data(), seed};
    }
    [[nodiscard]] AddressRange range() const {
      auto const begin = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(data_.data()));
      return AddressRange{begin, begin + std::uint64_t{pages_.config().num_pages} * kPageBytes};
    }

   private:
    static rw::PoolConfig config_for(std::uint64_t pool_bytes) {
      std::uint64_t const pages = pool_bytes / kPageBytes;
      if (pages == 0 || pages > rw::kMaxPages)
        throw std::invalid_argument("rw-malloc: a pool of " + std::to_string(pool_bytes) +
                                    " bytes has " + std::to_string(pages) +
                                    " pages of 16 bytes (1 .. 2^30 allowed)");
      rw::PoolConfig c;
      c.num_pages  = static_cast<std::uint32_t>(pages);
      c.page_bytes = kPageBytes;
      c.word_bits  = sizeof(Word) * 8;
      return c;  // max_steps: PoolConfig's default
    }

    rw::DevicePool pages_;
    cudart::device_buffer<std::uint8_t> data_;
    cudart::device_buffer<std::uint16_t> run_pages_;
  };
};

}  // namespace heaplab::malloc_family
