// `heaplab_bench rw`: the random-walk paper's GPU experiments (docs/rw.md "Benchmarks"), every
// allocator measured in the same run, on pools preset on the device:
//   fig7    GETPAGE kernel time, TAS and WAS of RW, RW-BM 32, RW-BM 64, CoRW, the queue (and
//           Ouroboros where built: one page-sized malloc per thread, no TAS/WAS) over
//           free fractions and thread counts, with the model (Eq. 1-5) next to the measurements
//           and the ratios queue / CoRW and queue / RW-BM per cell (RW sec. 5.2.1, Fig. 7);
//   fig4    the Fig. 4 grid: TAS and WAS of RW, model and measured, over N and A (RW sec. 3.2);
//   fig12   the hash-join probe case study (RW sec. 5.2.3, Fig. 12): output pages from each
//           allocator (Ouroboros where built) or from DO, end-to-end time, the output verified;
//   fig8-11 RW_malloc against the size-class queue ("queue", size_class_queue.hpp) and, where
//           built, Ouroboros, as RW sec. 5.2.2 compares it (rw_malloc_bench.cu): kernel time as
//           threads scale (alloc and free), as the size grows, with mixed sizes, and memory
//           utilization.
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

/// Ouroboros, the allocator RW sec. 5 compares with, where this build has it
/// (-DHEAPLAB_OUROBOROS_DIR, tools/fetch-ouroboros; ouroboros_bench.hpp): its standard page and
/// chunk queues ("ouroboros-page", "ouroboros-chunk") and the virtualized ones
/// ("ouroboros-va-page", "ouroboros-va-chunk", "ouroboros-vl-page", "ouroboros-vl-chunk"), else
/// none. No GPU needed.
std::vector<std::string> rw_ouroboros_names();
/// The Ouroboros instances a figure runs by default: the standard two (the virtualized ones on
/// request: the survey's VA instance faulted at 4 KiB under CUDA 13, docs/survey.md).
std::vector<std::string> rw_ouroboros_default_names();
/// Whether this build has Ouroboros.
bool rw_ouroboros_built();
/// fig7's allocators: rw, rw-bm32, rw-bm64, corw, queue, and Ouroboros (a request of one page
/// each, RW sec. 5.2.1; no TAS/WAS).
std::vector<std::string> rw_fig7_allocator_names();
/// fig7's default --allocators: rw, rw-bm32, rw-bm64, corw, queue and rw_ouroboros_default_names().
std::vector<std::string> rw_fig7_default_allocators();
/// fig12's: rw_allocator_names() and Ouroboros (one page-sized malloc per match, RW sec. 5.2.3).
std::vector<std::string> rw_fig12_allocator_names();

struct RwFig7Options {
  RwBenchOptions common;
  std::vector<double> free_percent{50, 10, 1, 0.5};
  std::vector<std::uint32_t> threads{1024, 2048, 4096, 8192, 16384, 32768, 65536};
  std::vector<std::string> allocators = rw_fig7_default_allocators();
};

struct RwFig4Options {
  RwBenchOptions common;
  std::uint32_t pages = 1u << 20;  // T of Fig. 4 (1M)
  std::vector<double> free_percent{50, 10, 1, 0.7, 0.5};
  std::vector<std::uint32_t> threads{500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000};
  bool model_only = false;  // the model's columns only: no GPU needed
};

/// fig12's default --allocators: the paper's (RW, RW-BM 32, CoRW, the queue, DO) and Ouroboros.
inline std::vector<std::string> rw_fig12_default_allocators() {
  std::vector<std::string> names{"rw", "rw-bm32", "corw", "queue", "do"};
  for (auto const& n : rw_ouroboros_default_names()) names.push_back(n);
  return names;
}

struct RwFig12Options {
  RwBenchOptions common;
  std::vector<std::uint64_t> tuples{16384, 65536, 262144, 1048576, 4194304, 10000000};
  double match_rate = 0.5;  // fraction of probe tuples with a partner in the build table
  std::vector<std::string> allocators = rw_fig12_default_allocators();
  std::uint64_t check_rows_max = 1u << 20;  // up to this size, also every output page's owner
};

