// `heaplab_bench rw fig8` .. `fig11` (rw_bench.hpp; docs/rw.md "Benchmarks"): RW_malloc (RW Alg.
// 3) against the size-class queue ("queue", size_class_queue.hpp) and, in a build with it,
// Ouroboros itself (OuroborosSubject below), the experiments of RW sec. 5.2.2 (Fig. 8-11), where
// the paper compares RW_malloc with Ouroboros. Sizes are in bytes; RW_malloc and the queue use the
// same unit (page) of --unit-bytes: RW_malloc takes a run of pages_for_bytes(size, unit) pages, the
// queue a chunk of the next power of two of them; Ouroboros a page of 16 B << q. Every wave is
// timed alone with CUDA events. Every successful request's granules are checked on the host
// (rw::RunLedger per allocator: inside its pool and disjoint from every other request's of the
// run); a violation fails the figure (exit 1).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
#include "heaplab/families/malloc/ouroboros_geometry.hpp"
#include "ouroboros_bench.hpp"
#endif
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
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
namespace ouro = malloc_family::ouroboros;
#endif

/// RW_malloc's word width for runs of up to max_pages pages: 32 bits (the paper's) when a warp's
/// region of 32 words holds them, else 64.
std::uint32_t rw_malloc_word_bits(std::uint32_t max_pages) {
  return max_pages <= rw::max_run_pages(32) ? 32 : 64;
}

/// A wave's served requests: each one's first granule and the bytes it asked for.
struct Held {
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> bytes;
};

/// The allocators of fig8-11 behind one interface. Each hands out granules of its own size (a
/// unit page, or Ouroboros' 16 bytes) and keeps the ledger of the granules it handed out in the
/// current run (rw::RunLedger: a grant beyond them or overlapping another is a wrong output).
class MallocSubject {
 public:
  MallocSubject(std::uint64_t granules, std::uint32_t granule_bytes)
      : ledger_(checked_granules(granules)), granule_bytes_(granule_bytes) {}
  MallocSubject(MallocSubject const&)            = delete;
  MallocSubject& operator=(MallocSubject const&) = delete;
  virtual ~MallocSubject()                       = default;
  [[nodiscard]] virtual char const* name() const = 0;
  /// Its part of the pool line.
  [[nodiscard]] virtual std::string describe() const = 0;
  /// Back to the empty allocator (untimed).
  virtual void reset() = 0;
  /// One allocation wave: thread i asks for bytes[i]; first[i] is its grant's first granule
  /// (rw::kNoPage: none); *ms: the kernel alone.
  virtual std::vector<std::uint32_t> allocate(std::vector<std::uint32_t> const& bytes,
                                              std::uint64_t seed,
                                              float* ms) = 0;
  /// One free wave of requests `allocate` served; *ms: the kernel.
  virtual void free(Held const& held, float* ms) = 0;
  /// Granules a request of `bytes` holds: its pages (RW_malloc), its chunk (the queue), its page
  /// (Ouroboros).
  [[nodiscard]] virtual std::uint32_t held_granules(std::uint32_t bytes) const = 0;
  /// Whether the last allocate declined to run (Ouroboros' guard, OuroborosSubject): all nulls.
  [[nodiscard]] virtual bool last_wave_declined() const { return false; }
  [[nodiscard]] std::uint32_t granule_bytes() const { return granule_bytes_; }
  [[nodiscard]] rw::RunLedger& ledger() { return ledger_; }
  /// Bytes held since the run began (whole granules).
  [[nodiscard]] std::uint64_t held_bytes() const { return ledger_.held_pages() * granule_bytes_; }

 private:
  static std::uint32_t checked_granules(std::uint64_t g) {
    if (g == 0 || g > 0xFFFFFFFFull)
      throw std::runtime_error("a pool of " + std::to_string(g) +
                               " granules (a ledger holds 1 .. 2^32 - 1): lower --pool-bytes");
    return static_cast<std::uint32_t>(g);
  }
  rw::RunLedger ledger_;
  std::uint32_t granule_bytes_;
};

