// heaplab_bench: GPU benchmarks with their baselines measured side by side in the same run.
// Every subcommand prints a table (and optionally CSV) naming the GPU; docs/results.md records
// runs.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "alloc_bench.hpp"
#include "baselines.hpp"
#include "defrag_bench.hpp"
#include "defrag_traffic.hpp"
#include "enumerate_bench.hpp"
#include "fill_bench.hpp"
#include "gallatin_bench.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "parallel_do_bench.hpp"
#include "program.hpp"
#include "program_output.hpp"
#include "rw_bench.hpp"

namespace {

struct Common {
  int warmup  = 1;
  int repeats = 5;
  std::string csv;
};

/// No usable CUDA device: nothing was measured (exit status 4, as every heaplab program).
struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void print_device() {
  auto const d = heaplab::cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", heaplab::cudart::device_line(d).c_str());
}

int run_baselines(Common const& c, std::size_t copy_mib, std::vector<int> const& ns, int threads) {
  print_device();
  std::FILE* csv =
      heaplab::program::open_csv(c.csv, "benchmark,parameter,median_ms,min_ms,max_ms,value,unit");

  auto const copy = heaplab::bench::copy_bandwidth(copy_mib << 20, c.warmup, c.repeats);
  std::printf("\ndevice-to-device copy, %zu MiB (GB/s count bytes read + written)\n", copy_mib);
  std::printf("  %-28s %9.3f ms  %8.1f GB/s\n",
              "cudaMemcpyAsync D2D",
              copy.memcpy_d2d.median_ms,
              copy.memcpy_gbps);
  std::printf("  %-28s %9.3f ms  %8.1f GB/s\n",
              "grid-stride int4 kernel",
              copy.kernel_copy.median_ms,
              copy.kernel_gbps);
  if (csv) {
    std::fprintf(csv,
                 "copy_memcpy_d2d,%zu MiB,%.4f,%.4f,%.4f,%.1f,GB/s\n",
                 copy_mib,
                 copy.memcpy_d2d.median_ms,
                 copy.memcpy_d2d.min_ms,
                 copy.memcpy_d2d.max_ms,
                 copy.memcpy_gbps);
    std::fprintf(csv,
                 "copy_kernel_int4,%zu MiB,%.4f,%.4f,%.4f,%.1f,GB/s\n",
                 copy_mib,
                 copy.kernel_copy.median_ms,
                 copy.kernel_copy.min_ms,
                 copy.kernel_copy.max_ms,
                 copy.kernel_gbps);
  }

  std::size_t reserve = 0;
  for (int n : ns)
    reserve = std::max(reserve, heaplab::bench::cuda_malloc_heap_bytes(threads, n, 64));
  heaplab::bench::reserve_cuda_malloc_heap(reserve);
  std::printf("\nlinux-scalability with CUDA device malloc: %d threads x n x 64 B\n", threads);
  std::printf("  %6s %12s %12s %10s\n", "n", "alloc ms", "free ms", "failed");
  for (int n : ns) {
    auto const r =
        heaplab::bench::cuda_malloc_linux_scalability(threads, n, 64, c.warmup, c.repeats);
    std::printf("  %6d %12.3f %12.3f %10llu\n",
                n,
                r.alloc.median_ms,
                r.free.median_ms,
                static_cast<unsigned long long>(r.failed_allocations));
    if (csv)
      std::fprintf(csv,
                   "cuda_malloc_alloc,n=%d,%.4f,%.4f,%.4f,%llu,failed\n",
                   n,
                   r.alloc.median_ms,
                   r.alloc.min_ms,
                   r.alloc.max_ms,
                   static_cast<unsigned long long>(r.failed_allocations));
  }
  if (csv) std::fclose(csv);
  return 0;
}

struct AllocOptions {
  int threads = 16384;
  std::vector<int> ns{1, 16, 64, 1024};
  int cuda_malloc_max_n = 64;  // CUDA malloc at n = 1024 takes minutes (docs/results.md)
  // CUDA malloc of 16384 x 16 objects of 1 KiB takes 53 s (H200, 2026-12-03, docs/results.md).
  std::uint32_t cuda_malloc_max_bytes = 256;
  int baseline_repeats                = 1;
  std::uint64_t wave_threads          = std::uint64_t{1} << 20;
  std::uint64_t gallatin_pool_gib     = 16;  // Gallatin builds only (gallatin_bench.hpp)
  heaplab::bench::HeapKnobs knobs;           // soa::HeapOptions of heaplab's heaps
  // The size rows (kAllocSizes) and the mixed row: o.threads x size_n objects each.
  std::vector<std::uint32_t> sizes{4, 16, 256, 1024, 4096};
  int size_n        = 16;
  bool no_size_rows = false;

  [[nodiscard]] std::uint64_t gallatin_pool_bytes() const { return gallatin_pool_gib << 30; }
};

/// The CSV file of `alloc` (none when --csv is not given): one row per measurement. `failed`
/// counts nullptr answers of the last timed run; `violations` the object check's findings
/// (object_check.hpp), empty for CUDA malloc, which is not checked.
struct AllocCsv {
  std::FILE* file = nullptr;

  void row(char const* bench,
           char const* who,
           std::string const& param,
           heaplab::bench::Sample const& s,
           unsigned long long failed,
           std::string const& violations = "") const {
    if (file)
      std::fprintf(file,
                   "%s,%s,%s,%.4f,%.4f,%.4f,%llu,%s\n",
                   bench,
                   who,
                   param.c_str(),
                   s.median_ms,
                   s.min_ms,
                   s.max_ms,
                   failed,
                   violations.c_str());
  }
  /// The two rows of one allocator on one benchmark row: `<bench>_alloc` and `<bench>_free`.
  void alloc_and_free(char const* bench,
                      char const* who,
                      std::string const& param,
                      heaplab::bench::Sample const& alloc,
                      heaplab::bench::Sample const& free,
                      unsigned long long failed,
                      std::string const& violations = "") const {
    row((std::string(bench) + "_alloc").c_str(), who, param, alloc, failed, violations);
    row((std::string(bench) + "_free").c_str(), who, param, free, failed, violations);
  }
};

/// What `alloc` has found so far: the object checks' violations (exit status 1 if any).
struct AllocTally {
  std::uint64_t violations = 0;

