// `heaplab_bench parallel-do` (parallel_do_bench.hpp; docs/allocator.md "Benchmark"): DynaSOAr's
// do-all (sec. 2.1, 3.7) over a heap of 16-byte objects with four float fields, against a plain
// SOA loop over four dense float arrays holding the same number of live objects, both timed in
// the same process with CUDA events (timing.hpp).
//
// Per objects count n: one heap of exactly n / 64 blocks (64 objects of 16 B per 1024-B block),
// filled by a kernel until every block is full; the SOA arrays hold n floats each. For each case
// (full, then fragmented: RandomHalf deletes exactly n / 2 objects scattered over all blocks) and
// each k in --fields, method touch<k> runs --warmup + --repeats times through heap.parallel_do
// and the SOA kernel the same number of times on the first `live` elements of the arrays; then
// every live object (found through the allocation bitmaps, not through parallel_do) and every
// array element is checked against the value the runs imply.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "heaplab/soa/set_bit_indices.cuh"
#include "parallel_do_bench.hpp"
#include "program_output.hpp"
#include "timing.hpp"

namespace heaplab::bench {

/// Initial values of fields 1..3 (field 0 starts at 0).
inline constexpr float kF1 = 1.0f;
inline constexpr float kF2 = 2.0f;
inline constexpr float kF3 = 4.0f;

/// Fields 1..3 hold kF1..kF3; touch<k> reads fields 0..k-1 and writes field 0 (k = 1: f0 += 1).
/// Distinct powers of two make a method that reads the wrong fields give a wrong sum.
class ParallelDoObject {
 public:
  HEAPLAB_SOA_FIELDS(ParallelDoObject, (float, f0_), (float, f1_), (float, f2_), (float, f3_));

  HEAPLAB_HD ParallelDoObject()
      : f0_(0.0f),
        f1_(float{kF1}),
        f2_(float{kF2}),
        f3_(float{kF3}) {}  // prvalues: no odr-use of the constants in device code

  template <int K>
  HEAPLAB_HD void touch() {
    if constexpr (K == 1) f0_ += 1.0f;
    if constexpr (K == 2) f0_ += f1_.get();
    if constexpr (K == 3) f0_ += f1_.get() + f2_.get();
    if constexpr (K == 4) f0_ += f1_.get() + f2_.get() + f3_.get();
  }
  /// Does nothing: one untimed parallel_do with it allocates parallel_do's scratch (R and CUB's
  /// temporary storage) before the timed calls, also with --warmup 0.
  HEAPLAB_HD void idle() {}
};

namespace {

using Types = soa::HeapTypes<ParallelDoObject>;
using Heap  = soa::Heap<Types>;
using Ref   = soa::HeapRef<Types>;
using Obj   = ParallelDoObject;

constexpr std::uint32_t kCapacity = Types::capacity<Obj>;
constexpr std::uint32_t kType     = Types::type_id<Obj>;
constexpr unsigned kThreads       = 256;
constexpr std::uint32_t kAttempts = 1000;  // per fill request (spurious nullptr near full)
static_assert(Types::size_bytes<Obj> == 16 && kCapacity == 64 && Types::block_bytes == 1024,
              "parallel-do bench: 16-byte objects, 64 per 1024-byte block");

/// What touch<k> adds to f0 per run.
constexpr float increment(int k) {
  return k == 1 ? 1.0f : k == 2 ? kF1 : k == 3 ? kF1 + kF2 : kF1 + kF2 + kF3;
}

/// Bytes of live fields one touch<k> reads and writes: k fields read, field 0 written.
constexpr std::uint64_t bytes_per_object(int k) { return static_cast<std::uint64_t>(k + 1) * 4u; }

template <class T>
__device__ T* object_at(Ref heap, std::uint32_t block, std::uint32_t slot) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(heap.object_pointer(block, slot, kType)));
}

