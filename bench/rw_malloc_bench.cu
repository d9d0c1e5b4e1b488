// `heaplab_bench rw fig8` .. `fig11` (rw_bench.hpp; docs/rw.md "Benchmarks"): RW_malloc (RW Alg.
// 3) against the size-class queue ("queue", size_class_queue.hpp), the experiments of RW sec.
// 5.2.2 (Fig. 8-11), where the paper compares RW_malloc with Ouroboros. Sizes are in bytes; both
// allocators use the same unit (page) of --unit-bytes: RW_malloc takes a run of
// pages_for_bytes(size, unit) pages, the queue a chunk of the next power of two of them. Every
// wave runs the one wave kernel (rw/detail/wave.cuh), timed alone with CUDA events. Every
// successful request's pages are checked on the host (rw::RunLedger: inside the pool and disjoint
// from every other request's of the run); a violation fails the figure (exit 1).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/rw/device_baselines.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/rw_malloc.hpp"
#include "heaplab/rw/size_class_queue.hpp"
#include "heaplab/rw/wave_checks.hpp"
#include "rw_bench.hpp"
#include "rw_bench_support.hpp"

namespace heaplab::bench {

namespace {

using rwb::Times;
using rwb::wrong_output;

/// RW_malloc's word width for runs of up to max_pages pages: 32 bits (the paper's) when a warp's
/// region of 32 words holds them, else 64.
std::uint32_t rw_malloc_word_bits(std::uint32_t max_pages) {
  return max_pages <= rw::max_run_pages(32) ? 32 : 64;
}

/// The allocators of fig8-11 behind one interface.
class MallocSubject {
 public:
  MallocSubject()                                = default;
  MallocSubject(MallocSubject const&)            = delete;
  MallocSubject& operator=(MallocSubject const&) = delete;
  virtual ~MallocSubject()                       = default;
  [[nodiscard]] virtual char const* name() const = 0;
  /// Back to the empty allocator (untimed).
  virtual void reset() = 0;
  /// One allocation wave: thread i asks for pages[i] pages; *ms: the kernel alone.
  virtual rw::AllocResult allocate(std::vector<std::uint32_t> const& pages,
                                   std::uint64_t seed,
                                   float* ms) = 0;
  /// One free wave of runs `allocate` handed out (count = the pages asked for); *ms: the kernel.
  virtual void free(rw::FreePageWave const& wave, float* ms) = 0;
  /// Pages a request of n pages holds: n (RW_malloc), its chunk 2^ceil(log2 n) (the queue).
  [[nodiscard]] virtual std::uint32_t held_pages(std::uint32_t n) const = 0;
};

class RwMallocSubject final : public MallocSubject {
 public:
  RwMallocSubject(std::uint32_t t, std::uint32_t max_pages, RwBenchOptions const& o)
      : pool_(config(t, max_pages, o), rw::DevicePoolOptions{false}), block_(o.block_threads) {}
  [[nodiscard]] char const* name() const override { return "rw-malloc"; }
  void reset() override { pool_.reset(); }
  rw::AllocResult allocate(std::vector<std::uint32_t> const& pages,
                           std::uint64_t seed,
                           float* ms) override {
    rw::GetPageWave w;
    w.algorithm       = core::RwAlgorithm::rw_malloc;
    w.pages           = pages;
    w.block_threads   = block_;
    w.seed            = seed;
    rw::AllocResult r = pool_.allocate(w);
    *ms               = pool_.last_wave_ms();
    return r;
  }
  void free(rw::FreePageWave const& wave, float* ms) override {
    pool_.free(wave);
    *ms = pool_.last_wave_ms();
  }
  [[nodiscard]] std::uint32_t held_pages(std::uint32_t n) const override { return n; }

