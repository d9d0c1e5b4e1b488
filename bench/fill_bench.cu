#include "fill_bench.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "heaplab/core/mix.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap.cuh"
#include "heaplab/soa/heap_types.hpp"
#include "timing.hpp"

namespace heaplab::bench {

class Fill16 {
 public:
  HEAPLAB_SOA_FIELDS(Fill16, (std::uint64_t[2], words_));
};
class Fill32 {
 public:
  HEAPLAB_SOA_FIELDS(Fill32, (std::uint64_t[4], words_));
};
class Fill64 {
 public:
  HEAPLAB_SOA_FIELDS(Fill64, (std::uint64_t[8], words_));
};
using OneType = soa::HeapTypes<Fill16>;
using Mixed   = soa::HeapTypes<Fill16, Fill32, Fill64>;

namespace {

/// Every thread one object; the type is 0 (one type) or a hash of the thread id mod the number
/// of types (mixed).
template <class Types>
__global__ void fill_kernel(soa::HeapRef<Types> heap, std::uint64_t requests) {
  std::uint64_t const tid = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (tid >= requests) return;
  std::uint32_t const type = static_cast<std::uint32_t>(core::splitmix64(tid) % Types::num_types);
  (void)heap.allocate_raw(type);
}

template <class Types>
FillRow fill_row(
    char const* workload, std::uint32_t blocks, std::uint32_t wait, double fraction, int runs) {
  // Requests whose packed population needs `fraction` of the blocks: each type gets 1/K of the
  // requests in expectation, so a request needs on average mean_t(1 / N_t) blocks.
  double blocks_per_request = 0;
  for (std::uint32_t t = 0; t < Types::num_types; ++t)
    blocks_per_request += 1.0 / Types::layout_table().types[t].capacity;
  blocks_per_request /= Types::num_types;
  auto const requests = static_cast<std::uint64_t>(fraction * blocks / blocks_per_request);
  soa::HeapOptions options;
  options.claim_wait_rounds = wait;
  auto heap                 = soa::Heap<Types>::with_blocks(blocks, options);
  unsigned const tpb        = 256;
  auto const grid =
      static_cast<unsigned>(std::max<std::uint64_t>(1, cudart::ceil_div(requests, tpb)));
  FillRow row;
  row.workload            = workload;
  row.blocks              = blocks;
  row.claim_wait_rounds   = wait;
  row.fraction            = fraction;
  row.requests            = requests;
  row.worst_used_fraction = 1.0;
  std::vector<float> times;
  for (int r = 0; r < runs; ++r) {
    heap.reset();
    heap.synchronize();
    times.push_back(time_once_ms([&] {
      if (requests > 0) fill_kernel<Types><<<grid, tpb>>>(heap.ref(), requests);
      HEAPLAB_CHECK_LAUNCH();
    }));
    auto const s         = heap.statistics();
    row.worst_failed     = std::max<std::uint64_t>(row.worst_failed, s.oom_count);
    double used_blocks   = 0;  // object bytes placed, in blocks
    std::uint64_t placed = 0;
    for (auto const& t : s.types) {
      if (t.capacity == 0) continue;
      used_blocks += static_cast<double>(t.used_slots) / t.capacity;
      placed += t.used_slots;
    }
    if (placed + s.oom_count != requests)
      throw std::runtime_error("fill bench: placed + failed != requests");
    row.worst_used_fraction = std::min(row.worst_used_fraction, used_blocks / blocks);
  }
  std::sort(times.begin(), times.end());
  row.median_ms = times[times.size() / 2];
  return row;
}

}  // namespace

std::vector<FillRow> cold_start_fill(FillBenchOptions const& o) {
  std::vector<FillRow> rows;
  for (std::uint32_t m : o.blocks)
    for (std::uint32_t w : o.claim_wait_rounds)
      for (double f : o.fractions) {
        rows.push_back(fill_row<OneType>("one-type", m, w, f, o.runs));
        rows.push_back(fill_row<Mixed>("mixed", m, w, f, o.runs));
      }
  return rows;
}

}  // namespace heaplab::bench
