#include "heaplab/compact/compactor.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "defrag_bench.hpp"
#include "defrag_bench_types.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "program_output.hpp"

namespace heaplab::bench {

namespace {

using Types                      = DefragBenchTypes;
using Ref                        = soa::HeapRef<Types>;
constexpr std::uint32_t kA       = Types::type_id<DefragBenchA>;
constexpr std::uint64_t kObjects = kDefragBenchObjects;

__global__ void make_objects(
    Ref heap, std::uint64_t count, bool both, DefragBenchA** a, DefragBenchB** b) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    a[i] = heap.make<DefragBenchA>(defrag_bench_id(i, false));
    if (both) b[i] = heap.make<DefragBenchB>(defrag_bench_id(i, true));
  }
}

/// A[i] -> a random B; B[i] -> a random A, or null if that A will be deleted (nothing dangles),
/// and B[i].payload_ = the id of its target (0 for null), for the verification.
__global__ void link_objects(
    std::uint64_t count, std::uint64_t seed, double fraction, DefragBenchA** a, DefragBenchB** b) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    a[i]->other_          = b[defrag_bench_a_target(i, seed, count)];
    std::uint64_t const k = defrag_bench_b_target(i, seed, count);
    bool const gone       = defrag_bench_deleted(k, seed, fraction);
    b[i]->other_          = gone ? nullptr : a[k];
    b[i]->payload_        = gone ? 0 : defrag_bench_id(k, false);
  }
}

__global__ void delete_objects(
    Ref heap, std::uint64_t count, std::uint64_t seed, double fraction, DefragBenchA** a) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    if (defrag_bench_deleted(i, seed, fraction)) heap.destroy(a[i]);
}

/// After defragmentation: every B's pointer reaches the A it was given (id and cookie), i.e. the
/// rewrite found every pointer to a moved A.
__global__ void verify_pointers(std::uint64_t count, DefragBenchB** b, unsigned long long* errors) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    DefragBenchA* const target = b[i]->other_;
    std::uint64_t const want   = b[i]->payload_;
    bool const ok = target == nullptr ? want == 0 : (target->id() == want && target->intact());
    if (!ok) atomicAdd(errors, 1ull);
  }
}

unsigned grid_for(std::uint64_t n) { return cudart::grid_size(n, 256, 65535); }

/// The heap of one benchmark: objects of class A (and B), links, deletions. Everything untimed.
struct Workload {
  Workload(std::uint64_t count, bool both, std::uint32_t n, std::uint32_t k1)
      : count(count),
        both(both),
        heap(soa::Heap<Types>::with_blocks(blocks_for(count, both), options(n, k1))),
        a(count),
        b(both ? count : 1) {}

  static std::uint32_t blocks_for(std::uint64_t count, bool both) {
    std::uint64_t const blocks = defrag_bench_blocks(count, both);
    if (blocks > 0xFFFFFFFFull) throw std::runtime_error("defrag bench: too many objects");
    return static_cast<std::uint32_t>(blocks);
  }
  static soa::HeapOptions options(std::uint32_t n, std::uint32_t k1) {
    soa::HeapOptions o;
    o.defrag_factor = n;
    o.k1            = k1;
    return o;
  }

  /// Fresh objects, links (both classes) and the deletion of `fraction` of class A.
  void build(std::uint64_t seed, double fraction) {
    heap.reset();
    make_objects<<<grid_for(count), 256>>>(heap.ref(), count, both, a.data(), b.data());
    HEAPLAB_CHECK_LAUNCH();
    if (both) {
      link_objects<<<grid_for(count), 256>>>(count, seed, fraction, a.data(), b.data());
      HEAPLAB_CHECK_LAUNCH();
    }
    delete_objects<<<grid_for(count), 256>>>(heap.ref(), count, seed, fraction, a.data());
    HEAPLAB_CHECK_LAUNCH();
    heap.synchronize();
    if (heap.oom_count() != 0) throw std::runtime_error("defrag bench: the heap ran out of memory");
  }

