// The malloc family's generators (family.hpp): profiles "mixed", "oom", "small" and "bounded".
// Every choice is schedule::mix of the case's seed and a counter, so a case is a pure function of
// (request, seed, size) on every platform.
#include <algorithm>
#include <cmath>
#include <utility>

#include "heaplab/core/expects.hpp"
#include "heaplab/families/malloc/family.hpp"
#include "heaplab/runner/registry.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::malloc_family {

namespace {

/// Salt of the generator's choices (ASCII "gen").
constexpr std::uint64_t kSaltGen = 0x67656e;

/// Sizes a fixed wave or a fill asks for: the survey's powers of two and a few odd ones.
constexpr std::uint64_t kSizes[] = {
    4, 8, 12, 16, 24, 32, 48, 64, 100, 128, 256, 500, 512, 1024, 2048, 4096, 8192};

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t next() { return schedule::mix(seed_, n_++, kSaltGen); }
  std::uint64_t below(std::uint64_t k) { return next() % k; }
  bool chance(double p) { return schedule::unit_interval(next()) < p; }
  /// Log-uniform in [lo, hi].
  std::uint64_t log_between(std::uint64_t lo, std::uint64_t hi) {
    double const u = schedule::unit_interval(next());
    double const v = static_cast<double>(lo) * std::pow(static_cast<double>(hi) / lo, u);
    return std::clamp(static_cast<std::uint64_t>(v), lo, hi);
  }
  std::uint64_t size() { return kSizes[below(std::size(kSizes))]; }

 private:
  std::uint64_t seed_;
  std::uint64_t n_ = 0;
};

/// Pool bytes at most: the request's heap, capped by max_size (KiB: the family's unit); never
/// below kMinPool.
std::uint64_t max_pool(runner::GenerationRequest const& r) {
  std::uint64_t p = std::min<std::uint64_t>(std::uint64_t{r.heap_mib} << 20, kMaxPool);
  if (r.max_size != 0) p = std::min<std::uint64_t>(p, std::uint64_t{r.max_size} << 10);
  return std::max(p, kMinPool);
}

/// A runner whose allocator's state is the process's (RunnerInfo::one_per_process: CUDA malloc,
/// whose heap size is fixed per process; the peers, which set up their heaps in large segments or
/// with large fixed parts, docs/malloc.md "Peers") gets the request's pool every time; the others
/// (and an unknown runner) get pools that vary with the case.
bool fixed_pool(runner::GenerationRequest const& r) {
  runner::RunnerInfo const* info = runner::Registry::instance().runner(r.runner);
  return info != nullptr && info->one_per_process;
}

AllocWave alloc_wave(Draw& d, std::uint32_t size, std::uint64_t pool) {
  AllocWave a;
  a.threads = static_cast<std::uint32_t>(
      1 + d.below(std::min<std::uint64_t>(32u * size, std::max<std::uint64_t>(pool / 512, 32))));
  a.per_thread = static_cast<std::uint32_t>(1 + d.below(std::min<std::uint32_t>(8, 1 + size / 10)));
  switch (d.below(3)) {
    case 0:
      a.sizes = SizeDist::fixed;
      a.min = a.max = d.size();
      break;
    case 1:
      a.sizes = SizeDist::mixed;
      a.min   = 4;
      a.max   = 8192;
      break;
    default:
      a.sizes = SizeDist::heavy;
      a.min   = 4;
      a.max   = d.chance(0.2) ? 65536 : 8192;
      break;
  }
  a.lanes      = d.chance(0.7) ? Lanes::per_lane : Lanes::warp_uniform;
  a.divergence = static_cast<Divergence>(d.below(3));
  a.seed       = d.next();
  return a;
}

FillWave fill_wave(Draw& d, std::uint64_t size, std::uint64_t pool) {
  FillWave f;
  // At most about 16k grants a fill (CUDA's malloc slows down sharply near a full heap): the
  // smallest listed size that keeps to it, when `size` is below that (sizes stay among kSizes,
  // so the utilization by size has few rows).
  std::uint64_t const least = pool / 16384;
  f.size                    = size;
  for (std::uint64_t s : kSizes)
    if (f.size < least && s >= least) f.size = s;
  f.size = std::max(f.size, least);
  // Enough threads that none makes more than about 256 requests in a row (CUDA's malloc takes
  // milliseconds per request on a fragmented heap: a long chain outlasts the watchdog).
  std::uint64_t const grants = 2 * pool / f.size + 1;
  f.threads                  = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1 + d.below(256), std::min<std::uint64_t>(grants / 256, 4096)));
  std::uint64_t const per = grants / f.threads + 1;
  std::uint64_t const cap = kMaxWaveRequests / f.threads - 1;  // the work budget of one wave
  f.max_per_thread        = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(per, 1, std::min<std::uint64_t>(cap, kMaxFillPerThread)));
  return f;
}

FreeWave free_wave(Draw& d) {
  FreeWave f;
  std::uint64_t const r = d.below(20);
  f.select              = r < 2    ? Select::all
                          : r < 10 ? Select::random
                          : r < 13 ? Select::size
                          : r < 17 ? Select::oldest
                                   : Select::warp;
  if (f.select == Select::random || f.select == Select::oldest)
    f.fraction = static_cast<double>(1 + d.below(9)) / 10;
  if (f.select == Select::size) {
    f.min = d.size();
    f.max = std::max(f.min, d.size());
  }
  if (f.select == Select::random || f.select == Select::warp) f.seed = d.next();
  return f;
}

