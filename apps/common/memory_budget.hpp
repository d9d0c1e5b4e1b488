// The memory every variant of an app gets (--memory-mib; DynaSOAr Fig. 11, docs/apps.md "Same
// memory for every variant") and what a run that does not fit into it does. Plain C++17
// (CPU-tested in common_test.cpp).
//
// With --memory-mib N every variant of the run holds its objects in N MiB:
//   heap          N MiB of blocks (N MiB / block bytes, rounded down; the bitmaps are apart)
//   --allocators  a pool of N MiB (RW_malloc's pool, CUDA's device malloc heap)
//   baseline      its object arrays (the fields its objects would have had) at most N MiB
// Arrays every variant has alike (grids, I/O buffers, the standalone do-all's pointer arrays)
// are not counted, as the paper does not count enumeration arrays (Fig. 11's caption).
//
// A variant whose allocator answers null, or whose baseline arrays exceed N MiB, throws
// OutOfMemory; heaplab_apps prints `result app=A variant=V fits=0` and exits 5
// (program::kExitOutOfMemory). tools/figure11 searches the largest size that fits this way.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/heap_flags.hpp"

namespace heaplab::apps {

/// A variant ran out of the memory it was given: the run does not fit.
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(std::string app, std::string variant, std::string const& why)
      : std::runtime_error(app + " " + variant + ": out of memory: " + why),
        app_(std::move(app)),
        variant_(std::move(variant)) {}
  [[nodiscard]] std::string const& app() const { return app_; }
  [[nodiscard]] std::string const& variant() const { return variant_; }

 private:
  std::string app_;
  std::string variant_;
};

/// --memory-mib in bytes; 0 when it was not given.
std::uint64_t memory_bytes(HeapFlags const& flags);

/// The heap's blocks: --heap-blocks when given, else --memory-mib's bytes / block_bytes (at least
/// one block), else the app's default. std::invalid_argument (naming `app`) when the blocks it
/// would use are more than 2^32 - 1.
std::uint32_t heap_blocks_for(HeapFlags const& flags,
                              std::uint64_t block_bytes,
                              std::uint64_t app_default,
                              char const* app);

/// An --allocators pool: --memory-mib's bytes when given, else the app's default.
std::uint64_t pool_bytes_for(HeapFlags const& flags, std::uint64_t app_default);

/// Where a failed allocation was found, for OutOfMemory's message: "at set-up" for step 0, else
/// "by <unit> N" ("by iteration 12", "by generation 3").
std::string at_step(std::uint64_t step, char const* unit = "iteration");

/// Throws OutOfMemory when `failed` allocations of `variant` answered null (`where`: "at set-up",
/// "by iteration 12"; `detail`: what the allocator had, for the message).
void require_no_failed_allocations(char const* app,
                                   char const* variant,
                                   std::uint64_t failed,
                                   std::string const& where,
                                   std::string const& detail = "");

/// Throws OutOfMemory when the baseline's object arrays (`bytes`) exceed --memory-mib.
void require_baseline_fits(HeapFlags const& flags, char const* app, std::uint64_t bytes);

/// The `result app=A variant=V fits=0` line of a run that did not fit (result_line.hpp's format).
std::string does_not_fit_line(OutOfMemory const& e);

}  // namespace heaplab::apps