/// The pages each request asks for: pages_for_bytes(size, unit) (RW sec. 4.3, n = ceil(X / S)).
std::vector<std::uint32_t> pages_of(std::vector<std::uint32_t> const& bytes, std::uint32_t unit) {
  std::vector<std::uint32_t> pages(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i)
    pages[i] = static_cast<std::uint32_t>(rw::pages_for_bytes(bytes[i], unit));
  return pages;
}

/// The free wave of served page requests: first page, pages asked for.
rw::FreePageWave page_wave(Held const& held, std::uint32_t unit) {
  return rw::FreePageWave{held.first, pages_of(held.bytes, unit)};
}

class RwMallocSubject final : public MallocSubject {
 public:
  RwMallocSubject(std::uint32_t t, std::uint32_t max_pages, RwBenchOptions const& o)
      : MallocSubject(t, o.page_bytes),
        pool_(config(t, max_pages, o), rw::DevicePoolOptions{false}),
        block_(o.block_threads),
        word_bits_(rw_malloc_word_bits(max_pages)) {}
  [[nodiscard]] char const* name() const override { return "rw-malloc"; }
  [[nodiscard]] std::string describe() const override {
    return "rw-malloc: " + std::to_string(word_bits_) + "-bit words, runs of up to " +
           std::to_string(rw::max_run_pages(word_bits_)) + " pages";
  }
  void reset() override { pool_.reset(); }
  std::vector<std::uint32_t> allocate(std::vector<std::uint32_t> const& bytes,
                                      std::uint64_t seed,
                                      float* ms) override {
    rw::GetPageWave w;
    w.algorithm       = core::RwAlgorithm::rw_malloc;
    w.pages           = pages_of(bytes, granule_bytes());
    w.block_threads   = block_;
    w.seed            = seed;
    rw::AllocResult r = pool_.allocate(w);
    *ms               = pool_.last_wave_ms();
    return std::move(r.first);
  }
  void free(Held const& held, float* ms) override {
    pool_.free(page_wave(held, granule_bytes()));
    *ms = pool_.last_wave_ms();
  }
  [[nodiscard]] std::uint32_t held_granules(std::uint32_t bytes) const override {
    return static_cast<std::uint32_t>(rw::pages_for_bytes(bytes, granule_bytes()));
  }
  [[nodiscard]] std::uint32_t word_bits() const { return word_bits_; }

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
  std::uint32_t word_bits_;
};

class QueueSubject final : public MallocSubject {
 public:
  QueueSubject(std::uint32_t t, std::uint32_t max_pages, RwBenchOptions const& o)
      : MallocSubject(t, o.page_bytes),
        queue_(t, rw::size_classes_for(max_pages)),
        block_(o.block_threads) {}
  [[nodiscard]] char const* name() const override { return "queue"; }
  [[nodiscard]] std::string describe() const override {
    return "queue: " + std::to_string(queue_.num_classes()) + " classes (chunks of 1 .. " +
           std::to_string(rw::class_chunk_pages(queue_.num_classes() - 1)) + " pages)";
  }
  void reset() override { queue_.reset(); }
  std::vector<std::uint32_t> allocate(std::vector<std::uint32_t> const& bytes,
                                      std::uint64_t,
                                      float* ms) override {
    rw::AllocResult r = queue_.allocate(pages_of(bytes, granule_bytes()), block_);
    *ms               = queue_.last_wave_ms();
    return std::move(r.first);
  }
  void free(Held const& held, float* ms) override {
    queue_.free(page_wave(held, granule_bytes()));
    *ms = queue_.last_wave_ms();
  }
  [[nodiscard]] std::uint32_t held_granules(std::uint32_t bytes) const override {
    return rw::class_chunk_pages(
        rw::size_class_of(static_cast<std::uint32_t>(rw::pages_for_bytes(bytes, granule_bytes()))));
  }

 private:
  rw::DeviceSizeClassQueue queue_;
  std::uint32_t block_;
};

