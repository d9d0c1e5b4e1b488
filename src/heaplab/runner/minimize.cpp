// minimize.hpp.
#include "heaplab/runner/minimize.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>

namespace heaplab::runner {

namespace {

using schedule::Schedule;
using schedule::Step;

struct Stop {};  // budget exhausted or the runner hung: unwind to minimize()

class Minimizer {
 public:
  Minimizer(ScheduleRunner& runner, MinimizeOptions const& options)
      : runner_(runner), options_(options), start_(std::chrono::steady_clock::now()) {}

  /// Runs `candidate` up to K times; the failure if one run failed the same way as target_
  /// (all runs when target_ is unset: the first failure of any kind).
  std::optional<Failure> fails(Schedule const& candidate) {
    for (unsigned r = 0; r < std::max(1u, options_.reruns); ++r) {
      if (runs_ >= options_.max_runs || elapsed() >= options_.seconds) {
        budget_exhausted_ = true;
        throw Stop{};
      }
      ++runs_;
      RunOutcome outcome;
      try {
        if (!runner_.supports(candidate.config).supported) return std::nullopt;
        outcome = runner_.run(candidate);
      } catch (std::exception const&) {
        return std::nullopt;  // an invalid candidate never "fails the same way"
      }
      bool const same = outcome.failure && (!target_ || (outcome.failure->kind == target_->kind &&
                                                         outcome.failure->check == target_->check));
      if (same) accept(candidate, *outcome.failure);
      if (!runner_.usable()) {
        hang_aborted_ = true;
        throw Stop{};
      }
      if (same) return outcome.failure;
    }
    return std::nullopt;
  }

  void accept(Schedule const& s, Failure const& f) {
    best_         = s;
    best_failure_ = f;
    // Steps after the failing one never matter.
    if (f.step + 1 < best_.steps.size()) best_.steps.resize(f.step + 1);
  }

