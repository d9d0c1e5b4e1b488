// RapidCheck generators of heap workloads: the operation lists shrink (fewer threads, fewer and
// simpler operations, smaller heaps) and, generated together with a scheduler seed, a failing
// case is replayed exactly by RapidCheck's reproduce= (the run is deterministic given both).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/families/interleaving/workloads/heap_workload.hpp"
#include "heaplab/families/interleaving/workloads/workload_gen.hpp"

namespace heaplab::interleaving_family::workloads {

inline rc::Gen<ThreadOp> gen_thread_op(std::uint32_t num_types) {
  return rc::gen::oneOf(rc::gen::map(rc::gen::inRange<std::uint32_t>(0, num_types),
                                     [](std::uint32_t t) {
                                       return ThreadOp{ThreadOp::Kind::allocate, t};
                                     }),
                        rc::gen::map(rc::gen::inRange<std::uint32_t>(0, 8),
                                     [](std::uint32_t i) {
                                       return ThreadOp{ThreadOp::Kind::free_own, i};
                                     }),
                        rc::gen::just(ThreadOp{ThreadOp::Kind::give, 0}),
                        rc::gen::map(rc::gen::inRange<std::uint32_t>(0, 64), [](std::uint32_t c) {
                          return ThreadOp{ThreadOp::Kind::take_and_free, c};
                        }));
}

/// 1-3 types (T0: 8 B, capacity 64; others capacity 2..32), num_blocks in [min_blocks,
/// max_blocks], 2-6 threads of 1-8 operations (allocations weighted double).
inline rc::Gen<HeapWorkload> gen_heap_workload(std::uint32_t min_blocks = 1,
                                               std::uint32_t max_blocks = 4) {
  return rc::gen::exec([min_blocks, max_blocks] {
    std::uint32_t const num_types = *rc::gen::inRange<std::uint32_t>(1, 4);
    std::vector<std::uint32_t> sizes{8};
    for (std::uint32_t t = 1; t < num_types; ++t)
      sizes.push_back(*rc::gen::elementOf(larger_type_sizes()));
    std::uint32_t const blocks = *rc::gen::inRange<std::uint32_t>(min_blocks, max_blocks + 1);
    std::uint32_t min_cap      = 64;
    for (std::uint32_t s : sizes) min_cap = std::min(min_cap, 512u / s);
    std::uint32_t const n = *rc::gen::inRange<std::uint32_t>(1, std::min(min_cap - 1, 3u) + 1);
    HeapWorkload w;
    w.config                    = make_config(sizes, blocks, n);
    w.active_lookups            = *rc::gen::inRange<std::uint32_t>(1, 6);
    w.seed_salt                 = *rc::gen::arbitrary<std::uint64_t>();
    std::uint32_t const threads = *rc::gen::inRange<std::uint32_t>(2, 7);
    auto const op_gen           = rc::gen::weightedOneOf<ThreadOp>(
        {{2,
                    rc::gen::map(rc::gen::inRange<std::uint32_t>(0, num_types),
                       [](std::uint32_t t) {
                         return ThreadOp{ThreadOp::Kind::allocate, t};
                       })},
                   {1, gen_thread_op(num_types)}});
    for (std::uint32_t i = 0; i < threads; ++i) {
      std::size_t const count = *rc::gen::inRange<std::size_t>(1, 9);
      w.threads.push_back(*rc::gen::container<std::vector<ThreadOp>>(count, op_gen));
    }
    assign_mailbox_cells(w);
    return w;
  });
}

/// Test-only too: the cases of the exhaustive test (issue 4: "2 threads x 2 operations on one
/// block"), on one block of a type with capacity 2 (T1, 256 B) next to T0 (capacity 64), n = 1, 1
/// lookup.
inline std::vector<std::pair<std::string, HeapWorkload>> two_by_two_workloads() {
  using K   = ThreadOp::Kind;
  auto make = [](std::vector<std::vector<ThreadOp>> threads) {
    HeapWorkload w;
    w.config         = make_config({8, 256}, 1, 1);
    w.active_lookups = 1;
    w.seed_salt      = 3;
    w.barrier        = false;
    w.threads        = std::move(threads);
    assign_mailbox_cells(w);
    return w;
  };
  ThreadOp const alloc1{K::allocate, 1}, alloc0{K::allocate, 0}, free0{K::free_own, 0};
  return {
      {"alloc+free | alloc+free", make({{alloc1, free0}, {alloc1, free0}})},
      {"alloc+alloc | alloc+free", make({{alloc1, alloc1}, {alloc1, free0}})},
      {"alloc+free | alloc(other type)+free", make({{alloc1, free0}, {alloc0, free0}})},
      {"alloc+give | take+alloc", make({{alloc1, {K::give, 0}}, {{K::take_and_free, 0}, alloc1}})},
  };
}

}  // namespace heaplab::interleaving_family::workloads
