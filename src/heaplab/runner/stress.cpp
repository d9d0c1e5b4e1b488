// The stress loop and its profiles (stress.hpp).
#include "heaplab/runner/stress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>

#include "heaplab/runner/environment.hpp"
#include "heaplab/schedule/choice.hpp"
#include "heaplab/schedule/generators.hpp"

namespace heaplab::runner {

namespace {

using schedule::AllocWave;
using schedule::Defrag;
using schedule::FreeWave;
using schedule::Step;

constexpr std::uint64_t kCaseSalt = 0x5eed;

/// RapidCheck's implicit generation context is a process-wide static, so generation is
/// serialized across shards.
std::mutex& generation_mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::uint32_t> concrete(core::HeapConfig const& c) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 0; t < c.num_types(); ++t)
    if (!c.types[t].is_abstract) out.push_back(t);
  return out;
}

template <class T>
T one_of(std::vector<T> const& v) {
  return v[*rc::gen::inRange<std::size_t>(0, v.size())];
}

std::uint64_t small_seed() { return *rc::gen::inRange<std::uint64_t>(0, 1000); }

/// An alloc wave of `type` asking for about `objects` objects (threads x count, within the
/// format's limits), with a random divergence pattern and random links.
AllocWave sized_wave(core::HeapConfig const& c, std::uint32_t type, std::uint64_t objects) {
  AllocWave w;
  w.type            = type;
  std::uint32_t cnt = *rc::gen::inRange<std::uint32_t>(1, 4);
  w.count           = cnt;
  switch (*rc::gen::inRange(0, 4)) {
    case 0:
      w.divergence = schedule::Divergence::alternate;
      objects *= 2;  // half the lanes allocate
      break;
    case 1:
      w.divergence = schedule::Divergence::random_mask;
      w.mask_seed  = small_seed();
      objects *= 2;  // about half the lanes allocate
      break;
    default:
      w.divergence = schedule::Divergence::all;
      break;
  }
  std::uint64_t const threads = std::max<std::uint64_t>(1, (objects + cnt - 1) / cnt);
  w.threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(threads, schedule::kMaxThreads));
  auto const slots = c.pointer_slots(type);
  for (std::uint32_t s = 0; s < slots.size(); ++s) {
    if (!*rc::gen::inRange(0, 2)) continue;
    schedule::LinkRule rule;
    rule.type          = type;
    rule.slot          = s;
    rule.seed          = small_seed();
    rule.null_fraction = *rc::gen::inRange(0, 5) / 8.0;
    w.links.push_back(rule);
  }
  w.roots = *rc::gen::inRange(0, 8) == 0;
  return w;
}

FreeWave thinning(std::uint32_t type) {
  FreeWave f;
  f.select.type     = type;
  f.select.pattern  = schedule::SelectPattern::fraction;
  f.select.fraction = *rc::gen::inRange(2, 8) / 8.0;
  f.select.seed     = small_seed();
  return f;
}

Defrag defrag_of(core::HeapConfig const& c, std::uint32_t type) {
  Defrag d;
  d.type    = type;
  d.variant = static_cast<core::RewriteVariant>(*rc::gen::inRange(0, 3));
  if (*rc::gen::inRange(0, 4) == 0) {
    std::uint32_t const max_n = std::min<std::uint32_t>(c.capacity(type) - 1, 4);
    if (max_n >= 1) d.n = *rc::gen::inRange<std::uint32_t>(1, max_n + 1);
  }
  if (*rc::gen::inRange(0, 3) == 0) d.k1 = *rc::gen::inRange<std::uint32_t>(0, 3);
  return d;
}

/// Total capacity of the heap for objects of `type` (every block holding it).
std::uint64_t heap_capacity(core::HeapConfig const& c, std::uint32_t type) {
  return std::uint64_t{c.num_blocks} * c.capacity(type);
}