  std::uint64_t pointer_errors() {
    if (!both) return 0;
    cudart::device_buffer<unsigned long long> errors(1, "pointer error count");
    errors.set_zero_async(nullptr);
    verify_pointers<<<grid_for(count), 256>>>(count, b.data(), errors.data());
    HEAPLAB_CHECK_LAUNCH();
    return cudart::value_to_host(errors.data());
  }

  std::uint64_t count;
  bool both;
  soa::Heap<Types> heap;
  cudart::device_buffer<DefragBenchA*> a;
  cudart::device_buffer<DefragBenchB*> b;
};

double gbps(double bytes, double ms) { return ms <= 0 ? 0.0 : bytes / (ms * 1e-3) / 1e9; }

/// The benchmark's header: the workload, the copy bandwidth of this run, the byte accounting.
void print_defrag_header(DefragBenchOptions const& o, std::uint64_t count, CopyResult const& copy) {
  std::printf(
      "\nTable 1 synthetic benchmark (CompactGpu sec. 4.4): 2 classes x %llu objects of 32 B "
      "(scale %.4g), %.0f%% of class A deleted, n=%u, k1=%u, record budget %u B (recompute caps), "
      "candidates by %s\n",
      static_cast<unsigned long long>(count),
      o.scale,
      o.fraction * 100,
      o.n,
      o.k1,
      o.record_budget,
      o.order == "fill" ? "fill, emptiest first (beyond the paper)" : "block id (the paper's)");
  std::printf(
      "device-to-device copy in this run: %.1f GB/s (cudaMemcpyAsync, %zu MiB, bytes read + "
      "written); int4 kernel %.1f GB/s\n",
      copy.memcpy_gbps,
      o.copy_mib,
      copy.kernel_gbps);
  std::printf(
      "bytes: copy = 2 x object bytes moved (read + write) + 8 B per forwarding pointer written;\n"
      "       rewrite = 8 B per live pointer slot scanned + 16 B per pointer rewritten "
      "(forwarding\n"
      "       pointer read + pointer write), roots likewise: CompactGpu sec. 4.4's accounting.\n"
      "median of %d run(s) (by total) after %d warm-up; heap rebuilt before every run (untimed)\n",
      o.repeats,
      o.warmup);
}

/// After the last run of a variant: every pointer reaches its A, and the object counts are the
/// survivors. Prints the verdict; returns whether it holds.
bool verify_defrag(Workload& w, DefragBenchOptions const& o, std::string const& name) {
  std::uint64_t const count    = w.count;
  std::uint64_t const errors   = w.pointer_errors();
  soa::HeapStatistics const st = w.heap.statistics();
  std::uint64_t survivors      = 0;
  for (std::uint64_t k = 0; k < count; ++k)
    survivors += defrag_bench_deleted(k, o.seed, o.fraction) ? 0 : 1;
  bool const ok =
      errors == 0 && st.types[kA].used_slots == survivors && st.types[kA + 1].used_slots == count;
  std::printf("verify %s: %llu wrong pointers, %llu of %llu A objects, %llu of %llu B: %s\n",
              name.c_str(),
              static_cast<unsigned long long>(errors),
              static_cast<unsigned long long>(st.types[kA].used_slots),
              static_cast<unsigned long long>(survivors),
              static_cast<unsigned long long>(st.types[kA + 1].used_slots),
              static_cast<unsigned long long>(count),
              ok ? "ok" : "FAILED");
  return ok;
}

/// The request of one call of variant `name` with the benchmark's options.
compact::DefragOptions table1_request(DefragBenchOptions const& o, std::string const& name) {
  compact::DefragOptions options;
  options.n                   = o.n;
  options.k1                  = o.k1;
  options.variant             = defrag_bench_variant(name);
  options.order               = defrag_bench_order(o.order);
  options.record_budget_bytes = o.record_budget;
  return options;
}

