// `heaplab_bench rw`: the random-walk paper's GPU experiments (docs/rw.md "Benchmarks"), every
// allocator measured in the same run, on pools preset on the device:
//   fig7    GETPAGE kernel time, TAS and WAS of RW, RW-BM 32, RW-BM 64, CoRW and the queue over
//           free fractions and thread counts, with the model (Eq. 1-5) next to the measurements
//           and the ratios queue / CoRW and queue / RW-BM per cell (RW sec. 5.2.1, Fig. 7);
//   fig4    the Fig. 4 grid: TAS and WAS of RW, model and measured, over N and A (RW sec. 3.2);
//   fig12   the hash-join probe case study (RW sec. 5.2.3, Fig. 12): output pages from each
//           allocator or from DO, end-to-end time, the output verified.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heaplab::bench {

/// The allocators the rw benchmarks compare.
enum class RwAllocator : std::uint8_t { rw, rw_bm32, rw_bm64, corw, queue, direct_output };

/// "rw", "rw-bm32", "rw-bm64", "corw", "queue", "do".
char const* rw_allocator_name(RwAllocator a);
std::optional<RwAllocator> parse_rw_allocator(std::string_view name);
/// Every name, for the CLI's check and help.
std::vector<std::string> rw_allocator_names();

struct RwBenchOptions {
  int runs           = 20;          // timed runs per cell (median and mean)
  int warmup         = 1;           // untimed runs before them
  std::uint64_t seed = 1;           // presets, walks and tables
  std::string csv;                  // also write the numbers as CSV here
  std::uint64_t pool_bytes    = 0;  // 0: min(8 GiB, 40 % of the device's free memory)
  std::uint32_t page_bytes    = 256;
  std::uint32_t block_threads = 256;
  std::uint32_t max_steps     = 1u << 24;  // per request, then null
};

struct RwFig7Options {
  RwBenchOptions common;
  std::vector<double> free_percent{50, 10, 1, 0.5};
  std::vector<std::uint32_t> threads{1024, 2048, 4096, 8192, 16384, 32768, 65536};
  std::vector<std::string> allocators{"rw", "rw-bm32", "rw-bm64", "corw", "queue"};
};

struct RwFig4Options {
  RwBenchOptions common;
  std::uint32_t pages = 1u << 20;  // T of Fig. 4 (1M)
  std::vector<double> free_percent{50, 10, 1, 0.7, 0.5};
  std::vector<std::uint32_t> threads{500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000};
  bool model_only = false;  // the model's columns only: no GPU needed
};

struct RwFig12Options {
  RwBenchOptions common;
  std::vector<std::uint64_t> tuples{16384, 65536, 262144, 1048576, 4194304, 10000000};
  double match_rate = 0.5;  // fraction of probe tuples with a partner in the build table
  std::vector<std::string> allocators{"rw", "rw-bm32", "corw", "queue", "do"};
  std::uint64_t check_rows_max = 1u << 20;  // up to this size, also every output page's owner
};

/// Each returns the process exit status: 0 done, 1 a measurement found wrong output (a page handed
/// out twice, a join result missing). Throws std::runtime_error (no GPU, CUDA errors) and
/// core::precondition_error.
int run_rw_fig7(RwFig7Options const& o);
int run_rw_fig4(RwFig4Options const& o);
int run_rw_fig12(RwFig12Options const& o);

}  // namespace heaplab::bench
