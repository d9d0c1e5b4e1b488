// `heaplab_bench rw fig7` and `rw fig4` (rw_bench.hpp; docs/rw.md "Benchmarks").
#include "rw_bench.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/core/enum_names.hpp"
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
#include "heaplab/families/malloc/ouroboros_geometry.hpp"
#include "ouroboros_bench.hpp"
#endif
#include "heaplab/rw/analysis.hpp"
#include "heaplab/rw/device_baselines.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "rw_bench_support.hpp"

namespace heaplab::bench {

namespace analysis = rw::analysis;

namespace {

constexpr core::EnumName<RwAllocator> kAllocators[] = {{RwAllocator::rw, "rw"},
                                                       {RwAllocator::rw_bm32, "rw-bm32"},
                                                       {RwAllocator::rw_bm64, "rw-bm64"},
                                                       {RwAllocator::corw, "corw"},
                                                       {RwAllocator::queue, "queue"},
                                                       {RwAllocator::direct_output, "do"}};

}  // namespace

char const* rw_allocator_name(RwAllocator a) { return core::name_of(kAllocators, a); }

std::optional<RwAllocator> parse_rw_allocator(std::string_view name) {
  return core::value_of(kAllocators, name);
}

std::vector<std::string> rw_allocator_names() {
  std::vector<std::string> names;
  for (auto const& n : kAllocators) names.emplace_back(n.name);
  return names;
}

std::vector<std::string> rw_ouroboros_names() {
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
  return OuroborosWaves::names();
#else
  return {};
#endif
}

std::vector<std::string> rw_ouroboros_default_names() {
  std::vector<std::string> names = rw_ouroboros_names();
  if (names.size() > 2) names.resize(2);  // the standard page and chunk queues
  return names;
}

bool rw_ouroboros_built() { return !rw_ouroboros_names().empty(); }

std::vector<std::string> rw_fig7_allocator_names() {
  std::vector<std::string> names{"rw", "rw-bm32", "rw-bm64", "corw", "queue"};
  for (auto const& n : rw_ouroboros_names()) names.push_back(n);
  return names;
}

std::vector<std::string> rw_fig7_default_allocators() {
  std::vector<std::string> names{"rw", "rw-bm32", "rw-bm64", "corw", "queue"};
  for (auto const& n : rw_ouroboros_default_names()) names.push_back(n);
  return names;
}

std::vector<std::string> rw_fig12_allocator_names() {
  std::vector<std::string> names = rw_allocator_names();
  for (auto const& n : rw_ouroboros_names()) names.push_back(n);
  return names;
}

namespace {

/// fig7's allocators as a list for messages.
std::string fig7_allocator_list() {
  std::string list;
  for (auto const& n : rw_fig7_allocator_names()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

using rwb::Times;

using rwb::wrong_output;

/// TAS, WAS and failures of one wave of n threads (all active): TAS the mean step count, WAS the
/// mean over warps (threads 32 k .. 32 k + 31) of the warp's largest step count (RW sec. 3.2.1).
struct WaveStats {
  double tas          = 0;
  double was          = 0;
  std::uint32_t nulls = 0;
};

WaveStats summarize(rw::AllocResult const& r, std::uint32_t t, char const* who) {
  WaveStats s;
  std::vector<std::uint32_t> pages;
  std::uint32_t warp_max = 0, warps = 0;
  auto const n = static_cast<std::uint32_t>(r.first.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    s.tas += r.steps[i];
    warp_max = std::max(warp_max, r.steps[i]);
    if (i % 32 == 31 || i + 1 == n) s.was += warp_max, warp_max = 0, ++warps;
    if (r.first[i] == rw::kNoPage) {
      ++s.nulls;
    } else if (r.first[i] >= t) {
      throw wrong_output(std::string(who) + ": thread " + std::to_string(i) + " got page " +
                         std::to_string(r.first[i]) + ", beyond the pool");
    } else {
      pages.push_back(r.first[i]);
    }
  }
  std::sort(pages.begin(), pages.end());
  auto const twice = std::adjacent_find(pages.begin(), pages.end());
  if (twice != pages.end())
    throw wrong_output(std::string(who) + ": page " + std::to_string(*twice) +
                       " went to two threads");
  s.tas /= n;
  s.was /= warps;
  return s;
}

#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
namespace ouro = malloc_family::ouroboros;

/// Ouroboros in fig7 (RW sec. 5.2.1: "The equivalent in the Ouroboros system is a kernel that
/// requests 256B for each thread"): chunks whose pages hold the pool's T pages, and a guard for the
/// largest wave (ouroboros_bench.hpp; docs/rw.md). The preset is a fresh instance and one
/// untimed kernel of T - A requests of a page each, so that A pages' worth is left; the wave's
/// grants are numbered as pages chunk by chunk (ouroboros::page_number); a grant in the guard is a
/// null, one that is not a page of a chunk a wrong output. Ouroboros takes no steps: no TAS/WAS.
class OuroborosGetPage {
 public:
  OuroborosGetPage(OuroborosWaves::Queues queues,
                   std::uint32_t t,
                   std::uint32_t page_bytes,
                   std::uint32_t max_threads,
                   std::uint32_t block_threads)
      : waves_(queues,
               ouro::pool_chunks_for(std::uint64_t{t} * page_bytes),
               ouro::guard_chunks(max_threads, page_bytes)),
        t_(t),
        page_(page_bytes),
        block_(block_threads) {}
  [[nodiscard]] char const* name() const { return waves_.name(); }
  /// Page ids it can hand out: every page of the pool's chunks (T rounded up to whole chunks).
  [[nodiscard]] std::uint32_t page_ids() const {
    return static_cast<std::uint32_t>(waves_.pool_chunks() * (ouro::kChunkPages / page_));
  }
  /// "" when the preset left A pages' worth in the pool; else why not (Ouroboros took more
  /// chunks than the T - A pages fill: the cell cannot be measured).
  std::string preset(std::uint32_t a) {
    waves_.reset();
    waves_.fill(page_, t_ - std::min(a, t_), block_);
    std::uint64_t const taken = waves_.chunks_taken();
    if (taken <= waves_.pool_chunks()) return "";
    return "not measured: the preset of " + std::to_string(t_ - std::min(a, t_)) + " pages took " +
           std::to_string(taken) + " chunks of the pool's " +
           std::to_string(waves_.pool_chunks());  // no comma: the CSV's status column
  }
  rw::AllocResult wave(std::uint32_t n, float* ms) {
    std::vector<std::uint32_t> const bytes(n, page_);
    if (waves_.chunks_taken() + ouro::wave_chunks(bytes) > waves_.usable_chunks())
      throw std::runtime_error(std::string(name()) + ": the guard cannot hold a wave of " +
                               std::to_string(n));
    std::vector<std::uint64_t> const offsets = waves_.allocate(bytes, block_, ms);
    rw::AllocResult r;
    r.first.assign(n, rw::kNoPage);
    r.steps.assign(n, 0);
    std::uint64_t const guard = waves_.usable_chunks() - waves_.pool_chunks();
    for (std::uint32_t i = 0; i < n; ++i) {
      if (offsets[i] == OuroborosWaves::kNull) continue;
      ouro::Grant const g = ouro::classify(offsets[i], page_, waves_.pool_chunks(), guard);
      if (g == ouro::Grant::in_guard) continue;  // beyond the pool: a null
      if (g != ouro::Grant::in_pool)
        throw wrong_output(std::string(name()) + ": thread " + std::to_string(i) + " got offset " +
                           std::to_string(offsets[i]) + ", " + ouro::grant_name(g));
      r.first[i] = static_cast<std::uint32_t>(ouro::page_number(offsets[i], page_));
    }
    return r;
  }

 private:
  OuroborosWaves waves_;
  std::uint32_t t_;
  std::uint32_t page_;
  std::uint32_t block_;
};
#endif

/// One allocator of fig7 on a pool of T pages: preset to A free pages, then one wave.
class Fig7Subject {
 public:
  Fig7Subject(std::string const& name,
              std::uint32_t t,
              std::uint32_t max_threads,
              RwBenchOptions const& o)
      : name_(name), t_(t), block_(o.block_threads) {
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
    if (auto const queues = OuroborosWaves::parse(name)) {
      ouroboros_ = std::make_unique<OuroborosGetPage>(
          *queues, t, o.page_bytes, max_threads, o.block_threads);
      return;
    }
#else
    (void)max_threads;
#endif
    auto const a = parse_rw_allocator(name);
    if (!a || *a == RwAllocator::direct_output)
      throw std::invalid_argument("rw fig7: allocator '" + name + "' (expected one of " +
                                  fig7_allocator_list() + ")");
    allocator_ = *a;
    if (*a == RwAllocator::queue) {
      queue_ = std::make_unique<rw::DeviceQueue>(t);
      return;
    }
    rw::PoolConfig c;
    c.num_pages  = t;
    c.page_bytes = o.page_bytes;
    c.word_bits  = *a == RwAllocator::rw_bm64 ? 64 : 32;
    c.max_steps  = o.max_steps;
    pool_        = std::make_unique<rw::DevicePool>(c, rw::DevicePoolOptions{false});
    algorithm_   = *a == RwAllocator::rw     ? core::RwAlgorithm::rw
                   : *a == RwAllocator::corw ? core::RwAlgorithm::corw
                                             : core::RwAlgorithm::rw_bm;
  }
  [[nodiscard]] std::string const& name() const { return name_; }
  /// The RW allocator it is (nullopt: Ouroboros, which has no model and no steps).
  [[nodiscard]] std::optional<RwAllocator> allocator() const {
    return pool_ || queue_ ? std::optional<RwAllocator>(allocator_) : std::nullopt;
  }
  /// Page ids a grant may carry: T, or Ouroboros' pages of whole chunks.
  [[nodiscard]] std::uint32_t page_ids() const {
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
    if (ouroboros_) return ouroboros_->page_ids();
#endif
    return t_;
  }
  /// Exactly A free pages (the RW pools and the queue: at random places); "" when done, else why
  /// the cell cannot be measured (OuroborosGetPage::preset).
  std::string preset(std::uint32_t a, std::uint64_t seed) {
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
    if (ouroboros_) return ouroboros_->preset(a);
#endif
    if (queue_) {
      queue_->preset_free(a, seed);
    } else {
      pool_->preset_free(a, seed);
    }
    return "";
  }
  rw::AllocResult wave(std::uint32_t n, std::uint64_t seed, float* ms) {
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
    if (ouroboros_) return ouroboros_->wave(n, ms);
#endif
    std::vector<std::uint32_t> const all(n, 1);
    if (queue_) {
      rw::AllocResult r = queue_->allocate(all, block_);
      *ms               = queue_->last_wave_ms();
      return r;
    }
    rw::GetPageWave w;
    w.algorithm       = algorithm_;
    w.pages           = all;
    w.block_threads   = block_;
    w.seed            = seed;
    rw::AllocResult r = pool_->allocate(w);
    *ms               = pool_->last_wave_ms();
    return r;
  }

 private:
  std::string name_;
  std::uint32_t t_;
  RwAllocator allocator_ = RwAllocator::rw;
  std::uint32_t block_;
  core::RwAlgorithm algorithm_ = core::RwAlgorithm::rw;
  std::unique_ptr<rw::DevicePool> pool_;
  std::unique_ptr<rw::DeviceQueue> queue_;
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
  std::unique_ptr<OuroborosGetPage> ouroboros_;
#endif
};

/// One cell of fig7 for one allocator: the timed runs' kernel times, mean TAS and WAS.
struct Cell {
  Times times;
  double tas          = 0;
  double was          = 0;
  std::uint64_t nulls = 0;
  std::string status  = "ok";
};

Cell measure(Fig7Subject& subject,
             std::uint32_t a,
             std::uint32_t n,
             RwBenchOptions const& o,
             std::uint64_t cell_index) {
  Cell c;
  char const* who = subject.name().c_str();
  for (int run = 0; run < o.warmup + o.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.seed, cell_index, run);
    if (std::string why = subject.preset(a, seed); !why.empty()) {
      c.status = std::move(why);
      return c;
    }
    float ms                = 0;
    rw::AllocResult const r = subject.wave(n, seed, &ms);
    WaveStats const s       = summarize(r, subject.page_ids(), who);
    if (run < o.warmup) continue;
    c.times.ms.push_back(ms);
    c.tas += s.tas / o.runs;
    c.was += s.was / o.runs;
    c.nulls += s.nulls;
  }
  if (!subject.allocator()) c.tas = c.was = NAN;  // Ouroboros: no steps
  return c;
}

/// The model's TAS and WAS for an allocator (RW Eq. 1-5): w = 1 for RW, the word width for
/// RW-BM and CoRW (the paper gives CoRW no formula of its own; RW-BM's is its reference), Eq. 1
/// for the queue (its places in the counter's queue, which the measured steps cannot see).
std::pair<double, double> model(std::optional<RwAllocator> allocator,
                                std::uint32_t t,
                                std::uint32_t free,
                                std::uint32_t n) {
  if (!allocator) return {NAN, NAN};  // Ouroboros: the paper models queues by Eq. 1 only
  RwAllocator const a = *allocator;
  if (a == RwAllocator::queue)
    return {analysis::queue_tas(n), n >= 32 ? analysis::queue_was(n) : NAN};
  if (a == RwAllocator::direct_output) return {1.0, 1.0};
  unsigned const w = a == RwAllocator::rw ? 1 : a == RwAllocator::rw_bm64 ? 64 : 32;
  if (n > free) return {NAN, NAN};
  return {analysis::tas(t, free, n, w), analysis::was_bound(t, free, n, w)};
}

struct Fig7Context {
  RwFig7Options const& o;
  std::uint32_t t;
  std::vector<Fig7Subject>& subjects;
  rwb::Csv const& csv;
};

/// One block of the table (a free fraction and a thread count): every allocator's row.
void fig7_block(Fig7Context const& x, double percent, std::uint32_t n, std::uint64_t cell_index) {
  std::uint32_t const a = rwb::free_pages_of(x.t, percent);
  std::printf("\nA/T %g %% (A = %u of T = %u pages of %u B), N = %u threads\n",
              percent,
              a,
              x.t,
              x.o.common.page_bytes,
              n);
  if (n > a) {
    std::printf("  skipped: N > A (fewer free pages than requests)\n");
    return;
  }
  std::vector<std::pair<Fig7Subject const*, Cell>> cells;  // in --allocators order
  double queue_ms = NAN;
  for (Fig7Subject& s : x.subjects) {
    std::fprintf(stderr, "[rw fig7] A/T %g %%, N = %u: %s ...\n", percent, n, s.name().c_str());
    cells.emplace_back(&s, measure(s, a, n, x.o.common, cell_index));
    if (s.allocator() == RwAllocator::queue) queue_ms = cells.back().second.times.median();
  }
  std::printf("  %-15s %10s %10s %9s %9s %10s %10s %7s %9s\n",
              "alloc",
              "median ms",
              "mean ms",
              "TAS",
              "TAS model",
              "WAS",
              "WAS model",
              "nulls",
              "queue/x");
  for (auto const& [subject, c] : cells) {
    char const* name = subject->name().c_str();
    auto const alloc = subject->allocator();
    if (c.status != "ok") {
      std::printf("  %-15s %s\n", name, c.status.c_str());
    } else {
      auto const [tas_model, was_model] = model(alloc, x.t, a, n);
      double const ratio                = queue_ms / c.times.median();
      std::printf("  %-15s %10.4f %10.4f %9s %9s %10s %10s %7llu %9s\n",
                  name,
                  c.times.median(),
                  c.times.mean(),
                  rwb::cell(c.tas).c_str(),
                  rwb::cell(tas_model).c_str(),
                  rwb::cell(c.was).c_str(),
                  rwb::cell(was_model).c_str(),
                  static_cast<unsigned long long>(c.nulls),
                  rwb::cell(ratio, "%.2fx").c_str());
    }
    if (x.csv.file()) {
      auto const [tas_model, was_model] = model(alloc, x.t, a, n);
      std::fprintf(x.csv.file(),
                   "fig7,%s,%u,%u,%g,%u,%u,%s,%.4f,%.4f,%.4f,%.4f,%llu,%.4f,%s\n",
                   name,
                   x.t,
                   x.o.common.page_bytes,
                   percent,
                   a,
                   n,
                   c.times.csv().c_str(),
                   c.tas,
                   c.was,
                   tas_model,
                   was_model,
                   static_cast<unsigned long long>(c.nulls),
                   queue_ms / c.times.median(),
                   c.status.c_str());
    }
  }
}

int fig7(RwFig7Options const& o) {
  std::uint32_t const t = rwb::pool_pages(o.common);
  for (auto const& name : o.allocators)
    if (name.rfind("ouroboros-", 0) == 0 && o.common.page_bytes > 8192)
      throw std::invalid_argument("rw fig7: " + name + " serves pages of at most 8192 B, not " +
                                  std::to_string(o.common.page_bytes));
  std::vector<Fig7Subject> subjects;
  std::uint32_t const max_threads = *std::max_element(o.threads.begin(), o.threads.end());
  for (auto const& name : o.allocators) subjects.emplace_back(name, t, max_threads, o.common);
  std::printf(
      "rw fig7: GETPAGE kernel time (median / mean of %d runs after %d warm-up), TAS and WAS\n",
      o.common.runs,
      o.common.warmup);
  std::printf("pool: T = %u pages of %u B (%.2f GiB), preset on the device before each run\n",
              t,
              o.common.page_bytes,
              static_cast<double>(t) * o.common.page_bytes / (1u << 30));
  rwb::Csv const csv(o.common.csv,
                     "figure,allocator,pages,page_bytes,free_percent,free_pages,threads,runs,"
                     "median_ms,mean_ms,min_ms,max_ms,tas,was,tas_model,was_model,nulls,"
                     "queue_over_this,status");
  Fig7Context const x{o, t, subjects, csv};
  std::uint64_t cell_index = 0;
  for (double percent : o.free_percent)
    for (std::uint32_t n : o.threads) fig7_block(x, percent, n, cell_index++);
  return 0;
}

// ---------------------------------------------------------------- fig4

/// Measured RW at (T, A, N): mean TAS and WAS over the runs.
std::pair<double, double> fig4_measure(rw::DevicePool& pool,
                                       std::uint32_t a,
                                       std::uint32_t n,
                                       RwBenchOptions const& o,
                                       std::uint64_t cell_index) {
  double tas = 0, was = 0;
  for (int run = 0; run < o.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.seed, cell_index, run);
    pool.preset_free(a, seed);
    rw::GetPageWave w;
    w.algorithm = core::RwAlgorithm::rw;
    w.pages.assign(n, 1);
    w.block_threads   = o.block_threads;
    w.seed            = seed;
    WaveStats const s = summarize(pool.allocate(w), pool.config().num_pages, "rw");
    tas += s.tas / o.runs;
    was += s.was / o.runs;
  }
  return {tas, was};
}

int fig4(RwFig4Options const& o) {
  std::uint32_t const t = o.pages;
  std::unique_ptr<rw::DevicePool> pool;
  if (!o.model_only) {
    rw::PoolConfig c;
    c.num_pages  = t;
    c.page_bytes = o.common.page_bytes;
    c.max_steps  = o.common.max_steps;
    pool         = std::make_unique<rw::DevicePool>(c, rw::DevicePoolOptions{false});
  }
  rwb::Csv const csv(o.common.csv,
                     "figure,pages,free_percent,free_pages,threads,tas_model,tas_eq2_log,"
                     "was_bound,queue_tas,queue_was,tas_measured,was_measured,runs");
  std::printf("rw fig4: RW's TAS and WAS at T = %u, model (Eq. 2, 3) %s\n",
              t,
              o.model_only
                  ? "only"
                  : ("and measured (mean of " + std::to_string(o.common.runs) + " runs)").c_str());
  std::printf("  %7s %7s %6s %10s %10s %10s %10s %10s %10s %10s\n",
              "A/T %",
              "A",
              "N",
              "TAS Eq.2",
              "TAS log",
              "WAS bound",
              "queue TAS",
              "queue WAS",
              "TAS meas",
              "WAS meas");
  std::uint64_t cell_index = 0;
  for (double percent : o.free_percent) {
    std::uint32_t const a = rwb::free_pages_of(t, percent);
    for (std::uint32_t n : o.threads) {
      ++cell_index;
      if (n > a) continue;
      double const tas = analysis::tas(t, a, n), bound = analysis::was_bound(t, a, n);
      double const log_form = n < a ? analysis::rw_tas_approx(t, a, n) : NAN;
      double const q_was    = n >= 32 ? analysis::queue_was(n) : NAN;
      std::pair<double, double> m{NAN, NAN};
      if (pool) {
        std::fprintf(stderr, "[rw fig4] A/T %g %%, N = %u ...\n", percent, n);
        m = fig4_measure(*pool, a, n, o.common, cell_index);
      }
      std::printf("  %7g %7u %6u %10s %10s %10s %10s %10s %10s %10s\n",
                  percent,
                  a,
                  n,
                  rwb::cell(tas).c_str(),
                  rwb::cell(log_form).c_str(),
                  rwb::cell(bound).c_str(),
                  rwb::cell(analysis::queue_tas(n)).c_str(),
                  rwb::cell(q_was).c_str(),
                  rwb::cell(m.first).c_str(),
                  rwb::cell(m.second).c_str());
      if (csv.file())
        std::fprintf(csv.file(),
                     "fig4,%u,%g,%u,%u,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n",
                     t,
                     percent,
                     a,
                     n,
                     tas,
                     log_form,
                     bound,
                     analysis::queue_tas(n),
                     q_was,
                     m.first,
                     m.second,
                     pool ? o.common.runs : 0);
    }
  }
  return 0;
}

}  // namespace

int run_rw_fig7(RwFig7Options const& o) {
  return rwb::reporting_wrong_output([&] { return fig7(o); });
}

int run_rw_fig4(RwFig4Options const& o) {
  return rwb::reporting_wrong_output([&] { return fig4(o); });
}

}  // namespace heaplab::bench
