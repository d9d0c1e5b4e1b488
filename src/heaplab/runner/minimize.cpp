// minimize.hpp: the generic part (cut, ddmin, the rounds, the budget); a family's own reductions
// run through the Reducer below.
#include "heaplab/runner/minimize.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <utility>

#include "heaplab/core/expects.hpp"

namespace heaplab::runner {

namespace {

struct Stop {};  // budget exhausted or the runner hung: unwind to minimize()

class Minimizer final : public Reducer {
 public:
  Minimizer(Runner& runner, MinimizeOptions const& options)
      : runner_(runner), options_(options), start_(std::chrono::steady_clock::now()) {}

  [[nodiscard]] AnySchedule const& best() const override { return best_; }
  bool try_candidate(AnySchedule const& candidate) override { return fails(candidate).has_value(); }
  void log(std::string const& line) override {
    if (options_.log) options_.log(line);
  }

  MinimizeResult run(AnySchedule const& input,
                     std::optional<FailureSignature> target,
                     std::string* why,
                     bool* input_ran) {
    target_ = std::move(target);
    best_   = input;
    MinimizeResult result;
    result.original_steps = family().steps(input);
    std::optional<Failure> first;
    try {
      first = fails(input);
    } catch (Stop const&) {
    }
    if (input_ran) *input_ran = runs_ > 0;
    if (!first) {
      if (why) *why = why_not(input);
      throw Stop{};
    }
    if (!target_) target_ = FailureSignature{first->kind, first->check};
    try {
      rounds();
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
  Family const& family() const { return best_.family(); }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  /// Runs `candidate` up to K times; the failure if one run failed the same way as target_
  /// (all runs when target_ is unset: the first failure of any kind).
  std::optional<Failure> fails(AnySchedule const& candidate) {
    for (unsigned r = 0; r < std::max(1u, options_.reruns); ++r) {
      if (runs_ >= options_.max_runs || elapsed() >= options_.seconds) {
        budget_exhausted_ = true;
        throw Stop{};
      }
      ++runs_;
      RunOutcome outcome;
      try {
        if (!runner_.supports(candidate).supported) return std::nullopt;
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

  /// The candidate failed the same way: it is the new best, cut after its failing step (steps
  /// after the failing one never matter).
  void accept(AnySchedule const& candidate, Failure const& f) {
    // A runner that recorded the choices of its run gives the exact reproduction: continue
    // from it.
    AnySchedule const& s = f.reproducer.empty() ? candidate : f.reproducer;
    // A round that only re-accepts the schedule it has is no progress (the rounds would not end).
    if (best_.empty() || family().to_json(s) != family().to_json(best_)) ++accepted_;
    best_failure_         = f;
    std::size_t const all = family().steps(s);
    if (f.step + 1 < all) {
      std::vector<std::size_t> keep(f.step + 1);
      std::iota(keep.begin(), keep.end(), std::size_t{0});
      best_ = family().keep_steps(s, keep);
    } else {
      best_ = s;
    }
  }

  std::string why_not(AnySchedule const& input) const {
    if (hang_aborted_) return "the input hung (the runner is unusable)";
    if (budget_exhausted_) return "the budget ended before the input was run";
    (void)input;
    return "the input does not fail" +
           (target_ ? " with kind " + std::string(to_string(target_->kind)) + " and check " +
                          target_->check
                    : std::string()) +
           " in " + std::to_string(std::max(1u, options_.reruns)) + " run(s) on '" +
           runner_.name() + "'";
  }

  /// The steps [b, e) of best_, or their complement.
  AnySchedule chunk(std::size_t n, std::size_t b, std::size_t e, bool complement) const {
    std::vector<std::size_t> keep;
    for (std::size_t i = 0; i < n; ++i)
      if ((i >= b && i < e) != complement) keep.push_back(i);
    return family().keep_steps(best_, keep);
  }

  /// ddmin over best_'s steps.
  void ddmin() {
    std::size_t const before = family().steps(best_);
    std::size_t n            = 2;
    while (family().steps(best_) >= 2) {
      std::size_t const size = family().steps(best_);
      n                      = std::min(n, size);
      std::vector<std::pair<std::size_t, std::size_t>> chunks;  // [begin, end)
      for (std::size_t i = 0; i < n; ++i) chunks.push_back({size * i / n, size * (i + 1) / n});
      bool reduced = false;
      for (auto [b, e] : chunks)
        if (try_candidate(chunk(size, b, e, false))) {
          reduced = true;
          n       = 2;
          break;
        }
      if (!reduced && n > 2)
        for (auto [b, e] : chunks)
          if (try_candidate(chunk(size, b, e, true))) {
            reduced = true;
            n       = std::max<std::size_t>(n - 1, 2);
            break;
          }
      if (!reduced) {
        if (n >= size) break;
        n = std::min(n * 2, size);
      }
    }
    std::size_t const after = family().steps(best_);
    if (after < before)
      log("steps " + std::to_string(before) + " -> " + std::to_string(after) + " (ddmin)");
  }

  /// ddmin and the family's reductions, round after round, until a round accepts nothing.
  void rounds() {
    for (;;) {
      std::size_t const accepted_before = accepted_;
      ddmin();
      family().reduce(*this, options_.reductions);
      if (accepted_ == accepted_before) break;
    }
  }

  Runner& runner_;
  MinimizeOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::optional<FailureSignature> target_;
  AnySchedule best_;
  Failure best_failure_;
  std::size_t runs_      = 0;
  std::size_t accepted_  = 0;
  bool budget_exhausted_ = false;
  bool hang_aborted_     = false;
};

}  // namespace

std::optional<MinimizeResult> minimize(Runner& runner,
                                       AnySchedule const& input,
                                       std::optional<FailureSignature> target,
                                       MinimizeOptions const& options,
                                       std::string* why,
                                       bool* input_ran) {
  HEAPLAB_EXPECTS(options.reruns >= 1, "minimize needs at least one run per candidate");
  HEAPLAB_EXPECTS(!input.empty(), "minimize needs a schedule");
  Minimizer m(runner, options);
  try {
    return m.run(input, std::move(target), why, input_ran);
  } catch (Stop const&) {
    return std::nullopt;
  }
}

void shrink_number(Reducer& reducer,
                   std::uint64_t current,
                   std::uint64_t lo,
                   std::function<AnySchedule(std::uint64_t)> const& make,
                   std::string const& what) {
  if (current <= lo) return;
  std::uint64_t const before = current;
  if (reducer.try_candidate(make(lo))) {
    current = lo;
  } else {
    std::uint64_t known_pass = lo;
    while (current - known_pass > 1) {
      std::uint64_t const mid = known_pass + (current - known_pass) / 2;
      if (reducer.try_candidate(make(mid)))
        current = mid;
      else
        known_pass = mid;
    }
  }
  if (current < before)
    reducer.log(what + " " + std::to_string(before) + " -> " + std::to_string(current));
}

}  // namespace heaplab::runner