#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
/// Ouroboros (ouroboros_bench.hpp, tools/fetch-ouroboros), the allocator RW sec. 5.2.2
/// compares RW_malloc with: chunks whose 8 KiB of pages hold the pool's bytes (their 128 B of
/// metadata on top), ten queues of pages of 16 B .. 8 KiB; each request asks for its bytes.
/// Granules of 16 bytes from the first chunk. Ouroboros has no out-of-memory path (its
/// OuroborosWaves), so the instance has a guard of chunks past the pool, as large as the figure's
/// largest wave can take: a grant in the guard counts as a null (out of the compared pool's
/// memory), and a wave that the guard might not hold any more is not started (all nulls,
/// last_wave_declined; a timed wave so declined fails the figure). A grant that is not a page of a
/// chunk, or lies past the guard, is a wrong output (ouroboros::classify).
class OuroborosSubject final : public MallocSubject {
 public:
  using Waves = OuroborosWaves;
  OuroborosSubject(Waves::Queues queues,
                   std::uint64_t pool_chunks,
                   std::uint64_t guard_chunks,
                   std::uint32_t block_threads)
      : OuroborosSubject(std::make_unique<Waves>(queues, pool_chunks, guard_chunks),
                         block_threads) {}
  [[nodiscard]] char const* name() const override { return waves_->name(); }
  [[nodiscard]] std::string describe() const override {
    return std::string(name()) + ": " + std::to_string(waves_->pool_chunks()) + " chunks of " +
           std::to_string(ouro::kChunkStride) + " B and a guard of " +
           std::to_string(guard_chunks());
  }
  void reset() override { waves_->reset(); }
  std::vector<std::uint32_t> allocate(std::vector<std::uint32_t> const& bytes,
                                      std::uint64_t,
                                      float* ms) override {
    std::vector<std::uint32_t> first(bytes.size(), rw::kNoPage);
    *ms       = 0;
    declined_ = waves_->chunks_taken() + ouro::wave_chunks(bytes) > waves_->usable_chunks();
    if (declined_) return first;
    std::vector<std::uint64_t> const offsets = waves_->allocate(bytes, block_, ms);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (offsets[i] == Waves::kNull) continue;
      ouro::Grant const g = ouro::classify(
          offsets[i], ouro::page_bytes(bytes[i]), waves_->pool_chunks(), guard_chunks());
      if (g == ouro::Grant::in_guard) continue;  // beyond the pool: a null here
      if (g != ouro::Grant::in_pool)
        throw rwb::wrong_output(std::string(name()) + ": thread " + std::to_string(i) + " (" +
                                std::to_string(bytes[i]) + " B) got offset " +
                                std::to_string(offsets[i]) + ", " + ouro::grant_name(g));
      first[i] = static_cast<std::uint32_t>(offsets[i] / kGranule);
    }
    return first;
  }
  void free(Held const& held, float* ms) override {
    std::vector<std::uint64_t> offsets(held.first.size());
    for (std::size_t i = 0; i < offsets.size(); ++i) offsets[i] = held.first[i] * kGranule;
    waves_->free(offsets, block_, ms);
  }
  [[nodiscard]] std::uint32_t held_granules(std::uint32_t bytes) const override {
    return static_cast<std::uint32_t>(ouro::page_bytes(bytes) / kGranule);
  }
  [[nodiscard]] bool last_wave_declined() const override { return declined_; }

 private:
  static constexpr std::uint64_t kGranule = ouro::kSmallestPage;

  OuroborosSubject(std::unique_ptr<Waves> waves, std::uint32_t block_threads)
      : MallocSubject(waves->usable_chunks() * ouro::kChunkStride / kGranule, kGranule),
        waves_(std::move(waves)),
        block_(block_threads) {}
  [[nodiscard]] std::uint64_t guard_chunks() const {
    return waves_->usable_chunks() - waves_->pool_chunks();
  }
  std::unique_ptr<Waves> waves_;
  std::uint32_t block_;
  bool declined_ = false;
};
#endif

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

/// One allocation wave's answers after the check.
struct WaveOutcome {
  float ms            = 0;
  std::uint64_t nulls = 0;
  std::uint64_t bytes = 0;  // bytes asked for by the requests served
  Held held;                // the requests served
};

/// One allocation wave of `s`; every grant goes into s's ledger (the granules held since the run
/// began): one beyond its pool or overlapping another is a wrong_output.
WaveOutcome checked_wave(MallocSubject& s,
                         std::vector<std::uint32_t> const& bytes,
                         std::uint64_t seed) {
  WaveOutcome w;
  std::vector<std::uint32_t> const first = s.allocate(bytes, seed, &w.ms);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (first[i] == rw::kNoPage) {
      ++w.nulls;
      continue;
    }
    std::string const violation = s.ledger().take(first[i], s.held_granules(bytes[i]));
    if (!violation.empty())
      throw wrong_output(std::string(s.name()) + ": thread " + std::to_string(i) + " (" +
                         std::to_string(bytes[i]) + " B; granules of " +
                         std::to_string(s.granule_bytes()) + " B): " + violation);
    w.bytes += bytes[i];
    w.held.first.push_back(first[i]);
    w.held.bytes.push_back(bytes[i]);
  }
  return w;
}