 private:
  static rw::PoolConfig config(std::uint32_t t, std::uint32_t max_pages, RwBenchOptions const& o) {
    rw::PoolConfig c;
    c.num_pages  = t;
    c.page_bytes = o.page_bytes;
    c.word_bits  = rw_malloc_word_bits(max_pages);
    c.max_steps  = o.max_steps;
    return c;
  }
  rw::DevicePool pool_;
  std::uint32_t block_;
};

class QueueSubject final : public MallocSubject {
 public:
  QueueSubject(std::uint32_t t, std::uint32_t max_pages, RwBenchOptions const& o)
      : queue_(t, rw::size_classes_for(max_pages)), block_(o.block_threads) {}
  [[nodiscard]] char const* name() const override { return "queue"; }
  void reset() override { queue_.reset(); }
  rw::AllocResult allocate(std::vector<std::uint32_t> const& pages,
                           std::uint64_t,
                           float* ms) override {
    rw::AllocResult r = queue_.allocate(pages, block_);
    *ms               = queue_.last_wave_ms();
    return r;
  }
  void free(rw::FreePageWave const& wave, float* ms) override {
    queue_.free(wave);
    *ms = queue_.last_wave_ms();
  }
  [[nodiscard]] std::uint32_t held_pages(std::uint32_t n) const override {
    return rw::class_chunk_pages(rw::size_class_of(n));
  }
  [[nodiscard]] std::uint32_t classes() const { return queue_.num_classes(); }

