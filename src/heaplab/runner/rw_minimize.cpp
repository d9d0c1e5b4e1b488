// Minimizing a failing random-walk schedule (rw_minimize.hpp).
#include "heaplab/runner/rw_minimize.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace heaplab::runner {

namespace {

class Minimizer {
 public:
  Minimizer(RwRunner& runner, RwMinimizeOptions const& o) : runner_(runner), o_(o) {}

  /// The first failure of `s` over the reruns (with the target check once one is set).
  std::optional<RwFailure> fails(schedule::RwSchedule const& s) {
    for (unsigned k = 0; k < std::max(1u, o_.reruns) && budget_left(); ++k) {
      ++runs_;
      RwRunOutcome r;
      try {
        r = runner_.run(s);
      } catch (std::exception const&) {
        return std::nullopt;  // an invalid or unsupported candidate
      }
      if (r.failure && (target_.empty() || r.failure->check == target_)) return r.failure;
    }
    return std::nullopt;
  }

  bool try_candidate(schedule::RwSchedule const& c, std::string const& what) {
    if (c == best_ || !budget_left()) return false;
    try {
      schedule::validate(c);
    } catch (std::exception const&) {
      return false;
    }
    auto f = fails(c);
    if (!f) return false;
    best_    = c;
    failure_ = std::move(f);
    if (o_.log)
      o_.log(what + ": " + std::to_string(best_.steps.size()) +
             " waves, T = " + std::to_string(best_.pool.num_pages));
    return true;
  }

  bool drop_waves() {
    bool progress = false;
    for (std::size_t chunk = std::max<std::size_t>(1, best_.steps.size() / 2); chunk >= 1;
         chunk /= 2) {
      for (std::size_t at = 0; at < best_.steps.size() && best_.steps.size() > 1;) {
        schedule::RwSchedule c = best_;
        std::size_t const n    = std::min(chunk, c.steps.size() - at);
        if (n >= c.steps.size()) break;
        c.steps.erase(c.steps.begin() + static_cast<std::ptrdiff_t>(at),
                      c.steps.begin() + static_cast<std::ptrdiff_t>(at + n));
        if (try_candidate(c, "dropped " + std::to_string(n) + " wave(s)"))
          progress = true;
        else
          at += n;
      }
      if (chunk == 1) break;
    }
    return progress;
  }

  bool halve_threads() {
    bool progress = false;
    for (std::size_t i = 0; i < best_.steps.size(); ++i) {
      while (true) {
        auto const* a = std::get_if<schedule::RwAllocWave>(&best_.steps[i]);
        if (!a || a->threads <= 1) break;
        schedule::RwSchedule c                              = best_;
        std::get<schedule::RwAllocWave>(c.steps[i]).threads = a->threads / 2;
        if (!try_candidate(c, "halved the threads of wave " + std::to_string(i))) break;
        progress = true;
      }
    }
    return progress;
  }

  bool shrink_pool() {
    bool progress = false;
    while (best_.pool.num_pages > 1) {
      schedule::RwSchedule c = best_;
      auto& p                = c.pool;
      std::uint32_t const t  = p.num_pages / 2;
      if (p.pretaken.pages) {
        auto& list = *p.pretaken.pages;
        list.erase(
            std::remove_if(list.begin(), list.end(), [t](std::uint32_t q) { return q >= t; }),
            list.end());
      } else {
        p.pretaken.count =
            static_cast<std::uint32_t>(std::uint64_t{p.pretaken.count} * t / p.num_pages);
      }
      p.num_pages = t;
      if (!try_candidate(c, "halved T")) break;
      progress = true;
    }
    if (best_.pool.pretaken.pages || best_.pool.pretaken.count > 0) {
      schedule::RwSchedule c = best_;
      c.pool.pretaken        = {};
      progress               = try_candidate(c, "dropped the pre-taken pages") || progress;
    }
    return progress;
  }

  RwMinimizeResult run(schedule::RwSchedule const& input, std::string target) {
    start_  = std::chrono::steady_clock::now();
    target_ = std::move(target);
    best_   = input;
    RwMinimizeResult out;
    failure_ = fails(input);
    if (!failure_) {
      out.runs = runs_;
      return out;
    }
    if (target_.empty()) target_ = failure_->check;
    while (budget_left() && (drop_waves() | halve_threads() | shrink_pool())) {
    }
    out.reproduced = true;
    out.schedule   = best_;
    out.failure    = failure_;
    out.runs       = runs_;
    return out;
  }

 private:
  bool budget_left() const {
    double const s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return runs_ < o_.max_runs && s < o_.seconds;
  }

  RwRunner& runner_;
  RwMinimizeOptions const& o_;
  std::string target_;
  schedule::RwSchedule best_;
  std::optional<RwFailure> failure_;
  std::size_t runs_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

RwMinimizeResult rw_minimize(schedule::RwSchedule const& input,
                             RwRunner& runner,
                             std::string target,
                             RwMinimizeOptions const& options) {
  return Minimizer(runner, options).run(input, std::move(target));
}

}  // namespace heaplab::runner