/// Untimed waves of sizes in `r` until the requests served hold `percent` % of the pool's bytes
/// (each wave cut to what is missing), a wave gets nothing, or kMaxFillWaves waves ran. The grants
/// stay held.
constexpr std::uint64_t kMaxFillWaves = 16;
constexpr std::uint32_t kFillWave     = 1u << 20;  // requests per fill wave, at most
void fill(
    MallocSubject& s, SizeRange r, std::uint64_t pool_bytes, double percent, std::uint64_t seed) {
  auto const target = static_cast<std::uint64_t>(static_cast<double>(pool_bytes) * percent / 100.0);
  for (std::uint64_t k = 0; s.held_bytes() < target && k < kMaxFillWaves; ++k) {
    std::vector<std::uint32_t> bytes = wave_bytes(r, kFillWave, seed + k * 0x9E37u);
    std::uint64_t const want         = target - s.held_bytes();
    std::uint64_t sum                = 0;
    std::size_t keep                 = 0;
    while (keep < bytes.size() && sum < want)
      sum += std::uint64_t{s.held_granules(bytes[keep++])} * s.granule_bytes();
    bytes.resize(keep);
    if (checked_wave(s, bytes, seed + k).held.first.empty()) return;
  }
}

// ---------------------------------------------------------------- fig8, fig9, fig10

/// The allocators of a figure, each on a pool of T pages of `unit` bytes (Ouroboros: chunks for as
/// many bytes), in --allocators order.
struct Subjects {
  std::uint32_t t    = 0;
  std::uint32_t unit = 0;
  std::vector<std::unique_ptr<MallocSubject>> list;
  [[nodiscard]] std::uint64_t pool_bytes() const { return std::uint64_t{t} * unit; }
  /// Whether RW_malloc is listed first (fig11 then prints rw/x).
  [[nodiscard]] bool rw_malloc_first() const {
    return !list.empty() && std::string(list[0]->name()) == "rw-malloc";
  }
  /// The subject called `name`, or null.
  [[nodiscard]] MallocSubject const* find(char const* name) const {
    for (auto const& s : list)
      if (std::string(s->name()) == name) return s.get();
    return nullptr;
  }
};

std::unique_ptr<MallocSubject> make_subject(std::string const& name,
                                            RwBenchOptions const& o,
                                            std::uint32_t t,
                                            std::uint32_t max_bytes,
                                            std::uint64_t max_wave) {
  auto const max_pages = static_cast<std::uint32_t>(rw::pages_for_bytes(max_bytes, o.page_bytes));
  if (name == "rw-malloc") return std::make_unique<RwMallocSubject>(t, max_pages, o);
  if (name == "queue") return std::make_unique<QueueSubject>(t, max_pages, o);
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
  std::uint64_t const pool  = ouro::pool_chunks_for(std::uint64_t{t} * o.page_bytes);
  std::uint64_t const guard = ouro::guard_chunks(max_wave, max_bytes);
  if (auto const queues = OuroborosWaves::parse(name))
    return std::make_unique<OuroborosSubject>(*queues, pool, guard, o.block_threads);
#else
  (void)max_wave;
#endif
  throw std::invalid_argument("rw: unknown allocator '" + name + "'");
}

/// Builds the subjects for requests of up to max_bytes in waves of up to max_wave requests and
/// prints the pool's line.
Subjects make_subjects(RwBenchOptions const& o,
                       std::vector<std::string> const& allocators,
                       std::uint32_t max_bytes,
                       std::uint64_t max_wave) {
  Subjects x;
  x.unit = o.page_bytes;
  x.t    = rwb::pool_pages(o);
  std::printf("pool: T = %u pages of %u B (%.3f GiB)",
              x.t,
              x.unit,
              static_cast<double>(x.pool_bytes()) / (1u << 30));
  for (auto const& name : allocators) {
    x.list.push_back(make_subject(name, o, x.t, max_bytes, max_wave));
    std::printf("; %s", x.list.back()->describe().c_str());
  }
  std::printf("\n");
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
  double held_percent = 0;  // bytes held before the timed wave, % of the pool (mean)
};