/// Fills the heap: `count` default-constructed objects, a request retried up to kAttempts times
/// on nullptr (near exhaustion a block being initialized is briefly invisible, docs/allocator.md
/// "Out of memory"); failed[0] counts the requests that never got a slot.
__global__ void fill_kernel(Ref heap, std::uint64_t count, unsigned long long* failed) {
  for (std::uint64_t i = soa::detail::global_thread_1d(); i < count;
       i += soa::detail::grid_stride_1d()) {
    Obj* p = nullptr;
    for (std::uint32_t a = 0; a < kAttempts && p == nullptr; ++a) {
      p = heap.make<Obj>();
      if (p == nullptr) __nanosleep(1000);
    }
    if (p == nullptr) atomicAdd(failed, 1ull);
  }
}

/// Deletes object i (slot i % 64 of block i / 64) of the full heap iff half.deleted(i).
__global__ void delete_random_half_kernel(Ref heap, std::uint64_t count, RandomHalf half) {
  for (std::uint64_t i = soa::detail::global_thread_1d(); i < count;
       i += soa::detail::grid_stride_1d())
    if (half.deleted(i))
      heap.destroy(object_at<Obj>(heap,
                                  static_cast<std::uint32_t>(i / kCapacity),
                                  static_cast<std::uint32_t>(i % kCapacity)));
}

/// Visits every live object through the block headers and allocation bitmaps (independently of
/// parallel_do): reset = true sets f0 to 0; otherwise counts the live objects in counters[0] and
/// those whose fields differ from (expected, kF1, kF2, kF3) in counters[1]. At quiescence.
__global__ void live_objects_kernel(Ref heap,
                                    bool reset,
                                    float expected,
                                    unsigned long long* counters) {
  auto const& core         = heap.core();
  std::uint64_t const all  = std::uint64_t{heap.num_blocks()} * kCapacity;
  unsigned long long live  = 0;
  unsigned long long wrong = 0;
  for (std::uint64_t i = soa::detail::global_thread_1d(); i < all;
       i += soa::detail::grid_stride_1d()) {
    auto const b    = static_cast<std::uint32_t>(i / kCapacity);
    auto const slot = static_cast<std::uint32_t>(i % kCapacity);
    if (core.blocks().load_type(b) != kType || !core.allocated(kType).get(b)) continue;
    if (((core.blocks().load_alloc_bitmap(b, core::MemoryOrder::relaxed) >> slot) & 1u) == 0)
      continue;
    Obj* const p = object_at<Obj>(heap, b, slot);
    if (reset) {
      p->f0_ = 0.0f;
      continue;
    }
    ++live;
    bool const ok = p->f0_ == expected && p->f1_ == kF1 && p->f2_ == kF2 && p->f3_ == kF3;
    wrong += ok ? 0u : 1u;
  }
  if (!reset && live != 0) atomicAdd(&counters[0], live);
  if (wrong != 0) atomicAdd(&counters[1], wrong);
}

/// The baseline: one thread per element of four dense float arrays, touch<K>'s arithmetic.
template <int K>
__global__ void soa_touch_kernel(
    float* f0, float const* f1, float const* f2, float const* f3, std::uint64_t n) {
  std::uint64_t const i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  if constexpr (K == 1) f0[i] += 1.0f;
  if constexpr (K == 2) f0[i] += f1[i];
  if constexpr (K == 3) f0[i] += f1[i] + f2[i];
  if constexpr (K == 4) f0[i] += f1[i] + f2[i] + f3[i];
}

__global__ void soa_init_kernel(float* f0, float* f1, float* f2, float* f3, std::uint64_t n) {
  for (std::uint64_t i = soa::detail::global_thread_1d(); i < n;
       i += soa::detail::grid_stride_1d()) {
    f0[i] = 0.0f;
    f1[i] = kF1;
    f2[i] = kF2;
    f3[i] = kF3;
  }
}