 private:
  rw::DeviceSizeClassQueue queue_;
  std::uint32_t block_;
};

/// Request sizes in bytes: [min, max] (one size when min == max).
struct SizeRange {
  std::uint32_t min_bytes = 0;
  std::uint32_t max_bytes = 0;
};

/// Thread i's size: a seeded size in the range (rw::thread_rng, so any thread's is reproducible).
std::vector<std::uint32_t> wave_bytes(SizeRange r, std::uint32_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> bytes(n, r.max_bytes);
  if (r.min_bytes == r.max_bytes) return bytes;
  std::uint32_t const span = r.max_bytes - r.min_bytes + 1;
  for (std::uint32_t i = 0; i < n; ++i)
    bytes[i] = r.min_bytes + rw::thread_rng(seed, i).below(span);
  return bytes;
}

/// The pages each request asks for: pages_for_bytes(size, unit) (RW sec. 4.3, n = ceil(X / S)).
std::vector<std::uint32_t> pages_of(std::vector<std::uint32_t> const& bytes, std::uint32_t unit) {
  std::vector<std::uint32_t> pages(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    pages[i] = static_cast<std::uint32_t>(rw::pages_for_bytes(bytes[i], unit));
  return pages;
}

/// One allocation wave's answers after the check.
struct WaveOutcome {
  float ms            = 0;
  std::uint64_t nulls = 0;
  std::uint64_t bytes = 0;  // bytes asked for by the requests served
  rw::FreePageWave held;    // the requests served: first page, pages asked for
};

/// One allocation wave of `s`; every run it hands out goes into `ledger` (the pages held since the
/// run began): one beyond the pool or overlapping another is a wrong_output.
WaveOutcome checked_wave(MallocSubject& s,
                         rw::RunLedger& ledger,
                         std::vector<std::uint32_t> const& bytes,
                         std::uint32_t unit,
                         std::uint64_t seed) {
  std::vector<std::uint32_t> const pages = pages_of(bytes, unit);
  WaveOutcome w;
  rw::AllocResult const r = s.allocate(pages, seed, &w.ms);
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (r.first[i] == rw::kNoPage) {
      ++w.nulls;
      continue;
    }
    std::string const violation = ledger.take(r.first[i], s.held_pages(pages[i]));
    if (!violation.empty())
      throw wrong_output(std::string(s.name()) + ": thread " + std::to_string(i) + " (" +
                         std::to_string(pages[i]) + " pages): " + violation);
    w.bytes += bytes[i];
    w.held.first.push_back(r.first[i]);
    w.held.count.push_back(pages[i]);
  }
  return w;
}

/// Untimed waves of sizes in `r` until the requests served hold `percent` % of the pool's T pages
/// (each wave cut to what is missing), a wave gets nothing, or kMaxFillWaves waves ran. The pages
/// held stay held.
constexpr std::uint64_t kMaxFillWaves = 16;
void fill(MallocSubject& s,
          rw::RunLedger& ledger,
          SizeRange r,
          std::uint32_t unit,
          std::uint64_t t,
          double percent,
          std::uint64_t seed) {
  auto const target = static_cast<std::uint64_t>(static_cast<double>(t) * percent / 100.0);
  for (std::uint64_t k = 0; ledger.held_pages() < target && k < kMaxFillWaves; ++k) {
    std::vector<std::uint32_t> bytes = wave_bytes(r, 1u << 20, seed + k * 0x9E37u);
    std::uint64_t want = target - ledger.held_pages(), sum = 0;
    std::size_t keep = 0;
    while (keep < bytes.size() && sum < want)
      sum += s.held_pages(static_cast<std::uint32_t>(rw::pages_for_bytes(bytes[keep++], unit)));
    bytes.resize(keep);
    if (checked_wave(s, ledger, bytes, unit, seed + k).held.first.empty()) return;
  }
}

// ---------------------------------------------------------------- fig8, fig9, fig10

/// The two allocators of a figure on one pool of T pages of `unit` bytes, and the run's ledger.
struct Subjects {
  std::uint32_t t    = 0;
  std::uint32_t unit = 0;
  std::unique_ptr<RwMallocSubject> rw_malloc;
  std::unique_ptr<QueueSubject> queue;
  std::unique_ptr<rw::RunLedger> ledger;
  std::uint32_t word_bits = 0;
};

/// Builds the subjects for requests of up to max_bytes and prints the pool's line.
Subjects make_subjects(RwBenchOptions const& o, std::uint32_t max_bytes) {
  Subjects x;
  x.unit                      = o.page_bytes;
  x.t                         = rwb::pool_pages(o);
  auto const max_pages        = static_cast<std::uint32_t>(rw::pages_for_bytes(max_bytes, x.unit));
  x.word_bits                 = rw_malloc_word_bits(max_pages);
  x.rw_malloc                 = std::make_unique<RwMallocSubject>(x.t, max_pages, o);
  x.queue                     = std::make_unique<QueueSubject>(x.t, max_pages, o);
  x.ledger                    = std::make_unique<rw::RunLedger>(x.t);
  std::uint32_t const classes = x.queue->classes();
  std::printf(
      "pool: T = %u pages of %u B (%.3f GiB); rw-malloc: %u-bit words, runs of up to %u pages; "
      "queue: %u classes (chunks of 1 .. %u pages)\n",
      x.t,
      x.unit,
      static_cast<double>(x.t) * x.unit / (1u << 30),
      x.word_bits,
      rw::max_run_pages(x.word_bits),
      classes,
      rw::class_chunk_pages(classes - 1));
  return x;
}

/// What one cell of fig8-10 runs.
struct CellSpec {
  SizeRange sizes;
  std::uint32_t threads = 0;
  double fill_percent   = 0;      // fig10: untimed fill waves first
  bool time_free        = false;  // fig8: then the free wave of what the wave got
};

/// One allocator's numbers in one cell.
struct MallocCell {
  Times alloc;
  Times free;
  double nulls        = 0;  // per timed run (mean)
  double held_percent = 0;  // pages held before the timed wave, % of T (mean)
};

/// One run of a cell for one allocator: reset, fill, the timed wave (checked), the free wave.
void run_once(Subjects& x,
              MallocSubject& s,
              CellSpec const& spec,
              std::uint64_t seed,
              MallocCell* into,
              int runs) {
  s.reset();
  x.ledger->clear();
  if (spec.fill_percent > 0)
    fill(s, *x.ledger, spec.sizes, x.unit, x.t, spec.fill_percent, seed ^ 0xF111u);
  double const held = 100.0 * static_cast<double>(x.ledger->held_pages()) / x.t;
  std::vector<std::uint32_t> const bytes = wave_bytes(spec.sizes, spec.threads, seed);
  WaveOutcome const w                    = checked_wave(s, *x.ledger, bytes, x.unit, seed);
  float free_ms                          = 0;
  if (spec.time_free) s.free(w.held, &free_ms);
  if (into == nullptr) return;  // a warm-up run
  into->alloc.ms.push_back(w.ms);
  if (spec.time_free) into->free.ms.push_back(free_ms);
  into->nulls += static_cast<double>(w.nulls) / runs;
  into->held_percent += held / runs;
}

/// Both allocators over warm-up + timed runs; run r of both uses the same seed (same sizes).
std::pair<MallocCell, MallocCell> measure_cell(Subjects& x,
                                               CellSpec const& spec,
                                               RwBenchOptions const& o,
                                               std::uint64_t cell_index) {
  MallocCell rw_cell, queue_cell;
  for (int run = 0; run < o.warmup + o.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.seed, cell_index, run);
    bool const timed         = run >= o.warmup;
    run_once(x, *x.rw_malloc, spec, seed, timed ? &rw_cell : nullptr, o.runs);
    run_once(x, *x.queue, spec, seed, timed ? &queue_cell : nullptr, o.runs);
  }
  return {rw_cell, queue_cell};
}

char const* const kCellCsvHeader =
    "figure,allocator,unit_bytes,pool_pages,word_bits,min_bytes,max_bytes,fill_percent,threads,"
    "runs,alloc_median_ms,alloc_mean_ms,alloc_min_ms,alloc_max_ms,free_median_ms,free_mean_ms,"
    "nulls_per_run,held_percent,queue_over_this_alloc,queue_over_this_free";

void cell_csv_row(rwb::Csv const& csv,
                  char const* figure,
                  char const* who,
                  Subjects const& x,
                  CellSpec const& spec,
                  MallocCell const& c,
                  MallocCell const& queue) {
  if (!csv.file()) return;
  std::fprintf(csv.file(),
               "%s,%s,%u,%u,%u,%u,%u,%g,%u,%zu,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.2f,%.3f,%.4f,%.4f\n",
               figure,
               who,
               x.unit,
               x.t,
               x.word_bits,
               spec.sizes.min_bytes,
               spec.sizes.max_bytes,
               spec.fill_percent,
               spec.threads,
               c.alloc.ms.size(),
               c.alloc.median(),
               c.alloc.mean(),
               c.alloc.min(),
               c.alloc.max(),
               c.free.median(),
               c.free.mean(),
               c.nulls,
               c.held_percent,
               queue.alloc.median() / c.alloc.median(),
               queue.free.median() / c.free.median());
}

/// The table's head for fig8-10: `label` names the first column; free and held columns optional.
void print_cell_head(char const* label, bool with_free, bool with_held) {
  std::printf("  %-9s %8s | %10s", label, "threads", "rw ms");
  if (with_free) std::printf(" %10s", "rw free");
  if (with_held) std::printf(" %7s", "rw held");
  std::printf(" %9s | %10s", "rw nulls", "queue ms");
  if (with_free) std::printf(" %10s", "q free");
  if (with_held) std::printf(" %7s", "q held");
  std::printf(" %9s | %9s", "q nulls", "queue/rw");
  if (with_free) std::printf(" %9s", "free q/rw");
  std::printf("\n");
}

/// One row: both allocators' medians, nulls per run, and the same-run ratios queue / rw-malloc.
void print_cell_row(std::string const& label,
                    CellSpec const& spec,
                    std::pair<MallocCell, MallocCell> const& c,
                    bool with_held) {
  bool const with_free = spec.time_free;
  std::printf("  %-9s %8u |", label.c_str(), spec.threads);
  for (MallocCell const* m : {&c.first, &c.second}) {
    std::printf(" %10.4f", m->alloc.median());
    if (with_free) std::printf(" %10.4f", m->free.median());
    if (with_held) std::printf(" %6.1f%%", m->held_percent);
    std::printf(" %9.1f |", m->nulls);
  }
  std::printf(" %9s", rwb::cell(c.second.alloc.median() / c.first.alloc.median(), "%.2fx").c_str());
  if (with_free)
    std::printf(" %9s", rwb::cell(c.second.free.median() / c.first.free.median(), "%.2fx").c_str());
  std::printf("\n");
}

/// Measures, prints and writes one cell of fig8-10.
void fig_cell(Subjects& x,
              RwBenchOptions const& o,
              rwb::Csv const& csv,
              char const* figure,
              std::string const& label,
              CellSpec const& spec,
              std::uint64_t cell_index) {
  std::fprintf(stderr,
               "[rw %s] %s B, fill %g %%, N = %u ...\n",
               figure,
               label.c_str(),
               spec.fill_percent,
               spec.threads);
  auto const c = measure_cell(x, spec, o, cell_index);
  print_cell_row(label, spec, c, spec.fill_percent > 0);
  cell_csv_row(csv, figure, "rw-malloc", x, spec, c.first, c.second);
  cell_csv_row(csv, figure, "queue", x, spec, c.second, c.second);
}

/// The line every fig8-10 prints first.
void print_figure_head(char const* figure, char const* what, RwBenchOptions const& o) {
  std::printf(
      "rw %s: %s; RW_malloc vs the size-class queue (median of %d runs after %d "
      "warm-up, allocations kept within a run)\n",
      figure,
      what,
      o.runs,
      o.warmup);
}

int fig8(RwFig8Options const& o) {
  print_figure_head("fig8", "allocation and free kernel time as threads scale", o.common);
  Subjects x = make_subjects(o.common, *std::max_element(o.sizes.begin(), o.sizes.end()));
  rwb::Csv const csv(o.common.csv, kCellCsvHeader);
  std::uint64_t cell_index = 0;
  for (std::uint32_t size : o.sizes) {
    std::printf("\nsize %u B: %llu pages per request (queue: chunks of %u)\n",
                size,
                static_cast<unsigned long long>(rw::pages_for_bytes(size, x.unit)),
                x.queue->held_pages(static_cast<std::uint32_t>(rw::pages_for_bytes(size, x.unit))));
    print_cell_head("size B", true, false);
    for (std::uint32_t n : o.threads) {
      CellSpec spec;
      spec.sizes     = SizeRange{size, size};
      spec.threads   = n;
      spec.time_free = true;
      fig_cell(x, o.common, csv, "fig8", std::to_string(size), spec, cell_index++);
    }
  }
  return 0;
}

int fig9(RwFig9Options const& o) {
  print_figure_head("fig9", "allocation kernel time as the size grows", o.common);
  Subjects x = make_subjects(o.common, *std::max_element(o.sizes.begin(), o.sizes.end()));
  rwb::Csv const csv(o.common.csv, kCellCsvHeader);
  std::printf("\n");
  print_cell_head("size B", false, false);
  std::uint64_t cell_index = 0;
  for (std::uint32_t size : o.sizes) {
    CellSpec spec;
    spec.sizes   = SizeRange{size, size};
    spec.threads = o.threads;
    fig_cell(x, o.common, csv, "fig9", std::to_string(size), spec, cell_index++);
  }
  return 0;
}

int fig10(RwFig10Options const& o) {
  print_figure_head("fig10", "allocation kernel time with mixed sizes", o.common);
  Subjects x = make_subjects(o.common, *std::max_element(o.max_bytes.begin(), o.max_bytes.end()));
  rwb::Csv const csv(o.common.csv, kCellCsvHeader);
  std::uint64_t cell_index = 0;
  for (double fill_percent : o.fill_percent) {
    std::printf("\nfill %g %% of the pool first (untimed waves of the same sizes)\n", fill_percent);
    print_cell_head("bytes", false, fill_percent > 0);
    for (std::uint32_t max : o.max_bytes) {
      for (std::uint32_t n : o.threads) {
        CellSpec spec;
        spec.sizes              = SizeRange{o.min_bytes, max};
        spec.threads            = n;
        spec.fill_percent       = fill_percent;
        std::string const label = std::to_string(o.min_bytes) + ".." + std::to_string(max);
        fig_cell(x, o.common, csv, "fig10", label, spec, cell_index++);
      }
    }
  }
  return 0;
}

// ---------------------------------------------------------------- fig11

/// One allocator's utilization over the runs of a fig11 cell.
struct Utilization {
  Times fraction;  // bytes handed out / pool bytes, per run
  Times waves;     // allocation waves until the first all-null one, per run
  bool capped = false;
};

/// One run: waves of `threads` requests until a wave gets only nulls (or max_waves).
void utilization_run(Subjects& x,
                     MallocSubject& s,
                     RwFig11Options const& o,
                     SizeRange sizes,
                     std::uint64_t seed,
                     Utilization& u) {
  s.reset();
  x.ledger->clear();
  std::uint64_t bytes = 0;
  std::uint32_t wave  = 0;
  for (; wave < o.max_waves; ++wave) {
    std::uint64_t const wave_seed = seed + wave * 0x10001u;
    WaveOutcome const w =
        checked_wave(s, *x.ledger, wave_bytes(sizes, o.threads, wave_seed), x.unit, wave_seed);
    bytes += w.bytes;
    if (w.held.first.empty()) break;
  }
  bool const capped = wave == o.max_waves;  // else wave is the all-null one's index
  u.capped          = u.capped || capped;
  u.fraction.ms.push_back(
      static_cast<float>(static_cast<double>(bytes) / (static_cast<double>(x.t) * x.unit)));
  u.waves.ms.push_back(static_cast<float>(capped ? wave : wave + 1));
}

void fig11_row(Subjects& x,
               RwFig11Options const& o,
               rwb::Csv const& csv,
               std::uint32_t size,
               std::uint64_t cell_index) {
  SizeRange const sizes   = size == 0 ? SizeRange{o.min_bytes, o.max_bytes} : SizeRange{size, size};
  std::string const label = size == 0
                                ? std::to_string(o.min_bytes) + ".." + std::to_string(o.max_bytes)
                                : std::to_string(size);
  std::fprintf(stderr, "[rw fig11] unit %u B, %s B ...\n", x.unit, label.c_str());
  Utilization rw_u, queue_u;
  for (int run = 0; run < o.common.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.common.seed, cell_index, run);
    utilization_run(x, *x.rw_malloc, o, sizes, seed, rw_u);
    utilization_run(x, *x.queue, o, sizes, seed, queue_u);
  }
  double const ratio = rw_u.fraction.median() / queue_u.fraction.median();
  std::printf("  %6u %11s | %8.2f%% %6.0f | %8.2f%% %6.0f | %8s%s\n",
              x.unit,
              label.c_str(),
              100 * rw_u.fraction.median(),
              rw_u.waves.median(),
              100 * queue_u.fraction.median(),
              queue_u.waves.median(),
              rwb::cell(ratio, "%.3f").c_str(),
              rw_u.capped || queue_u.capped ? "  (--max-waves reached)" : "");
  for (auto const* u : {&rw_u, &queue_u}) {
    if (!csv.file()) break;
    std::fprintf(csv.file(),
                 "fig11,%s,%u,%u,%u,%u,%u,%zu,%.6f,%.6f,%.6f,%.1f,%.4f,%s\n",
                 u == &rw_u ? "rw-malloc" : "queue",
                 x.unit,
                 x.t,
                 sizes.min_bytes,
                 sizes.max_bytes,
                 o.threads,
                 u->fraction.ms.size(),
                 u->fraction.median(),
                 u->fraction.min(),
                 u->fraction.max(),
                 u->waves.median(),
                 u->fraction.median() / queue_u.fraction.median(),
                 u->capped ? "max-waves" : "ok");
  }
}

