// Enumerating a bitmap's set bits into a sorted array of positions, on the GPU. parallel_do
// builds its block array R from allocated[U] with it (DynaSOAr sec. 3.7 Fig. 8).
//
//   soa::SetBitIndices indices(max_bits);   // owns the scratch (lists, counts, tile states)
//   indices.enumerate(bitmap, d_out, d_count, stream);             // core::BitmapRef, or
//   indices.enumerate(words, layout, d_out, d_count, stream);      // words + BitmapLayout
//   // d_out[0 .. *d_count) = positions of the set level-0 bits, ascending
//   indices.enumerate(bitmap, d_out, d_count, stream, visit);      // and visit(b) for each b
//   indices.enumerate_flat(level0_words, num_bits, d_out, d_count, stream);   // the same result
//
// enumerate: the hierarchical enumeration (DynaSOAr Alg. 5, sec. 4.1.5) over the levels of a
// core::BitmapLayout: only level-0 containers whose summary bit is set are read, so the work is
// proportional to the set bits plus the selected containers, not to the number of bits M. Unlike
// the paper's variant (an atomic counter per container, R unsorted) every level is an ordered
// compaction, so R is sorted. Two strategies (set_bit_plan.hpp has the steps and the ordering
// argument, detail/set_bit_kernels.cuh the kernels):
//   tiled (the default): ONE kernel, a thread block per 64 level-0 containers, the tiles'
//     offsets by a decoupled look-back; O(M / 4096) blocks that read one summary word each;
//   chunked: top-down over all levels, a one-block kernel for the top levels, then two kernels
//     on a fixed grid (a multiple of the SM count) per lower level; work independent of M.
// An optional visitor (a trivially copyable functor with `__device__ void operator()(uint32_t)
// const`) runs once on every entry of R before the enumeration's last kernel ends (tiled: in
// the same kernel; chunked: one more kernel). parallel_do copies its blocks' iteration bitmaps
// this way.
//
// enumerate_flat: cub::DeviceSelect::If over the positions 0..num_bits-1 with the predicate "bit
// set" on level 0 only: O(M), kept as the baseline of `heaplab_bench enumerate` (Fig. 14B).
//
// Precondition of both: the bitmap is quiescent for the duration (no kernel modifying it runs
// concurrently), so its levels are consistent (App. A.5 Def. 1). Host API, nvcc only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/detail/set_bit_kernels.cuh"
#include "heaplab/soa/detail/set_bit_plan.hpp"

namespace heaplab::soa {

namespace detail {

/// Selects position i iff bit i of the level-0 words is set.
struct BitIsSet {
  std::uint64_t const* words;
  __host__ __device__ bool operator()(std::uint32_t i) const {
    return ((words[i / 64u] >> (i % 64u)) & 1u) != 0;
  }
};

/// Blocks per multiprocessor of the chunked kernels' fixed grid.
inline constexpr unsigned kChunkBlocksPerMultiprocessor = 2;

/// Threads per block of the tiled kernel (one per level-0 container of a tile and more, so that
/// the writes and the visits spread over 8 warps).
inline constexpr unsigned kTileThreads = 256;

}  // namespace detail

/// How enumerate() runs (set_bit_plan.hpp). `automatic` and `tiled` take the tiled kernel where
/// it can run: the bitmap has fewer than 2^30 bits (its counts fit a tile state) and the stream
/// is not being captured into a CUDA graph (the tiled kernel's ticket base and epoch are host-side
/// values baked into its arguments, so a replayed graph would reuse them); otherwise `chunked`,
/// which has no state between calls.
enum class EnumerationStrategy { automatic, tiled, chunked };

class SetBitIndices {
 public:
  /// Prepares the hierarchical enumeration's scratch for bitmaps of up to max_bits bits (it
  /// grows if a larger bitmap is passed later; enumerate_flat's storage is made on its first
  /// call). max_bits == 0 makes no CUDA call.
  explicit SetBitIndices(std::uint32_t max_bits = 0) {
    if (max_bits == 0) return;
    core::BitmapLayout const layout = core::BitmapLayout::for_bits(max_bits);
    reserve(layout);
    reserve_tiles(layout, nullptr);
    // The zeroed ticket counter and tile states must be in place before a kernel on any stream.
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(nullptr));
  }

