// The malloc family's runner (runner.hpp).
#include "heaplab/families/malloc/runner.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "heaplab/core/expects.hpp"
#include "heaplab/families/malloc/catalog.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::malloc_family {

using runner::Failure;
using runner::FailureKind;
using runner::RunOutcome;
using runner::StepReport;

namespace {

/// Salt of the free selectors' choices (ASCII "free").
constexpr std::uint64_t kSaltFree = 0x66726565;

/// The live allocations a free wave selects (the live list is in id order; so is the result).
std::vector<Allocation> select_frees(std::vector<Allocation> const& live, FreeWave const& f) {
  std::vector<Allocation> out;
  if (live.empty()) return out;
  auto const oldest =
      static_cast<std::size_t>(std::ceil(static_cast<double>(live.size()) * f.fraction));
  Allocation const& anchor = live[schedule::pick(live.size(), f.seed, 0, kSaltFree)];
  for (std::size_t i = 0; i < live.size(); ++i) {
    Allocation const& a = live[i];
    bool take           = false;
    switch (f.select) {
      case Select::all:
        take = true;
        break;
      case Select::random:
        take = schedule::selected(f.fraction, f.seed, a.id, kSaltFree);
        break;
      case Select::size:
        take = a.size >= f.min && a.size <= f.max;
        break;
      case Select::oldest:
        take = i < oldest;
        break;
      case Select::warp:
        take = a.step == anchor.step && a.thread / 32 == anchor.thread / 32;
        break;
    }
    if (take) out.push_back(a);
  }
  return out;
}

std::vector<Allocation> without(std::vector<Allocation> const& live,
                                std::vector<Allocation> const& freed) {
  std::vector<Allocation> out;
  std::size_t j = 0;  // both in id order
  for (Allocation const& a : live) {
    while (j < freed.size() && freed[j].id < a.id) ++j;
    if (j < freed.size() && freed[j].id == a.id) continue;
    out.push_back(a);
  }
  return out;
}

Failure step_failure(std::size_t step,
                     std::string const& description,
                     FailureKind kind,
                     char const* check,
                     std::string const& message) {
  Failure f;
  f.step             = step;
  f.kind             = kind;
  f.check            = check;
  f.message          = "step " + std::to_string(step) + ": " + message;
  f.step_description = description;
  return f;
}

/// "step 3: alloc ... | live 120, 7680 of 1048576 B | granted 64, nulls 0 | ok"
std::string step_line(StepReport const& r) {
  std::string line = "step " + std::to_string(r.index) + ": " + r.description + " | live " +
                     std::to_string(r.live) + ", " + std::to_string(r.in_use) + " of " +
                     std::to_string(r.capacity) + " B";
  if (r.op == "alloc" || r.op == "fill")
    line += " | granted " + std::to_string(r.count("granted")) + ", nulls " +
            std::to_string(r.count("nulls"));
  if (r.op == "free") line += " | freed " + std::to_string(r.count("freed"));
  return line + (r.ok ? " | ok" : " | FAILED");
}

/// One run of a schedule on a subject: the model's live set and the outcome so far.
class MallocRun {
 public:
  MallocRun(MallocSchedule const& s, Subject& subject, runner::StepCallback const& on_step)
      : s_(s), subject_(subject), on_step_(on_step) {}

  RunOutcome run() {
    RunOutcome out;
    if (auto f = guarded(0, "reset", [&] {
          subject_.reset(s_.pool);
          info_ = subject_.info();
          pool_ = subject_.pool();
        })) {
      out.failure = std::move(f);
      return out;
    }
    for (std::size_t i = 0; i < s_.steps.size(); ++i) {
      out.steps_run = i + 1;
      if (auto f = step(i)) {
        out.failure = std::move(f);
        return out;
      }
    }
    return out;
  }

 private:
  template <class F>
  std::optional<Failure> guarded(std::size_t i, std::string const& description, F&& f) {
    try {
      f();
      return std::nullopt;
    } catch (subject_hang const& e) {
      return step_failure(i,
                          description,
                          FailureKind::hang,
                          runner::checks::kWatchdog,
                          info_.name + ": " + e.what());
    } catch (std::exception const& e) {
      return step_failure(i, description, FailureKind::crash, runner::checks::kException, e.what());
    }
  }

  std::optional<Failure> step(std::size_t i) {
    MallocStep const& step = s_.steps[i];
    StepReport r;
    r.index       = i;
    r.op          = step_name(step);
    r.description = describe(step);
    MallocState st;
    st.pool_bytes            = s_.pool;
    st.subject               = info_;
    st.pool                  = pool_;
    std::optional<Failure> f = guarded(i, r.description, [&] { execute(i, step, st, r); });
    if (!f) {
      auto violations = check_all(st);
      if (!violations.empty())
        f = runner::failure_from_violations(i, r.description, std::move(violations));
    }
    if (!f) commit(st);
    r.ok       = !f;
    r.live     = live_.size();  // after a failure: the model's, before the failing step
    r.in_use   = bytes_of(live_);
    r.capacity = s_.pool;
    r.line     = step_line(r);
    if (on_step_) on_step_(r);
    return f;
  }