int fig11(RwFig11Options const& o) {
  std::printf(
      "rw fig11: memory utilization (bytes handed out / pool bytes) when allocation waves "
      "of %u requests run until one gets only nulls; median of %d runs\n",
      o.threads,
      o.common.runs);
  rwb::Csv const csv(o.common.csv,
                     "figure,allocator,unit_bytes,pool_pages,min_bytes,max_bytes,threads,runs,"
                     "utilization_median,utilization_min,utilization_max,waves_median,"
                     "over_queue,status");
  std::uint64_t cell_index = 0;
  std::uint32_t const largest =
      std::max(o.max_bytes, *std::max_element(o.sizes.begin(), o.sizes.end()));
  for (std::uint32_t unit : o.units) {
    RwBenchOptions common = o.common;
    common.page_bytes     = unit;
    if (common.pool_bytes == 0) common.pool_bytes = std::uint64_t{256} << 20;
    std::printf("\n");
    Subjects x = make_subjects(common, largest);
    std::printf("  %6s %11s | %9s %6s | %9s %6s | %8s\n",
                "unit B",
                "size B",
                "rw util",
                "waves",
                "q util",
                "waves",
                "rw/queue");
    for (std::uint32_t size : o.sizes) fig11_row(x, o, csv, size, cell_index++);
  }
  return 0;
}