  /// Writes the positions of the set level-0 bits of the hierarchical bitmap `words` (a device
  /// array of layout.total_words words, level 0 first, as core::BitmapRef keeps it) to d_out in
  /// ascending order and their number to *d_count (both device memory; d_out has room for
  /// layout.num_bits entries), then calls visit(d_out[i]) for each of them (see the top of the
  /// file). Bits past a level's level_bits are ignored. Asynchronous on `stream`; the scratch is
  /// reused, so calls on different streams must not overlap.
  template <class Visit = detail::NoVisit>
  void enumerate(std::uint64_t const* words,
                 core::BitmapLayout const& layout,
                 std::uint32_t* d_out,
                 std::uint32_t* d_count,
                 cudaStream_t stream = 0,
                 Visit const& visit  = Visit{}) {
    if (layout.num_levels == 0) {
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(std::uint32_t), stream));
      return;
    }
    reserve(layout);
    if (uses_tiles(layout, stream)) {
      enumerate_tiled(words, layout, d_out, d_count, stream, visit);
      return;
    }
    detail::EnumerationPlan const plan = detail::EnumerationPlan::for_layout(layout);
    std::uint32_t const lowest         = plan.one_block_lowest;
    detail::enumerate_top_levels_kernel<detail::kOneBlockThreads>
        <<<1, detail::kOneBlockThreads, 0, stream>>>(
            words, layout, lowest, list(0), list(1), d_out, output_count(lowest, d_count));
    HEAPLAB_CHECK_LAUNCH();
    for (std::uint32_t l = lowest; l-- > 0;) chunked_step(words, layout, l, d_out, d_count, stream);
    if constexpr (!std::is_same_v<Visit, detail::NoVisit>) {
      detail::visit_kernel<<<chunk_grid_, detail::kChunkThreads, 0, stream>>>(
          d_out, d_count, visit);
      HEAPLAB_CHECK_LAUNCH();
    }
  }

  /// enumerate() on a bitmap's words and layout (a core::BitmapRef into device memory).
  template <class Atomics, class Visit = detail::NoVisit>
  void enumerate(core::BitmapRef<Atomics> const& bitmap,
                 std::uint32_t* d_out,
                 std::uint32_t* d_count,
                 cudaStream_t stream = 0,
                 Visit const& visit  = Visit{}) {
    enumerate(bitmap.words(), bitmap.layout(), d_out, d_count, stream, visit);
  }

  /// The strategy of later enumerate() calls (tests and `heaplab_bench enumerate` pick one).
  void set_strategy(EnumerationStrategy s) { strategy_ = s; }
  /// Whether enumerate() takes the tiled kernel for `layout` on `stream` under the current
  /// strategy (see EnumerationStrategy).
  [[nodiscard]] bool uses_tiles(core::BitmapLayout const& layout, cudaStream_t stream) const {
    return strategy_ != EnumerationStrategy::chunked && detail::tiled_fits(layout) &&
           !capturing(stream);
  }

  /// The flat enumeration: the positions of the set bits among the first num_bits bits of
  /// `level0` (a device array of ceil(num_bits / 64) words) to d_out in ascending order and
  /// their number to *d_count, reading all of level 0 (O(num_bits)). Same rules as enumerate().
  void enumerate_flat(std::uint64_t const* level0,
                      std::uint32_t num_bits,
                      std::uint32_t* d_out,
                      std::uint32_t* d_count,
                      cudaStream_t stream = 0) {
    if (num_bits == 0) {
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(std::uint32_t), stream));
      return;
    }
    reserve_flat(num_bits);
    std::size_t bytes = flat_temp_bytes_;
    HEAPLAB_CUDA_TRY(cub::DeviceSelect::If(flat_temp_.data(),
                                           bytes,
                                           thrust::counting_iterator<std::uint32_t>(0),
                                           d_out,
                                           d_count,
                                           static_cast<std::int64_t>(num_bits),
                                           detail::BitIsSet{level0},
                                           stream));
    HEAPLAB_CHECK_LAUNCH();
  }

  /// Device bytes of scratch owned now (both enumerations).
  [[nodiscard]] std::size_t temp_storage_bytes() const {
    return (lists_[0].size() + lists_[1].size() + counts_.size() + chunk_totals_.size()) *
               sizeof(std::uint32_t) +
           tile_states_.size() * sizeof(std::uint64_t) +
           tickets_.size() * sizeof(unsigned long long) + flat_temp_bytes_;
  }

  /// Blocks of the chunked kernels' grid (0 before the first non-empty reservation).
  [[nodiscard]] unsigned chunk_grid() const { return chunk_grid_; }

 private:
  using Buffer = cudart::device_buffer<std::uint32_t>;

  [[nodiscard]] std::uint32_t* list(std::uint32_t k) const { return lists_[k].data(); }

  /// Where step l writes its list's length: counts_[l - 1] (the length of list(l - 1)), or
  /// *d_count for step 0.
  [[nodiscard]] std::uint32_t* output_count(std::uint32_t l, std::uint32_t* d_count) const {
    return l == 0 ? d_count : counts_.data() + (l - 1u);
  }

  /// Chunked step l: list(l) (list buffer l % 2, length counts_[l]) -> list(l - 1) or R.
  void chunked_step(std::uint64_t const* words,
                    core::BitmapLayout const& layout,
                    std::uint32_t l,
                    std::uint32_t* d_out,
                    std::uint32_t* d_count,
                    cudaStream_t stream) {
    detail::LevelView const level = detail::LevelView::of(words, layout, l);
    std::uint32_t const* in       = list(l % 2u);
    std::uint32_t const* in_count = counts_.data() + l;
    std::uint32_t* const out      = l == 0 ? d_out : list((l - 1u) % 2u);
    detail::count_chunks_kernel<detail::kChunkThreads>
        <<<chunk_grid_, detail::kChunkThreads, 0, stream>>>(
            level, in, in_count, chunk_totals_.data());
    HEAPLAB_CHECK_LAUNCH();
    detail::write_chunks_kernel<detail::kChunkThreads>
        <<<chunk_grid_, detail::kChunkThreads, 0, stream>>>(
            level, in, in_count, chunk_totals_.data(), out, output_count(l, d_count));
    HEAPLAB_CHECK_LAUNCH();
  }

  static bool capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    HEAPLAB_CUDA_TRY(cudaStreamIsCapturing(stream, &status));
    return status != cudaStreamCaptureStatusNone;
  }

  /// The tiled kernel: one launch of tiles_for(layout) blocks; tickets and epoch advanced.
  template <class Visit>
  void enumerate_tiled(std::uint64_t const* words,
                       core::BitmapLayout const& layout,
                       std::uint32_t* d_out,
                       std::uint32_t* d_count,
                       cudaStream_t stream,
                       Visit const& visit) {
    reserve_tiles(layout, stream);
    std::uint32_t const tiles = detail::tiles_for(layout);
    if (++epoch_ == 0) {  // 2^32 enumerations: clear the states before epoch 1 comes back
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(
          tile_states_.data(), 0, tile_states_.size() * sizeof(std::uint64_t), stream));
      epoch_ = 1;
    }
    detail::TileTickets const tickets{tickets_.data(), ticket_base_};
    ticket_base_ += tiles;
    detail::enumerate_tiles_kernel<detail::kTileThreads>
        <<<tiles, detail::kTileThreads, 0, stream>>>(
            words, layout, tickets, tile_states_.data(), epoch_, d_out, d_count, visit);
    HEAPLAB_CHECK_LAUNCH();
  }

  /// Lists for `layout`, the per-level counts and the chunk totals of the fixed grid (no
  /// initialization: the chunked kernels write before they read).
  void reserve(core::BitmapLayout const& layout) {
    if (layout.num_levels == 0) return;
    if (chunk_grid_ == 0) {
      chunk_grid_ = detail::kChunkBlocksPerMultiprocessor *
                    static_cast<unsigned>(cudart::multiprocessor_count());
      counts_       = Buffer(core::kBitmapMaxLevels, "set-bit enumeration list lengths");
      chunk_totals_ = Buffer(chunk_grid_, "set-bit enumeration chunk totals");
    }
    detail::EnumerationPlan const plan = detail::EnumerationPlan::for_layout(layout);
    for (std::uint32_t k = 0; k < 2; ++k)
      if (plan.list_entries[k] > lists_[k].size())
        lists_[k] = Buffer(plan.list_entries[k], "set-bit enumeration list");
  }

  /// The tiled kernel's ticket counter and tile states for `layout`, zeroed on `stream` when
  /// made. Never called under stream capture (the memsets would go into the graph), so the
  /// zeroing happens once, before the first tiled launch on that stream.
  void reserve_tiles(core::BitmapLayout const& layout, cudaStream_t stream) {
    if (!tickets_) {
      tickets_ = cudart::device_buffer<unsigned long long>(1, "set-bit enumeration tickets");
      HEAPLAB_CUDA_TRY(cudaMemsetAsync(tickets_.data(), 0, sizeof(unsigned long long), stream));
      ticket_base_ = 0;
    }
    if (std::uint32_t const tiles = detail::tiles_for(layout); tiles > tile_states_.size()) {
      // Zeroed (epoch 0, never used): a new buffer holds no state of any epoch.
      tile_states_ = cudart::device_buffer<std::uint64_t>(tiles, "set-bit enumeration tile states");
      HEAPLAB_CUDA_TRY(
          cudaMemsetAsync(tile_states_.data(), 0, tiles * sizeof(std::uint64_t), stream));
    }
  }

  void reserve_flat(std::uint32_t num_bits) {
    std::size_t need = 0;
    HEAPLAB_CUDA_TRY(cub::DeviceSelect::If(nullptr,
                                           need,
                                           thrust::counting_iterator<std::uint32_t>(0),
                                           static_cast<std::uint32_t*>(nullptr),
                                           static_cast<std::uint32_t*>(nullptr),
                                           static_cast<std::int64_t>(num_bits),
                                           detail::BitIsSet{nullptr},
                                           cudaStream_t{0}));
    if (need <= flat_temp_bytes_ && flat_temp_) return;
    flat_temp_       = cudart::device_buffer<unsigned char>(need, "CUB temporary storage");
    flat_temp_bytes_ = need;
  }

  Buffer lists_[2];      // list(l) in lists_[l % 2]
  Buffer counts_;        // counts_[l] = |list(l)|
  Buffer chunk_totals_;  // one per block of the chunked grid
  unsigned chunk_grid_ = 0;
  cudart::device_buffer<std::uint64_t> tile_states_;   // one per tile (TileState)
  cudart::device_buffer<unsigned long long> tickets_;  // the tile ticket counter
  unsigned long long ticket_base_ = 0;                 // its value when the next launch starts
  std::uint32_t epoch_            = 0;                 // of the last tiled enumeration
  EnumerationStrategy strategy_   = EnumerationStrategy::automatic;
  cudart::device_buffer<unsigned char> flat_temp_;
  std::size_t flat_temp_bytes_ = 0;
};

}  // namespace heaplab::soa
