// The explorer's memory models (docs/explorer.md "Weak memory").
//
//   sequential_consistency  every load returns the latest store to its location (the machine the
//                           explorer always ran).
//   release_acquire         a view-based operational model of C++ release/acquire and relaxed
//                           atomics without load buffering: per location the modification order
//                           is a list of messages (value, the writer's view), per logical thread
//                           a view (per location the oldest message it may still read). A
//                           relaxed or acquire load may return any message at or after the
//                           thread's view of the location; an acquire load joins the message's
//                           view into the thread's; a store appends a message (a release store
//                           carries the thread's whole view, a relaxed one only itself); an RMW
//                           reads the latest message (atomicity), carries the read message's view
//                           on (release sequences) and acquires / releases as its order says.
//
// ReleaseAcquireMemory is the bookkeeping of the second model. It does not hold the memory: the
// real memory keeps the latest value of every location (so RMWs, which read the latest message,
// run on it unchanged); the model only decides which older value a load may return instead.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "heaplab/core/atomics.hpp"

namespace heaplab::explore {

enum class MemoryModel : std::uint8_t { sequential_consistency, release_acquire };

[[nodiscard]] char const* to_string(MemoryModel m);
/// "sequential_consistency" or "sc", "release_acquire" or "ra"; throws std::invalid_argument.
[[nodiscard]] MemoryModel memory_model_from_string(std::string const& name);

/// Views and modification orders of one run (model release_acquire). Locations are identified by
/// address; each is created on first access with the value memory holds then (its initial
/// message, visible to every thread). Not thread-safe: the controlled scheduler calls it with
/// its lock held, from the one running thread.
class ReleaseAcquireMemory {
 public:
  explicit ReleaseAcquireMemory(std::uint32_t num_threads) : threads_(num_threads) {}

  /// How many messages a load of `address` by `thread` may read (>= 1): the latest and the
  /// older ones at or after the thread's view. `memory_value` is what memory holds now (the
  /// latest value). A seq_cst load may read the latest message only.
  std::uint32_t load_options(std::uint32_t thread,
                             core::AtomicAccess const& access,
                             std::uint64_t memory_value);
  /// Completes that load reading the message `skip` stores older than the latest
  /// (0 <= skip < load_options): returns its value and updates the thread's view.
  std::uint64_t load(std::uint32_t thread, core::AtomicAccess const& access, std::uint32_t skip);
  /// A store of `value`; `memory_before` is the value memory held before it.
  void store(std::uint32_t thread,
             core::AtomicAccess const& access,
             std::uint64_t memory_before,
             std::uint64_t value);
  /// A read-modify-write that read `before` (the latest value) and left `after`; `wrote` false
  /// for a failed compare-exchange (a load of the latest message with the failure order).
  void rmw(std::uint32_t thread,
           core::AtomicAccess const& access,
           std::uint64_t before,
           std::uint64_t after,
           bool wrote);
  /// Moves the thread's view of every location to its latest message (as if it had read each
  /// latest message relaxed). True if that changed anything: the thread can now read something
  /// it could not before. The scheduler calls it when a thread backs off in a retry loop, so a
  /// waiting thread eventually observes every store (and deadlock detection stays exact).
  bool catch_up(std::uint32_t thread);

  [[nodiscard]] std::size_t num_locations() const { return locations_.size(); }

 private:
  /// Per location: the timestamp (index in its modification order) of the oldest message the
  /// view allows; locations beyond the vector's size are at 0 (the initial message).
  using View = std::vector<std::uint32_t>;

  struct Message {
    std::uint64_t value = 0;
    View view;  // what a thread acquiring this message learns (includes the message itself)
  };
  struct Location {
    void const* address = nullptr;
    std::uint8_t width  = 0;
    std::vector<Message> messages;  // the modification order, oldest first
  };

  /// The location's index, created if new; appends an external message if memory holds a
  /// value that no observed store wrote (an unobserved write, e.g. test set-up between runs).
  std::uint32_t locate(core::AtomicAccess const& access, std::uint64_t memory_value);
  static std::uint32_t at(View const& v, std::uint32_t loc) { return loc < v.size() ? v[loc] : 0u; }
  static void raise(View& v, std::uint32_t loc, std::uint32_t ts);
  static void join(View& into, View const& from);
  std::uint32_t append(std::uint32_t loc, std::uint64_t value, View view);

  std::vector<View> threads_;
  std::vector<Location> locations_;
  std::unordered_map<void const*, std::uint32_t> index_;
};

}  // namespace heaplab::explore
