// Ouroboros in `heaplab_bench rw` (docs/rw.md "Ouroboros beside the random-walk allocators"): the
// allocator RW sec. 5 compares its figures with (Figs. 7-12), run from Ouroboros' own code
// (tools/fetch-ouroboros, -DHEAPLAB_OUROBOROS_DIR; nothing of it in this repository). Host-only
// header: no CUDA and nothing of Ouroboros in it. The class exists exactly when
// HEAPLAB_HAVE_OUROBOROS_BENCH is defined (PUBLIC on heaplab_bench_ouroboros, whose one
// translation unit, ouroboros_bench.cu, includes Ouroboros).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace heaplab::bench {

#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
/// fig12's probe for Ouroboros: the join's device arrays (rw_hash_join.cu JoinDevice) and the
/// output page size. Each match asks Ouroboros for one page of page_bytes; its grant is numbered
/// as a page chunk by chunk (ouroboros::page_number) and its record goes to data at that page, as
/// for the other allocators; a grant in the guard, or numbered at or past `pages` (the pool's
/// last chunk may hold more pages than data has), is a failed page; one that is not a page of a
/// chunk counts in *wrong.
struct OuroborosProbe {
  std::uint32_t const* s_key  = nullptr;
  std::uint32_t n             = 0;
  std::uint64_t const* table  = nullptr;
  std::uint32_t mask          = 0;
  std::uint64_t seed          = 0;
  std::uint32_t* data         = nullptr;
  std::uint32_t page_words    = 0;
  std::uint32_t pages         = 0;  // data's pages: a grant numbered at or past them fails
  std::uint32_t* out_page     = nullptr;
  unsigned long long* failed  = nullptr;
  unsigned long long* wrong   = nullptr;
  std::uint32_t block_threads = 256;
};

/// Whole waves of Ouroboros' device malloc and free on one instance of the repository's
/// InstanceDefinitions.cuh with its Parameters.h (8 KiB chunks after 128 B of metadata, pages of
/// 16 B .. 8 KiB in ten queues): the standard page and chunk queues (OuroPQ, OuroCQ, as the malloc
/// family's peer, docs/malloc.md "Peers") and the virtualized ones, array-based (VA) and
/// linked-list-based (VL), whose queues live in chunks of the pool.
/// Thread i of a wave asks for bytes[i]; its grant is given as a byte offset from the first chunk
/// (ouroboros_geometry.hpp).
///
/// Ouroboros has no out-of-memory path: when its chunks run out it takes chunk indices past them
/// and writes their metadata there (over its chunk locator and queues). So the instance has
/// `guard` chunks past the pool's: a grant in a chunk at or past pool_chunks() is beyond the pool
/// the figure compares (the caller counts it as a null), and the caller must not start a wave
/// that could take more than usable_chunks() - chunks_taken() chunks (ouroboros::wave_chunks).
class OuroborosWaves {
 public:
  // OuroPQ, OuroCQ, OuroVAPQ, OuroVACQ, OuroVLPQ, OuroVLCQ
  enum class Queues : std::uint8_t { page, chunk, va_page, va_chunk, vl_page, vl_chunk };
  static constexpr std::uint64_t kNull = ~std::uint64_t{0};

  /// "ouroboros-page", "ouroboros-chunk", "ouroboros-va-page", "ouroboros-va-chunk",
  /// "ouroboros-vl-page", "ouroboros-vl-chunk".
  [[nodiscard]] static char const* name_of(Queues q);
  /// Every instance's name, the standard two first.
  [[nodiscard]] static std::vector<std::string> names();
  /// The instance called `name`; nullopt for any other name.
  [[nodiscard]] static std::optional<Queues> parse(std::string const& name);

  /// A fresh instance of `pool` + `guard` chunks (pool >= 1). Throws std::runtime_error when the
  /// device lacks the memory.
  OuroborosWaves(Queues queues, std::uint64_t pool, std::uint64_t guard);
  ~OuroborosWaves();
  OuroborosWaves(OuroborosWaves const&)            = delete;
  OuroborosWaves& operator=(OuroborosWaves const&) = delete;

  /// name_of(its queues).
  [[nodiscard]] char const* name() const;
  /// A fresh instance of the same sizes (Ouroboros has no reset of its own).
  void reset();
  /// One wave: offsets[i] is thread i's grant (kNull: none); *ms the kernel alone (CUDA events).
  std::vector<std::uint64_t> allocate(std::vector<std::uint32_t> const& bytes,
                                      std::uint32_t block_threads,
                                      float* ms);
  /// One wave giving back grants of `allocate` (kNull entries skipped); *ms the kernel alone.
  void free(std::vector<std::uint64_t> const& offsets, std::uint32_t block_threads, float* ms);
  /// Untimed: `count` threads each ask for `bytes` and keep it (nothing read back; a preset).
  void fill(std::uint32_t bytes, std::uint64_t count, std::uint32_t block_threads);
  /// fig12's probe kernel (rw_hash_join.cuh) with Ouroboros as the page source, page_words * 4
  /// bytes a page; returns its time (CUDA events).
  float probe(OuroborosProbe const& p);

  [[nodiscard]] std::uint64_t pool_chunks() const;    // the pool's chunks, guard excluded
  [[nodiscard]] std::uint64_t usable_chunks() const;  // pool and guard
  /// The chunks Ouroboros has taken so far (its bump counter; reads the device).
  [[nodiscard]] std::uint64_t chunks_taken() const;

  struct Impl;  // ouroboros_bench.cu

 private:
  std::unique_ptr<Impl> impl_;
};
#endif

}  // namespace heaplab::bench