/// counters[1] += elements of [0, n) whose values differ from (expected, kF1, kF2, kF3).
__global__ void soa_check_kernel(float const* f0,
                                 float const* f1,
                                 float const* f2,
                                 float const* f3,
                                 std::uint64_t n,
                                 float expected,
                                 unsigned long long* counters) {
  unsigned long long wrong = 0;
  for (std::uint64_t i = soa::detail::global_thread_1d(); i < n;
       i += soa::detail::grid_stride_1d()) {
    bool const ok = f0[i] == expected && f1[i] == kF1 && f2[i] == kF2 && f3[i] == kF3;
    wrong += ok ? 0u : 1u;
  }
  if (wrong != 0) atomicAdd(&counters[1], wrong);
}

void parallel_do_touch(Heap& heap, int k) {
  switch (k) {
    case 1:
      heap.parallel_do<Obj, &Obj::touch<1>>();
      break;
    case 2:
      heap.parallel_do<Obj, &Obj::touch<2>>();
      break;
    case 3:
      heap.parallel_do<Obj, &Obj::touch<3>>();
      break;
    default:
      heap.parallel_do<Obj, &Obj::touch<4>>();
      break;
  }
}

/// One row of the table: a (objects, case, k) measurement and its check.
struct Row {
  std::uint64_t objects = 0;
  std::string case_name;
  std::uint64_t live   = 0;  // live objects (= elements of the SOA loop)
  std::uint64_t blocks = 0;  // blocks in allocated[T]
  int k                = 0;
  Sample parallel_do;
  Sample enumerate;
  Sample soa;
  std::uint64_t parallel_do_wrong = 0;  // live objects with a wrong value, + missing / extra
  std::uint64_t soa_wrong         = 0;

  [[nodiscard]] bool ok() const { return parallel_do_wrong == 0 && soa_wrong == 0; }
  [[nodiscard]] double gbps(Sample const& s) const {
    return static_cast<double>(live * bytes_per_object(k)) / (s.median_ms * 1e6);
  }
};

/// The heap, the SOA arrays and the scratch of one objects count.
class Bench {
 public:
  Bench(std::uint64_t objects, ParallelDoBenchOptions const& options)
      : options_(options),
        objects_(objects),
        heap_(Heap::with_blocks(static_cast<std::uint32_t>(objects / kCapacity))),
        counters_(2, "parallel-do bench counters"),
        block_array_(std::size_t{heap_.num_blocks()} + 1, "enumeration output"),
        indices_(heap_.num_blocks()) {
    for (auto& a : soa_) a = cudart::device_buffer<float>(objects, "SOA baseline array");
    soa_init_kernel<<<grid(objects), kThreads>>>(
        soa_[0].data(), soa_[1].data(), soa_[2].data(), soa_[3].data(), objects);
    HEAPLAB_CHECK_LAUNCH();
  }

  void fill();
  void delete_random_half();
  Row measure(std::string const& case_name, int k);

 private:
  [[nodiscard]] unsigned grid(std::uint64_t n) const {
    return cudart::grid_size(n, kThreads, 32ull * static_cast<std::uint64_t>(sms_));
  }
  std::uint64_t live_objects(bool reset, float expected, std::uint64_t* wrong);
  std::uint64_t soa_wrong(std::uint64_t live, float expected);
  void time_parallel_do(Row& row);
  void time_soa(Row& row);

  ParallelDoBenchOptions const& options_;
  std::uint64_t objects_;
  int sms_ = cudart::multiprocessor_count();
  Heap heap_;
  cudart::device_buffer<float> soa_[4];
  cudart::device_buffer<unsigned long long> counters_;
  cudart::device_buffer<std::uint32_t> block_array_;  // SetBitIndices' R, then its length
  soa::SetBitIndices indices_;
};

