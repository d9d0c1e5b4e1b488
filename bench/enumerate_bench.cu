#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "enumerate_bench.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/detail/set_bit_plan.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/set_bit_indices.cuh"
#include "program_output.hpp"
#include "timing.hpp"

namespace heaplab::bench {

/// The fixed problem's objects: 16 bytes, 64 per block (DynaSOAr sec. 3.2 with one type).
class EnumerateObject {
 public:
  HEAPLAB_SOA_FIELDS(EnumerateObject, (std::uint64_t, counter_), (std::uint64_t, payload_));
  HEAPLAB_HD explicit EnumerateObject(std::uint64_t id) : counter_(0), payload_(id) {}
  /// parallel_do's method: one field increment.
  HEAPLAB_HD void touch() { counter_ += 1; }
  /// Adds the counter to *total (the check that every object ran once per parallel_do).
  __device__ void add_counter_to(unsigned long long* total) {
    atomicAdd(total, static_cast<unsigned long long>(counter_.get()));
  }
};
using EnumerateTypes = soa::HeapTypes<EnumerateObject>;
static_assert(EnumerateTypes::size_bytes<EnumerateObject> == 16 &&
              EnumerateTypes::capacity<EnumerateObject> == 64);

namespace {

using Heap = soa::Heap<EnumerateTypes>;
using Ref  = soa::HeapRef<EnumerateTypes>;

constexpr std::uint32_t kCapacity = EnumerateTypes::capacity<EnumerateObject>;
constexpr int kPlacementRounds    = 16;  // allocation kernels before a heap counts as too small

__global__ void make_objects(Ref heap, std::uint64_t count, std::uint64_t first_id) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    heap.make<EnumerateObject>(first_id + i);
}

/// The problem's blocks: ceil(objects / 64).
std::uint64_t problem_blocks(std::uint64_t objects) {
  return (objects + kCapacity - 1) / kCapacity;
}

/// Places `objects` objects with allocation kernels (one thread per object; threads that find
/// the heap full are retried in further rounds, as at 1x the last blocks fill up only then).
/// Throws if the heap cannot hold them.
void place_problem(Heap& heap, std::uint64_t objects) {
  std::uint64_t placed = 0;
  for (int round = 0; round < kPlacementRounds && placed < objects; ++round) {
    std::uint64_t const missing = objects - placed;
    make_objects<<<cudart::grid_size(missing, 256, 1u << 16), 256, 0, heap.stream()>>>(
        heap.ref(), missing, placed);
    HEAPLAB_CHECK_LAUNCH();
    placed = heap.statistics().used_slots;
  }
  if (placed != objects)
    throw std::runtime_error("enumerate bench: a heap of " + std::to_string(heap.num_blocks()) +
                             " blocks holds only " + std::to_string(placed) + " of " +
                             std::to_string(objects) + " objects");
}

/// One heap size's numbers.
struct EnumerateRow {
  std::uint32_t factor   = 0;
  std::uint32_t blocks   = 0;  // M
  std::uint32_t levels   = 0;  // of allocated[T]
  std::uint32_t launches = 0;  // kernels of one chunked enumeration (the tiled one: 1)
  std::uint32_t r_blocks = 0;  // |R|: blocks in allocated[T]
  Sample tiled;
  Sample chunked;
  Sample flat;
  Sample parallel_do;
  std::string failure;  // empty when both enumerations agree and parallel_do visited all
};

/// R and its length from one enumeration (device buffers), read back.
std::vector<std::uint32_t> read_r(cudart::device_buffer<std::uint32_t> const& r,
                                  cudart::device_buffer<std::uint32_t> const& count) {
  std::uint32_t const n = cudart::value_to_host(count.data());
  if (n > r.size()) return std::vector<std::uint32_t>(1, 0xFFFFFFFFu);
  return cudart::to_host(r.data(), n);
}

/// R by one strategy of the hierarchical enumeration, read back (untimed).
std::vector<std::uint32_t> enumerate_once(soa::SetBitIndices& indices,
                                          soa::EnumerationStrategy strategy,
                                          core::BitmapRef<core::DeviceAtomics> const& bitmap) {
  cudart::device_buffer<std::uint32_t> r(bitmap.size(), "R");
  cudart::device_buffer<std::uint32_t> count(1, "R length");
  indices.set_strategy(strategy);
  indices.enumerate(bitmap, r.data(), count.data());
  return read_r(r, count);
}

/// The three enumerations once (untimed; also makes enumerate_flat's storage), compared with
/// each other and with the statistics' block count. Returns the failure, or "".
std::string check_enumerations(soa::SetBitIndices& indices,
                               core::BitmapRef<core::DeviceAtomics> const& bitmap,
                               std::uint64_t blocks_of_type,
                               EnumerateRow& row) {
  std::vector<std::uint32_t> const tiled =
      enumerate_once(indices, soa::EnumerationStrategy::tiled, bitmap);
  std::vector<std::uint32_t> const chunked =
      enumerate_once(indices, soa::EnumerationStrategy::chunked, bitmap);
  cudart::device_buffer<std::uint32_t> r_f(bitmap.size(), "R (flat)");
  cudart::device_buffer<std::uint32_t> n_f(1, "R length (flat)");
  indices.enumerate_flat(bitmap.words(), bitmap.size(), r_f.data(), n_f.data());
  std::vector<std::uint32_t> const flat = read_r(r_f, n_f);
  row.r_blocks                          = static_cast<std::uint32_t>(tiled.size());
  if (tiled != chunked)
    return "tiled R (" + std::to_string(tiled.size()) + " blocks) != chunked R (" +
           std::to_string(chunked.size()) + " blocks)";
  if (tiled != flat)
    return "tiled R (" + std::to_string(tiled.size()) + " blocks) != flat R (" +
           std::to_string(flat.size()) + " blocks)";
  if (tiled.size() != blocks_of_type)
    return "R has " + std::to_string(tiled.size()) + " blocks, the statistics " +
           std::to_string(blocks_of_type);
  return "";
}

/// Sum of every object's counter (a parallel_do with an atomic add).
unsigned long long counter_sum(Heap& heap) {
  cudart::device_buffer<unsigned long long> total(1, "counter sum");
  total.set_zero_async(heap.stream());
  heap.parallel_do<EnumerateObject, &EnumerateObject::add_counter_to>(total.data());
  return cudart::value_to_host(total.data(), heap.stream());
}

/// Times the three operations on one heap of factor x the problem's blocks.
EnumerateRow measure(EnumerateBenchOptions const& o, std::uint32_t factor) {
  EnumerateRow row;
  row.factor = factor;
  row.blocks = static_cast<std::uint32_t>(problem_blocks(o.objects) * factor);
  Heap heap  = Heap::with_blocks(row.blocks);
  place_problem(heap, o.objects);
  core::BitmapRef<core::DeviceAtomics> const bitmap = heap.ref().core().allocated(0);
  auto const plan = soa::detail::EnumerationPlan::for_layout(bitmap.layout());
  row.levels      = bitmap.layout().num_levels;
  row.launches    = 1u + 2u * plan.chunked_steps();
  soa::SetBitIndices indices(row.blocks);
  row.failure =
      check_enumerations(indices, bitmap, heap.statistics().types[0].allocated_blocks, row);
  cudart::device_buffer<std::uint32_t> r(row.blocks, "R");
  cudart::device_buffer<std::uint32_t> count(1, "R length");
  auto const hierarchical = [&](soa::EnumerationStrategy strategy) {
    indices.set_strategy(strategy);
    return time_repeated(
        o.warmup, o.repeats, nullptr, [&] { indices.enumerate(bitmap, r.data(), count.data()); });
  };
  row.tiled                     = hierarchical(soa::EnumerationStrategy::tiled);
  row.chunked                   = hierarchical(soa::EnumerationStrategy::chunked);
  row.flat                      = time_repeated(o.warmup, o.repeats, nullptr, [&] {
    indices.enumerate_flat(bitmap.words(), row.blocks, r.data(), count.data());
  });
  row.parallel_do               = time_repeated(o.warmup, o.repeats, nullptr, [&] {
    heap.parallel_do<EnumerateObject, &EnumerateObject::touch>();
  });
  unsigned long long const want = o.objects * static_cast<unsigned long long>(o.warmup + o.repeats);
  unsigned long long const got  = counter_sum(heap);
  if (row.failure.empty() && got != want)
    row.failure = "parallel_do: the counters add up to " + std::to_string(got) + ", expected " +
                  std::to_string(want);
  return row;
}

void print_header(EnumerateBenchOptions const& o) {
  std::printf(
      "\nenumerate (DynaSOAr Fig. 14B): %llu objects of 16 B, %u per block = %llu blocks; heap "
      "M = factor x %llu blocks\n",
      static_cast<unsigned long long>(o.objects),
      kCapacity,
      static_cast<unsigned long long>(problem_blocks(o.objects)),
      static_cast<unsigned long long>(problem_blocks(o.objects)));
  std::printf(
      "  median of %d runs after %d warm-up (CUDA events); R = the blocks of allocated[T]; "
      "tiled = one kernel; launches = kernels of one chunked enumeration; parallel_do uses "
      "the tiled one\n",
      o.repeats,
      o.warmup);
  std::printf("  %6s %10s %6s %8s | %9s | %9s %10s %10s %12s | %12s\n",
              "factor",
              "M",
              "levels",
              "launches",
              "|R|",
              "tiled ms",
              "chunked ms",
              "flat ms",
              "parallel_do",
              "chunked/tiled");
}

void print_row(EnumerateRow const& r) {
  std::printf("  %6u %10u %6u %8u | %9u | %9.4f %10.4f %10.4f %12.4f | %12.2f%s\n",
              r.factor,
              r.blocks,
              r.levels,
              r.launches,
              r.r_blocks,
              r.tiled.median_ms,
              r.chunked.median_ms,
              r.flat.median_ms,
              r.parallel_do.median_ms,
              r.chunked.median_ms / r.tiled.median_ms,
              r.failure.empty() ? "" : ("  CHECK FAILED: " + r.failure).c_str());
}

void csv_rows(std::FILE* csv, EnumerateRow const& r) {
  if (csv == nullptr) return;
  auto const row = [&](char const* name, Sample const& s) {
    std::fprintf(csv,
                 "%s,%u,%u,%u,%u,%.5f,%.5f,%.5f,%s\n",
                 name,
                 r.factor,
                 r.blocks,
                 r.levels,
                 r.r_blocks,
                 s.median_ms,
                 s.min_ms,
                 s.max_ms,
                 r.failure.empty() ? "ok" : "FAILED");
  };
  row("enumerate_tiled", r.tiled);
  row("enumerate_chunked", r.chunked);
  row("enumerate_flat", r.flat);
  row("parallel_do", r.parallel_do);
}

}  // namespace