  static std::uint64_t bytes_of(std::vector<Allocation> const& v) {
    std::uint64_t n = 0;
    for (Allocation const& a : v) n += a.size;
    return n;
  }

  void execute(std::size_t i, MallocStep const& step, MallocState& st, StepReport& r) {
    kept_ = live_;
    if (auto const* a = std::get_if<AllocWave>(&step)) alloc(i, *a, st, r);
    if (auto const* f = std::get_if<FillWave>(&step)) fill(i, *f, st, r);
    if (auto const* f = std::get_if<FreeWave>(&step)) free(*f, st, r);
    if (std::holds_alternative<Touch>(step)) touch(st, r);
    st.kept = &kept_;
  }

  std::vector<std::uint64_t> answers(AllocPlan const& plan) {
    std::vector<std::uint64_t> a = subject_.alloc_wave(plan);
    std::size_t const n          = std::size_t{plan.threads} * plan.per_thread;
    if (a.size() != n)
      throw std::runtime_error(info_.name + " answered " + std::to_string(a.size()) + " of " +
                               std::to_string(n) + " requests");
    return a;
  }

  void alloc(std::size_t i, AllocWave const& w, MallocState& st, StepReport& r) {
    AllocPlan plan{w.threads, w.per_thread, false, {}, {}};
    std::size_t const n = std::size_t{w.threads} * w.per_thread;
    plan.sizes.resize(n);
    plan.ids.resize(n);
    for (std::uint32_t t = 0; t < w.threads; ++t)
      for (std::uint32_t k = 0; k < w.per_thread; ++k) {
        std::size_t const slot = std::size_t{t} * w.per_thread + k;
        plan.sizes[slot]       = request_size(w, t, k);
        plan.ids[slot]         = next_id_ + slot;
      }
    next_id_ += n;
    std::vector<std::uint64_t> const got = answers(plan);
    for (std::size_t slot = 0; slot < n; ++slot) {
      if (plan.sizes[slot] == 0) continue;
      auto const t = static_cast<std::uint32_t>(slot / w.per_thread);
      r.add_count("requests", 1);
      if (got[slot] != 0)
        st.granted.push_back({got[slot], plan.sizes[slot], plan.ids[slot], 0, i, t});
      else
        st.nulls.push_back({t, plan.sizes[slot]});
    }
    finish_wave(st, r);
  }

  void fill(std::size_t i, FillWave const& w, MallocState& st, StepReport& r) {
    std::uint32_t const per = w.max_per_thread + 1;
    std::size_t const n     = std::size_t{w.threads} * per;
    AllocPlan plan{w.threads, per, true, std::vector<std::uint64_t>(n, w.size), {}};
    plan.ids.resize(n);
    for (std::size_t slot = 0; slot < n; ++slot) plan.ids[slot] = next_id_ + slot;
    next_id_ += n;
    std::vector<std::uint64_t> const got = answers(plan);
    bool any_null                        = false;
    std::uint64_t reached                = 0;
    for (std::uint32_t t = 0; t < w.threads; ++t) {
      std::size_t const base = std::size_t{t} * per;
      std::uint32_t k        = 0;
      for (; k < w.max_per_thread && got[base + k] != 0; ++k) {
        st.granted.push_back({got[base + k], w.size, plan.ids[base + k], 0, i, t});
        reached += w.size;
      }
      r.add_count("requests", k);
      if (k == w.max_per_thread) continue;
      any_null = true;
      st.nulls.push_back({t, w.size});
      r.add_count("requests", 2);  // the null and the retry
      if (std::uint64_t const retry = got[base + k + 1]; retry != 0) {
        st.granted.push_back({retry, w.size, plan.ids[base + k + 1], 0, i, t});
        r.add_count("null_then_success", 1);
      }
    }
    r.add_count("fills", 1);
    if (any_null && live_.empty()) {
      st.fill_from_empty = reached;
      fill_size_         = w.size;
      auto const first   = first_fill_.find(w.size);
      if (first != first_fill_.end()) st.first_fill = first->second;
      std::string const key = "fill." + std::to_string(w.size);
      r.add_count(key + ".bytes", reached);
      r.add_count(key + ".pool", s_.pool);
    }
    finish_wave(st, r);
  }

  void finish_wave(MallocState& st, StepReport& r) {
    r.add_count("granted", st.granted.size());
    r.add_count("nulls", st.nulls.size());
    r.add_count("bytes", bytes_of(st.granted));
    std::vector<Allocation> all = kept_;
    for (Allocation const& g : st.granted)
      if (!pool_.known() || (g.address >= pool_.begin && g.address + g.size <= pool_.end))
        all.push_back(g);  // one outside the pool is malloc-inside-pool's; never touch it
    st.corrupt = verify(all);
  }