/// One run of a cell for one allocator: reset, fill, the timed wave (checked), the free wave.
void run_once(Subjects const& x,
              MallocSubject& s,
              CellSpec const& spec,
              std::uint64_t seed,
              MallocCell* into,
              int runs) {
  s.reset();
  s.ledger().clear();
  if (spec.fill_percent > 0) fill(s, spec.sizes, x.pool_bytes(), spec.fill_percent, seed ^ 0xF111u);
  double const held   = 100.0 * static_cast<double>(s.held_bytes()) / x.pool_bytes();
  WaveOutcome const w = checked_wave(s, wave_bytes(spec.sizes, spec.threads, seed), seed);
  if (s.last_wave_declined())
    throw std::runtime_error(std::string(s.name()) +
                             ": the guard past its pool could not hold the timed wave after the "
                             "fill (lower --fill-percent or --threads)");
  float free_ms = 0;
  if (spec.time_free) s.free(w.held, &free_ms);
  if (into == nullptr) return;  // a warm-up run
  into->alloc.ms.push_back(w.ms);
  if (spec.time_free) into->free.ms.push_back(free_ms);
  into->nulls += static_cast<double>(w.nulls) / runs;
  into->held_percent += held / runs;
}

/// Every allocator over warm-up + timed runs; run r of each uses the same seed (same sizes).
std::vector<MallocCell> measure_cell(Subjects const& x,
                                     CellSpec const& spec,
                                     RwBenchOptions const& o,
                                     std::uint64_t cell_index) {
  std::vector<MallocCell> cells(x.list.size());
  for (int run = 0; run < o.warmup + o.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.seed, cell_index, run);
    bool const timed         = run >= o.warmup;
    for (std::size_t k = 0; k < x.list.size(); ++k)
      run_once(x, *x.list[k], spec, seed, timed ? &cells[k] : nullptr, o.runs);
  }
  return cells;
}

char const* const kCellCsvHeader =
    "figure,allocator,unit_bytes,pool_pages,word_bits,min_bytes,max_bytes,fill_percent,threads,"
    "runs,alloc_median_ms,alloc_mean_ms,alloc_min_ms,alloc_max_ms,free_median_ms,free_mean_ms,"
    "nulls_per_run,held_percent,queue_over_this_alloc,queue_over_this_free,"
    "this_over_rw_malloc_alloc,this_over_rw_malloc_free";

/// The cell of the allocator called `name` (none: NaN ratios).
MallocCell const* cell_of(Subjects const& x, std::vector<MallocCell> const& c, char const* name) {
  for (std::size_t k = 0; k < x.list.size(); ++k)
    if (std::string(x.list[k]->name()) == name) return &c[k];
  return nullptr;
}

double median_ratio(MallocCell const* a, MallocCell const* b, Times MallocCell::*t) {
  if (a == nullptr || b == nullptr) return std::numeric_limits<double>::quiet_NaN();
  return (a->*t).median() / (b->*t).median();
}

void cell_csv_rows(rwb::Csv const& csv,
                   char const* figure,
                   Subjects const& x,
                   CellSpec const& spec,
                   std::vector<MallocCell> const& cells) {
  if (!csv.file()) return;
  auto const* rw_bits   = dynamic_cast<RwMallocSubject const*>(x.find("rw-malloc"));
  MallocCell const* q   = cell_of(x, cells, "queue");
  MallocCell const* rwm = cell_of(x, cells, "rw-malloc");
  for (std::size_t k = 0; k < x.list.size(); ++k) {
    MallocCell const& c = cells[k];
    std::fprintf(csv.file(),
                 "%s,%s,%u,%u,%u,%u,%u,%g,%u,%s,%.5f,%.5f,%.2f,%.3f,%.4f,%.4f,%.4f,"
                 "%.4f\n",
                 figure,
                 x.list[k]->name(),
                 x.unit,
                 x.t,
                 rw_bits != nullptr ? rw_bits->word_bits() : 0,
                 spec.sizes.min_bytes,
                 spec.sizes.max_bytes,
                 spec.fill_percent,
                 spec.threads,
                 c.alloc.csv().c_str(),
                 c.free.median(),
                 c.free.mean(),
                 c.nulls,
                 c.held_percent,
                 median_ratio(q, &c, &MallocCell::alloc),
                 median_ratio(q, &c, &MallocCell::free),
                 median_ratio(&c, rwm, &MallocCell::alloc),
                 median_ratio(&c, rwm, &MallocCell::free));
  }
}

