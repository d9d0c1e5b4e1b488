// What an app's --check does with its heap beside the app's own invariants (docs/apps.md): the
// live objects exported through a parallel_do (on soa::Heap or AnyHeap), and the heap's own checks
// (live-object count equal to the enumeration, the invariant catalog on a snapshot). nvcc only.
//
//   struct View { std::uint64_t handle; ... };       // host-copyable
//   __device__ void Agent::export_view(ExportSink<View> out) {
//     if (View* v = out.slot()) *v = View{...};
//   }
//   std::vector<View> objects = export_objects<Agent, &Agent::export_view>(heap, "wa-tor");
//   if (auto problem = heap_problem(heap, objects.size())) ...
#pragma once

#include "heaplab/soa/heap.cuh"

#include "common/any_heap.cuh"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"

namespace heaplab::apps {

/// Where each object writes its view: a unique slot, or nullptr past the capacity (the host sees
/// the count above the capacity and reports it).
template <class View>
struct ExportSink {
  View* out                   = nullptr;
  unsigned long long capacity = 0;
  unsigned long long* count   = nullptr;
  __device__ View* slot() const {
    // order: relaxed (a unique output index; the output is read after the kernel)
    unsigned long long const k = atomicAdd(count, 1ull);
    return k < capacity ? out + k : nullptr;
  }
};

/// The live objects of T (with its subtypes) on soa::Heap: at most its used slots.
template <class T, class Types>
std::uint64_t live_bound(soa::Heap<Types>& heap) {
  return heap.statistics().used_slots;
}
/// ... and on AnyHeap (any_heap.cuh): its count of T's live objects (compacts).
template <class T, class Types, class A>
std::uint64_t live_bound(AnyHeap<Types, A>& heap) {
  return heap.template live<T>();
}

/// Every live object of T (with its subtypes) as a View, through `Method(ExportSink<View>)`, on
/// soa::Heap or AnyHeap. Throws std::runtime_error when the do-all visits more objects than the
/// heap counts.
template <class T, auto Method, class View, class H>
std::vector<View> export_objects(H& heap, std::string const& app) {
  auto const s                      = heap.stream();
  unsigned long long const live     = live_bound<T>(heap);
  unsigned long long const capacity = live + 64;
  cudart::device_buffer<View> out(capacity, "--check: exported objects");
  cudart::device_buffer<unsigned long long> count(1, "--check: exported object count");
  count.set_zero_async(s);
  heap.template parallel_do<T, Method>(ExportSink<View>{out.data(), capacity, count.data()});
  auto const exported = cudart::value_to_host(count.data(), s);
  if (exported > capacity)
    throw std::runtime_error(app + " --check: the heap enumerated " + std::to_string(exported) +
                             " objects, it counts " + std::to_string(live) + " live");
  std::vector<View> views(exported);
  cudart::copy_to_host(views.data(), out.data(), exported, s);
  return views;
}

/// The heap's own checks after an app's: no device-side error report (e.g. a broken
/// Heap::Enumeration freeze), its live-object count equals what the enumeration found, and the
/// invariant catalog holds on a snapshot. The first problem, or nullopt.
template <class Types>
std::optional<std::string> heap_problem(soa::Heap<Types> const& heap, std::size_t enumerated) {
  if (auto e = heap.device_errors()) return e;
  auto const stats = heap.statistics();
  if (stats.used_slots != enumerated)
    return "the heap's statistics count " + std::to_string(stats.used_slots) +
           " live objects, its enumeration " + std::to_string(enumerated);
  auto const violations = check::check_all(heap.snapshot());
  if (!violations.empty())
    return "invariant catalog: " + std::to_string(violations.size()) +
           " violations, first: " + violations.front().to_string();
  return std::nullopt;
}

}  // namespace heaplab::apps
