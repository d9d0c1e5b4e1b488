// The differential runner of the random-walk pool (rw_runner.hpp).
#include "heaplab/runner/rw_runner.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/model/rw_interpreter.hpp"

namespace heaplab::runner {

rw::Algorithm to_rw(schedule::RwAlgorithm a) {
  switch (a) {
    case schedule::RwAlgorithm::rw:
      return rw::Algorithm::rw;
    case schedule::RwAlgorithm::rw_bm:
      return rw::Algorithm::rw_bm;
    case schedule::RwAlgorithm::corw:
      return rw::Algorithm::corw;
    case schedule::RwAlgorithm::rw_malloc:
      return rw::Algorithm::rw_malloc;
  }
  return rw::Algorithm::rw;
}

rw::PoolConfig to_pool_config(schedule::RwPool const& pool) {
  rw::PoolConfig c;
  c.num_pages  = pool.num_pages;
  c.page_bytes = pool.page_bytes;
  c.word_bits  = pool.word_bits;
  c.max_steps  = pool.max_steps;
  return c;
}

void RwRunStats::add(RwRunStats const& o) {
  waves += o.waves;
  requests += o.requests;
  pages += o.pages;
  out_of_pages += o.out_of_pages;
  exhaustions += o.exhaustions;
  freed += o.freed;
  walk_steps += o.walk_steps;
  max_walk_steps = std::max(max_walk_steps, o.max_walk_steps);
}

std::string describe(RwFailure const& f) {
  std::string s = "wave " + std::to_string(f.step);
  if (f.thread) s += " thread " + std::to_string(*f.thread);
  return s + ": " + f.message;
}

namespace {

/// One run: the backend, the model and the outcome so far.
class RwRun {
 public:
  RwRun(schedule::RwSchedule const& s, rw::PoolBackend& backend, RwWaveCallback const& on_wave)
      : s_(s), backend_(backend), model_(s.pool), on_wave_(on_wave) {}

  RwRunOutcome run() {
    try {
      backend_.mark_used(model_.pretaken());
    } catch (std::exception const& e) {
      return finish(crash(0, std::string("setup (pre-taken pages): ") + e.what()));
    }
    if (auto f = check_pool(0, "after setup, before wave 0: ")) return finish(std::move(f));
    for (std::size_t i = 0; i < s_.steps.size(); ++i) {
      RwWaveReport report;
      report.step        = i;
      report.description = schedule::describe(s_.steps[i]);
      std::optional<RwFailure> f =
          std::holds_alternative<schedule::RwAllocWave>(s_.steps[i])
              ? alloc(i, std::get<schedule::RwAllocWave>(s_.steps[i]), report)
              : free(i, std::get<schedule::RwFreeWave>(s_.steps[i]), report);
      if (!f) f = check_pool(i, "");
      steps_run_ = i + 1;
      ++stats_.waves;
      report.ok         = !f;
      report.held       = model_.held().size();
      report.used_pages = model_.pages().num_pages() - model_.pages().free_count();
      if (on_wave_) on_wave_(report);
      if (f) return finish(std::move(f));
    }
    return finish(std::nullopt);
  }

 private:
  RwRunOutcome finish(std::optional<RwFailure> f) {
    RwRunOutcome out;
    out.steps_run          = steps_run_;
    out.stats              = stats_;
    out.stats.out_of_pages = model_.out_of_pages();
    out.stats.exhaustions  = model_.bounded_walk_exhaustions();
    if (f) out.failure.emplace(std::move(*f));
    return out;
  }

  static RwFailure crash(std::size_t step, std::string message) {
    return RwFailure{step,
                     std::nullopt,
                     schedule::FailureKind::crash,
                     checks::kException,
                     std::move(message),
                     {}};
  }

  /// rw-request-steps for thread i of an alloc wave; "" when its answer is well formed.
  std::string request_problem(rw::Algorithm a,
                              std::uint32_t asked,
                              std::uint32_t first,
                              std::uint32_t steps) const {
    std::uint32_t const max = s_.pool.max_steps;
    if (asked == 0)
      return first == rw::kNoPage && steps == 0
                 ? std::string()
                 : "an inactive thread reports page " +
                       (first == rw::kNoPage ? std::string("none") : std::to_string(first)) +
                       " and " + std::to_string(steps) + " steps (expected none and 0)";
    if (steps < 1 || steps > max)
      return "an active thread reports " + std::to_string(steps) + " steps (expected 1.." +
             std::to_string(max) + ")";
    bool const single_walker = a == rw::Algorithm::rw || a == rw::Algorithm::rw_bm;
    if (single_walker && first == rw::kNoPage && steps != max)
      return "a null after " + std::to_string(steps) + " steps (a walk gives up only after " +
             std::to_string(max) + ")";
    return {};
  }