MallocSchedule mixed(Draw& d, std::uint32_t size, std::uint64_t pool) {
  MallocSchedule s;
  s.pool              = pool;
  std::size_t const n = 2 + d.below(2 + size / 5);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t const r = d.below(20);
    if (r < 9)
      s.steps.emplace_back(alloc_wave(d, size, pool));
    else if (r < 15)
      s.steps.emplace_back(free_wave(d));
    else if (r < 17)
      s.steps.emplace_back(Touch{});
    else
      s.steps.emplace_back(fill_wave(d, d.size(), pool));
  }
  return s;
}

/// Alloc waves, frees and touches whose requests, all together, ask for at most a sixteenth of the
/// pool (demand_bytes), and no fills: for subjects without a usable out-of-memory path
/// (SubjectInfo::max_demand). A wave that would pass the budget gets fewer threads, or is left
/// out.
MallocSchedule bounded(Draw& d, std::uint32_t size, std::uint64_t pool) {
  MallocSchedule s;
  s.pool              = pool;
  std::uint64_t left  = pool / 16;
  std::size_t const n = 2 + d.below(2 + size / 5);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t const r = d.below(20);
    if (r < 11) {
      AllocWave a         = alloc_wave(d, size, pool);
      std::uint64_t bytes = wave_bytes(a);
      while (bytes > left && a.threads > 1) {
        a.threads = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(a.threads - 1, std::uint64_t{a.threads} * left / bytes));
        a.threads = std::max<std::uint32_t>(a.threads, 1);
        bytes     = wave_bytes(a);
      }
      if (bytes > left) continue;
      left -= bytes;
      s.steps.emplace_back(a);
    } else if (r < 17) {
      s.steps.emplace_back(free_wave(d));
    } else {
      s.steps.emplace_back(Touch{});
    }
  }
  return s;
}

/// Near out of memory and recovery: fill, free part, refill, free all, fill again (the recovery
/// check compares fills of one size from an empty pool), with waves and touches between.
MallocSchedule oom(Draw& d, std::uint32_t size, std::uint64_t pool) {
  MallocSchedule s;
  s.pool              = pool;
  FillWave const fill = fill_wave(d, d.size(), pool);
  FreeWave all;
  s.steps.emplace_back(fill);
  s.steps.emplace_back(free_wave(d));
  if (d.chance(0.5)) s.steps.emplace_back(alloc_wave(d, size, pool));
  s.steps.emplace_back(fill);
  s.steps.emplace_back(Touch{});
  s.steps.emplace_back(all);
  s.steps.emplace_back(fill);
  for (std::size_t i = 0, n = d.below(1 + size / 20); i < n; ++i) {
    s.steps.emplace_back(free_wave(d));
    s.steps.emplace_back(d.chance(0.5) ? MallocStep(alloc_wave(d, size, pool))
                                       : MallocStep(fill_wave(d, d.size(), pool)));
  }
  s.steps.emplace_back(all);
  s.steps.emplace_back(fill);
  return s;
}

}  // namespace

std::vector<runner::Profile> MallocFamily::profiles() const {
  return {{"mixed",
           "alloc waves of every size distribution and divergence, frees of every "
           "selector, touches and fills, pools up to --heap-mib"},
          {"oom", "near out of memory and recovery: fill, free part, refill, free all, fill"},
          {"small", "pools of 4-64 KiB and small waves: the quickest cases"},
          {"bounded",
           "alloc waves, frees and touches asking for at most 1/16 of the pool all together, no "
           "fills: for subjects without a usable out-of-memory path (Ouroboros, Gallatin)"}};
}

std::string MallocFamily::request_summary(runner::GenerationRequest const& r) const {
  return std::string(fixed_pool(r) ? "pool " : "pool <= ") + std::to_string(max_pool(r)) + " B";
}

runner::AnySchedule MallocFamily::generate(runner::GenerationRequest const& request,
                                           std::uint64_t seed,
                                           std::uint32_t size) const {
  Draw d(seed);
  size                    = std::clamp<std::uint32_t>(size, 1, 100);
  std::uint64_t const top = max_pool(request);
  std::uint64_t const lo  = std::min<std::uint64_t>(top, 64u << 10);
  std::uint64_t pool      = d.log_between(lo, std::max<std::uint64_t>(lo, top * size / 100));
  if (request.profile == "small")
    pool = d.log_between(kMinPool, std::min<std::uint64_t>(top, 64u << 10));
  if (fixed_pool(request)) pool = top;
  pool = pool / 16 * 16;
  MallocSchedule s;
  if (request.profile == "mixed" || request.profile == "small")
    s = mixed(d, request.profile == "small" ? std::min<std::uint32_t>(size, 10) : size, pool);
  else if (request.profile == "oom")
    s = oom(d, size, pool);
  else if (request.profile == "bounded")
    s = bounded(d, size, pool);
  else
    HEAPLAB_EXPECTS(false,
                    "malloc: unknown profile '" + request.profile +
                        "' (expected mixed, oom, small or bounded)");
  s.pool = pool;
  validate(s);
  return wrap(std::move(s));
}

}  // namespace heaplab::malloc_family