  void log(std::string const& line) const {
    if (options_.log) options_.log(line);
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  /// True if the candidate fails the same way (and became best_).
  bool test(Schedule const& candidate) { return fails(candidate).has_value(); }

  Schedule with_steps(std::vector<Step> steps) const {
    Schedule s = best_;
    s.steps    = std::move(steps);
    return s;
  }

  /// ddmin over best_.steps.
  void ddmin() {
    std::size_t const before = best_.steps.size();
    std::size_t n            = 2;
    while (best_.steps.size() >= 2) {
      std::vector<Step> const c = best_.steps;
      n                         = std::min(n, c.size());
      std::vector<std::pair<std::size_t, std::size_t>> chunks;  // [begin, end)
      for (std::size_t i = 0; i < n; ++i)
        chunks.push_back({c.size() * i / n, c.size() * (i + 1) / n});
      bool reduced = false;
      for (auto [b, e] : chunks) {
        if (test(with_steps(std::vector<Step>(c.begin() + b, c.begin() + e)))) {
          reduced = true;
          n       = 2;
          break;
        }
      }
      if (!reduced && n > 2) {
        for (auto [b, e] : chunks) {
          std::vector<Step> complement(c.begin(), c.begin() + b);
          complement.insert(complement.end(), c.begin() + e, c.end());
          if (test(with_steps(std::move(complement)))) {
            reduced = true;
            n       = std::max<std::size_t>(n - 1, 2);
            break;
          }
        }
      }
      if (!reduced) {
        if (n >= c.size()) break;
        n = std::min(n * 2, c.size());
      }
    }
    if (best_.steps.size() < before)
      log("steps " + std::to_string(before) + " -> " + std::to_string(best_.steps.size()) +
          " (ddmin)");
  }

  /// The smallest value in [lo, current] for which `make(value)` still fails (binary search,
  /// assuming failures are monotone in the value; the result always failed).
  template <class Make>
  void shrink_number(std::uint64_t current,
                     std::uint64_t lo,
                     Make const& make,
                     std::string const& what) {
    if (current <= lo) return;
    std::uint64_t const before = current;
    if (test(make(lo))) {
      current = lo;
    } else {
      std::uint64_t known_pass = lo;
      while (current - known_pass > 1) {
        std::uint64_t const mid = known_pass + (current - known_pass) / 2;
        if (test(make(mid)))
          current = mid;
        else
          known_pass = mid;
      }
    }
    if (current < before)
      log(what + " " + std::to_string(before) + " -> " + std::to_string(current));
  }

  void reduce_config() {
    shrink_number(
        best_.config.num_blocks,
        1,
        [&](std::uint64_t m) {
          Schedule s          = best_;
          s.config.num_blocks = static_cast<std::uint32_t>(m);
          return s;
        },
        "config M");
  }

  /// Tries `edit` on a copy of step i; keeps it if the result fails the same way.
  template <class StepType, class Edit>
  bool try_edit(std::size_t i, Edit const& edit, std::string const& what) {
    if (i >= best_.steps.size()) return false;
    auto const* current = std::get_if<StepType>(&best_.steps[i]);
    if (!current) return false;
    StepType changed = *current;
    if (!edit(changed)) return false;  // nothing to change
    Schedule s = best_;
    s.steps[i] = changed;
    if (!test(s)) return false;
    log("step " + std::to_string(i) + ": " + what);
    return true;
  }

  template <class StepType, class Get, class Set>
  void shrink_field(
      std::size_t i, std::uint64_t lo, Get const& get, Set const& set, std::string const& what) {
    if (i >= best_.steps.size()) return;
    auto const* current = std::get_if<StepType>(&best_.steps[i]);
    if (!current) return;
    std::optional<std::uint64_t> const value = get(*current);
    if (!value) return;
    shrink_number(
        *value,
        lo,
        [&](std::uint64_t v) {
          Schedule s       = best_;
          StepType changed = std::get<StepType>(s.steps[i]);
          set(changed, v);
          s.steps[i] = changed;
          return s;
        },
        "step " + std::to_string(i) + " " + what);
  }

  template <class StepType>
  void halve_fraction(std::size_t i, double StepType::*field, std::string const& what) {
    for (int k = 0; k < 6; ++k)
      if (!try_edit<StepType>(
              i,
              [&](StepType& s) {
                if (s.*field <= 0) return false;
                s.*field /= 2;
                return true;
              },
              what + " halved"))
        break;
  }

  /// Resets an optional part of step i (an optional, a flag, a fraction) if it is set.
  template <class StepType, class Member>
  void drop(std::size_t i, Member StepType::*member, std::string const& what) {
    try_edit<StepType>(
        i,
        [member](StepType& s) {
          if (!(s.*member)) return false;
          s.*member = Member{};
          return true;
        },
        what);
  }

  /// Removes the elements of a list of step i one at a time, keeping at least `keep`.
  template <class StepType, class Element>
  void remove_each(std::size_t i,
                   std::vector<Element> StepType::*list,
                   std::size_t keep,
                   std::string const& what) {
    for (std::size_t e = 0;; ++e) {
      auto const* s = i < best_.steps.size() ? std::get_if<StepType>(&best_.steps[i]) : nullptr;
      if (!s || (s->*list).size() <= keep || e >= (s->*list).size()) break;
      auto const erase = [&](StepType& w) {
        (w.*list).erase((w.*list).begin() + static_cast<std::ptrdiff_t>(e));
        return true;
      };
      if (try_edit<StepType>(i, erase, what)) --e;  // the next element moved to index e
    }
  }

  /// An alloc wave: fewer threads, fewer objects, no divergence, fewer link rules and lane
  /// types, no roots.
  void reduce_alloc_wave(std::size_t i) {
    using schedule::AllocWave;
    using schedule::Divergence;
    shrink_field<AllocWave>(
        i,
        1,
        [](AllocWave const& a) { return std::optional<std::uint64_t>(a.threads); },
        [](AllocWave& a, std::uint64_t v) { a.threads = static_cast<std::uint32_t>(v); },
        "threads");
    shrink_field<AllocWave>(
        i,
        1,
        [](AllocWave const& a) {
          return a.count ? std::optional<std::uint64_t>(*a.count) : std::nullopt;
        },
        [](AllocWave& a, std::uint64_t v) { a.count = static_cast<std::uint32_t>(v); },
        "count");
    try_edit<AllocWave>(
        i,
        [](AllocWave& a) {
          if (a.divergence == Divergence::all) return false;
          if (a.divergence == Divergence::per_lane_counts) {
            std::uint32_t const most =
                *std::max_element(a.lane_counts.begin(), a.lane_counts.end());
            a.count = std::max<std::uint32_t>(most, 1);
          }
          if (a.divergence == Divergence::mixed_types) {
            a.type = a.lane_types.front();
            std::vector<schedule::LinkRule> kept;
            for (auto const& l : a.links)
              if (l.type == *a.type) kept.push_back(l);
            a.links = kept;
          }
          a.divergence = Divergence::all;
          a.lane_counts.clear();
          a.lane_types.clear();
          a.mask_seed = 0;
          return true;
        },
        "divergence -> all");
    remove_each(i, &AllocWave::links, 0, "link rule removed");
    remove_each(i, &AllocWave::lane_types, 1, "lane type removed");
    drop(i, &AllocWave::roots, "roots off");
  }

  /// A free wave that frees a fraction: the fraction halved, up to six times.
  void reduce_free_wave(std::size_t i) {
    if (i >= best_.steps.size()) return;
    auto const* f = std::get_if<schedule::FreeWave>(&best_.steps[i]);
    if (!f || f->select.pattern != schedule::SelectPattern::fraction) return;
    for (int k = 0; k < 6; ++k)
      if (!try_edit<schedule::FreeWave>(
              i,
              [](schedule::FreeWave& w) {
                if (w.select.fraction <= 0) return false;
                w.select.fraction /= 2;
                return true;
              },
              "free fraction halved"))
        break;
  }

  /// Every reduction of one step, in this order (each kept only if the schedule still fails
  /// the same way; a reduction of another kind of step does nothing).
  void reduce_step(std::size_t i) {
    reduce_alloc_wave(i);
    reduce_free_wave(i);
    halve_fraction<schedule::ParallelDo>(
        i, &schedule::ParallelDo::fraction, "parallel_do fraction");
    drop(i, &schedule::ParallelDo::null_fraction, "null_fraction -> 0");
    drop(i, &schedule::ParallelDo::child_slot, "child_slot removed");
    try_edit<schedule::Defrag>(
        i,
        [](schedule::Defrag& d) {
          if (!d.n && !d.k1 && d.variant == core::RewriteVariant::forwarding) return false;
          d.n.reset();
          d.k1.reset();
          d.variant = core::RewriteVariant::forwarding;
          return true;
        },
        "defrag overrides dropped");
    drop(i, &schedule::Check::snapshot_digest, "snapshot digest dropped");
    drop(i, &schedule::Check::graph_digest, "graph digest dropped");
  }

  MinimizeResult run(Schedule const& input,
                     std::optional<FailureSignature> target,
                     std::string* why) {
    target_ = target;
    MinimizeResult result;
    result.original_steps  = input.steps.size();
    result.original_blocks = input.config.num_blocks;
    best_                  = input;
    std::optional<Failure> first;
    try {
      first = fails(input);
    } catch (Stop const&) {
    }
    if (!first) {
      if (why) {
        *why =
            hang_aborted_ ? "the input hung (the runner is unusable)"
            : budget_exhausted_
                ? "the budget ended before the input was run"
                : "the input does not fail" +
                      (target_ ? " with kind " + std::string(schedule::to_string(target_->kind)) +
                                     " and check " + target_->check
                               : std::string()) +
                      " in " + std::to_string(std::max(1u, options_.reruns)) + " run(s) on '" +
                      runner_.name() + "'";
      }
      throw Stop{};
    }
    if (!target_) target_ = FailureSignature{first->kind, first->check};
    try {
      for (int round = 0;; ++round) {
        std::size_t const steps_before = best_.steps.size();
        std::uint32_t const m_before   = best_.config.num_blocks;
        Schedule const snapshot_before = best_;
        ddmin();
        if (options_.reduce_config) reduce_config();
        if (options_.reduce_sizes)
          for (std::size_t i = 0; i < best_.steps.size(); ++i) reduce_step(i);
        bool const changed = best_.steps.size() != steps_before ||
                             best_.config.num_blocks != m_before || !(best_ == snapshot_before);
        if (!changed) break;
      }
    } catch (Stop const&) {
    }
    result.schedule         = best_;
    result.failure          = best_failure_;
    result.runs             = runs_;
    result.budget_exhausted = budget_exhausted_;
    result.hang_aborted     = hang_aborted_;
    return result;
  }

 private:
  ScheduleRunner& runner_;
  MinimizeOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::optional<FailureSignature> target_;
  Schedule best_;
  Failure best_failure_;
  std::size_t runs_      = 0;
  bool budget_exhausted_ = false;
  bool hang_aborted_     = false;
};

}  // namespace

std::optional<MinimizeResult> minimize(ScheduleRunner& runner,
                                       schedule::Schedule const& input,
                                       std::optional<FailureSignature> target,
                                       MinimizeOptions const& options,
                                       std::string* why) {
  HEAPLAB_EXPECTS(options.reruns >= 1, "minimize needs at least one run per candidate");
  Minimizer m(runner, options);
  try {
    return m.run(input, std::move(target), why);
  } catch (Stop const&) {
    return std::nullopt;
  }
}

}  // namespace heaplab::runner