/// A short column name for an allocator: "rw", "queue", "o-page", "o-chunk".
std::string short_name(MallocSubject const& s) {
  std::string const n = s.name();
  if (n == "rw-malloc") return "rw";
  if (n.rfind("ouroboros-", 0) == 0) return "o-" + n.substr(10);
  return n;
}

/// The table's head for fig8-10: `label` names the first column; free and held columns optional;
/// then, for every allocator but rw-malloc, its median over rw-malloc's (x/rw).
void print_cell_head(Subjects const& x, char const* label, bool with_free, bool with_held) {
  std::printf("  %-9s %8s |", label, "threads");
  for (auto const& s : x.list) {
    std::string const n = short_name(*s);
    std::printf(" %10s", (n + " ms").c_str());
    if (with_free) std::printf(" %10s", (n + " free").c_str());
    if (with_held) std::printf(" %8s", (n + " held").c_str());
    std::printf(" %9s |", (n + " nulls").c_str());
  }
  bool const ratios = x.find("rw-malloc") != nullptr;
  for (auto const& s : x.list) {
    if (!ratios || std::string(s->name()) == "rw-malloc") continue;
    std::printf(" %10s", (short_name(*s) + "/rw").c_str());
    if (with_free) std::printf(" %10s", ("free " + short_name(*s) + "/rw").c_str());
  }
  std::printf("\n");
}

/// One row: each allocator's medians, nulls per run, and the same-run ratios x / rw-malloc.
void print_cell_row(Subjects const& x,
                    std::string const& label,
                    CellSpec const& spec,
                    std::vector<MallocCell> const& cells,
                    bool with_held) {
  bool const with_free = spec.time_free;
  std::printf("  %-9s %8u |", label.c_str(), spec.threads);
  for (MallocCell const& m : cells) {
    std::printf(" %10.4f", m.alloc.median());
    if (with_free) std::printf(" %10.4f", m.free.median());
    if (with_held) std::printf(" %7.1f%%", m.held_percent);
    std::printf(" %9.1f |", m.nulls);
  }
  MallocCell const* rwm = cell_of(x, cells, "rw-malloc");
  for (std::size_t k = 0; k < cells.size() && rwm != nullptr; ++k) {
    if (&cells[k] == rwm) continue;
    std::printf(" %10s",
                rwb::cell(median_ratio(&cells[k], rwm, &MallocCell::alloc), "%.2fx").c_str());
    if (with_free)
      std::printf(" %10s",
                  rwb::cell(median_ratio(&cells[k], rwm, &MallocCell::free), "%.2fx").c_str());
  }
  std::printf("\n");
}

/// Measures, prints and writes one cell of fig8-10.
void fig_cell(Subjects const& x,
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
  auto const cells = measure_cell(x, spec, o, cell_index);
  print_cell_row(x, label, spec, cells, spec.fill_percent > 0);
  cell_csv_rows(csv, figure, x, spec, cells);
}

/// The line every fig8-10 prints first.
void print_figure_head(char const* figure,
                       char const* what,
                       RwBenchOptions const& o,
                       std::vector<std::string> const& allocators) {
  std::string names;
  for (auto const& a : allocators) names += (names.empty() ? "" : ", ") + a;
  std::printf("rw %s: %s; %s (median of %d runs after %d warm-up, allocations kept within a run)\n",
              figure,
              what,
              names.c_str(),
              o.runs,
              o.warmup);
}

std::uint32_t largest(std::vector<std::uint32_t> const& v) {
  return *std::max_element(v.begin(), v.end());
}