rc::Gen<schedule::Schedule> large_schedule(std::uint32_t heap_mib,
                                           std::uint32_t max_blocks,
                                           rc::Gen<core::HeapConfig> const& configs) {
  return rc::gen::withSize([=](int size) {
    return rc::gen::exec([=] {
      core::HeapConfig c     = *configs;
      std::uint32_t const hi = std::max<std::uint32_t>(
          2, std::min(blocks_for_heap(c, heap_mib), std::min(max_blocks, schedule::kMaxBlocks)));
      c.num_blocks = *rc::gen::inRange<std::uint32_t>(std::max<std::uint32_t>(2, hi / 2), hi + 1);
      auto const types = concrete(c);
      schedule::Schedule s;
      s.config                     = c;
      std::uint32_t const episodes = 1 + static_cast<std::uint32_t>(size) / 3;
      for (std::uint32_t e = 0; e < episodes; ++e) {
        std::uint32_t const t = one_of(types);
        switch (*rc::gen::inRange(0, 12)) {
          case 0:
          case 1:
          case 2:
            s.steps.push_back(*schedule::gen::step(c));
            break;
          case 3:
          case 4:  // 1/16 .. 4/16 of the heap's capacity, split among the types
            s.steps.push_back(sized_wave(
                c, t, heap_capacity(c, t) * *rc::gen::inRange(1, 5) / 16 / types.size()));
            break;
          case 5:
          case 6:
          case 7:
            s.steps.push_back(thinning(t));
            break;
          case 8:
          case 9:
            s.steps.push_back(defrag_of(c, t));
            break;
          default:  // fill, thin, defragment: the CompactGpu episode at scale
            s.steps.push_back(sized_wave(c, t, heap_capacity(c, t) / 2));
            s.steps.push_back(thinning(t));
            s.steps.push_back(defrag_of(c, t));
            break;
        }
      }
      return s;
    });
  });
}

rc::Gen<schedule::Schedule> near_oom_schedule(std::uint32_t heap_mib,
                                              std::uint32_t max_blocks,
                                              rc::Gen<core::HeapConfig> const& configs) {
  return rc::gen::withSize([=](int size) {
    return rc::gen::exec([=] {
      core::HeapConfig c     = *configs;
      std::uint32_t const hi = std::max<std::uint32_t>(
          2, std::min({blocks_for_heap(c, heap_mib), max_blocks, std::uint32_t{48}}));
      c.num_blocks     = *rc::gen::inRange<std::uint32_t>(2, hi + 1);
      auto const types = concrete(c);
      schedule::Schedule s;
      s.config                     = c;
      std::uint32_t const episodes = 1 + static_cast<std::uint32_t>(size) / 3;
      for (std::uint32_t e = 0; e < episodes; ++e) {
        std::uint32_t const t = one_of(types);
        switch (*rc::gen::inRange(0, 10)) {
          case 0:
          case 1:
          case 2:  // ask for 90-130% of the heap's capacity for t
            s.steps.push_back(
                sized_wave(c, t, heap_capacity(c, t) * *rc::gen::inRange(9, 14) / 10));
            break;
          case 3:
          case 4:
            s.steps.push_back(*schedule::gen::step(c));  // parallel_do children, relinks, ...
            break;
          case 5:
          case 6:
            s.steps.push_back(thinning(t));
            break;
          case 7:
          case 8:
            s.steps.push_back(defrag_of(c, t));
            break;
          default:
            s.steps.push_back(schedule::Check{});
            break;
        }
      }
      return s;
    });
  });
}

/// The bitmap-hierarchy classes of the mixed profile: M ranges whose hierarchical bitmaps have 1,
/// 2 and 3 levels (64-bit words, DynaSOAr sec. 4.2), and how often each is drawn.
struct DepthClass {
  std::uint32_t lo, hi;
  int weight;
};
constexpr DepthClass kDepthClasses[] = {{2, 64, 5}, {65, 4096, 3}, {4097, 8192, 2}};

/// Largest wave of the mixed profile, in objects: enough to spill into the higher levels of the
/// hierarchies (bitmap rotation spreads even small waves over the heap, sec. 4.2 "Bitmap
/// Rotation"), small enough that the sequential model keeps the case rate up at M = 8192.
constexpr std::uint64_t kMixedMaxWave = 6144;

