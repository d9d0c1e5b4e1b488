// TypeMap: how a GPU type universe's type list relates to the configs its schedules use
// (docs/gpu-runner.md "Type universes"). Plain C++ (no CUDA): tested on the CPU.
//
// A GPU type list always starts with a tracked root (soa::Tracked, or a universe's own root with
// other fields before the id, soa/tracked.hpp), the abstract class that carries every object's
// id and cookie, and its classes carry more bytes than a schedule's types say
// (id, cookie, the pointer fields themselves, padding). A schedule's config describes only what
// the model and the catalog need: names, bases, abstract flags, pointer fields and, through the
// sizes, the block capacities (DynaSOAr sec. 3.2). So a universe defines its *schedule config*:
// the GPU config (soa::heap_config<Types>) without the hidden types (the tracked root), type ids
// renumbered, and optionally other sizes. The map checks, once, that both configs give every type
// the same capacity and the same pointer slots (HeapConfig::pointer_slots, up to renumbering),
// which is what makes a GPU snapshot and a model snapshot comparable after renumbering.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/snapshot.hpp"
#include "heaplab/core/heap_config.hpp"

namespace heaplab::heap_family::gpu {

/// The type id a translated snapshot shows for a block whose GPU header names a hidden type
/// (e.g. Tracked, which is abstract and never allocated): an id no universe's schedule config
/// has, so that the catalog reports the block ("type ids match allocated[T]").
inline constexpr std::uint32_t kHiddenTypeInSnapshot = 0xFE;

/// The first difference between the types of two configs ("" when names, sizes, bases, abstract
/// flags and pointer fields (name, pointee, count) are equal; M, n and k1 are not compared), as
/// one phrase: "type 1 ('Agent'): size 16 here, 24 in the universe".
std::string type_difference(core::HeapConfig const& universe, core::HeapConfig const& config);

class TypeMap {
 public:
  TypeMap() = default;

  /// `gpu`: soa::heap_config<Types>(M, n, k1). `hidden`: the GPU type ids schedules do not see
  /// (abstract, no pointer fields, not a pointee). `schedule_sizes`: one size per visible type in
  /// schedule order, or empty for the GPU sizes. Throws std::logic_error naming the type when the
  /// two configs do not give every visible type the same capacity and pointer slots, or when the
  /// schedule config is invalid (a universe definition error).
  TypeMap(core::HeapConfig gpu,
          std::vector<std::uint32_t> const& hidden,
          std::vector<std::uint32_t> const& schedule_sizes = {});

  [[nodiscard]] core::HeapConfig const& gpu() const { return gpu_; }
  [[nodiscard]] core::HeapConfig const& schedule() const { return schedule_; }

  /// The GPU type id of schedule type s.
  [[nodiscard]] std::uint32_t to_gpu(std::uint32_t s) const { return gpu_of_.at(s); }
  /// The schedule type id of GPU type g; nullopt for a hidden type or an id out of range.
  [[nodiscard]] std::optional<std::uint32_t> to_schedule(std::uint32_t g) const;

  /// The same map for other M, n and k1 (both configs; validated).
  [[nodiscard]] TypeMap with_parameters(std::uint32_t num_blocks,
                                        std::uint32_t n,
                                        std::uint32_t k1) const;

  /// A snapshot of the GPU heap (config gpu(), with or without payloads) as the schedule config
  /// sees it: config := schedule(); block header types renumbered (a hidden type becomes
  /// kHiddenTypeInSnapshot, ids outside the GPU list stay as they are); the state bitmaps of
  /// hidden types dropped (they are abstract: absent bitmaps) and the others renumbered. Payloads
  /// (ids, cookies, pointer targets as block:slot) are unchanged: the pointer slots agree.
  /// Throws std::invalid_argument if the snapshot's shape does not match gpu() (number of types,
  /// blocks) or a hidden type has a state bitmap with a bit set.
  [[nodiscard]] check::HeapSnapshot to_schedule_snapshot(check::HeapSnapshot gpu_snapshot) const;

 private:
  core::HeapConfig gpu_;
  core::HeapConfig schedule_;
  std::vector<std::uint32_t> gpu_of_;                      // schedule type -> GPU type
  std::vector<std::optional<std::uint32_t>> schedule_of_;  // GPU type -> schedule type
};

}  // namespace heaplab::heap_family::gpu