// ---------------------------------------------------------------- argument checks

/// A request of max_bytes in units of `unit` must fit one RW_malloc run (32 words of 64 bits).
void check_request_size(char const* figure, std::uint32_t max_bytes, std::uint32_t unit) {
  std::uint64_t const pages = rw::pages_for_bytes(max_bytes, unit);
  if (pages > rw::max_run_pages(64))
    throw std::invalid_argument(
        std::string("rw ") + figure + ": a request of " + std::to_string(max_bytes) + " B is " +
        std::to_string(pages) + " pages of " + std::to_string(unit) +
        " B; RW_malloc serves at most " + std::to_string(rw::max_run_pages(64)) +
        " (raise --unit-bytes or lower the size)");
}

/// Sizes of at least 1 byte (0 only where it means "mixed": fig11), each within one run.
void check_sizes(char const* figure,
                 std::vector<std::uint32_t> const& sizes,
                 std::uint32_t unit,
                 bool zero_is_mixed = false) {
  if (sizes.empty()) throw std::invalid_argument(std::string("rw ") + figure + ": no size");
  for (std::uint32_t s : sizes) {
    if (s == 0 && !zero_is_mixed)
      throw std::invalid_argument(std::string("rw ") + figure + ": a size of 0 bytes");
    check_request_size(figure, s, unit);
  }
}