/// The defaults of RW_malloc's figures: a unit (page) of 16 B, walks bounded by 4096 rounds (a
/// request that finds no run by then answers null; the pool may be full).
inline RwBenchOptions rw_malloc_defaults() {
  RwBenchOptions o;
  o.page_bytes = 16;
  o.max_steps  = 4096;
  return o;
}

/// The allocators fig8-11 can compare: "rw-malloc", "queue", and Ouroboros (rw_ouroboros_names),
/// which RW sec. 5.2.2 compares RW_malloc with. No GPU needed.
std::vector<std::string> rw_malloc_allocator_names();
/// fig8-11's default --allocators: RW_malloc, the queue and rw_ouroboros_default_names().
std::vector<std::string> rw_malloc_default_allocators();

/// fig8 (RW Fig. 8): for each size and thread count, one allocation wave of N requests of that
/// size on the empty allocator (timed), then the free wave of what it got (timed).
struct RwFig8Options {
  RwBenchOptions common = rw_malloc_defaults();  // common.page_bytes: the unit (--unit-bytes)
  std::vector<std::uint32_t> sizes{16, 64, 256, 1024, 4096, 8192};
  std::vector<std::uint32_t> threads{1024, 4096, 16384, 65536, 262144, 1048576};
  std::vector<std::string> allocators = rw_malloc_default_allocators();
};

/// fig9 (RW Fig. 9): one allocation wave of N requests for each size, 4 B .. 8 KB.
struct RwFig9Options {
  RwBenchOptions common = rw_malloc_defaults();
  std::vector<std::uint32_t> sizes{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
  std::uint32_t threads               = 262144;
  std::vector<std::string> allocators = rw_malloc_default_allocators();
};

/// fig10 (RW Fig. 10): one allocation wave of N requests, each a seeded size in [min, max] bytes,
/// after untimed fill waves of the same sizes have taken fill % of the pool.
struct RwFig10Options {
  RwBenchOptions common   = rw_malloc_defaults();
  std::uint32_t min_bytes = 4;
  std::vector<std::uint32_t> max_bytes{64, 1024, 8192};
  std::vector<std::uint32_t> threads{1024, 16384, 262144, 1048576};
  std::vector<double> fill_percent{0, 50, 90};
  std::vector<std::string> allocators = rw_malloc_default_allocators();
};

/// fig11 (RW Fig. 11): waves of N requests until a wave gets only nulls; utilization = bytes
/// handed out / pool bytes, for each unit and request size (0: mixed sizes in [min, max]).
struct RwFig11Options {
  RwBenchOptions common = rw_malloc_defaults();  // pool_bytes 0 here: 256 MiB
  std::vector<std::uint32_t> units{16, 64, 256};
  std::vector<std::uint32_t> sizes{0, 24, 256, 1000, 4096, 6000};
  std::uint32_t min_bytes             = 4;
  std::uint32_t max_bytes             = 8192;
  std::uint32_t threads               = 1u << 20;
  std::uint32_t max_waves             = 1000;
  std::vector<std::string> allocators = rw_malloc_default_allocators();
};

/// Bad arguments of fig8-11 that the command line cannot see alone (a size that is more pages of
/// the unit than RW_malloc serves, min above max): std::invalid_argument with a one-line message.
/// No GPU needed.
void validate_rw_fig8(RwFig8Options const& o);
void validate_rw_fig9(RwFig9Options const& o);
void validate_rw_fig10(RwFig10Options const& o);
void validate_rw_fig11(RwFig11Options const& o);

/// Each returns the process exit status: 0 done, 1 a measurement found wrong output (a page handed
/// out twice, a join result missing). Throws std::runtime_error (no GPU, CUDA errors) and
/// core::precondition_error.
int run_rw_fig7(RwFig7Options const& o);
int run_rw_fig4(RwFig4Options const& o);
int run_rw_fig12(RwFig12Options const& o);
int run_rw_fig8(RwFig8Options const& o);
int run_rw_fig9(RwFig9Options const& o);
int run_rw_fig10(RwFig10Options const& o);
int run_rw_fig11(RwFig11Options const& o);

}  // namespace heaplab::bench