/// The warm-up and timed runs of one variant with the passes stepped by `loop`, each on a
/// rebuilt heap (the last one verified when o.verify); returns the median run by total time.
/// `verified` becomes false if a check failed.
compact::DefragStats median_defrag_run(Workload& w,
                                       compact::Compactor<Types>& compactor,
                                       DefragBenchOptions const& o,
                                       std::string const& name,
                                       compact::PassLoop loop,
                                       bool& verified) {
  compact::DefragOptions const options = table1_request(o, name);
  compactor.set_pass_loop(loop);
  std::vector<compact::DefragStats> runs;
  for (int i = 0; i < o.warmup + o.repeats; ++i) {
    w.build(o.seed, o.fraction);
    compact::DefragStats s = compactor.defragment(kA, options);
    std::string const what = name + " (" + compact::to_string(loop) + " loop)";
    if (o.verify && i == o.warmup + o.repeats - 1 && !verify_defrag(w, o, what)) verified = false;
    if (i >= o.warmup) runs.push_back(std::move(s));
  }
  std::sort(runs.begin(), runs.end(), [](auto const& x, auto const& y) {
    return x.total_ms < y.total_ms;
  });
  return runs[runs.size() / 2];
}

/// CompactGpu Fig. 10 from one more (untimed) run with the relocation count switched on:
/// objects of A by the number of times the call moved them.
void print_relocations(Workload& w,
                       compact::Compactor<Types>& compactor,
                       DefragBenchOptions const& o,
                       std::string const& name) {
  compact::DefragOptions options = table1_request(o, name);
  options.count_relocations      = true;
  w.build(o.seed, o.fraction);
  compact::DefragStats const s = compactor.defragment(kA, options);
  std::printf("  relocations (Fig. 10: objects of A moved c times):");
  for (std::size_t c = 0; c < s.objects_by_relocation_count.size(); ++c)
    std::printf(" %zux %llu%s",
                c,
                static_cast<unsigned long long>(s.objects_by_relocation_count[c]),
                c + 1 < s.objects_by_relocation_count.size() ? "," : "\n");
}

/// One row of a variant's table: a phase, its time and bytes against the paper's figures.
struct PhaseRow {
  char const* phase;
  double ms;
  double bytes;  // < 0: not a bandwidth phase
  char const* paper;
};

void print_phase_row(PhaseRow const& r, double copy_gbps) {
  if (r.bytes < 0) {
    std::printf("  %-8s %10.3f %12s %10s %9s   %s\n", r.phase, r.ms, "-", "-", "-", r.paper);
    return;
  }
  double const g = gbps(r.bytes, r.ms);
  std::printf("  %-8s %10.3f %12.1f %10.1f %8.1f%%   %s\n",
              r.phase,
              r.ms,
              r.bytes / 1e6,
              g,
              100.0 * g / copy_gbps,
              r.paper);
}

void write_phase_csv(std::FILE* csv,
                     std::string const& name,
                     PhaseRow const& r,
                     double copy_gbps,
                     compact::DefragStats const& s,
                     std::uint64_t count) {
  std::fprintf(csv,
               "%s,%s,%.4f,%.0f,%.2f,%.4f,%zu,%llu\n",
               name.c_str(),
               r.phase,
               r.ms,
               r.bytes < 0 ? 0.0 : r.bytes,
               r.bytes < 0 ? 0.0 : gbps(r.bytes, r.ms),
               r.bytes < 0 ? 0.0 : gbps(r.bytes, r.ms) / copy_gbps,
               s.passes.size(),
               static_cast<unsigned long long>(count));
}

