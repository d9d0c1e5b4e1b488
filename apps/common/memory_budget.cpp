#include "common/memory_budget.hpp"

#include <limits>

namespace heaplab::apps {

std::uint64_t memory_bytes(HeapFlags const& flags) { return flags.memory_mib << 20; }

std::uint32_t heap_blocks_for(HeapFlags const& flags,
                              std::uint64_t block_bytes,
                              std::uint64_t app_default,
                              char const* app) {
  if (flags.heap_blocks != 0) return flags.heap_blocks;
  if (flags.memory_mib == 0) {
    if (app_default > std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument(
          std::string(app) + ": the problem's default heap is " + std::to_string(app_default) +
          " blocks, more than 2^32 - 1: give --heap-blocks or --memory-mib");
    return static_cast<std::uint32_t>(app_default);
  }
  if (block_bytes == 0) throw std::invalid_argument("heap_blocks_for: block_bytes is 0");
  std::uint64_t const blocks = memory_bytes(flags) / block_bytes;
  if (blocks > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument(std::string(app) + ": --memory-mib " +
                                std::to_string(flags.memory_mib) + " is " + std::to_string(blocks) +
                                " blocks of " + std::to_string(block_bytes) +
                                " bytes, more than 2^32 - 1");
  return blocks == 0 ? 1u : static_cast<std::uint32_t>(blocks);
}

std::uint64_t pool_bytes_for(HeapFlags const& flags, std::uint64_t app_default) {
  return flags.memory_mib == 0 ? app_default : memory_bytes(flags);
}

std::string at_step(std::uint64_t step, char const* unit) {
  return step == 0 ? "at set-up" : std::string("by ") + unit + " " + std::to_string(step);
}

void require_no_failed_allocations(char const* app,
                                   char const* variant,
                                   std::uint64_t failed,
                                   std::string const& where,
                                   std::string const& detail) {
  if (failed == 0) return;
  throw OutOfMemory(app,
                    variant,
                    std::to_string(failed) + " allocations answered null " + where +
                        (detail.empty() ? "" : " (" + detail + ")"));
}

void require_baseline_fits(HeapFlags const& flags, char const* app, std::uint64_t bytes) {
  if (flags.memory_mib == 0 || bytes <= memory_bytes(flags)) return;
  throw OutOfMemory(app,
                    "baseline",
                    "its object arrays are " + std::to_string(bytes) + " bytes, more than " +
                        "--memory-mib " + std::to_string(flags.memory_mib) + " (" +
                        std::to_string(memory_bytes(flags)) + " bytes)");
}

std::string does_not_fit_line(OutOfMemory const& e) {
  return "result app=" + e.app() + " variant=" + e.variant() + " fits=0";
}

}  // namespace heaplab::apps