  std::optional<RwFailure> check_requests(std::size_t i,
                                          rw::AllocWave const& wave,
                                          rw::AllocResult const& r,
                                          RwWaveReport& report) {
    auto const n = wave.pages.size();
    if (r.first.size() != n || r.steps.size() != n)
      return RwFailure{i,
                       std::nullopt,
                       schedule::FailureKind::invariant_violation,
                       checks::kRwResultShape,
                       "the backend answered " + std::to_string(r.first.size()) + " pages and " +
                           std::to_string(r.steps.size()) + " step counts for " +
                           std::to_string(n) + " threads",
                       {}};
    for (std::uint32_t t = 0; t < n; ++t) {
      std::string const why =
          request_problem(wave.algorithm, wave.pages[t], r.first[t], r.steps[t]);
      if (!why.empty())
        return RwFailure{
            i, t, schedule::FailureKind::invariant_violation, checks::kRwRequestSteps, why, {}};
      if (wave.pages[t] == 0) continue;
      auto& st = stats_;
      ++st.requests;
      st.walk_steps += r.steps[t];
      st.max_walk_steps = std::max(st.max_walk_steps, r.steps[t]);
      report.max_steps  = std::max(report.max_steps, r.steps[t]);
      if (r.first[t] == rw::kNoPage) {
        ++report.nulls;
      } else {
        ++report.granted;
        st.pages += wave.pages[t];
      }
    }
    return std::nullopt;
  }

  std::optional<RwFailure> alloc(std::size_t i,
                                 schedule::RwAllocWave const& step,
                                 RwWaveReport& report) {
    rw::AllocWave wave;
    wave.algorithm     = to_rw(step.algorithm);
    wave.pages         = schedule::rw_requests(step);
    wave.block_threads = step.block_threads;
    wave.seed          = step.seed;
    rw::AllocResult r;
    try {
      r = backend_.allocate(wave);
    } catch (std::exception const& e) {
      return crash(i, std::string("allocate: ") + e.what());
    }
    if (auto f = check_requests(i, wave, r, report)) return f;
    if (auto rej = model_.alloc(static_cast<std::uint32_t>(i), wave.pages, r.first))
      return RwFailure{i,
                       rej->thread,
                       schedule::FailureKind::divergence,
                       checks::kRwRefinement,
                       rej->message,
                       {}};
    return std::nullopt;
  }

  std::optional<RwFailure> free(std::size_t i,
                                schedule::RwFreeWave const& step,
                                RwWaveReport& report) {
    auto const freed = model_.free(step);
    rw::FreeWave wave;
    for (auto const& h : freed) {
      wave.first.push_back(h.first);
      wave.count.push_back(h.count);
    }
    report.freed = freed.size();
    stats_.freed += freed.size();
    try {
      backend_.free(wave);
    } catch (std::exception const& e) {
      return crash(i, std::string("free: ") + e.what());
    }
    return std::nullopt;
  }

  /// The catalog on the backend's words against the model's owners.
  std::optional<RwFailure> check_pool(std::size_t i, std::string const& when) {
    rw::PoolWords words;
    try {
      words = backend_.words();
    } catch (std::exception const& e) {
      return crash(i, std::string("words: ") + e.what());
    }
    check::RwPoolSnapshot snap;
    snap.num_pages  = s_.pool.num_pages;
    snap.word_bits  = s_.pool.word_bits;
    snap.used_words = std::move(words.used);
    snap.lock_words = std::move(words.locks);
    auto violations = check::rw_check_all(snap, model_.owners());
    if (violations.empty()) return std::nullopt;
    RwFailure f{i,
                std::nullopt,
                schedule::FailureKind::invariant_violation,
                violations.front().invariant,
                when + violations.front().to_string(),
                std::move(violations)};
    return f;
  }

  schedule::RwSchedule const& s_;
  rw::PoolBackend& backend_;
  model::RwModelInterpreter model_;
  RwWaveCallback const& on_wave_;
  std::size_t steps_run_ = 0;
  RwRunStats stats_;
};

}  // namespace

RwRunner::RwRunner(std::string name,
                   RwBackendFactory make,
                   RwSupport support,
                   bool deterministic,
                   std::string device)
    : name_(std::move(name)),
      make_(std::move(make)),
      support_(std::move(support)),
      deterministic_(deterministic),
      device_(std::move(device)) {}

std::string RwRunner::unsupported(schedule::RwSchedule const& s) const {
  for (std::size_t i = 0; i < s.steps.size(); ++i)
    if (auto const* a = std::get_if<schedule::RwAllocWave>(&s.steps[i]))
      if (auto why = support_ ? support_(to_rw(a->algorithm)) : std::string(); !why.empty())
        return "steps[" + std::to_string(i) + "]: " + why;
  return {};
}

RwRunOutcome RwRunner::run(schedule::RwSchedule const& s, RwWaveCallback const& on_wave) {
  schedule::validate(s);
  if (auto const why = unsupported(s); !why.empty()) throw rw_unsupported_error(why);
  std::unique_ptr<rw::PoolBackend> backend;
  try {
    backend = make_(to_pool_config(s.pool));
  } catch (std::exception const& e) {
    RwRunOutcome out;
    out.failure = RwFailure{0,
                            std::nullopt,
                            schedule::FailureKind::crash,
                            checks::kException,
                            std::string("making the pool: ") + e.what(),
                            {}};
    return out;
  }
  return RwRun(s, *backend, on_wave).run();
}

}  // namespace heaplab::runner