/// A variant's summary line and its phase table (and CSV rows when csv is open): the phases of
/// the host-stepped run (where every pass is timed), the rewrite and total of the device-loop
/// run, and the host-stepped total for comparison.
void print_variant(std::string const& name,
                   compact::DefragStats const& device,
                   compact::DefragStats const& host,
                   std::uint64_t count,
                   double copy_gbps,
                   std::FILE* csv) {
  compact::DefragStats const& s = device;
  double const copy_bytes       = 2.0 * s.object_bytes_moved + s.forwarding_bytes;
  double const rewrite_bytes    = 8.0 * s.pointers_scanned + 16.0 * s.pointers_rewritten +
                               8.0 * s.roots_scanned + 16.0 * s.roots_rewritten;
  double const total_bytes = copy_bytes + rewrite_bytes;
  PhaseRow const rows[]    = {
         {"scan", host.times.scan_ms, -1, "4.0 ms"},
         {"copy", host.times.copy_ms, copy_bytes, "6.7 ms, 352.6 MB, 17%"},
         {"state", host.times.state_ms, -1, "(in total)"},
         {"rewrite", s.times.rewrite_ms, rewrite_bytes, "33.3 ms, 4858 MB, 27% (18 scans)"},
         {"total", s.total_ms, total_bytes, "44.4 ms"},
         {"host-tot", host.total_ms, total_bytes, "(host-stepped passes)"}};
  std::printf(
      "\nvariant %s: %zu passes (paper: 18), %llu objects moved, %llu of %llu pointers "
      "rewritten (one scan), stop: %s, candidates %u -> %u; device loop: passes %.3f ms, "
      "rewrite %.3f ms, graph setup %.3f ms (host, untimed)\n",
      name.c_str(),
      s.passes.size(),
      static_cast<unsigned long long>(s.objects_moved),
      static_cast<unsigned long long>(s.pointers_rewritten),
      static_cast<unsigned long long>(s.pointers_scanned),
      core::to_string(s.stop),
      s.candidates_before,
      s.candidates_after,
      s.passes_ms,
      s.times.rewrite_ms,
      s.setup_ms);
  std::printf("  %-8s %10s %12s %10s %9s   %s\n",
              "phase",
              "ms",
              "MB",
              "GB/s",
              "of copy",
              "paper, TITAN Xp");
  for (PhaseRow const& r : rows) {
    print_phase_row(r, copy_gbps);
    if (csv) write_phase_csv(csv, name, r, copy_gbps, s, count);
  }
  std::printf(
      "  scan, copy, state: host-stepped run (every pass timed); rewrite, total: "
      "device-loop run (the default)\n");
}

/// --per-pass: one line per pass of the median host-stepped run.
void print_passes(compact::DefragStats const& s) {
  std::printf("  %5s %9s %9s %10s %9s %9s %9s\n",
              "pass",
              "r",
              "B'",
              "moved",
              "scan ms",
              "copy ms",
              "state ms");
  for (auto const& p : s.passes)
    std::printf("  %5u %9u %9u %10llu %9.3f %9.3f %9.3f\n",
                p.index,
                p.candidates,
                p.sources,
                static_cast<unsigned long long>(p.objects_moved),
                p.times.scan_ms,
                p.times.copy_ms,
                p.times.state_ms);
}

/// Fig. 8: candidates and F after every pass, at passes_fraction deleted (pass 0 = before), as
/// CSV rows of n; prints the number of passes against the worst case.
void write_pass_curve(FragSweepOptions const& o,
                      std::uint32_t n,
                      Workload& w,
                      compact::Compactor<Types>& compactor,
                      std::FILE* fig8) {
  auto fragmentation = [&] { return w.heap.statistics().types[kA].fragmentation; };
  w.build(o.seed, o.passes_fraction);
  std::fprintf(fig8, "%u,0,%u,%.6f\n", n, compactor.count_candidates(kA), fragmentation());
  compact::DefragStats const s = compactor.defragment(kA, {}, [&](compact::PassStats const& p) {
    std::fprintf(
        fig8, "%u,%u,%u,%.6f\n", n, p.index + 1, compactor.count_candidates(kA), fragmentation());
  });
  std::printf("  n=%u at %.0f%% deleted: %zu passes (worst case %u), candidates %u -> %u\n",
              n,
              o.passes_fraction * 100,
              s.passes.size(),
              core::worst_case_passes_with_cap(s.candidates_before, n, 0, core::kUnlimitedSources),
              s.candidates_before,
              s.candidates_after);
}

}  // namespace