  void free(FreeWave const& w, MallocState& st, StepReport& r) {
    std::vector<Allocation> const chosen = select_frees(live_, w);
    st.corrupt                           = verify(live_);
    std::vector<std::uint64_t> addresses;
    for (Allocation const& a : chosen) addresses.push_back(a.address);
    if (!addresses.empty()) subject_.free_wave(addresses);
    kept_      = without(live_, chosen);
    auto after = verify(kept_);
    for (Corruption& c : after)
      if (std::none_of(st.corrupt.begin(), st.corrupt.end(), [&](Corruption const& b) {
            return b.allocation.id == c.allocation.id;
          }))
        st.corrupt.push_back(c);
    r.add_count("freed", chosen.size());
  }

  void touch(MallocState& st, StepReport& r) {
    ++epoch_;
    std::vector<Block> blocks;
    for (Allocation& a : kept_) {
      a.epoch = epoch_;
      blocks.push_back(a.block());
    }
    if (!blocks.empty()) subject_.write(blocks);
    st.corrupt = verify(kept_);
    r.add_count("touched", kept_.size());
  }

  std::vector<Corruption> verify(std::vector<Allocation> const& allocations) {
    std::vector<Corruption> out;
    if (allocations.empty()) return out;
    std::vector<Block> blocks;
    blocks.reserve(allocations.size());
    for (Allocation const& a : allocations) blocks.push_back(a.block());
    std::vector<std::uint64_t> const bad = subject_.verify(blocks);
    if (bad.size() != blocks.size())
      throw std::runtime_error(info_.name + " verified " + std::to_string(bad.size()) + " of " +
                               std::to_string(blocks.size()) + " blocks");
    for (std::size_t j = 0; j < bad.size(); ++j)
      if (bad[j] < allocations[j].size) out.push_back({allocations[j], bad[j]});
    return out;
  }

  void commit(MallocState const& st) {
    live_ = kept_;
    live_.insert(live_.end(), st.granted.begin(), st.granted.end());
    std::sort(live_.begin(), live_.end(), [](Allocation const& a, Allocation const& b) {
      return a.id < b.id;
    });
    if (st.fill_from_empty) first_fill_.emplace(fill_size_, *st.fill_from_empty);
  }

  MallocSchedule const& s_;
  Subject& subject_;
  runner::StepCallback const& on_step_;
  SubjectInfo info_;
  AddressRange pool_;
  std::vector<Allocation> live_;  // the model: live allocations in id order
  std::vector<Allocation> kept_;  // the step's: live before it and still live after it
  std::uint64_t next_id_   = 1;
  std::uint32_t epoch_     = 0;
  std::uint64_t fill_size_ = 0;
  std::map<std::uint64_t, std::uint64_t> first_fill_;  // fill size -> bytes of the first fill
};

}  // namespace

MallocRunner::MallocRunner(std::string name, SubjectFactory const& make, bool deterministic)
    : name_(std::move(name)), subject_(make()), deterministic_(deterministic) {
  HEAPLAB_EXPECTS(subject_ != nullptr, "MallocRunner: the factory made no subject");
}

runner::Support MallocRunner::supports(runner::AnySchedule const& s) const {
  return supports(s.get<MallocSchedule>());
}

runner::Support MallocRunner::supports(MallocSchedule const& s) const {
  SubjectInfo const info = subject_->info();
  if (s.pool < info.min_pool)
    return {false,
            info.name + " needs a pool of at least " + std::to_string(info.min_pool) +
                " bytes; this schedule's is " + std::to_string(s.pool) + " (stress: --heap-mib " +
                std::to_string((info.min_pool + (1u << 20) - 1) >> 20) + " or more)"};
  if (info.max_demand > 0) {
    auto const limit = static_cast<std::uint64_t>(info.max_demand * static_cast<double>(s.pool));
    std::optional<std::uint64_t> const demand = demand_bytes(s);
    std::string const policy =
        info.name +
        " has no usable out-of-memory path (docs/malloc.md \"Out of memory\"): a "
        "schedule may ask for at most " +
        std::to_string(limit) + " bytes of its pool of " + std::to_string(s.pool) +
        " all together, and may not fill (stress: --profile bounded)";
    if (!demand) return {false, policy + "; this schedule fills"};
    if (*demand > limit)
      return {false, policy + "; this schedule asks for " + std::to_string(*demand)};
  }
  return {};
}

RunOutcome MallocRunner::run(MallocSchedule const& s, runner::StepCallback const& on_step) {
  validate(s);
  if (runner::Support const ok = supports(s); !ok.supported)
    throw core::precondition_error(name_ + ": " + ok.reason);
  return MallocRun(s, *subject_, on_step).run();
}

RunOutcome MallocRunner::run(runner::AnySchedule const& s, runner::StepCallback const& on_step) {
  return run(s.get<MallocSchedule>(), on_step);
}

}  // namespace heaplab::malloc_family