/// Fills the heap to the last slot and checks that every block is full.
void Bench::fill() {
  counters_.set_zero_async(nullptr);
  float const ms              = time_once_ms([&] {
    fill_kernel<<<grid(objects_), kThreads>>>(heap_.ref(), objects_, counters_.data());
    HEAPLAB_CHECK_LAUNCH();
  });
  auto const failed           = cudart::value_to_host(counters_.data(), nullptr);
  auto const retried          = heap_.oom_count();
  soa::HeapStatistics const s = heap_.statistics();
  std::printf(
      "\n%llu objects: %u blocks of %u B, filled in %.2f ms by one kernel (%llu spurious "
      "nullptr retried)\n",
      static_cast<unsigned long long>(objects_),
      heap_.num_blocks(),
      Types::block_bytes,
      ms,
      static_cast<unsigned long long>(retried));
  if (failed != 0 || s.used_slots != objects_ || s.free_blocks != 0)
    throw std::runtime_error(
        "parallel-do bench: filling " + std::to_string(objects_) + " objects left " +
        std::to_string(failed) + " requests without a slot, " + std::to_string(s.used_slots) +
        " objects, " + std::to_string(s.free_blocks) + " free blocks (wanted every block full)");
  heap_.reset_oom_count();
  heap_.parallel_do<Obj, &Obj::idle>();
}

/// Deletes RandomHalf's objects (exactly objects / 2) and checks the count.
void Bench::delete_random_half() {
  delete_random_half_kernel<<<grid(objects_), kThreads>>>(
      heap_.ref(), objects_, RandomHalf(objects_, options_.seed));
  HEAPLAB_CHECK_LAUNCH();
  soa::HeapStatistics const s = heap_.statistics();
  std::printf("  deleted a random half (seed %llu): %llu live objects in %llu blocks, F = %.3f\n",
              static_cast<unsigned long long>(options_.seed),
              static_cast<unsigned long long>(s.used_slots),
              static_cast<unsigned long long>(s.allocated_blocks),
              s.fragmentation);
  if (s.used_slots != objects_ - objects_ / 2 || s.oom_count != 0)
    throw std::runtime_error("parallel-do bench: after deleting " + std::to_string(objects_ / 2) +
                             " of " + std::to_string(objects_) + " objects " +
                             std::to_string(s.used_slots) + " are live (oom count " +
                             std::to_string(s.oom_count) + ")");
}

/// Resets f0 of every live object (reset) or counts live objects and wrong values.
std::uint64_t Bench::live_objects(bool reset, float expected, std::uint64_t* wrong) {
  counters_.set_zero_async(nullptr);
  live_objects_kernel<<<grid(objects_), kThreads>>>(heap_.ref(), reset, expected, counters_.data());
  HEAPLAB_CHECK_LAUNCH();
  std::vector<unsigned long long> const c = cudart::to_host(counters_.data(), 2, nullptr);
  if (wrong != nullptr) *wrong = c[1];
  return c[0];
}

std::uint64_t Bench::soa_wrong(std::uint64_t live, float expected) {
  counters_.set_zero_async(nullptr);
  soa_check_kernel<<<grid(live), kThreads>>>(soa_[0].data(),
                                             soa_[1].data(),
                                             soa_[2].data(),
                                             soa_[3].data(),
                                             live,
                                             expected,
                                             counters_.data());
  HEAPLAB_CHECK_LAUNCH();
  return cudart::to_host(counters_.data(), 2, nullptr)[1];
}

/// The whole heap.parallel_do call as a user makes it (iteration bitmaps, enumeration of
/// allocated[T], the method kernel), then SetBitIndices on allocated[T] alone; then the check.
void Bench::time_parallel_do(Row& row) {
  live_objects(true, 0.0f, nullptr);
  row.parallel_do = time_repeated(
      options_.warmup, options_.repeats, nullptr, [&] { parallel_do_touch(heap_, row.k); });
  row.enumerate         = time_repeated(options_.warmup, options_.repeats, nullptr, [&] {
    indices_.enumerate(heap_.ref().core().allocated(kType),
                       block_array_.data(),
                       block_array_.data() + heap_.num_blocks(),
                       nullptr);
  });
  int const runs        = options_.warmup + options_.repeats;
  float const expected  = static_cast<float>(runs) * increment(row.k);
  std::uint64_t wrong   = 0;
  std::uint64_t const n = live_objects(false, expected, &wrong);
  row.parallel_do_wrong = wrong + (n > row.live ? n - row.live : row.live - n);
}