  /// "heaplab verified N objects" and the like; counts the violations.
  std::string add(char const* who, heaplab::bench::ObjectCheck const& check) {
    violations += check.violations();
    return std::string(who) + " " + heaplab::bench::describe(check);
  }
};

/// Bytes of CUDA's device malloc heap that every baseline `alloc` runs needs.
std::size_t cuda_malloc_reserve_bytes(AllocOptions const& o) {
  std::size_t reserve = 0;
  for (int n : o.ns)
    if (n <= o.cuda_malloc_max_n)
      reserve = std::max(reserve, heaplab::bench::cuda_malloc_heap_bytes(o.threads, n, 64));
  if (!o.no_size_rows && o.size_n <= o.cuda_malloc_max_n) {
    std::uint32_t largest = 0;
    for (std::uint32_t b : o.sizes)
      if (b <= o.cuda_malloc_max_bytes) largest = std::max(largest, b);
    if (largest > 0)
      reserve =
          std::max(reserve, heaplab::bench::cuda_malloc_heap_bytes(o.threads, o.size_n, largest));
  }
  if (o.cuda_malloc_max_n >= 1)  // the 1-object wave's baseline below
    reserve = std::max(
        reserve, heaplab::bench::cuda_malloc_heap_bytes(static_cast<int>(o.wave_threads), 1, 16));
  return reserve;
}

/// With Gallatin: its pool must fit next to CUDA's malloc heap, the largest heaplab run and both
/// runs' pointer slots and checks (require_gallatin_fits); checked before anything is measured.
void require_gallatin_fits(AllocOptions const& o) {
  namespace hb             = heaplab::bench;
  std::uint64_t const pool = o.gallatin_pool_bytes();
  std::uint64_t largest =
      hb::heap_allocation_wave_bytes(o.wave_threads) + hb::gallatin_run_bytes(o.wave_threads, pool);
  for (int n : o.ns) {
    std::uint64_t const objects = static_cast<std::uint64_t>(o.threads) * n;
    largest                     = std::max(
        largest,
        hb::heap_linux_scalability_bytes(o.threads, n) + hb::gallatin_run_bytes(objects, pool));
  }
  if (!o.no_size_rows) {
    std::uint64_t const objects = static_cast<std::uint64_t>(o.threads) * o.size_n;
    largest                     = std::max(
        largest, hb::heap_mixed_bytes(o.threads, o.size_n) + hb::gallatin_run_bytes(objects, pool));
    for (std::uint32_t b : o.sizes)
      largest = std::max(largest,
                         hb::heap_object_size_bytes(b, o.threads, o.size_n) +
                             hb::gallatin_run_bytes(objects, pool));
  }
  hb::require_gallatin_fits(pool, largest + cuda_malloc_reserve_bytes(o));
}

/// One row of an allocation table: heaplab's run (made by the caller), then CUDA malloc unless
/// its n is above --cuda-malloc-max-n (bytes 0: the mixed row, which CUDA malloc does not run),
/// then Gallatin where built; CSV rows `<bench>_alloc` and `<bench>_free` with `param`.
struct AllocRow {
  char const* bench = "";   // CSV benchmark prefix: linux_scalability, object_size, mixed
  std::string label;        // first column
  std::string param;        // CSV parameter
  int n               = 0;  // objects per thread
  std::uint32_t bytes = 0;  // object size for CUDA malloc (0: not run)
  std::function<heaplab::bench::GallatinAllocResult()> gallatin;
};

/// The CUDA malloc cells of a row (56 characters), or why it was skipped (padded to that width
/// when more cells follow).
void cuda_malloc_cells(AllocOptions const& o,
                       AllocRow const& row,
                       heaplab::bench::HeapAllocResult const& h,
                       AllocCsv const& csv) {
  if (row.n > o.cuda_malloc_max_n || row.bytes == 0 || row.bytes > o.cuda_malloc_max_bytes) {
    std::string const why =
        row.bytes == 0                ? std::string("CUDA malloc not run (one size per kernel)")
        : row.n > o.cuda_malloc_max_n ? "CUDA malloc skipped (n > --cuda-malloc-max-n " +
                                            std::to_string(o.cuda_malloc_max_n) + ")"
                                      : "CUDA malloc skipped (> --cuda-malloc-max-bytes " +
                                            std::to_string(o.cuda_malloc_max_bytes) + ")";
    std::printf(heaplab::bench::gallatin_built() ? " %-55s" : " %s", why.c_str());
    return;
  }
  auto const m = heaplab::bench::cuda_malloc_linux_scalability(
      o.threads, row.n, row.bytes, row.n <= 64 ? 1 : 0, o.baseline_repeats);
  csv.alloc_and_free(row.bench, "cuda_malloc", row.param, m.alloc, m.free, m.failed_allocations);
  std::printf(" %8.3f ms %8.3f ms %7llu | %8.1fx %10.1fx",
              m.alloc.median_ms,
              m.free.median_ms,
              static_cast<unsigned long long>(m.failed_allocations),
              m.alloc.median_ms / h.alloc.median_ms,
              (m.alloc.median_ms + m.free.median_ms) / (h.alloc.median_ms + h.free.median_ms));
}

/// The Gallatin cells of a row: its times, failures and the ratios Gallatin / heaplab (> 1:
/// heaplab is faster); returns the check's description.
std::string gallatin_cells(AllocRow const& row,
                           heaplab::bench::HeapAllocResult const& h,
                           AllocCsv const& csv,
                           AllocTally& tally) {
  auto const g          = row.gallatin();
  std::string const bad = std::to_string(g.check.violations());
  csv.alloc_and_free(row.bench, "gallatin", row.param, g.alloc, g.free, g.check.nulls, bad);
  std::printf(" | %8.3f ms %8.3f ms %7llu | %8.2fx %8.2fx",
              g.alloc.median_ms,
              g.free.median_ms,
              static_cast<unsigned long long>(g.check.nulls),
              g.alloc.median_ms / h.alloc.median_ms,
              g.free.median_ms / h.free.median_ms);
  return tally.add("Gallatin", g.check);
}

/// Prints `row` with heaplab's result `h` and runs its baselines; then the object checks' line.
void alloc_row(AllocOptions const& o,
               AllocRow const& row,
               heaplab::bench::HeapAllocResult const& h,
               AllocCsv const& csv,
               AllocTally& tally) {
  std::string const bad = std::to_string(h.check.violations());
  std::string const who = o.knobs.label();
  csv.alloc_and_free(row.bench, who.c_str(), row.param, h.alloc, h.free, h.failed, bad);
  std::printf("  %6s | %8.3f ms %8.3f ms %7llu |",
              row.label.c_str(),
              h.alloc.median_ms,
              h.free.median_ms,
              static_cast<unsigned long long>(h.failed));
  cuda_malloc_cells(o, row, h, csv);
  std::string checks = tally.add("heaplab", h.check);
  char rounds[96];
  std::snprintf(rounds,
                sizeof rounds,
                " (%.1f%% of its free rounds in one block)",
                100.0 * h.one_block_rounds);
  checks += rounds;
  if (heaplab::bench::gallatin_built()) checks += "; " + gallatin_cells(row, h, csv, tally);
  std::printf("\n  %6s   check: %s\n", "", checks.c_str());
}

/// The line saying which Gallatin runs beside heaplab, or that none was built.
void print_gallatin_line(Common const& c, AllocOptions const& o) {
  if (!heaplab::bench::gallatin_built()) {
    std::printf("  Gallatin: not built (configure with -DHEAPLAB_GALLATIN_DIR=...)\n");
    return;
  }
  std::printf(
      "  Gallatin: %s, pool %llu GiB; median of %d runs after %d warm-up, each from a fresh "
      "init (untimed); g/h = Gallatin ms / heaplab ms (> 1: heaplab faster)\n",
      heaplab::bench::gallatin_description().c_str(),
      static_cast<unsigned long long>(o.gallatin_pool_gib),
      c.repeats,
      c.warmup);
}

/// The header line of an allocation table whose first column is `first`.
void print_alloc_header(char const* first) {
  std::printf("  %6s | %11s %11s %7s | %11s %11s %7s | %9s %11s",
              first,
              "heap alloc",
              "heap free",
              "failed",
              "malloc",
              "free",
              "failed",
              "x alloc",
              "x alloc+free");
  if (heaplab::bench::gallatin_built())
    std::printf(
        " | %11s %11s %7s | %9s %9s", "gal alloc", "gal free", "failed", "g/h alloc", "g/h free");
  std::printf("\n");
}

/// linux-scalability: o.threads threads x n objects of 64 B, then free all, for every n.
void linux_scalability_table(Common const& c,
                             AllocOptions const& o,
                             AllocCsv const& csv,
                             AllocTally& tally) {
  std::printf("\nlinux-scalability: %d threads x n objects of 64 B, then free all\n", o.threads);
  std::printf(
      "  heaplab: median of %d runs after %d warm-up, %s; "
      "CUDA malloc: median of %d run(s), 1 warm-up for n <= 64\n",
      c.repeats,
      c.warmup,
      o.knobs.describe().c_str(),
      o.baseline_repeats);
  print_gallatin_line(c, o);
  print_alloc_header("n");
  for (int n : o.ns) {
    AllocRow row;
    row.bench    = "linux_scalability";
    row.label    = std::to_string(n);
    row.param    = "n=" + std::to_string(n);
    row.n        = n;
    row.bytes    = 64;
    row.gallatin = [&c, &o, n] {
      return heaplab::bench::gallatin_linux_scalability(
          o.threads, n, o.gallatin_pool_bytes(), c.warmup, c.repeats);
    };
    alloc_row(o,
              row,
              heaplab::bench::heap_linux_scalability(o.threads, n, c.warmup, c.repeats, o.knobs),
              csv,
              tally);
  }
}

/// The size rows: o.threads threads x o.size_n objects of each of o.sizes, then the mixed row
/// (kMixedSizes in one heap, every warp asking for all three).
void size_table(Common const& c, AllocOptions const& o, AllocCsv const& csv, AllocTally& tally) {
  namespace hb = heaplab::bench;
  std::printf(
      "\nobject sizes: %d threads x %d objects of one size, then free all; mixed: sizes "
      "%u, %u, %u B in one heap, object i of thread t of size (t + i) %% 3\n",
      o.threads,
      o.size_n,
      hb::kMixedSizes[0],
      hb::kMixedSizes[1],
      hb::kMixedSizes[2]);
  print_gallatin_line(c, o);
  print_alloc_header("bytes");
  std::string const n = "n=" + std::to_string(o.size_n);
  for (std::uint32_t bytes : o.sizes) {
    AllocRow row;
    row.bench    = "object_size";
    row.label    = std::to_string(bytes);
    row.param    = "bytes=" + std::to_string(bytes) + " " + n;
    row.n        = o.size_n;
    row.bytes    = bytes;
    row.gallatin = [&c, &o, bytes] {
      return hb::gallatin_object_size(
          bytes, o.threads, o.size_n, o.gallatin_pool_bytes(), c.warmup, c.repeats);
    };
    alloc_row(o,
              row,
              hb::heap_object_size(bytes, o.threads, o.size_n, c.warmup, c.repeats, o.knobs),
              csv,
              tally);
  }
  AllocRow row;
  row.bench = "mixed";
  row.label = "mixed";
  row.param = "bytes=" + std::to_string(hb::kMixedSizes[0]) + "/" +
              std::to_string(hb::kMixedSizes[1]) + "/" + std::to_string(hb::kMixedSizes[2]) + " " +
              n;
  row.n        = o.size_n;
  row.bytes    = 0;
  row.gallatin = [&c, &o] {
    return hb::gallatin_mixed(o.threads, o.size_n, o.gallatin_pool_bytes(), c.warmup, c.repeats);
  };
  alloc_row(o, row, hb::heap_mixed(o.threads, o.size_n, c.warmup, c.repeats, o.knobs), csv, tally);
}

/// One wave: o.wave_threads threads x 1 object of 16 B, then free; heaplab, CUDA malloc and
/// Gallatin where built.
void one_wave(Common const& c, AllocOptions const& o, AllocCsv const& csv, AllocTally& tally) {
  namespace hb = heaplab::bench;
  std::printf("\none wave: %llu threads x 1 object of 16 B, then free\n",
              static_cast<unsigned long long>(o.wave_threads));
  auto const w     = hb::heap_allocation_wave(o.wave_threads, c.warmup, c.repeats, o.knobs);
  auto const per_s = [&](float ms) { return static_cast<double>(o.wave_threads) / (ms * 1e-3); };
  std::string const param = "threads=" + std::to_string(o.wave_threads);
  // One line and two CSV rows per allocator: alloc and free wave medians.
  auto const report = [&](char const* label,
                          char const* name,
                          auto const& alloc,
                          auto const& free,
                          unsigned long long failed,
                          std::string const& violations) {
    std::printf(
        "  %-12s alloc %8.3f ms (%8.1f M allocations/s)  free %8.3f ms (%8.1f M frees/s)"
        "  failed %llu\n",
        label,
        alloc.median_ms,
        per_s(alloc.median_ms) / 1e6,
        free.median_ms,
        per_s(free.median_ms) / 1e6,
        failed);
    csv.row("wave_alloc", name, param, alloc, failed, violations);
    csv.row("wave_free", name, param, free, failed, violations);
  };
  report("heaplab",
         o.knobs.label().c_str(),
         w.alloc,
         w.free,
         w.failed,
         std::to_string(w.check.violations()));
  std::string checks = tally.add("heaplab", w.check);
  if (o.cuda_malloc_max_n < 1) {
    std::printf("  CUDA malloc skipped (--cuda-malloc-max-n < 1)\n");
  } else {
    auto const m = hb::cuda_malloc_linux_scalability(
        static_cast<int>(o.wave_threads), 1, 16, 1, o.baseline_repeats);
    report("CUDA malloc", "cuda_malloc", m.alloc, m.free, m.failed_allocations, "");
  }
  if (hb::gallatin_built()) {
    auto const g =
        hb::gallatin_allocation_wave(o.wave_threads, o.gallatin_pool_bytes(), c.warmup, c.repeats);
    report("Gallatin",
           "gallatin",
           g.alloc,
           g.free,
           g.check.nulls,
           std::to_string(g.check.violations()));
    std::printf("  Gallatin / heaplab: alloc %.2fx, free %.2fx (> 1: heaplab faster)\n",
                g.alloc.median_ms / w.alloc.median_ms,
                g.free.median_ms / w.free.median_ms);
    checks += "; " + tally.add("Gallatin", g.check);
  }
  std::printf("  check: %s\n", checks.c_str());
}

/// heaplab's allocator vs CUDA's device malloc (and Gallatin where built): linux-scalability and
/// one allocation wave. Exit status 1 when an object check found a violation.
int run_alloc(Common const& c, AllocOptions const& o) {
  print_device();
  if (heaplab::bench::gallatin_built()) require_gallatin_fits(o);
  AllocCsv csv;
  csv.file = heaplab::program::open_csv(
      c.csv, "benchmark,allocator,parameter,median_ms,min_ms,max_ms,failed,violations");
  heaplab::bench::reserve_cuda_malloc_heap(cuda_malloc_reserve_bytes(o));
  AllocTally tally;
  linux_scalability_table(c, o, csv, tally);
  if (!o.no_size_rows) size_table(c, o, csv, tally);
  one_wave(c, o, csv, tally);
  if (csv.file) std::fclose(csv.file);
  if (tally.violations == 0) return 0;
  std::fprintf(
      stderr,
      "heaplab_bench alloc: the object check found %llu violations (see the check lines)\n",
      static_cast<unsigned long long>(tally.violations));
  return 1;
}

/// Cold-start fill (issue 13): one launch, every thread one object, on an empty heap; with claim
/// tickets off (--claim-wait-rounds 0, DynaSOAr Alg. 1) and on, side by side.
int run_fill(heaplab::bench::FillBenchOptions const& o) {
  print_device();
  std::FILE* csv = heaplab::program::open_csv(o.csv,
                                              "workload,blocks,claim_wait_rounds,fraction,requests,"
                                              "worst_failed,worst_used_fraction,median_ms");
  std::printf(
      "\ncold-start fill: ONE launch, every thread 1 object, empty heap, %d runs each\n"
      "(fraction = blocks the packed population needs / M; failed = nullptr answers, worst run;\n"
      " wait = claim_wait_rounds, 0 = claim tickets off)\n",
      o.runs);
  std::printf("  %-9s %8s %5s %8s %10s %12s %12s %10s\n",
              "workload",
              "M",
              "wait",
              "fraction",
              "requests",
              "worst failed",
              "worst placed",
              "median ms");
  auto const rows = heaplab::bench::cold_start_fill(o);
  for (auto const& r : rows) {
    std::printf("  %-9s %8u %5u %8.3f %10llu %12llu %11.2f%% %10.3f\n",
                r.workload,
                r.blocks,
                r.claim_wait_rounds,
                r.fraction,
                static_cast<unsigned long long>(r.requests),
                static_cast<unsigned long long>(r.worst_failed),
                100.0 * r.worst_used_fraction,
                r.median_ms);
    if (csv)
      std::fprintf(csv,
                   "%s,%u,%u,%.4f,%llu,%llu,%.5f,%.4f\n",
                   r.workload,
                   r.blocks,
                   r.claim_wait_rounds,
                   r.fraction,
                   static_cast<unsigned long long>(r.requests),
                   static_cast<unsigned long long>(r.worst_failed),
                   r.worst_used_fraction,
                   r.median_ms);
  }
  // Per (workload, M, wait): the largest requested fraction that no run failed.
  std::printf("\nlargest fraction filled by one launch without a failure:\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool first_of_cell = true;
    for (std::size_t j = 0; j < i; ++j)
      if (std::string(rows[j].workload) == rows[i].workload && rows[j].blocks == rows[i].blocks &&
          rows[j].claim_wait_rounds == rows[i].claim_wait_rounds)
        first_of_cell = false;
    if (!first_of_cell) continue;
    double best = 0;
    for (auto const& r : rows)
      if (std::string(r.workload) == rows[i].workload && r.blocks == rows[i].blocks &&
          r.claim_wait_rounds == rows[i].claim_wait_rounds && r.worst_failed == 0)
        best = std::max(best, r.fraction);
    std::printf("  %-9s M = %-8u wait %-3u %6.1f%%\n",
                rows[i].workload,
                rows[i].blocks,
                rows[i].claim_wait_rounds,
                100.0 * best);
  }
  if (csv) std::fclose(csv);
  return 0;
}

struct BaselineOptions {
  std::size_t copy_mib = 2048;
  std::vector<int> ns{1, 16, 64};
  int threads = 16384;
};

void add_common_options(CLI::App* cmd, Common& common);
void add_knob_options(CLI::App* cmd, heaplab::bench::HeapKnobs& k);

/// `utilization`: DynaSOAr Fig. 14A (alloc_bench.hpp heap_fig14a).
struct UtilizationOptions {
  int threads = 16384;
  std::vector<int> ns{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  double heap_gib       = 1.0;   // the paper's 1 GiB
  int full_n            = 1024;  // the n at which threads x n x 64 B = the heap (100%)
  int max_per_thread    = 2048;  // cap of the allocate-until-nullptr run
  int cuda_malloc_max_n = 64;    // CUDA malloc rows only up to this n (0: none)
  heaplab::bench::HeapKnobs knobs;
};

/// The table and CSV of `utilization`: one row per (allocator, n); counts the violations.
struct UtilizationTable {
  UtilizationOptions const& o;
  std::uint64_t heap_bytes = 0;
  std::FILE* csv           = nullptr;
  std::uint64_t violations = 0;