int fig8(RwFig8Options const& o) {
  print_figure_head(
      "fig8", "allocation and free kernel time as threads scale", o.common, o.allocators);
  Subjects const x = make_subjects(o.common, o.allocators, largest(o.sizes), largest(o.threads));
  rwb::Csv const csv(o.common.csv, kCellCsvHeader);
  std::uint64_t cell_index = 0;
  for (std::uint32_t size : o.sizes) {
    std::printf("\nsize %u B: %llu pages of the unit per request\n",
                size,
                static_cast<unsigned long long>(rw::pages_for_bytes(size, x.unit)));
    print_cell_head(x, "size B", true, false);
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
  print_figure_head("fig9", "allocation kernel time as the size grows", o.common, o.allocators);
  Subjects const x = make_subjects(o.common, o.allocators, largest(o.sizes), o.threads);
  rwb::Csv const csv(o.common.csv, kCellCsvHeader);
  std::printf("\n");
  print_cell_head(x, "size B", false, false);
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
  print_figure_head("fig10", "allocation kernel time with mixed sizes", o.common, o.allocators);
  bool const fills =
      std::any_of(o.fill_percent.begin(), o.fill_percent.end(), [](double f) { return f > 0; });
  Subjects const x = make_subjects(o.common,
                                   o.allocators,
                                   largest(o.max_bytes),
                                   std::max(largest(o.threads), fills ? kFillWave : 0u));
  rwb::Csv const csv(o.common.csv, kCellCsvHeader);
  std::uint64_t cell_index = 0;
  for (double fill_percent : o.fill_percent) {
    std::printf("\nfill %g %% of the pool first (untimed waves of the same sizes)\n", fill_percent);
    print_cell_head(x, "bytes", false, fill_percent > 0);
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
void utilization_run(Subjects const& x,
                     MallocSubject& s,
                     RwFig11Options const& o,
                     SizeRange sizes,
                     std::uint64_t seed,
                     Utilization& u) {
  s.reset();
  s.ledger().clear();
  std::uint64_t bytes = 0;
  std::uint32_t wave  = 0;
  for (; wave < o.max_waves; ++wave) {
    std::uint64_t const wave_seed = seed + wave * 0x10001u;
    WaveOutcome const w = checked_wave(s, wave_bytes(sizes, o.threads, wave_seed), wave_seed);
    bytes += w.bytes;
    if (w.held.first.empty()) break;
  }
  bool const capped = wave == o.max_waves;  // else wave is the all-null one's index
  u.capped          = u.capped || capped;
  u.fraction.ms.push_back(
      static_cast<float>(static_cast<double>(bytes) / static_cast<double>(x.pool_bytes())));
  u.waves.ms.push_back(static_cast<float>(capped ? wave : wave + 1));
}

void fig11_row(Subjects const& x,
               RwFig11Options const& o,
               rwb::Csv const& csv,
               std::uint32_t size,
               std::uint64_t cell_index) {
  SizeRange const sizes   = size == 0 ? SizeRange{o.min_bytes, o.max_bytes} : SizeRange{size, size};
  std::string const label = size == 0
                                ? std::to_string(o.min_bytes) + ".." + std::to_string(o.max_bytes)
                                : std::to_string(size);
  std::fprintf(stderr, "[rw fig11] unit %u B, %s B ...\n", x.unit, label.c_str());
  std::vector<Utilization> u(x.list.size());
  for (int run = 0; run < o.common.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.common.seed, cell_index, run);
    for (std::size_t k = 0; k < x.list.size(); ++k)
      utilization_run(x, *x.list[k], o, sizes, seed, u[k]);
  }
  std::printf("  %6u %11s |", x.unit, label.c_str());
  bool capped = false;
  for (auto const& v : u) {
    std::printf(" %8.2f%% %6.0f |", 100 * v.fraction.median(), v.waves.median());
    capped = capped || v.capped;
  }
  for (std::size_t k = 1; k < x.list.size() && x.rw_malloc_first(); ++k)  // rw/x utilization
    std::printf(" %10s",
                rwb::cell(u[0].fraction.median() / u[k].fraction.median(), "%.3f").c_str());
  std::printf("%s\n", capped ? "  (--max-waves reached)" : "");
  Utilization const* queue = nullptr;
  for (std::size_t k = 0; k < x.list.size(); ++k)
    if (std::string(x.list[k]->name()) == "queue") queue = &u[k];
  for (std::size_t k = 0; k < x.list.size() && csv.file(); ++k)
    std::fprintf(csv.file(),
                 "fig11,%s,%u,%u,%u,%u,%u,%zu,%.6f,%.6f,%.6f,%.1f,%.4f,%s\n",
                 x.list[k]->name(),
                 x.unit,
                 x.t,
                 sizes.min_bytes,
                 sizes.max_bytes,
                 o.threads,
                 u[k].fraction.ms.size(),
                 u[k].fraction.median(),
                 u[k].fraction.min(),
                 u[k].fraction.max(),
                 u[k].waves.median(),
                 queue != nullptr ? u[k].fraction.median() / queue->fraction.median()
                                  : std::numeric_limits<double>::quiet_NaN(),
                 u[k].capped ? "max-waves" : "ok");
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
  std::uint64_t cell_index      = 0;
  std::uint32_t const max_bytes = std::max(o.max_bytes, largest(o.sizes));
  for (std::uint32_t unit : o.units) {
    RwBenchOptions common = o.common;
    common.page_bytes     = unit;
    if (common.pool_bytes == 0) common.pool_bytes = std::uint64_t{256} << 20;
    std::printf("\n");
    Subjects const x = make_subjects(common, o.allocators, max_bytes, o.threads);
    std::printf("  %6s %11s |", "unit B", "size B");
    for (auto const& s : x.list)
      std::printf(" %9s %6s |", (short_name(*s) + " util").c_str(), "waves");
    for (std::size_t k = 1; k < x.list.size() && x.rw_malloc_first(); ++k)
      std::printf(" %10s", ("rw/" + short_name(*x.list[k])).c_str());
    std::printf("\n");
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

/// At least one allocator, each one this build has, none twice.
void check_allocators(char const* figure, std::vector<std::string> const& allocators) {
  if (allocators.empty())
    throw std::invalid_argument(std::string("rw ") + figure + ": no allocator");
  std::vector<std::string> const known = rw_malloc_allocator_names();
  for (std::size_t i = 0; i < allocators.size(); ++i) {
    std::string const& a = allocators[i];
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      std::string list;
      for (auto const& k : known) list += (list.empty() ? "" : ", ") + k;
      bool const peer = a.rfind("ouroboros-", 0) == 0 && !rw_ouroboros_built();
      throw std::invalid_argument(
          std::string("rw ") + figure + ": allocator '" + a + "' is not in this build (" + list +
          ")" +
          (peer ? "; Ouroboros needs tools/fetch-ouroboros and -DHEAPLAB_OUROBOROS_DIR "
                  "(docs/rw.md \"Benchmarks\")"
                : ""));
    }
    if (std::find(allocators.begin(), allocators.begin() + static_cast<std::ptrdiff_t>(i), a) !=
        allocators.begin() + static_cast<std::ptrdiff_t>(i))
      throw std::invalid_argument(std::string("rw ") + figure + ": allocator '" + a +
                                  "' named twice");
  }
}

}  // namespace

std::vector<std::string> rw_malloc_allocator_names() {
  std::vector<std::string> names{"rw-malloc", "queue"};
  for (auto const& n : rw_ouroboros_names()) names.push_back(n);
  return names;
}

std::vector<std::string> rw_malloc_default_allocators() {
  std::vector<std::string> names{"rw-malloc", "queue"};
  for (auto const& n : rw_ouroboros_default_names()) names.push_back(n);
  return names;
}

void validate_rw_fig8(RwFig8Options const& o) {
  check_allocators("fig8", o.allocators);
  check_sizes("fig8", o.sizes, o.common.page_bytes);
}

void validate_rw_fig9(RwFig9Options const& o) {
  check_allocators("fig9", o.allocators);
  check_sizes("fig9", o.sizes, o.common.page_bytes);
}

void validate_rw_fig10(RwFig10Options const& o) {
  check_allocators("fig10", o.allocators);
  check_sizes("fig10", o.max_bytes, o.common.page_bytes);
  for (std::uint32_t max : o.max_bytes) check_range("fig10", o.min_bytes, max);
}

void validate_rw_fig11(RwFig11Options const& o) {
  check_allocators("fig11", o.allocators);
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