void Bench::time_soa(Row& row) {
  HEAPLAB_CUDA_TRY(cudaMemsetAsync(soa_[0].data(), 0, row.live * sizeof(float)));  // 0.0f
  auto const blocks     = static_cast<unsigned>(cudart::ceil_div(row.live, kThreads));
  float* const f0       = soa_[0].data();
  float const* f1       = soa_[1].data();
  float const* f2       = soa_[2].data();
  float const* f3       = soa_[3].data();
  std::uint64_t const n = row.live;
  row.soa               = time_repeated(options_.warmup, options_.repeats, nullptr, [&] {
    switch (row.k) {
      case 1:
        soa_touch_kernel<1><<<blocks, kThreads>>>(f0, f1, f2, f3, n);
        break;
      case 2:
        soa_touch_kernel<2><<<blocks, kThreads>>>(f0, f1, f2, f3, n);
        break;
      case 3:
        soa_touch_kernel<3><<<blocks, kThreads>>>(f0, f1, f2, f3, n);
        break;
      default:
        soa_touch_kernel<4><<<blocks, kThreads>>>(f0, f1, f2, f3, n);
        break;
    }
    HEAPLAB_CHECK_LAUNCH();
  });
  int const runs        = options_.warmup + options_.repeats;
  row.soa_wrong         = soa_wrong(n, static_cast<float>(runs) * increment(row.k));
}

Row Bench::measure(std::string const& case_name, int k) {
  soa::HeapStatistics const s = heap_.statistics();
  Row row;
  row.objects   = objects_;
  row.case_name = case_name;
  row.live      = s.used_slots;
  row.blocks    = s.allocated_blocks;
  row.k         = k;
  time_parallel_do(row);
  time_soa(row);
  return row;
}

void print_header(ParallelDoBenchOptions const& o) {
  std::printf(
      "\nparallel_do vs a plain SOA loop: ParallelDoObject = 4 float fields (16 B), %u per %u-B "
      "block.\n"
      "touch<k> reads fields 0..k-1 (k = 1: f0 += 1) and writes field 0; GB/s = live objects x "
      "(k+1) x 4 B / median.\n"
      "median of %d timed runs after %d warm-up (CUDA events). pdo = the whole heap.parallel_do "
      "call (iteration\nbitmaps, enumeration of allocated[T], method kernel); enum = SetBitIndices "
      "on allocated[T] alone;\nSOA = one thread per element of 4 dense float arrays of `live` "
      "elements. x = pdo / SOA.\n",
      kCapacity,
      Types::block_bytes,
      o.repeats,
      o.warmup);
}

void print_table_head() {
  std::printf("  %10s %10s %10s %8s %2s | %9s %9s | %9s | %7s | %9s %9s | %s\n",
              "objects",
              "case",
              "live",
              "blocks",
              "k",
              "pdo ms",
              "enum ms",
              "SOA ms",
              "x",
              "pdo GB/s",
              "SOA GB/s",
              "check");
}