rc::Gen<schedule::Schedule> mixed_schedule(std::uint32_t heap_mib,
                                           std::uint32_t max_blocks,
                                           rc::Gen<core::HeapConfig> const& configs) {
  return rc::gen::withSize([=](int size) {
    return rc::gen::exec([=] {
      core::HeapConfig c = *configs;
      // The class is drawn at the nominal size (inRange scales with the size, and stress runs
      // small sizes first), so every depth is drawn at every size.
      int const pick      = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 10));
      DepthClass const& d = pick < 5   ? kDepthClasses[0]
                            : pick < 8 ? kDepthClasses[1]
                                       : kDepthClasses[2];
      if (pick < 5) {
        // One-level heaps get the property tests' schedules (the small profile's, whose step
        // mix keeps parallel_do and every divergence pattern frequent) with M up to 64.
        c.num_blocks = std::min<std::uint32_t>(
            *rc::gen::inRange<std::uint32_t>(d.lo, d.hi + 1),
            std::max<std::uint32_t>(2, std::min(blocks_for_heap(c, heap_mib), max_blocks)));
        return *schedule::gen::schedule_for(c);
      }
      std::uint32_t const cap = std::max<std::uint32_t>(
          2, std::min({blocks_for_heap(c, heap_mib), max_blocks, schedule::kMaxBlocks}));
      std::uint32_t const hi = std::min(d.hi, cap);
      std::uint32_t const lo = std::min(d.lo, hi);
      // Log-uniform in [lo, hi]: small 2-level heaps (65..512) are as likely as large ones, and
      // cheaper for the model, which follows every step.
      double const u = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 1001)) / 1000.0;
      c.num_blocks   = std::clamp<std::uint32_t>(
          static_cast<std::uint32_t>(std::lround(lo * std::pow(double(hi) / lo, u))), lo, hi);
      auto const types = concrete(c);
      schedule::Schedule s;
      s.config     = c;
      auto wave_of = [&](std::uint32_t t, std::uint64_t objects) {
        return sized_wave(c, t, std::min<std::uint64_t>(objects, kMixedMaxWave));
      };
      std::uint32_t const episodes = 2 + static_cast<std::uint32_t>(size) / 12;
      for (std::uint32_t e = 0; e < episodes; ++e) {
        std::uint32_t const t = one_of(types);
        switch (*rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 10))) {
          case 0:
          case 1:
          case 2:
          case 3:  // parallel_do actions, relinks, divergent waves, checks, ... (gen::step's
                   // kinds scale with the size: drawn at the nominal size, all are frequent)
            s.steps.push_back(*rc::gen::resize(rc::kNominalSize, schedule::gen::step(c)));
            break;
          case 4:
          case 5:
            s.steps.push_back(wave_of(t, heap_capacity(c, t) * *rc::gen::inRange(1, 5) / 16));
            break;
          case 6:
            s.steps.push_back(thinning(t));
            break;
          default:  // fill, thin, defragment
            s.steps.push_back(wave_of(t, heap_capacity(c, t) / 2));
            s.steps.push_back(thinning(t));
            s.steps.push_back(defrag_of(c, t));
            break;
        }
      }
      // Every case defragments at least once.
      s.steps.push_back(defrag_of(c, one_of(types)));
      return s;
    });
  });
}

}  // namespace

char const* to_string(Profile p) {
  switch (p) {
    case Profile::small:
      return "small";
    case Profile::large:
      return "large";
    case Profile::near_oom:
      return "near-oom";
    case Profile::mixed:
      return "mixed";
  }
  return "?";
}

std::optional<Profile> profile_from_string(std::string const& s) {
  for (Profile p : {Profile::small, Profile::large, Profile::near_oom, Profile::mixed})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

std::uint64_t block_bytes(core::HeapConfig const& config) {
  return std::uint64_t{core::kMaxCapacity} * config.smallest_size();
}

std::uint32_t blocks_for_heap(core::HeapConfig const& config, std::uint32_t heap_mib) {
  std::uint64_t const blocks =
      (std::uint64_t{heap_mib} << 20) / std::max<std::uint64_t>(1, block_bytes(config));
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(blocks, 1, 0xFFFFFFFFu));
}