  void header() const {
    if (csv)
      std::fprintf(csv,
                   "allocator,n,objects,alloc_ms,free_ms,total_ms,time_per_n_ms,failed,"
                   "utilization,violations\n");
    std::printf("  %-11s %6s %12s %10s %10s %12s %10s %8s  %s\n",
                "allocator",
                "n",
                "objects",
                "alloc ms",
                "free ms",
                "time/n ms",
                "failed",
                "util %",
                "check");
  }

  void row(char const* name,
           int n,
           double alloc_ms,
           double free_ms,
           unsigned long long failed,
           std::string const& check,
           std::uint64_t bad) {
    violations += bad;
    std::uint64_t const objects = static_cast<std::uint64_t>(o.threads) * n - failed;
    double const util           = double(objects * 64u) / double(heap_bytes);
    double const per_n          = (alloc_ms + free_ms) / n;
    std::printf("  %-11s %6d %12llu %10.3f %10.3f %12.5f %10llu %8.2f  %s\n",
                name,
                n,
                static_cast<unsigned long long>(objects),
                alloc_ms,
                free_ms,
                per_n,
                failed,
                100.0 * util,
                check.c_str());
    if (csv)
      std::fprintf(csv,
                   "%s,%d,%llu,%.4f,%.4f,%.4f,%.6f,%llu,%.6f,%llu\n",
                   name,
                   n,
                   static_cast<unsigned long long>(objects),
                   alloc_ms,
                   free_ms,
                   alloc_ms + free_ms,
                   per_n,
                   failed,
                   util,
                   static_cast<unsigned long long>(bad));
  }

