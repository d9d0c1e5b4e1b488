// Traces of controlled runs: every atomic operation a logical thread executed, in execution
// order, with the values it read and wrote. docs/explorer.md "Reading a trace".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"

namespace heaplab::explore {

inline constexpr std::uint32_t kNoThread = 0xFFFFFFFFu;

/// One executed atomic operation. For loads old_value == new_value == the value read; for
/// stores old_value is the overwritten value; for RMWs the value before and after.
struct Event {
  std::uint64_t step      = 0;  // index in the run (0-based)
  std::uint32_t thread    = 0;  // logical thread
  core::AtomicOp op       = core::AtomicOp::load;
  core::MemoryOrder order = core::MemoryOrder::relaxed;
  std::uint8_t width      = 8;  // bytes
  void const* address     = nullptr;
  std::uint64_t operand   = 0;
  std::uint64_t old_value = 0;
  std::uint64_t new_value = 0;
  /// Loads in the weak-memory mode: how many newer stores to the location the load skipped
  /// (0: it read the latest value).
  std::uint32_t stale = 0;

  [[nodiscard]] bool modifies() const { return old_value != new_value; }
};

/// Symbolic name of an address ("alloc_bitmap[block 1]"); "" when unknown.
using AddressNamer = std::function<std::string(void const*)>;

/// Formats traces reproducibly: an address is printed by its symbolic name, or, if the namer does
/// not know it, as "unnamed#k" numbered by first appearance, never as a raw pointer (raw pointers
/// differ between runs; a replayed run must print the identical text).
class TraceFormatter {
 public:
  explicit TraceFormatter(AddressNamer namer) : namer_(std::move(namer)) {}

  /// The column header line.
  [[nodiscard]] static std::string header();
  /// One line per event, no trailing newline.
  [[nodiscard]] std::string line(Event const& e);
  /// Every event, or only the last `tail` of them (with a line saying how many were omitted)
  /// when tail > 0 and the trace is longer. Header first; one event per line.
  [[nodiscard]] std::string format(std::vector<Event> const& events, std::size_t tail = 0);

 private:
  [[nodiscard]] std::string name_of(void const* address);

  AddressNamer namer_;
  std::vector<void const*> unnamed_;
};

}  // namespace heaplab::explore