rc::Gen<schedule::Schedule> profile_schedule(Profile profile,
                                             std::uint32_t heap_mib,
                                             std::uint32_t max_blocks) {
  return profile_schedule(profile, heap_mib, max_blocks, schedule::gen::config());
}

rc::Gen<schedule::Schedule> profile_schedule(Profile profile,
                                             std::uint32_t heap_mib,
                                             std::uint32_t max_blocks,
                                             rc::Gen<core::HeapConfig> configs) {
  switch (profile) {
    case Profile::large:
      return large_schedule(heap_mib, max_blocks, configs);
    case Profile::near_oom:
      return near_oom_schedule(heap_mib, max_blocks, configs);
    case Profile::mixed:
      return mixed_schedule(heap_mib, max_blocks, configs);
    case Profile::small:
      break;
  }
  return rc::gen::mapcat(configs, [=](core::HeapConfig c) {
    c.num_blocks = std::max<std::uint32_t>(
        1, std::min({c.num_blocks, blocks_for_heap(c, heap_mib), max_blocks}));
    return schedule::gen::schedule_for(c);
  });
}

std::uint64_t case_seed(std::uint64_t run_seed, std::uint64_t k) {
  return schedule::mix(run_seed, k, kCaseSalt);
}

std::uint32_t case_size(std::uint64_t k) { return static_cast<std::uint32_t>(1 + k % 100); }

StressCase make_case(StressOptions const& options, std::uint64_t k) {
  StressCase c;
  c.index      = k;
  c.seed       = case_seed(options.seed, k);
  c.rapidcheck = {c.seed, case_size(k)};
  std::lock_guard<std::mutex> lock(generation_mutex());
  auto const gen =
      options.configs
          ? profile_schedule(
                options.profile, options.heap_mib, options.max_blocks, options.configs())
          : profile_schedule(options.profile, options.heap_mib, options.max_blocks);
  c.schedule = gen(rc::Random(c.rapidcheck.seed), static_cast<int>(c.rapidcheck.size)).value();
  return c;
}

schedule::FailureHeader stress_failure_header(std::string const& device,
                                              std::string const& runner,
                                              std::uint64_t case_seed,
                                              schedule::RapidCheckParams const& rapidcheck,
                                              std::uint64_t run_seed,
                                              std::uint64_t case_index) {
  schedule::FailureHeader h;
  h.created           = schedule::utc_now_iso8601();
  h.git_commit        = git_commit();
  h.gpu               = device;
  h.runner            = runner;
  h.seed              = case_seed;
  h.rapidcheck        = rapidcheck;
  h.origin.command    = "stress";
  h.origin.run_seed   = run_seed;
  h.origin.case_index = case_index;
  return h;
}

schedule::FailureFile failure_file_for(StressOptions const& options,
                                       StressCase const& c,
                                       ScheduleRunner const& runner,
                                       Failure const& failure) {
  schedule::FailureFile f;
  static_cast<schedule::FailureHeader&>(f) = stress_failure_header(
      runner.device_name(), runner.name(), c.seed, c.rapidcheck, options.seed, c.index);
  f.origin.profile       = to_string(options.profile);
  f.origin.heap_mib      = options.heap_mib;
  f.failure              = failure.record();
  f.schedule             = c.schedule;
  f.schedule.description = "heaplab stress --seed " + std::to_string(options.seed) + " --profile " +
                           to_string(options.profile) + " --heap-mib " +
                           std::to_string(options.heap_mib) + ", case " + std::to_string(c.index);
  return f;
}

std::uint32_t hierarchy_depth(std::uint32_t num_blocks) {
  std::uint32_t depth = 1;
  for (std::uint64_t covered = 64; covered < num_blocks; covered *= 64) ++depth;
  return depth;
}