  /// A heaplab row: object-check violations count, and a nullptr while the requested objects
  /// are at most 90% of the heap's slots (below that only a bug answers nullptr; near
  /// exhaustion, concurrently opened blocks left partly filled make it legal).
  void heap_row(heaplab::bench::Fig14aRow const& r, std::uint64_t heap_slots) {
    std::uint64_t const requested = static_cast<std::uint64_t>(o.threads) * r.n;
    bool const early_null         = r.failed > 0 && requested * 10 <= heap_slots * 9;
    std::uint64_t const bad =
        r.check.foreign + r.check.mismatches + r.check.overlaps + (early_null ? 1u : 0u);
    std::string check = bad == 0 ? "ok" : heaplab::bench::describe(r.check);
    if (early_null) check += " (nullptr below 90% of the heap's slots)";
    row(o.knobs.label().c_str(), r.n, r.alloc.median_ms, r.free.median_ms, r.failed, check, bad);
  }

  /// The maximum-utilization line and CSV row (allocator "<label>-max", n = the cap).
  void max_row(heaplab::bench::Fig14aMax const& max, std::uint64_t heap_slots) {
    std::uint64_t const bad = max.check.violations() + (max.empty_after_free ? 0u : 1u);
    violations += bad;
    double const util     = double(max.objects * 64u) / double(heap_bytes);
    std::string const who = o.knobs.label();
    std::printf(
        "\nmaximum utilization (%s): every thread allocates until its first nullptr (at most "
        "%d)\n  %llu objects = %.2f%% of the heap's bytes (%.2f%% of its %llu slots); %llu "
        "threads hit the cap; %.3f ms; check: %s%s (paper: DynaSOAr 96.9%%)\n",
        who.c_str(),
        o.max_per_thread,
        static_cast<unsigned long long>(max.objects),
        100.0 * util,
        100.0 * double(max.objects) / double(heap_slots),
        static_cast<unsigned long long>(heap_slots),
        static_cast<unsigned long long>(max.threads_capped),
        max.alloc_ms,
        heaplab::bench::describe(max.check).c_str(),
        max.empty_after_free ? "" : "; OBJECTS LEFT AFTER FREEING ALL");
    if (max.threads_capped > 0)
      std::printf(
          "  (threads stopped at the cap before a nullptr: a lower bound; raise "
          "--max-per-thread)\n");
    if (csv)
      std::fprintf(csv,
                   "%s-max,%d,%llu,%.4f,0,%.4f,0,0,%.6f,%llu\n",
                   who.c_str(),
                   o.max_per_thread,
                   static_cast<unsigned long long>(max.objects),
                   max.alloc_ms,
                   max.alloc_ms,
                   util,
                   static_cast<unsigned long long>(bad));
  }
};

/// The heading of `utilization`: the paper's setup and heaplab's heap in it.
void print_utilization_heading(Common const& c,
                               UtilizationOptions const& o,
                               std::uint64_t heap_bytes,
                               heaplab::bench::Fig14aHeap const& shape) {
  std::uint64_t const full_bytes =
      static_cast<std::uint64_t>(o.threads) * static_cast<std::uint64_t>(o.full_n) * 64u;
  std::printf(
      "\nDynaSOAr Fig. 14A: %d threads x n objects of 64 B, then free all; heap %.3f GiB "
      "(%llu bytes; threads x %d x 64 B = %.1f%% of it)\n",
      o.threads,
      o.heap_gib,
      static_cast<unsigned long long>(heap_bytes),
      o.full_n,
      100.0 * double(full_bytes) / double(heap_bytes));
  std::printf(
      "  heaplab heap: %u blocks x %u B (%u objects each) + %llu B metadata = %llu B; "
      "at most %llu objects (%.2f%% of the heap's bytes)\n",
      shape.blocks,
      shape.block_bytes,
      shape.capacity,
      static_cast<unsigned long long>(shape.metadata_bytes),
      static_cast<unsigned long long>(shape.metadata_bytes +
                                      std::uint64_t{shape.blocks} * shape.block_bytes),
      static_cast<unsigned long long>(shape.slots()),
      100.0 * double(shape.slots() * 64u) / double(heap_bytes));
  std::printf("  heaplab: median of %d runs after %d warm-up, %s\n",
              c.repeats,
              c.warmup,
              o.knobs.describe().c_str());
  std::printf("  utilization = objects x 64 B / heap bytes; time/n = (alloc + free) / n\n");
}

/// CUDA malloc rows of `utilization`: its device heap gets the same budget (CUDA fixes it at the
/// first malloc kernel); n up to --cuda-malloc-max-n where 2 x the objects + 64 MiB fit it.
void cuda_malloc_utilization_rows(Common const& c, UtilizationTable& table) {
  namespace hb                = heaplab::bench;
  UtilizationOptions const& o = table.o;
  if (o.cuda_malloc_max_n < 1) return;
  hb::reserve_cuda_malloc_heap(table.heap_bytes);
  for (int n : o.ns) {
    if (n > o.cuda_malloc_max_n || hb::cuda_malloc_heap_bytes(o.threads, n, 64) > table.heap_bytes)
      continue;
    auto const m = hb::cuda_malloc_linux_scalability(o.threads, n, 64, c.warmup, c.repeats);
    // failed_allocations sums over all (warm-up and timed) runs: report it per run.
    unsigned long long const failed =
        m.failed_allocations / static_cast<unsigned long long>(c.warmup + c.repeats);
    table.row("cuda_malloc",
              n,
              m.alloc.median_ms,
              m.free.median_ms,
              failed,
              "not checked (time only)",
              0);
  }
  std::printf(
      "  cuda_malloc: rows up to n = %d (--cuda-malloc-max-n; beyond: minutes per run) and only "
      "where 2 x the objects + 64 MiB fit its heap; not checked\n",
      o.cuda_malloc_max_n);
}

/// Fig. 14A: time / n over n and the maximum utilization. Exit 1 on a violation (UtilizationTable)
/// or objects left after freeing.
int run_utilization(Common const& c, UtilizationOptions const& o) {
  namespace hb = heaplab::bench;
  print_device();
  auto const heap_bytes      = static_cast<std::uint64_t>(o.heap_gib * double(1ull << 30));
  hb::Fig14aHeap const shape = hb::fig14a_heap(heap_bytes, o.knobs.block_hints);
  std::FILE* csv             = heaplab::program::open_csv(c.csv, nullptr);  // table.header()
  print_utilization_heading(c, o, heap_bytes, shape);
  UtilizationTable table{o, heap_bytes, csv};
  table.header();
  hb::Fig14aResult const res =
      hb::heap_fig14a(o.threads,
                      o.ns,
                      heap_bytes,
                      o.max_per_thread,
                      c.warmup,
                      c.repeats,
                      o.knobs,
                      [&](hb::Fig14aRow const& r) { table.heap_row(r, shape.slots()); });
  cuda_malloc_utilization_rows(c, table);
  table.max_row(res.max, shape.slots());
  if (csv) std::fclose(csv);
  if (table.violations != 0) {
    std::printf("FAILED: %llu violation(s)\n", static_cast<unsigned long long>(table.violations));
    return 1;
  }
  return 0;
}

void add_utilization_command(CLI::App& app, Common& common, UtilizationOptions& u) {
  auto* cmd = app.add_subcommand(
      "utilization",
      "DynaSOAr Fig. 14A: linux-scalability (threads x n objects of 64 B, then free all) in a "
      "heap of 1 GiB that threads x 1024 objects fill 100%: time / n over n, and the maximum "
      "utilization (allocate until the first nullptr; paper: DynaSOAr 96.9%). Every heaplab "
      "object written and read back (exit 1 on a violation).\n"
      "  example: heaplab_bench utilization --csv fig14a.csv && tools/plot-fig14a fig14a.png "
      "fig14a.csv");
  add_common_options(cmd, common);
  cmd->add_option("--threads", u.threads, "threads (paper: 16384)")->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--n", u.ns, "objects per thread (list)")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--heap-gib", u.heap_gib, "heap size in GiB, metadata included (paper: 1)")
      ->check(CLI::Range(1.0 / 1024, 64.0));
  cmd->add_option("--full-n", u.full_n, "the n that fills the heap 100% (for the header line)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--max-per-thread",
                  u.max_per_thread,
                  "cap of the allocate-until-nullptr run (objects per thread)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--cuda-malloc-max-n",
                  u.cuda_malloc_max_n,
                  "CUDA malloc rows up to this n (default 64; 0: none)")
      ->check(CLI::Range(0, 1 << 16));
  add_knob_options(cmd, u.knobs);
  cmd->callback([&common, &u] { std::exit(run_utilization(common, u)); });
}

/// Every subcommand's options. They outlive the parse, which fills them and runs the chosen
/// subcommand's callback; `baselines` and `alloc` share `common`.
struct BenchOptions {
  Common common;
  BaselineOptions baselines;
  AllocOptions alloc;
  heaplab::bench::DefragBenchOptions defrag;
  heaplab::bench::DefragTrafficOptions defrag_traffic;
  heaplab::bench::FragSweepOptions sweep;
  heaplab::bench::FillBenchOptions fill;
  heaplab::bench::EnumerateBenchOptions enumerate;
  heaplab::bench::RwFig7Options rw_fig7;
  heaplab::bench::RwFig4Options rw_fig4;
  heaplab::bench::RwFig12Options rw_fig12;
  heaplab::bench::RwFig8Options rw_fig8;
  heaplab::bench::RwFig9Options rw_fig9;
  heaplab::bench::RwFig10Options rw_fig10;
  heaplab::bench::RwFig11Options rw_fig11;
  heaplab::bench::ParallelDoBenchOptions parallel_do;
  UtilizationOptions utilization;
};

void add_common_options(CLI::App* cmd, Common& common) {
  cmd->add_option("--warmup", common.warmup, "untimed warm-up runs")->check(CLI::Range(0, 100));
  cmd->add_option("--repeats", common.repeats, "timed runs (the median is reported)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--csv", common.csv, "also write the numbers as CSV to this file");
}

void add_baselines_command(CLI::App& app, BenchOptions& o) {
  auto* base = app.add_subcommand(
      "baselines", "Device-to-device copy bandwidth and CUDA device malloc (linux-scalability).");
  add_common_options(base, o.common);
  BaselineOptions& b = o.baselines;
  base->add_option("--copy-mib", b.copy_mib, "copy buffer size in MiB")
      ->check(CLI::Range(1, 65536));
  base->add_option("--n", b.ns, "allocations per thread (list)");
  base->add_option("--threads", b.threads, "threads")->check(CLI::Range(1, 1 << 24));
  base->callback([&o] {
    std::exit(run_baselines(o.common, o.baselines.copy_mib, o.baselines.ns, o.baselines.threads));
  });
}

/// The heaplab heap's options of `alloc` and `utilization` (HeapKnobs; docs/allocator.md
/// "Ablation switches").
void add_knob_options(CLI::App* cmd, heaplab::bench::HeapKnobs& k) {
  cmd->add_option("--claim-wait-rounds",
                  k.claim_wait_rounds,
                  "heaplab's HeapOptions::claim_wait_rounds (0: claim tickets off, DynaSOAr "
                  "Alg. 1 as published)")
      ->check(CLI::Range(0u, 1000u));
  cmd->add_flag("!--no-coalesce-frees",
                k.coalesce_frees,
                "heaplab frees one object per fetch_and (HeapOptions::coalesce_frees = false)");
  cmd->add_flag("!--no-coalesce-requests",
                k.coalesce_requests,
                "every lane allocates on its own, no warp leader (HeapOptions::coalesce_requests "
                "= false; DynaSOAr-NoCoal of Fig. 12C)");
  cmd->add_flag("!--no-rotation",
                k.rotate_bitmaps,
                "every bitmap search starts at bit 0 (HeapOptions::rotate_bitmaps = false; "
                "DynaSOAr-NoShift of Fig. 12C)");
  cmd->add_option("--active-lookups",
                  k.active_lookups,
                  "r: active-block lookups before a new block is opened (HeapOptions::"
                  "active_lookups; DynaSOAr Fig. 13, default 5)")
      ->check(CLI::Range(1u, 64u));
  cmd->add_flag(
      "!--no-block-hints",
      k.block_hints,
      "no block hints: every reservation round starts with DynaSOAr's lookups of active[T] "
      "(HeapOptions::block_hints = false; on by default: a warp's first round tries the block its "
      "warp slot last left not full, issue 30)");
}

void add_alloc_command(CLI::App& app, BenchOptions& o) {
  auto* alloc = app.add_subcommand(
      "alloc",
      "heaplab's GPU object allocator vs CUDA device malloc (and Gallatin, where built with "
      "-DHEAPLAB_GALLATIN_DIR): linux-scalability, one row per object size (--sizes), the mixed "
      "row (three sizes in one launch) and one wave; every heaplab and Gallatin "
      "object written and read back (exit 1 on a violation).");
  add_common_options(alloc, o.common);
  AllocOptions& alloc_options = o.alloc;
  alloc->add_option("--threads", alloc_options.threads, "linux-scalability threads")
      ->check(CLI::Range(1, 1 << 24));
  alloc->add_option("--n", alloc_options.ns, "linux-scalability objects per thread (list)")
      ->check(CLI::Range(1, 1 << 16));
  alloc->add_option("--cuda-malloc-max-n",
                    alloc_options.cuda_malloc_max_n,
                    "run the CUDA malloc baseline only up to this n (default 64; n=1024 takes "
                    "minutes); 0 skips it everywhere");
  alloc
      ->add_option("--cuda-malloc-max-bytes",
                   alloc_options.cuda_malloc_max_bytes,
                   "run the CUDA malloc baseline of the size rows only up to this object size "
                   "(default 256; 1024 B takes about a minute)")
      ->check(CLI::Range(1u, 4096u));
  alloc
      ->add_option("--baseline-repeats",
                   alloc_options.baseline_repeats,
                   "timed CUDA malloc runs per n (median)")
      ->check(CLI::Range(1, 100));
  alloc
      ->add_option(
          "--wave-threads", alloc_options.wave_threads, "threads of the one-wave benchmark")
      ->check(CLI::Range(1, 1 << 28));
  alloc
      ->add_option("--sizes",
                   alloc_options.sizes,
                   "object sizes of the size rows, bytes (list of 4 16 64 256 1024 4096)")
      ->check(CLI::IsMember({4u, 16u, 64u, 256u, 1024u, 4096u}));
  alloc->add_option("--size-n", alloc_options.size_n, "objects per thread of the size rows")
      ->check(CLI::Range(1, 1024));
  alloc->add_flag(
      "--no-size-rows", alloc_options.no_size_rows, "skip the size rows and the mixed row");
  add_knob_options(alloc, alloc_options.knobs);
  alloc
      ->add_option("--gallatin-pool-gib",
                   alloc_options.gallatin_pool_gib,
                   "Gallatin's pool in GiB (default 16; must fit in the free device memory next "
                   "to heaplab's heap). Gallatin builds only (-DHEAPLAB_GALLATIN_DIR)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1024}));
  alloc->callback([&o] { std::exit(run_alloc(o.common, o.alloc)); });
}

void add_fill_command(CLI::App& app, heaplab::bench::FillBenchOptions& f) {
  auto* fill = app.add_subcommand(
      "fill",
      "Cold-start fill: the largest fraction of an empty heap ONE launch can fill, every thread "
      "allocating one object (one type; three mixed types).\n"
      "  example: heaplab_bench fill --blocks 256 16384 --fractions 0.9 0.95 1.0 --runs 5");
  fill->add_option("--blocks", f.blocks, "heap sizes M (list)")->check(CLI::Range(1u, 1u << 26));
  fill->add_option("--fractions", f.fractions, "population / heap, packed (list)")
      ->check(CLI::Range(0.0, 1.0));
  fill->add_option("--claim-wait-rounds",
                   f.claim_wait_rounds,
                   "HeapOptions::claim_wait_rounds to compare (list; 0 = claim tickets off)")
      ->check(CLI::Range(0u, 1000u));
  fill->add_option("--runs", f.runs, "launches per cell (fresh heap each)")
      ->check(CLI::Range(1, 1000));
  fill->add_option("--csv", f.csv, "also write the rows as CSV to this file");
  fill->callback([&f] { std::exit(run_fill(f)); });
}

/// The options of Table 1's workload (defrag_bench_types.hpp), shared by `defrag` and
/// `defrag-traffic`.
void add_table1_options(CLI::App* cmd,
                        double& scale,
                        std::uint32_t& n,
                        std::uint32_t& k1,
                        double& fraction,
                        std::vector<std::string>& variants,
                        std::uint64_t& seed,
                        std::string& order) {
  cmd->add_option("--scale", scale, "objects per class = scale x 32,768,000")
      ->check(CLI::Range(1e-6, 4.0));
  cmd->add_option("--n", n, "defragmentation factor")->check(CLI::Range(1, 63));
  cmd->add_option("--k1", k1, "stop when at most k1 candidates remain");
  cmd->add_option("--fraction", fraction, "fraction of class A deleted")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--variant",
                  variants,
                  "pointer rewriting: forwarding, recompute-global, recompute-shared (list)");
  cmd->add_option("--seed", seed, "which objects are deleted and linked");
  cmd->add_option("--order",
                  order,
                  "the candidates' order in every pass: block-id (CompactGpu sec. 3.2; default) "
                  "or fill (emptiest first: the emptiest candidates are the sources)")
      ->check(CLI::IsMember({"block-id", "fill"}));
}

void add_defrag_command(CLI::App& app, heaplab::bench::DefragBenchOptions& defrag_options) {
  auto* defrag = app.add_subcommand(
      "defrag",
      "CompactGpu Table 1: two classes of 32 B objects pointing to each other, 60% of one class "
      "deleted, defragmented with n=3; time, bytes and bandwidth per phase vs a D2D copy.");
  add_table1_options(defrag,
                     defrag_options.scale,
                     defrag_options.n,
                     defrag_options.k1,
                     defrag_options.fraction,
                     defrag_options.variants,
                     defrag_options.seed,
                     defrag_options.order);
  defrag->add_option("--warmup", defrag_options.warmup, "untimed runs")->check(CLI::Range(0, 100));
  defrag->add_option("--repeats", defrag_options.repeats, "timed runs (median by total)")
      ->check(CLI::Range(1, 100));
  defrag->add_option("--copy-mib", defrag_options.copy_mib, "copy baseline buffer in MiB")
      ->check(CLI::Range(1, 65536));
  defrag->add_option("--verify", defrag_options.verify, "check every pointer after the last run");
  defrag->add_flag("--per-pass", defrag_options.per_pass, "print every pass");
  defrag
      ->add_option("--record-budget",
                   defrag_options.record_budget,
                   "shared-memory bytes behind the recompute variants' caps (sec. 3.8): 49152 "
                   "(the paper's 48 KiB) or 232448 (Hopper's 227 KiB opt-in)")
      ->check(CLI::Range(24u, 1u << 30));
  defrag->add_flag("!--no-relocations",
                   defrag_options.relocations,
                   "skip the extra run that counts how often each object moved (Fig. 10)");
  defrag->add_option("--csv", defrag_options.csv, "also write the numbers as CSV to this file");
  defrag->footer(
      "Examples:\n"
      "  heaplab_bench defrag                                  Table 1, forwarding, n=3\n"
      "  heaplab_bench defrag --order fill                     the emptiest candidates as sources\n"
      "  heaplab_bench defrag --variant forwarding recompute-global --per-pass --csv t1.csv\n");
  defrag->callback([&defrag_options] {
    print_device();
    std::exit(heaplab::bench::run_defrag_bench(defrag_options));
  });
}

void add_defrag_traffic_command(CLI::App& app, heaplab::bench::DefragTrafficOptions& o) {
  auto* cmd = app.add_subcommand(
      "defrag-traffic",
      "CompactGpu Table 1 on the reference model, no GPU needed: the 32-byte sectors each kernel "
      "of the call must touch (copy per pass, scan and block states, the one rewrite), a lower "
      "bound on its DRAM traffic, and the time that takes at a copy bandwidth (default scale "
      "1/16).");
  add_table1_options(cmd, o.scale, o.n, o.k1, o.fraction, o.variants, o.seed, o.order);
  cmd->add_flag("--per-pass", o.per_pass, "print every pass's copy");
  cmd->add_option("--copy-gbps",
                  o.copy_gbps,
                  "copy bandwidths (GB/s, bytes read + written; list) to turn sectors into time; "
                  "default 2988.7, heaplab_bench defrag's same-run copy on an H100, 2026-11-24")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--csv", o.csv, "also write the counts per pass as CSV to this file");
  cmd->footer(
      "Examples:\n"
      "  heaplab_bench defrag-traffic                      Table 1 at scale 1/16, forwarding\n"
      "  heaplab_bench defrag-traffic --order fill         the same with the emptiest sources\n"
      "  heaplab_bench defrag-traffic --scale 0.25 --variant forwarding recompute-global "
      "--per-pass\n"
      "The model needs about 0.2 KB of host memory per object, twice that with several variants\n"
      "(scale 1: 65,536,000 objects, 13 GB); a run that would not fit is refused.");
  cmd->callback([&o] { std::exit(heaplab::bench::run_defrag_traffic(o)); });
}

void add_sweep_command(CLI::App& app, heaplab::bench::FragSweepOptions& sweep_options) {
  auto* sweep = app.add_subcommand(
      "frag-sweep",
      "CompactGpu Fig. 9 (F after defragmentation by initial fragmentation and n, k1 = 0) and "
      "Fig. 8 (candidates and F after every pass at 60%) as CSV.");
  sweep->add_option("--objects", sweep_options.objects, "objects before deletion")
      ->check(CLI::Range(std::uint64_t{64}, std::uint64_t{1} << 31));
  sweep->add_option("--n", sweep_options.ns, "defragmentation factors (list)");
  sweep->add_option("--fractions", sweep_options.fractions, "fractions deleted (list)");
  sweep->add_option("--passes-fraction", sweep_options.passes_fraction, "Fig. 8's fraction")
      ->check(CLI::Range(0.0, 1.0));
  sweep->add_option("--seed", sweep_options.seed, "which objects are deleted");
  sweep->add_option("--csv-dir", sweep_options.csv_dir, "folder for the CSV files");
  sweep->callback([&sweep_options] {
    print_device();
    std::exit(heaplab::bench::run_frag_sweep(sweep_options));
  });
}

void add_enumerate_command(CLI::App& app, heaplab::bench::EnumerateBenchOptions& o) {
  auto* cmd = app.add_subcommand(
      "enumerate",
      "DynaSOAr Fig. 14B: a fixed problem in heaps of 1x .. 64x its blocks; time of the "
      "hierarchical enumeration of allocated[T] (DynaSOAr Alg. 5), of the flat one (a scan of "
      "level 0) and of a parallel_do incrementing one field; both enumerations' R compared.");
  cmd->add_option("--objects", o.objects, "objects of the fixed problem (16 B each, 64 per block)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32));
  cmd->add_option("--factors", o.factors, "heap sizes as multiples of the problem's blocks (list)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--warmup", o.warmup, "untimed runs of each operation")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--repeats", o.repeats, "timed runs of each operation (the median is reported)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--csv", o.csv, "also write the numbers as CSV to this file");
  cmd->footer(
      "Example: heaplab_bench enumerate --objects 1048576 --factors 1 4 8 16 32 64 --csv e.csv\n"
      "Exit status 1 if the two enumerations differ or parallel_do missed an object.");
  cmd->callback([&o] {
    heaplab::bench::validate_enumerate_bench(o);
    print_device();
    std::exit(heaplab::bench::run_enumerate_bench(o));
  });
}

/// A page (unit) size: a power of two in 16 .. 2^20.
CLI::Validator page_size_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        unsigned long long const b = std::stoull(v);
        bool const ok              = b >= 16 && b <= (1u << 20) && (b & (b - 1)) == 0;
        return ok ? "" : "page size " + v + " (expected a power of two in 16 .. 2^20)";
      },
      "POWER-OF-TWO");
}

