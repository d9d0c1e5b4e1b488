// CompactGpu benchmarks (CompactGpu sec. 4; docs/compaction.md "Benchmarks"):
//   heaplab_bench defrag       the synthetic benchmark of Table 1: two classes of 32-byte objects
//                              pointing to each other at random, 60% of one class deleted, that
//                              class defragmented with n = 3; time, bytes and bandwidth per phase
//                              against a device-to-device copy measured in the same run.
//   heaplab_bench frag-sweep   the fragmentation-quality sweep of Fig. 9 (initial fragmentation
//                              0-90% x n) and the passes curve of Fig. 8 (candidates and F after
//                              every pass at 60%), as CSV files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace heaplab::bench {

struct DefragBenchOptions {
  double scale     = 1.0;  // objects per class = scale * 32,768,000
  std::uint32_t n  = 3;
  std::uint32_t k1 = 0;
  double fraction  = 0.6;  // of class A deleted
  std::vector<std::string> variants{
      "forwarding"};  // forwarding, recompute-global, recompute-shared
  int warmup                  = 1;
  int repeats                 = 3;
  std::size_t copy_mib        = 1024;
  bool verify                 = true;  // check every pointer and the object count after the run
  bool per_pass               = false;
  bool relocations            = true;       // one more run with the relocation histogram (Fig. 10)
  std::uint32_t record_budget = 48 * 1024;  // bytes behind the recompute caps (the paper's)
  std::uint64_t seed          = 1;
  std::string order           = "block-id";  // R's order in every pass (core::CandidateOrder)
  std::string csv;
};

/// Prints the Table 1 comparison; returns the process exit status (1 if a verification failed).
int run_defrag_bench(DefragBenchOptions const& options);

struct FragSweepOptions {
  std::uint64_t objects = std::uint64_t{1} << 22;  // of one class, before deletion
  std::vector<std::uint32_t> ns{1, 2, 3, 4, 5};
  std::vector<double> fractions{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  double passes_fraction = 0.6;  // Fig. 8
  std::uint64_t seed     = 1;
  std::string csv_dir    = ".";
};

/// Writes <csv_dir>/fig9_fragmentation.csv and <csv_dir>/fig8_passes.csv and prints a summary.
int run_frag_sweep(FragSweepOptions const& options);

}  // namespace heaplab::bench