void print_row(Row const& r, std::FILE* csv) {
  std::printf("  %10llu %10s %10llu %8llu %2d | %9.4f %9.4f | %9.4f | %6.2fx | %9.1f %9.1f | %s\n",
              static_cast<unsigned long long>(r.objects),
              r.case_name.c_str(),
              static_cast<unsigned long long>(r.live),
              static_cast<unsigned long long>(r.blocks),
              r.k,
              r.parallel_do.median_ms,
              r.enumerate.median_ms,
              r.soa.median_ms,
              r.parallel_do.median_ms / r.soa.median_ms,
              r.gbps(r.parallel_do),
              r.gbps(r.soa),
              r.ok() ? "ok" : "FAILED");
  if (!r.ok())
    std::printf(
        "    check FAILED: parallel_do %llu wrong or missing objects, SOA %llu wrong "
        "elements\n",
        static_cast<unsigned long long>(r.parallel_do_wrong),
        static_cast<unsigned long long>(r.soa_wrong));
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%llu,%s,%llu,%llu,%d,%llu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f,%.1f,%s\n",
               static_cast<unsigned long long>(r.objects),
               r.case_name.c_str(),
               static_cast<unsigned long long>(r.live),
               static_cast<unsigned long long>(r.blocks),
               r.k,
               static_cast<unsigned long long>(bytes_per_object(r.k)),
               r.parallel_do.median_ms,
               r.parallel_do.min_ms,
               r.parallel_do.max_ms,
               r.enumerate.median_ms,
               r.soa.median_ms,
               r.soa.min_ms,
               r.soa.max_ms,
               r.parallel_do.median_ms / r.soa.median_ms,
               r.gbps(r.parallel_do),
               r.gbps(r.soa),
               r.ok() ? "ok" : "failed");
}

bool wants(ParallelDoBenchOptions const& o, char const* case_name) {
  for (auto const& c : o.cases)
    if (c == case_name) return true;
  return false;
}

/// Every row of one objects count; false if a check failed.
bool run_objects(ParallelDoBenchOptions const& o, std::uint64_t objects, std::FILE* csv) {
  Bench bench(objects, o);
  bench.fill();
  bool ok = true;
  for (char const* case_name : {"full", "fragmented"}) {
    if (!wants(o, case_name)) continue;
    if (std::string(case_name) == "fragmented") bench.delete_random_half();
    print_table_head();
    for (int k : o.fields) {
      Row const row = bench.measure(case_name, k);
      print_row(row, csv);
      ok = ok && row.ok();
    }
  }
  return ok;
}

}  // namespace

void validate_parallel_do_bench(ParallelDoBenchOptions const& o) {
  auto fail = [](std::string const& m) { throw std::invalid_argument("parallel-do: " + m); };
  if (o.objects.empty() || o.fields.empty() || o.cases.empty())
    fail("--objects, --fields and --cases need at least one value each");
  for (std::uint64_t n : o.objects)
    if (n == 0 || n % kCapacity != 0 || n > (std::uint64_t{1} << 30))
      fail("--objects " + std::to_string(n) +
           ": expected a positive multiple of 64 (the objects per block, so that every block "
           "is full) up to 2^30");
  for (int k : o.fields)
    if (k < 1 || k > 4) fail("--fields " + std::to_string(k) + ": expected 1 .. 4");
  for (auto const& c : o.cases)
    if (c != "full" && c != "fragmented") fail("--cases " + c + ": expected full or fragmented");
  if (o.warmup < 0 || o.repeats < 1) fail("--warmup >= 0 and --repeats >= 1 expected");
}

int run_parallel_do_bench(ParallelDoBenchOptions const& o) {
  validate_parallel_do_bench(o);
  std::FILE* csv = heaplab::program::open_csv(
      o.csv,
      "objects,case,live,blocks,fields,bytes_per_object,parallel_do_median_ms,parallel_do_min_ms,"
      "parallel_do_max_ms,enumerate_median_ms,soa_median_ms,soa_min_ms,soa_max_ms,ratio,"
      "parallel_do_gbps,soa_gbps,check");
  print_header(o);
  bool ok = true;
  for (std::uint64_t n : o.objects) ok = run_objects(o, n, csv) && ok;
  if (csv) std::fclose(csv);
  if (!ok) std::printf("\nparallel-do: a result check FAILED (see the rows marked FAILED)\n");
  return ok ? 0 : 1;
}

}  // namespace heaplab::bench