/// The options every `rw` figure takes (rw_bench.hpp RwBenchOptions). RW_malloc's figures name the
/// page "--unit-bytes" (page_flag); fig11, whose units are a list, none (page_flag nullptr).
void add_rw_common_options(CLI::App* cmd,
                           heaplab::bench::RwBenchOptions& o,
                           char const* page_flag = "--page-bytes") {
  cmd->add_option("--runs", o.runs, "timed runs per cell (median and mean; the figures use 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", o.warmup, "untimed runs before them")->check(CLI::Range(0, 1000));
  cmd->add_option("--seed", o.seed, "seed of the presets, walks and tables");
  cmd->add_option("--csv", o.csv, "also write the numbers as CSV to this file");
  cmd->add_option("--pool-bytes",
                  o.pool_bytes,
                  "pool size in bytes (default 0: min(8 GiB, 40 % of the free device memory))");
  if (page_flag != nullptr)
    cmd->add_option(page_flag, o.page_bytes, "page size in bytes (a power of two, >= 16)")
        ->check(page_size_check());
  cmd->add_option("--block-threads", o.block_threads, "threads per block (a multiple of 32)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            unsigned long const b = std::stoul(v);
            return b >= 32 && b <= 1024 && b % 32 == 0
                       ? ""
                       : "block size " + v + " (expected a multiple of 32 in 32 .. 1024)";
          },
          "WARPS"));
  cmd->add_option("--max-steps", o.max_steps, "steps per request before it answers null")
      ->check(CLI::Range(1u, 1u << 30));
}