namespace {

std::string heap_size_bucket(std::uint32_t m) {
  if (m <= 8) return "M 1-8";
  if (m <= 64) return "M 9-64";
  if (m <= 512) return "M 65-512";
  if (m <= 4096) return "M 513-4096";
  return "M 4097-65536";
}

struct StepCoverage {
  Coverage& c;
  void operator()(schedule::AllocWave const& w) const { ++c.divergence[to_string(w.divergence)]; }
  void operator()(schedule::FreeWave const& f) const {
    ++c.free_patterns[to_string(f.select.pattern)];
  }
  void operator()(schedule::ParallelDo const& p) const {
    ++c.parallel_do_actions[to_string(p.action)];
  }
  void operator()(schedule::Defrag const& d) const {
    ++c.defrag_variants[schedule::variant_name(d.variant)];
  }
  void operator()(schedule::Check const&) const {}
};

void merge_counts(std::map<std::string, std::uint64_t>& into,
                  std::map<std::string, std::uint64_t> const& from) {
  for (auto const& [key, n] : from) into[key] += n;
}

}  // namespace

void Coverage::add(schedule::Schedule const& schedule, std::size_t steps_run) {
  auto const m = schedule.config.num_blocks;
  ++heap_sizes[heap_size_bucket(m)];
  ++hierarchy_depths[std::to_string(hierarchy_depth(m)) + " level" +
                     (hierarchy_depth(m) == 1 ? "" : "s")];
  ++type_counts[std::to_string(schedule.config.num_types()) +
                (schedule.config.num_types() == 1 ? " type" : " types")];
  std::size_t const n = std::min(steps_run, schedule.steps.size());
  for (std::size_t i = 0; i < n; ++i) {
    ++step_kinds[schedule::step_name(schedule.steps[i])];
    std::visit(StepCoverage{*this}, schedule.steps[i]);
  }
}

void Coverage::merge(Coverage const& o) {
  merge_counts(step_kinds, o.step_kinds);
  merge_counts(divergence, o.divergence);
  merge_counts(free_patterns, o.free_patterns);
  merge_counts(parallel_do_actions, o.parallel_do_actions);
  merge_counts(defrag_variants, o.defrag_variants);
  merge_counts(heap_sizes, o.heap_sizes);
  merge_counts(hierarchy_depths, o.hierarchy_depths);
  merge_counts(type_counts, o.type_counts);
}

namespace {

void check_shard_options(StressOptions const& options) {
  HEAPLAB_EXPECTS(options.workers >= 1, "stress needs at least one worker");
  HEAPLAB_EXPECTS(options.shard_count >= 1, "the shard count must be at least 1");
  HEAPLAB_EXPECTS(options.shard_index < options.shard_count,
                  "the shard index must be less than the shard count");
  if (options.only_case) {
    HEAPLAB_EXPECTS(*options.only_case % options.shard_count == options.shard_index,
                    "case " + std::to_string(*options.only_case) + " belongs to shard " +
                        std::to_string(*options.only_case % options.shard_count) + "/" +
                        std::to_string(options.shard_count) + ", not to this shard");
    HEAPLAB_EXPECTS(!options.max_cases || *options.only_case < options.max_cases,
                    "--case must be below --cases");
  }
}

/// The i-th case of worker w, or nothing when the worker has no i-th case.
std::optional<std::uint64_t> case_of_worker(StressOptions const& o, unsigned w, std::uint64_t i) {
  if (o.only_case) {
    if (w != 0 || i != 0) return std::nullopt;
    return *o.only_case;
  }
  std::uint64_t const j = std::uint64_t{w} + std::uint64_t{o.workers} * i;  // index in the shard
  std::uint64_t const k = o.shard_index + std::uint64_t{o.shard_count} * j;
  if (o.max_cases && k >= o.max_cases) return std::nullopt;
  return k;
}

}  // namespace