void validate_enumerate_bench(EnumerateBenchOptions const& o) {
  if (o.factors.empty())
    throw std::invalid_argument("enumerate: --factors needs at least one factor");
  if (o.objects == 0) throw std::invalid_argument("enumerate: --objects must be at least 1");
  for (std::uint32_t f : o.factors) {
    std::uint64_t const blocks = problem_blocks(o.objects) * f;
    if (f == 0 || blocks > 0xFFFFFFFFull)
      throw std::invalid_argument("enumerate: factor " + std::to_string(f) + " gives " +
                                  std::to_string(blocks) +
                                  " blocks (expected 1 .. 2^32 - 1 blocks, factor >= 1)");
  }
}

int run_enumerate_bench(EnumerateBenchOptions const& o) {
  validate_enumerate_bench(o);
  std::FILE* csv = heaplab::program::open_csv(
      o.csv, "benchmark,factor,blocks,levels,r_blocks,median_ms,min_ms,max_ms,check");
  print_header(o);
  int status = 0;
  for (std::uint32_t factor : o.factors) {
    EnumerateRow const row = measure(o, factor);
    print_row(row);
    csv_rows(csv, row);
    if (!row.failure.empty()) status = 1;
  }
  if (csv) std::fclose(csv);
  if (status != 0) std::printf("enumerate: CHECK FAILED (see the rows above)\n");
  return status;
}

}  // namespace heaplab::bench