/// "a, b, c".
std::string comma_list(std::vector<std::string> const& names) {
  std::string list;
  for (auto const& n : names) list += (list.empty() ? "" : ", ") + n;
  return list;
}

/// A figure's --allocators: the names this build has and the default ones in its help (Ouroboros
/// only in a build with it: -DHEAPLAB_OUROBOROS_DIR, docs/rw.md).
CLI::Option* add_rw_allocators(CLI::App* cmd,
                               std::vector<std::string>& allocators,
                               std::vector<std::string> const& names,
                               std::vector<std::string> const& defaults) {
  return cmd->add_option("--allocators",
                         allocators,
                         "allocators to compare (list; this build: " + comma_list(names) +
                             "; default: " + comma_list(defaults) + ")");
}

void add_rw_fig7(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand(
      "fig7",
      "RW Fig. 7: GETPAGE kernel time, TAS and WAS of RW, RW-BM 32/64, CoRW and the queue (and "
      "Ouroboros where built), with the model (Eq. 1-5) and the ratios queue/x.");
  auto& f = o.rw_fig7;
  add_rw_common_options(cmd, f.common);
  cmd->add_option("--free-percent", f.free_percent, "free pages in % of T before the kernel (list)")
      ->check(CLI::Range(1e-6, 100.0));
  cmd->add_option("--threads", f.threads, "threads N, one request each (list)")
      ->check(CLI::Range(1u, 1u << 26));
  add_rw_allocators(cmd,
                    f.allocators,
                    heaplab::bench::rw_fig7_allocator_names(),
                    heaplab::bench::rw_fig7_default_allocators())
      ->check(CLI::IsMember(heaplab::bench::rw_fig7_allocator_names()));
  cmd->callback([&f] {
    print_device();
    std::exit(heaplab::bench::run_rw_fig7(f));
  });
}