std::vector<std::uint64_t> cases_of_shard(StressOptions const& options, std::uint64_t limit) {
  check_shard_options(options);
  StressOptions one = options;
  one.workers       = 1;
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 0; out.size() < limit; ++i) {
    auto const k = case_of_worker(one, 0, i);
    if (!k) break;
    out.push_back(*k);
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

/// What the workers of one run_stress call share.
struct StressShared {
  std::atomic<std::uint64_t> cases{0}, steps{0}, defrags{0}, oom{0}, skipped{0}, failures{0};
  std::atomic<std::uint64_t> live{0}, blocks{0}, num_blocks{0};
  // StepTimes summed, in nanoseconds (implementation, model, checks).
  std::atomic<std::uint64_t> ns_implementation{0}, ns_model{0}, ns_checks{0};
  std::unique_ptr<std::atomic<std::uint64_t>[]> worker_cases;  // one counter per worker
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::atomic<unsigned> exhausted{0};  // workers that ran out of cases (--cases, --case)
  std::mutex mutex;                    // failures, stop_reason, coverage, observer.on_failure
  std::condition_variable wake;
  std::vector<SavedFailure> saved;
  std::string stop_reason;
  Coverage coverage;
  bool hang = false;

  /// Adds one step's counters (from any worker's thread).
  void count_step(StepReport const& r) {
    ++steps;
    if (r.op == "defrag") ++defrags;
    oom += r.out_of_memory;
    live       = r.live_objects;
    blocks     = r.blocks_in_use;
    num_blocks = r.num_blocks;
    auto ns    = [](double seconds) { return static_cast<std::uint64_t>(seconds * 1e9); };
    ns_implementation += ns(r.times.implementation);
    ns_model += ns(r.times.model);
    ns_checks += ns(r.times.checks);
  }
};

/// One run_stress call: the runners, the worker threads and the calling thread's tick loop.
class StressRun {
 public:
  StressRun(StressOptions const& options,
            RunnerFactory const& make_runner,
            StressObserver const& observer)
      : options_(options), observer_(observer), start_(Clock::now()) {
    // Runners are made up front so that "not available" is reported before any case runs.
    for (unsigned w = 0; w < options_.workers; ++w) runners_.push_back(make_runner(w));
  }

  StressResult run() {
    std::vector<std::thread> threads;
    shared_.worker_cases = std::make_unique<std::atomic<std::uint64_t>[]>(options_.workers);
    shared_.running      = static_cast<int>(options_.workers);
    for (unsigned w = 0; w < options_.workers; ++w) threads.emplace_back([this, w] { worker(w); });
    wait_with_ticks();
    for (auto& t : threads) t.join();
    return result();
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  /// Called with shared_.mutex held.
  void request_stop(std::string const& reason) {
    if (shared_.stop_reason.empty()) shared_.stop_reason = reason;
    shared_.stop = true;
  }

  bool interrupted() const {
    return options_.interrupt && options_.interrupt->load(std::memory_order_relaxed);
  }

  /// One case on `runner`; a schedule the runner rejects is a crash of step 0 (a heaplab bug).
  RunOutcome run_case(ScheduleRunner& runner, StressCase const& c) {
    RunOutcome outcome;
    try {
      outcome = runner.run(c.schedule, [&](StepReport const& r) { shared_.count_step(r); });
    } catch (std::exception const& e) {
      Failure f;
      f.kind          = FailureKind::crash;
      f.check         = checks::kException;
      f.message       = std::string("the runner rejected the generated schedule: ") + e.what();
      outcome.failure = f;
    }
    return outcome;
  }

  /// Writes the failure file of case c, tells the observer and applies --max-failures.
  SavedFailure record_failure(unsigned w,
                              StressCase const& c,
                              ScheduleRunner const& runner,
                              Failure const& failure) {
    ++shared_.failures;
    SavedFailure saved;
    saved.failure = failure;
    saved.worker  = w;
    std::lock_guard<std::mutex> lock(shared_.mutex);
    try {
      saved.file = failure_file_for(options_, c, runner, failure);
      saved.path = schedule::save_failure(saved.file, options_.out_dir);
    } catch (std::exception const& e) {
      saved.save_error = e.what();
    }
    shared_.saved.push_back(saved);
    if (observer_.on_failure) observer_.on_failure(saved);
    if (shared_.failures >= options_.max_failures) request_stop("--max-failures reached");
    if (failure.kind == FailureKind::hang) {
      shared_.hang = true;
      request_stop("hang");
    }
    return saved;
  }

  /// Worker w's loop: its cases in order until a stop, the time budget or its last case.
  void worker(unsigned w) {
    ScheduleRunner& runner = *runners_[w];
    for (std::uint64_t i = 0;; ++i) {
      if (shared_.stop) break;
      if (interrupted()) {
        std::lock_guard<std::mutex> lock(shared_.mutex);
        request_stop("interrupted");
        break;
      }
      if (elapsed() >= options_.seconds) break;
      auto const k = case_of_worker(options_, w, i);
      if (!k) {
        ++shared_.exhausted;
        break;
      }
      StressCase const c = make_case(options_, *k);
      if (!runner.supports(c.schedule.config).supported) {
        ++shared_.skipped;
        continue;
      }
      RunOutcome const outcome = run_case(runner, c);
      ++shared_.cases;
      ++shared_.worker_cases[w];
      {
        std::lock_guard<std::mutex> lock(shared_.mutex);
        shared_.coverage.add(c.schedule, outcome.steps_run);
      }
      if (!outcome.failure) continue;
      SavedFailure const saved = record_failure(w, c, runner, *outcome.failure);
      if (outcome.failure->kind == FailureKind::hang) {
        if (observer_.on_hang)
          observer_.on_hang(saved);  // outside the lock: it may end the process
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      --shared_.running;
    }
    shared_.wake.notify_all();
  }

  /// Called with shared_.mutex held (coverage).
  StressStats stats() const {
    StressStats st;
    st.elapsed              = elapsed();
    st.cases                = shared_.cases;
    st.steps                = shared_.steps;
    st.defrags              = shared_.defrags;
    st.out_of_memory        = shared_.oom;
    st.skipped              = shared_.skipped;
    st.failures             = shared_.failures;
    st.live_objects         = shared_.live;
    st.blocks_in_use        = shared_.blocks;
    st.num_blocks           = shared_.num_blocks;
    st.times.implementation = static_cast<double>(shared_.ns_implementation.load()) / 1e9;
    st.times.model          = static_cast<double>(shared_.ns_model.load()) / 1e9;
    st.times.checks         = static_cast<double>(shared_.ns_checks.load()) / 1e9;
    st.coverage             = shared_.coverage;
    for (unsigned w = 0; w < options_.workers; ++w)
      st.cases_per_worker.push_back(shared_.worker_cases[w].load());
    return st;
  }

  /// Until every worker is done: calls observer.on_tick every tick_seconds.
  void wait_with_ticks() {
    auto const tick = std::chrono::duration<double>(std::max(0.01, options_.tick_seconds));
    auto next_tick  = Clock::now() + std::chrono::duration_cast<Clock::duration>(tick);
    std::unique_lock<std::mutex> lock(shared_.mutex);
    while (shared_.running > 0) {
      shared_.wake.wait_until(lock, next_tick);
      if (Clock::now() >= next_tick) {
        next_tick += std::chrono::duration_cast<Clock::duration>(tick);
        if (observer_.on_tick) {
          StressStats const st = stats();
          lock.unlock();
          observer_.on_tick(st);
          lock.lock();
        }
      }
    }
  }

  /// After the workers joined.
  StressResult result() {
    StressResult result;
    {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      result.stats = stats();
    }
    result.failures    = std::move(shared_.saved);
    result.hang        = shared_.hang;
    result.stop_reason = shared_.stop_reason;
    if (result.stop_reason.empty())
      result.stop_reason = shared_.exhausted < options_.workers ? "time budget"
                           : options_.only_case                 ? "--case ran"
                                                                : "--cases reached";
    return result;
  }

  StressOptions const& options_;
  StressObserver const& observer_;
  Clock::time_point const start_;
  std::vector<std::unique_ptr<ScheduleRunner>> runners_;
  StressShared shared_;
};

}  // namespace

StressResult run_stress(StressOptions const& options,
                        RunnerFactory const& make_runner,
                        StressObserver const& observer) {
  check_shard_options(options);
  HEAPLAB_EXPECTS(options.seconds >= 0, "the time budget must not be negative");
  HEAPLAB_EXPECTS(options.max_failures >= 1, "max_failures must be at least 1");
  return StressRun(options, make_runner, observer).run();
}

}  // namespace heaplab::runner