void check_range(char const* figure, std::uint32_t min_bytes, std::uint32_t max_bytes) {
  if (min_bytes == 0)
    throw std::invalid_argument(std::string("rw ") + figure +
                                ": --min-bytes 0 (a request of 0 bytes)");
  if (min_bytes > max_bytes)
    throw std::invalid_argument(std::string("rw ") + figure + ": --min-bytes " +
                                std::to_string(min_bytes) + " is above the largest size " +
                                std::to_string(max_bytes));
}

}  // namespace

void validate_rw_fig8(RwFig8Options const& o) { check_sizes("fig8", o.sizes, o.common.page_bytes); }

void validate_rw_fig9(RwFig9Options const& o) { check_sizes("fig9", o.sizes, o.common.page_bytes); }

void validate_rw_fig10(RwFig10Options const& o) {
  check_sizes("fig10", o.max_bytes, o.common.page_bytes);
  for (std::uint32_t max : o.max_bytes) check_range("fig10", o.min_bytes, max);
}

void validate_rw_fig11(RwFig11Options const& o) {
  if (o.units.empty()) throw std::invalid_argument("rw fig11: no unit");
  for (std::uint32_t unit : o.units) {
    check_sizes("fig11", o.sizes, unit, true);
    check_request_size("fig11", o.max_bytes, unit);
  }
  check_range("fig11", o.min_bytes, o.max_bytes);
}

int run_rw_fig8(RwFig8Options const& o) {
  validate_rw_fig8(o);
  return rwb::reporting_wrong_output([&] { return fig8(o); });
}

int run_rw_fig9(RwFig9Options const& o) {
  validate_rw_fig9(o);
  return rwb::reporting_wrong_output([&] { return fig9(o); });
}

int run_rw_fig10(RwFig10Options const& o) {
  validate_rw_fig10(o);
  return rwb::reporting_wrong_output([&] { return fig10(o); });
}

int run_rw_fig11(RwFig11Options const& o) {
  validate_rw_fig11(o);
  return rwb::reporting_wrong_output([&] { return fig11(o); });
}

}  // namespace heaplab::bench