void add_rw_fig4(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand(
      "fig4", "RW Fig. 4: TAS and WAS of RW over N and A, the model (Eq. 2-3) and measured.");
  auto& f = o.rw_fig4;
  add_rw_common_options(cmd, f.common);
  cmd->add_option("--pages", f.pages, "T, the pool's pages (Fig. 4: 1M)")
      ->check(CLI::Range(1u, 1u << 30));
  cmd->add_option("--free-percent", f.free_percent, "free pages in % of T (list)")
      ->check(CLI::Range(1e-6, 100.0));
  cmd->add_option("--threads", f.threads, "threads N (list)")->check(CLI::Range(1u, 1u << 26));
  cmd->add_flag("--model-only", f.model_only, "the model's columns only (no GPU needed)");
  cmd->callback([&f] {
    if (!f.model_only) print_device();
    std::exit(heaplab::bench::run_rw_fig4(f));
  });
}

void add_rw_fig12(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand(
      "fig12",
      "RW Fig. 12: a hash-join probe whose matches take output pages from each allocator (and "
      "Ouroboros where built) or DO; "
      "end-to-end time, output verified.");
  auto& f = o.rw_fig12;
  add_rw_common_options(cmd, f.common);
  cmd->add_option("--tuples", f.tuples, "tuples per table (list)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30));
  cmd->add_option("--match-rate", f.match_rate, "fraction of probe tuples with a match")
      ->check(CLI::Range(0.0, 1.0));
  add_rw_allocators(cmd,
                    f.allocators,
                    heaplab::bench::rw_fig12_allocator_names(),
                    heaplab::bench::rw_fig12_default_allocators())
      ->check(CLI::IsMember(heaplab::bench::rw_fig12_allocator_names()));
  cmd->add_option("--check-rows-max",
                  f.check_rows_max,
                  "up to this table size also check on the host that output pages are distinct");
  cmd->callback([&f] {
    print_device();
    std::exit(heaplab::bench::run_rw_fig12(f));
  });
}

/// fig8-11's --allocators (checked by validate_rw_fig*: a peer this build lacks is named so).
void add_rw_malloc_allocators(CLI::App* cmd, std::vector<std::string>& allocators) {
  (void)add_rw_allocators(cmd,
                          allocators,
                          heaplab::bench::rw_malloc_allocator_names(),
                          heaplab::bench::rw_malloc_default_allocators());
}

/// Runs an RW_malloc figure: its argument check first (exit 2 without a GPU too), then the GPU.
template <class Options>
void rw_malloc_callback(CLI::App* cmd,
                        Options& f,
                        void (*validate)(Options const&),
                        int (*run)(Options const&)) {
  cmd->callback([&f, validate, run] {
    validate(f);
    print_device();
    std::exit(run(f));
  });
}

void add_rw_fig8(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand(
      "fig8",
      "RW Fig. 8: RW_malloc vs the size-class queue (and Ouroboros where built) as threads scale: "
      "the allocation kernel of N "
      "requests of one size on the empty allocator, then the free kernel of what it got.");
  auto& f = o.rw_fig8;
  add_rw_common_options(cmd, f.common, "--unit-bytes");
  cmd->add_option("--sizes", f.sizes, "request sizes in bytes (list)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--threads", f.threads, "threads N, one request each (list)")
      ->check(CLI::Range(1u, 1u << 24));
  add_rw_malloc_allocators(cmd, f.allocators);
  rw_malloc_callback(cmd, f, heaplab::bench::validate_rw_fig8, heaplab::bench::run_rw_fig8);
}

void add_rw_fig9(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand("fig9",
                                 "RW Fig. 9: RW_malloc vs the size-class queue (and Ouroboros) as "
                                 "the request size grows (4 B .. 8 KB), the "
                                 "allocation kernel of N requests on the empty allocator.");
  auto& f   = o.rw_fig9;
  add_rw_common_options(cmd, f.common, "--unit-bytes");
  cmd->add_option("--sizes", f.sizes, "request sizes in bytes (list)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--threads", f.threads, "threads N, one request each")
      ->check(CLI::Range(1u, 1u << 24));
  add_rw_malloc_allocators(cmd, f.allocators);
  rw_malloc_callback(cmd, f, heaplab::bench::validate_rw_fig9, heaplab::bench::run_rw_fig9);
}

void add_rw_fig10(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand(
      "fig10",
      "RW Fig. 10: RW_malloc vs the size-class queue (and Ouroboros) with mixed sizes (each thread "
      "a seeded size "
      "in [--min-bytes, max]), after untimed fill waves took --fill-percent of the pool.");
  auto& f = o.rw_fig10;
  add_rw_common_options(cmd, f.common, "--unit-bytes");
  cmd->add_option("--min-bytes", f.min_bytes, "smallest request in bytes")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--max-bytes", f.max_bytes, "largest request in bytes (list: one block each)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--threads", f.threads, "threads N, one request each (list)")
      ->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--fill-percent", f.fill_percent, "pool taken before the timed wave, % (list)")
      ->check(CLI::Range(0.0, 99.0));
  add_rw_malloc_allocators(cmd, f.allocators);
  rw_malloc_callback(cmd, f, heaplab::bench::validate_rw_fig10, heaplab::bench::run_rw_fig10);
}

void add_rw_fig11(CLI::App* rw, BenchOptions& o) {
  auto* cmd = rw->add_subcommand(
      "fig11",
      "RW Fig. 11: memory utilization of RW_malloc, the size-class queue (and Ouroboros): "
      "allocation waves "
      "until one gets only nulls, bytes handed out / pool bytes, for each unit and size.");
  auto& f = o.rw_fig11;
  add_rw_common_options(cmd, f.common, nullptr);
  cmd->add_option("--unit-bytes", f.units, "unit (page) sizes in bytes (list)")
      ->check(page_size_check());
  cmd->add_option("--sizes", f.sizes, "request sizes in bytes; 0: mixed in [min, max] (list)")
      ->check(CLI::Range(0u, 1u << 20));
  cmd->add_option("--min-bytes", f.min_bytes, "smallest mixed request in bytes")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--max-bytes", f.max_bytes, "largest mixed request in bytes")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--threads", f.threads, "requests per wave")->check(CLI::Range(1u, 1u << 24));
  cmd->add_option("--max-waves", f.max_waves, "stop a run after this many waves")
      ->check(CLI::Range(1u, 1u << 20));
  add_rw_malloc_allocators(cmd, f.allocators);
  rw_malloc_callback(cmd, f, heaplab::bench::validate_rw_fig11, heaplab::bench::run_rw_fig11);
}

