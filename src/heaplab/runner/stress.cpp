// The stress loop (stress.hpp): cases, shards, workers, failure files. Family-free: what a case
// is comes from Family::generate, what a step did from StepReport.
#include "heaplab/runner/stress.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "heaplab/core/expects.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::runner {

namespace {

constexpr std::uint64_t kCaseSalt = 0x5eed;

/// RapidCheck's implicit generation context is a process-wide static, so generation is
/// serialized across workers.
std::mutex& generation_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::uint64_t case_seed(std::uint64_t run_seed, std::uint64_t k) {
  return schedule::mix(run_seed, k, kCaseSalt);
}

std::uint32_t case_size(std::uint64_t k) { return static_cast<std::uint32_t>(1 + k % 100); }

StressCase make_case(Family const& family, StressOptions const& options, std::uint64_t k) {
  StressCase c;
  c.index      = k;
  c.seed       = case_seed(options.seed, k);
  c.rapidcheck = {c.seed, case_size(k)};
  std::lock_guard<std::mutex> lock(generation_mutex());
  c.schedule = family.generate(options.request, c.rapidcheck.seed, c.rapidcheck.size);
  return c;
}

std::string case_description(StressOptions const& o, std::uint64_t k) {
  return "heaplab stress --seed " + std::to_string(o.seed) + " --runner " + o.request.runner +
         " --profile " + o.request.profile + " --heap-mib " + std::to_string(o.request.heap_mib) +
         (o.request.max_size ? " --max-blocks " + std::to_string(o.request.max_size) : "") +
         ", case " + std::to_string(k);
}

FailureFile failure_file_for(StressOptions const& options,
                             StressCase const& c,
                             std::string const& device_name,
                             std::string const& runner_name,
                             Failure const& failure) {
  FailureFile f =
      stress_failure_file(device_name, runner_name, c.seed, c.rapidcheck, options.seed, c.index);
  f.origin.profile           = options.request.profile;
  f.origin.heap_mib          = options.request.heap_mib;
  f.failure                  = failure.record();
  AnySchedule const& failing = failure.reproducer.empty() ? c.schedule : failure.reproducer;
  f.schedule = failing.family().with_description(failing, case_description(options, c.index));
  return f;
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

/// What the workers of one run_stress call share. Counters that every step touches are atomics;
/// the rest is under `mutex`.
struct StressShared {
  std::atomic<std::uint64_t> cases{0}, steps{0}, skipped{0}, failures{0};
  std::atomic<std::uint64_t> live{0}, in_use{0}, capacity{0};
  // StepTimes summed, in nanoseconds (implementation, model, checks).
  std::atomic<std::uint64_t> ns_implementation{0}, ns_readback{0}, ns_model{0}, ns_checks{0};
  std::unique_ptr<std::atomic<std::uint64_t>[]> worker_cases;  // one counter per worker
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::atomic<unsigned> exhausted{0};  // workers that ran out of cases (--cases, --case)
  std::mutex mutex;  // failures, stop_reason, coverage, counts, observer.on_failure, skip_reason
  std::string skip_reason;  // why the first skipped case was not supported
  std::condition_variable wake;
  std::vector<SavedFailure> saved;
  std::string stop_reason;
  Coverage coverage;
  std::map<std::string, std::uint64_t> counts;
  bool hang = false;
  // The stall guard (StressOptions::stall_seconds), one entry per worker: the case it runs
  // (null between cases; under `mutex`), when it last started a case or finished a step
  // (steady-clock nanoseconds), and the steps of its case finished so far.
  std::vector<StressCase const*> current;
  std::unique_ptr<std::atomic<std::int64_t>[]> progress_ns;
  std::unique_ptr<std::atomic<std::uint64_t>[]> steps_done;

  /// Adds one step's counters (from any worker's thread).
  void count_step(StepReport const& r) {
    ++steps;
    live     = r.live;
    in_use   = r.in_use;
    capacity = r.capacity;
    auto ns  = [](double seconds) { return static_cast<std::uint64_t>(seconds * 1e9); };
    ns_implementation += ns(r.times.implementation);
    ns_readback += ns(r.times.readback);
    ns_model += ns(r.times.model);
    ns_checks += ns(r.times.checks);
    if (r.counts.empty()) return;
    std::lock_guard<std::mutex> lock(mutex);
    for (auto const& [key, n] : r.counts) counts[key] += n;
  }
};

/// One run_stress call: the runners, the worker threads and the calling thread's tick loop.
class StressRun {
 public:
  StressRun(Family const& family,
            StressOptions const& options,
            RunnerFactory const& make_runner,
            StressObserver const& observer)
      : family_(family), options_(options), observer_(observer), start_(Clock::now()) {
    // Runners are made up front so that "not available" is reported before any case runs; their
    // names are asked once, here, for the failure files (a stalled runner is never called).
    for (unsigned w = 0; w < options_.workers; ++w) {
      runners_.push_back(make_runner(w));
      names_.push_back({runners_.back()->device_name(), runners_.back()->name()});
    }
  }

  StressResult run() {
    std::vector<std::thread> threads;
    shared_.worker_cases = std::make_unique<std::atomic<std::uint64_t>[]>(options_.workers);
    shared_.running      = static_cast<int>(options_.workers);
    shared_.current.assign(options_.workers, nullptr);
    shared_.progress_ns = std::make_unique<std::atomic<std::int64_t>[]>(options_.workers);
    shared_.steps_done  = std::make_unique<std::atomic<std::uint64_t>[]>(options_.workers);
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

  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
  }

  /// Worker w starts (c) or ends (nullptr) a case: what the stall guard watches.
  void set_current(unsigned w, StressCase const* c) {
    shared_.steps_done[w]  = 0;
    shared_.progress_ns[w] = now_ns();
    std::lock_guard<std::mutex> lock(shared_.mutex);
    shared_.current[w] = c;
  }

  /// One case on worker w's runner; a schedule the runner rejects is a crash of step 0 (a
  /// heaplab bug).
  RunOutcome run_case(unsigned w, Runner& runner, StressCase const& c) {
    RunOutcome outcome;
    set_current(w, &c);
    try {
      outcome = runner.run(c.schedule, [&](StepReport const& r) {
        shared_.count_step(r);
        ++shared_.steps_done[w];
        shared_.progress_ns[w] = now_ns();
      });
    } catch (std::exception const& e) {
      Failure f;
      f.kind          = FailureKind::crash;
      f.check         = checks::kException;
      f.message       = std::string("the runner rejected the generated schedule: ") + e.what();
      outcome.failure = f;
    }
    set_current(w, nullptr);
    return outcome;
  }

  /// Writes the failure file of case c, tells the observer and applies --max-failures.
  SavedFailure record_failure(unsigned w, StressCase const& c, Failure const& failure) {
    ++shared_.failures;
    SavedFailure saved;
    saved.failure = failure;
    saved.worker  = w;
    std::lock_guard<std::mutex> lock(shared_.mutex);
    try {
      saved.file = failure_file_for(options_, c, names_[w].device, names_[w].runner, failure);
      saved.path = save_failure(saved.file, options_.out_dir);
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

  /// Whether worker w may start another case (a stop, an interruption, the budget).
  bool may_continue() {
    if (shared_.stop) return false;
    if (interrupted()) {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      request_stop("interrupted");
      return false;
    }
    return elapsed() < options_.seconds;
  }

  /// Worker w's loop: its cases in order until a stop, the time budget or its last case.
  void worker(unsigned w) {
    Runner& runner = *runners_[w];
    for (std::uint64_t i = 0; may_continue(); ++i) {
      auto const k = case_of_worker(options_, w, i);
      if (!k) {
        ++shared_.exhausted;
        break;
      }
      StressCase const c = make_case(family_, options_, *k);
      if (Support const support = runner.supports(c.schedule); !support.supported) {
        std::lock_guard<std::mutex> lock(shared_.mutex);
        if (shared_.skip_reason.empty()) shared_.skip_reason = support.reason;
        ++shared_.skipped;
        continue;
      }
      RunOutcome const outcome = run_case(w, runner, c);
      ++shared_.cases;
      ++shared_.worker_cases[w];
      {
        std::lock_guard<std::mutex> lock(shared_.mutex);
        family_.cover(c.schedule, outcome.steps_run, shared_.coverage);
      }
      if (!outcome.failure) continue;
      SavedFailure const saved = record_failure(w, c, *outcome.failure);
      if (outcome.failure->kind == FailureKind::hang) {
        if (observer_.on_hang)
          observer_.on_hang(saved);  // outside the lock: it may end the
                                     // process
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      --shared_.running;
    }
    shared_.wake.notify_all();
  }

  /// Called with shared_.mutex held (coverage, counts).
  StressStats stats() const {
    StressStats st;
    st.elapsed              = elapsed();
    st.cases                = shared_.cases;
    st.steps                = shared_.steps;
    st.skipped              = shared_.skipped;
    st.skip_reason          = shared_.skip_reason;
    st.failures             = shared_.failures;
    st.live                 = shared_.live;
    st.in_use               = shared_.in_use;
    st.capacity             = shared_.capacity;
    st.counts               = shared_.counts;
    st.times.implementation = static_cast<double>(shared_.ns_implementation.load()) / 1e9;
    st.times.readback       = static_cast<double>(shared_.ns_readback.load()) / 1e9;
    st.times.model          = static_cast<double>(shared_.ns_model.load()) / 1e9;
    st.times.checks         = static_cast<double>(shared_.ns_checks.load()) / 1e9;
    st.coverage             = shared_.coverage;
    for (unsigned w = 0; w < options_.workers; ++w)
      st.cases_per_worker.push_back(shared_.worker_cases[w].load());
    return st;
  }

  /// The stall guard, from the calling thread, which never enters a runner: every worker whose
  /// case finished no step for stall_seconds gets its case saved as a hang (we cannot tell the
  /// worker that holds a stuck kernel from one blocked behind it, so each is saved), then
  /// observer.on_hang ends the process. Called with `lock` (shared_.mutex) held; returns with it.
  void report_stalls(std::unique_lock<std::mutex>& lock) {
    std::int64_t const limit = static_cast<std::int64_t>(options_.stall_seconds * 1e9);
    std::vector<std::pair<unsigned, StressCase>> stalled;
    for (unsigned w = 0; w < options_.workers; ++w)
      if (shared_.current[w] != nullptr && now_ns() - shared_.progress_ns[w] > limit)
        stalled.emplace_back(w, *shared_.current[w]);  // a copy: the worker may yet resume
    if (stalled.empty()) return;
    lock.unlock();
    std::vector<SavedFailure> saved;
    for (auto const& [w, c] : stalled) {
      Failure f;
      f.kind  = FailureKind::hang;
      f.check = checks::kStall;
      // The step in progress; a worker stuck after its last step (in a runner's teardown) is
      // blamed on that last step, so that the file names a step of its schedule.
      std::size_t const steps = family_.steps(c.schedule);
      f.step                  = std::min(static_cast<std::size_t>(shared_.steps_done[w].load()),
                        steps > 0 ? steps - 1 : std::size_t{0});
      f.message = "worker " + std::to_string(w) + " finished no step of this case for " +
                  std::to_string(static_cast<long long>(options_.stall_seconds)) +
                  " s (--stall-seconds) and does not answer: a call that never returns, e.g. a "
                  "CUDA call waiting for the device behind a stuck kernel, where the watchdog "
                  "cannot poll; " +
                  std::to_string(stalled.size()) +
                  " worker(s) stalled, one of them may only wait for another's kernel";
      saved.push_back(record_failure(w, c, f));
    }
    if (observer_.on_hang) observer_.on_hang(saved.front());  // ends the process
    lock.lock();
  }

  /// Until every worker is done: calls observer.on_tick every tick_seconds (and the stall guard
  /// at least every second, when it is on).
  void wait_with_ticks() {
    auto const tick  = std::chrono::duration<double>(std::max(0.01, options_.tick_seconds));
    auto next_tick   = Clock::now() + std::chrono::duration_cast<Clock::duration>(tick);
    bool const guard = options_.stall_seconds > 0;
    std::unique_lock<std::mutex> lock(shared_.mutex);
    while (shared_.running > 0) {
      auto const until =
          guard ? std::min(next_tick, Clock::now() + std::chrono::seconds(1)) : next_tick;
      shared_.wake.wait_until(lock, until);
      if (guard && !shared_.hang) report_stalls(lock);
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

  Family const& family_;
  StressOptions const& options_;
  StressObserver const& observer_;
  Clock::time_point const start_;
  std::vector<std::unique_ptr<Runner>> runners_;
  struct Names {
    std::string device, runner;
  };
  std::vector<Names> names_;  // per worker: its runner's device_name() and name()
  StressShared shared_;
};

}  // namespace

StressResult run_stress(Family const& family,
                        StressOptions const& options,
                        RunnerFactory const& make_runner,
                        StressObserver const& observer) {
  check_shard_options(options);
  HEAPLAB_EXPECTS(options.seconds >= 0, "the time budget must not be negative");
  HEAPLAB_EXPECTS(options.max_failures >= 1, "max_failures must be at least 1");
  HEAPLAB_EXPECTS(options.stall_seconds >= 0, "the stall limit must not be negative");
  HEAPLAB_EXPECTS(options.stall_seconds == 0 || observer.on_hang,
                  "the stall guard needs StressObserver::on_hang to end the process (a stalled "
                  "worker cannot be joined)");
  return StressRun(family, options, make_runner, observer).run();
}

}  // namespace heaplab::runner