int run_defrag_bench(DefragBenchOptions const& o) {
  auto const count = static_cast<std::uint64_t>(std::llround(o.scale * kObjects));
  if (count < 64) throw std::runtime_error("defrag bench: --scale leaves fewer than 64 objects");
  CopyResult const copy  = copy_bandwidth(o.copy_mib << 20, 1, 5);
  double const copy_gbps = copy.memcpy_gbps;
  print_defrag_header(o, count, copy);

  std::FILE* csv = heaplab::program::open_csv(
      o.csv, "variant,phase,ms,bytes,gbps,fraction_of_copy,passes,objects");

  Workload w(count, true, o.n, o.k1);
  compact::Compactor<Types> compactor(w.heap);
  bool verified = true;
  for (std::string const& name : o.variants) {
    compact::DefragStats const device =
        median_defrag_run(w, compactor, o, name, compact::PassLoop::device, verified);
    compact::DefragStats const host =
        median_defrag_run(w, compactor, o, name, compact::PassLoop::host, verified);
    print_variant(name, device, host, count, copy_gbps, csv);
    if (o.per_pass) print_passes(host);
    if (o.relocations) print_relocations(w, compactor, o, name);
  }
  if (csv) std::fclose(csv);
  return verified ? 0 : 1;
}

int run_frag_sweep(FragSweepOptions const& o) {
  std::string const fig9_path = o.csv_dir + "/fig9_fragmentation.csv";
  std::string const fig8_path = o.csv_dir + "/fig8_passes.csv";
  std::FILE* fig9             = heaplab::program::open_lines(fig9_path);
  std::FILE* fig8             = heaplab::program::open_lines(fig8_path);
  if (fig9 == nullptr || fig8 == nullptr)
    throw std::runtime_error("cannot write the CSV files in " + o.csv_dir);
  std::fprintf(fig9,
               "n,initial_fraction_deleted,fragmentation_before,fragmentation_after,bound_1_over_"
               "n_plus_1,passes,candidates_before,candidates_after,objects_moved,defrag_ms\n");
  std::fprintf(fig8, "n,pass,candidates,fragmentation\n");
  std::printf(
      "\nFig. 9 / Fig. 8 sweep (CompactGpu sec. 4.1, 4.2): %llu objects of 32 B, k1 = 0\n"
      "  %3s %8s %9s %9s %7s %7s\n",
      static_cast<unsigned long long>(o.objects),
      "n",
      "deleted",
      "F before",
      "F after",
      "bound",
      "passes");
  for (std::uint32_t n : o.ns) {
    Workload w(o.objects, false, n, 0);
    compact::Compactor<Types> compactor(w.heap);
    auto fragmentation = [&] { return w.heap.statistics().types[kA].fragmentation; };
    for (double f : o.fractions) {
      w.build(o.seed, f);
      double const before          = fragmentation();
      compact::DefragStats const s = compactor.defragment(kA);
      double const after           = fragmentation();
      std::fprintf(fig9,
                   "%u,%.2f,%.6f,%.6f,%.6f,%zu,%u,%u,%llu,%.3f\n",
                   n,
                   f,
                   before,
                   after,
                   1.0 / (n + 1),
                   s.passes.size(),
                   s.candidates_before,
                   s.candidates_after,
                   static_cast<unsigned long long>(s.objects_moved),
                   s.total_ms);
      std::printf("  %3u %7.0f%% %9.4f %9.4f %7.4f %7zu\n",
                  n,
                  f * 100,
                  before,
                  after,
                  1.0 / (n + 1),
                  s.passes.size());
    }
    write_pass_curve(o, n, w, compactor, fig8);
  }
  std::fclose(fig9);
  std::fclose(fig8);
  std::printf("wrote %s and %s\n", fig9_path.c_str(), fig8_path.c_str());
  return 0;
}

}  // namespace heaplab::bench