void add_rw_command(CLI::App& app, BenchOptions& o) {
  auto* rw = app.add_subcommand(
      "rw",
      "Random-walk page allocators (RW, RW-BM, CoRW, RW_malloc) against the queue and DO "
      "baselines: the paper's Fig. 7, Fig. 4, Fig. 12 and Fig. 8-11 (docs/rw.md \"Benchmarks\").");
  rw->require_subcommand(1);
  rw->footer(
      "Examples:\n"
      "  heaplab_bench rw fig7                                 the paper's grid, 20 runs a cell\n"
      "  heaplab_bench rw fig7 --free-percent 1 --threads 4096 16384 --allocators rw-bm32 queue\n"
      "  heaplab_bench rw fig7 --pool-bytes 268435456 --runs 3 --csv fig7.csv   a quick one\n"
      "  heaplab_bench rw fig4 --csv fig4.csv                  Fig. 4: model and measured RW\n"
      "  heaplab_bench rw fig4 --model-only --csv fig4.csv     the model alone (no GPU)\n"
      "  heaplab_bench rw fig12 --tuples 16384 1048576 --match-rate 0.5\n"
      "  heaplab_bench rw fig8 --csv fig8.csv                  RW_malloc vs the queue (+ "
      "Ouroboros)\n"
      "  heaplab_bench rw fig9 --allocators rw-malloc ouroboros-page   a build with Ouroboros\n"
      "  heaplab_bench rw fig8 --sizes 16 8192 --threads 1024 1048576 --runs 20\n"
      "  heaplab_bench rw fig9 --threads 65536 --unit-bytes 16\n"
      "  heaplab_bench rw fig10 --max-bytes 8192 --fill-percent 0 90\n"
      "  heaplab_bench rw fig11 --unit-bytes 16 256 --sizes 0 100 4096 --csv fig11.csv\n"
      "Columns: median/mean ms of the GETPAGE (or join) kernels over --runs runs; TAS = mean\n"
      "steps per thread, WAS = mean over warps of the warp's largest step count; the model's\n"
      "values beside them; queue/x = the queue's median time over this allocator's. The pool is\n"
      "preset on the device to exactly A free pages at random places before every run.\n"
      "fig8-11 (RW_malloc): sizes in bytes, one unit (--unit-bytes, 16) for RW_malloc and the\n"
      "queue, Ouroboros (where built) its own 16 B .. 8 KiB pages in chunks for the same bytes;\n"
      "each run starts from the empty allocator; x/rw = x's median kernel time over RW_malloc's;\n"
      "fig11's util = bytes handed out / pool bytes.");
  add_rw_fig7(rw, o);
  add_rw_fig4(rw, o);
  add_rw_fig12(rw, o);
  add_rw_fig8(rw, o);
  add_rw_fig9(rw, o);
  add_rw_fig10(rw, o);
  add_rw_fig11(rw, o);
}

/// An object count of `parallel-do`: a positive multiple of 64 up to 2^30.
CLI::Validator objects_per_block_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        bool ok = false;
        try {
          std::size_t used           = 0;
          unsigned long long const n = std::stoull(v, &used);
          ok = used == v.size() && v[0] != '-' && n >= 64 && n % 64 == 0 && n <= (1ull << 30);
        } catch (std::exception const&) {
          ok = false;  // not a number
        }
        return ok ? ""
                  : "objects " + v +
                        " (expected a positive multiple of 64, the objects per block, up to 2^30)";
      },
      "MULTIPLE-OF-64");
}

void add_parallel_do_command(CLI::App& app, heaplab::bench::ParallelDoBenchOptions& o) {
  auto* cmd = app.add_subcommand(
      "parallel-do",
      "DynaSOAr's do-all (heap.parallel_do) over 16-byte objects of 4 float fields, a method "
      "touching 1-4 fields, against a plain SOA loop over dense arrays of the same live objects; "
      "on a full heap and after deleting a random half.");
  cmd->add_option("--objects", o.objects, "objects per heap before deletion (list)")
      ->check(objects_per_block_check());
  cmd->add_option("--fields", o.fields, "k: the method reads fields 0..k-1, writes field 0 (list)")
      ->check(CLI::Range(1, 4));
  cmd->add_option("--cases", o.cases, "full, fragmented (list)")
      ->check(CLI::IsMember({"full", "fragmented"}));
  cmd->add_option("--warmup", o.warmup, "untimed runs")->check(CLI::Range(0, 100));
  cmd->add_option("--repeats", o.repeats, "timed runs (the median is reported)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", o.seed, "which half of the objects the fragmented case deletes");
  cmd->add_option("--csv", o.csv, "also write the numbers as CSV to this file");
  cmd->footer(
      "Examples:\n"
      "  heaplab_bench parallel-do                         2^20, 2^22, 2^24, 2^26 objects, k = "
      "1..4\n"
      "  heaplab_bench parallel-do --objects 1048576 --fields 1 4 --cases fragmented --csv "
      "pdo.csv\n"
      "Columns: pdo ms = the whole heap.parallel_do call (iteration bitmaps, enumeration of\n"
      "allocated[T], method kernel), enum ms = that enumeration alone, SOA ms = the same "
      "arithmetic\n"
      "on dense float arrays of `live` elements; x = pdo / SOA; GB/s = live x (k+1) x 4 B / time.\n"
      "Medians of --repeats after --warmup; every row checks both results (exit 1 if wrong).");
  cmd->callback([&o] {
    heaplab::bench::validate_parallel_do_bench(o);
    print_device();
    std::exit(heaplab::bench::run_parallel_do_bench(o));
  });
}

}  // namespace

int main(int argc, char** argv) {
  heaplab::program::line_buffered_stdout();  // a run ended by a signal keeps every line printed
  if (!heaplab::program::plant_requested_bug("heaplab_bench")) return heaplab::program::kExitUsage;
  CLI::App app{"heaplab_bench: GPU benchmarks, each with its baselines measured in the same run."};
  app.require_subcommand(1);
  BenchOptions options;
  add_baselines_command(app, options);
  add_alloc_command(app, options);
  add_utilization_command(app, options.common, options.utilization);
  add_fill_command(app, options.fill);
  add_defrag_command(app, options.defrag);
  add_defrag_traffic_command(app, options.defrag_traffic);
  add_sweep_command(app, options.sweep);
  add_enumerate_command(app, options.enumerate);
  add_rw_command(app, options);
  add_parallel_do_command(app, options.parallel_do);

  heaplab::program::add_version_flag(app, "heaplab_bench");
  heaplab::program::check_every_number(app);
  heaplab::program::last_one_wins(app);
  if (auto const status =
          heaplab::program::unknown_command_or_option(app, "heaplab_bench", argc, argv))
    return *status;
  try {
    heaplab::program::parse(app, argc, argv);
  } catch (CLI::ParseError const& e) {
    // --help prints and exits 0; any other parse error is a usage error: one line, status 2.
    return heaplab::program::parse_error(app, e, "heaplab_bench");
  } catch (NoDevice const& e) {
    std::fprintf(stderr, "heaplab_bench: SKIPPED: nothing was measured: %s\n", e.what());
    return heaplab::program::kExitNotChecked;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "heaplab_bench: error: %s\n", e.what());
    return heaplab::program::kExitUsage;
  }
  return 0;
}
