// Fake implementations for the heap family's tests: StepExecutors that wrap ModelExecutor (a second
// model with random legal placement, which agrees with the reference model) and plant exactly one
// kind of bug, recording what they planted so that tests can check the report names it. They
// stand in for the GPU runner until it exists.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/check/snapshot_utils.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/families/heap/differential.hpp"
#include "heaplab/families/heap/model_executor.hpp"
#include "heaplab/model/interpreter.hpp"
#include "heaplab/schedule/schedule.hpp"

namespace heaplab::test {

using heap_family::ExecutedStep;
using heap_family::ModelExecutor;
using heap_family::PlacementPolicy;

/// Forwards to a ModelExecutor; subclasses override `tamper` to plant a bug in what it reports.
class TamperingExecutor : public heap_family::StepExecutor {
 public:
  explicit TamperingExecutor(std::uint64_t seed = 1)
      : inner_(PlacementPolicy::random_legal, seed) {}
  [[nodiscard]] std::string name() const override { return "fake-" + bug(); }
  [[nodiscard]] runner::Support supports(core::HeapConfig const& c) const override {
    return inner_.supports(c);
  }
  [[nodiscard]] bool deterministic() const override { return true; }
  void reset(core::HeapConfig const& config) override {
    inner_.reset(config);
    step_ = 0;
  }
  ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) override {
    ExecutedStep out = before(step, plan);
    tamper(step, plan, out);
    ++step_;
    return out;
  }
  [[nodiscard]] virtual std::string bug() const = 0;

 protected:
  virtual ExecutedStep before(schedule::Step const& step, schedule::StepPlan const& plan) {
    return inner_.execute(step, plan);
  }
  virtual void tamper(schedule::Step const& step,
                      schedule::StepPlan const& plan,
                      ExecutedStep& out) = 0;
  ModelExecutor inner_;
  std::size_t step_ = 0;
};

/// An agreeing executor (no bug): the differential runner must pass it.
class HonestExecutor final : public TamperingExecutor {
 public:
  using TamperingExecutor::TamperingExecutor;
  [[nodiscard]] std::string bug() const override { return "honest"; }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep&) override {}
};

/// At step `at`, rewrites pointer slot 0 of the first object that refers to something so that it
/// refers to another live object of the same type as its target (a wrong but valid pointer: the
/// catalog holds; only the comparison with the model can see it).
class WrongPointerExecutor final : public TamperingExecutor {
 public:
  explicit WrongPointerExecutor(std::size_t at) : at_(at) {}
  [[nodiscard]] std::string bug() const override { return "wrong-pointer"; }
  struct Planted {
    std::uint32_t block = 0, slot = 0, ref = 0;
    core::SlotRef was, now;
  };
  std::optional<Planted> planted;

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    if (step_ != at_) return;
    auto& s = out.snapshot;
    for (std::uint32_t b = 0; b < s.blocks.size() && !planted; ++b)
      for (std::uint32_t slot = 0; slot < s.blocks[b].objects.size() && !planted; ++slot) {
        auto& rec = s.blocks[b].objects[slot];
        if (!rec) continue;
        for (std::uint32_t r = 0; r < rec->refs.size() && !planted; ++r) {
          if (!rec->refs[r]) continue;
          core::SlotRef const was = *rec->refs[r];
          // Another live object in the target's block (same type), other than the target.
          for (std::uint32_t other = 0; other < 64; ++other) {
            if (other == was.slot || !s.blocks[was.block].objects[other]) continue;
            rec->refs[r] = core::SlotRef{was.block, other};
            planted      = Planted{b, slot, r, was, core::SlotRef{was.block, other}};
            break;
          }
        }
      }
  }
  std::size_t at_;
};

/// Reports every allocation one slot off where it really went (to a free slot of the same
/// block when there is one): the model accepts the reported (legal) placements, so the heaps
/// differ in which slot holds the object.
class MisreportedSlotExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "misreported-slot"; }
  struct Planted {
    std::uint64_t id    = 0;
    std::uint32_t block = 0, real_slot = 0, reported_slot = 0;
  };
  std::optional<Planted> planted;

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    if (planted || out.placements.empty()) return;
    auto& p                 = out.placements.front();
    auto const& b           = inner_.model().block(p.block);
    std::uint32_t const cap = inner_.model().config().capacity(p.type);
    for (std::uint32_t s = 0; s < cap; ++s) {
      if (s == p.slot || b.slots[s].has_value()) continue;
      planted = Planted{p.id, p.block, p.slot, s};
      p.slot  = s;
      return;
    }
  }
};

/// Reports the first allocation of step `at` in a block of another type: refinement rejects it.
class IllegalPlacementExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "illegal-placement"; }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    if (out.placements.empty()) return;
    auto const& m = inner_.model();
    for (std::uint32_t b = 0; b < m.num_blocks(); ++b)
      if (m.block(b).type && *m.block(b).type != out.placements.front().type) {
        out.placements.front().block = b;
        return;
      }
  }
};

/// Drops the last allocation of every alloc wave (as if it had run out of memory) while blocks
/// are free: the out-of-memory rule catches it.
class SpuriousOutOfMemoryExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "spurious-oom"; }

 protected:
  ExecutedStep before(schedule::Step const& step, schedule::StepPlan const& plan) override {
    if (!std::holds_alternative<schedule::AllocWave>(step) || plan.allocations.size() < 2)
      return inner_.execute(step, plan);
    schedule::StepPlan fewer = plan;
    dropped_                 = fewer.allocations.back().id;
    fewer.allocations.pop_back();
    return inner_.execute(step, fewer);
  }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep&) override {}
  std::uint64_t dropped_ = 0;
};

/// An allocator that only ever allocates in blocks it claimed during the current wave: its
/// active-block lookup never finds a block that was active before the wave, so once the free
/// blocks are gone it returns null although an older block of the type has room (the kind of bug
/// a lookup that gives up too early makes). Its placements are legal, its heap is consistent;
/// only oom-justified (check/oom_obligations.hpp) can tell. With drop_children, every
/// parallel_do child allocation returns null (while blocks are free).
class FreshBlocksOnlyExecutor final : public heap_family::StepExecutor {
 public:
  explicit FreshBlocksOnlyExecutor(bool drop_children = false) : drop_children_(drop_children) {}
  [[nodiscard]] std::string name() const override { return "fake-fresh-blocks-only"; }
  [[nodiscard]] runner::Support supports(core::HeapConfig const& c) const override {
    return ModelExecutor().supports(c);
  }
  [[nodiscard]] bool deterministic() const override { return true; }
  void reset(core::HeapConfig const& config) override { model_.emplace(config); }
  ExecutedStep execute(schedule::Step const& step, schedule::StepPlan const& plan) override {
    model::HeapModel& m = *model_;
    ExecutedStep out;
    if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
      out.defrag_passes =
          static_cast<std::uint32_t>(m.defrag(d->type, schedule::defrag_options(*d)).passes.size());
    } else if (!std::holds_alternative<schedule::Check>(step)) {
      model::apply_nulling(m, plan);
      model::apply_deletes(m, plan);
      bool const children = std::holds_alternative<schedule::ParallelDo>(step);
      if (!(children && drop_children_)) out.placements = place(m, plan);
      if (auto error = model::apply_placements(m, plan, out.placements))
        throw std::logic_error("fake-fresh-blocks-only made an illegal placement: " +
                               error->to_string());
    }
    out.snapshot = m.snapshot();
    out.roots    = m.root_locations();
    return out;
  }

 private:
  static std::vector<model::ObservedAllocation> place(model::HeapModel const& m,
                                                      schedule::StepPlan const& plan) {
    auto const& config    = m.config();
    std::uint32_t const M = config.num_blocks;
    std::vector<std::optional<model::TypeId>> type(M);
    std::vector<std::uint64_t> used(M, 0);
    for (std::uint32_t b = 0; b < M; ++b) {
      type[b] = m.block(b).type;
      for (std::uint32_t s = 0; s < core::kMaxCapacity; ++s)
        if (m.block(b).slots[s]) used[b] |= std::uint64_t{1} << s;
    }
    std::vector<bool> fresh(M, false);
    std::vector<model::ObservedAllocation> out;
    for (auto const& a : plan.allocations) {
      std::uint32_t const cap = config.capacity(a.type);
      std::optional<std::uint32_t> where;
      for (std::uint32_t b = 0; b < M && !where; ++b)  // PLANTED: only this wave's blocks
        if (fresh[b] && type[b] == a.type && used[b] != core::low_bits(cap)) where = b;
      for (std::uint32_t b = 0; b < M && !where; ++b)
        if (!type[b]) {
          where    = b;
          fresh[b] = true;
          type[b]  = a.type;
        }
      if (!where) continue;  // "out of memory"
      auto const slot = static_cast<std::uint32_t>(core::find_first_set(~used[*where]));
      used[*where] |= std::uint64_t{1} << slot;
      out.push_back({a.id, a.type, *where, slot, {}});
    }
    return out;
  }
  bool drop_children_;
  std::optional<model::HeapModel> model_;
};

/// After every step that deletes objects, leaves defrag[T] set for the first allocated block of
/// T whose fill is above n/(n+1): "defrag bit not cleared" (a catalog violation).
class StaleDefragBitExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "stale-defrag-bit"; }

 private:
  void tamper(schedule::Step const& step, schedule::StepPlan const&, ExecutedStep& out) override {
    if (!std::holds_alternative<schedule::FreeWave>(step)) return;
    auto& s = out.snapshot;
    for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
      auto const t = check::allocated_type(s, b);
      if (!t) continue;
      std::uint32_t const cap  = s.config.capacity(*t);
      std::uint32_t const used = check::used_slots(s.blocks[b].alloc_bitmap, cap);
      if (core::is_defrag_fill(used, cap, s.config.defrag_factor)) continue;
      check::set_bit(s.defrag[*t], b);
      return;
    }
  }
};

/// Defrag steps that move objects report a cookie of 0 for the first object in a target block:
/// "the move kernel forgot the cookie" (catalog: cookie-matches-id). Used by the minimize tests:
/// a failure needs objects to move, so at least a fill, a thinning free and a defrag.
class LostCookieOnMoveExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "lost-cookie"; }

 protected:
  ExecutedStep before(schedule::Step const& step, schedule::StepPlan const& plan) override {
    if (auto const* d = std::get_if<schedule::Defrag>(&step)) {
      // Which objects will move: the model's plan of the first pass.
      auto const pass = inner_.model().plan_defrag_pass(
          d->type, d->n.value_or(inner_.model().config().defrag_factor));
      moved_.clear();
      for (auto const& src : pass.sources)
        for (auto const& m : src.moves) moved_.push_back(m.id);
    }
    return inner_.execute(step, plan);
  }

 private:
  void tamper(schedule::Step const& step, schedule::StepPlan const&, ExecutedStep& out) override {
    if (!std::holds_alternative<schedule::Defrag>(step) || moved_.empty()) return;
    for (auto& block : out.snapshot.blocks)
      for (auto& rec : block.objects)
        if (rec && rec->id == moved_.front()) {
          rec->cookie = 0;
          return;
        }
  }
  std::vector<std::uint64_t> moved_;
};

/// Throws at step `at` ("a CUDA error").
class ThrowingExecutor final : public TamperingExecutor {
 public:
  explicit ThrowingExecutor(std::size_t at) : at_(at) {}
  [[nodiscard]] std::string bug() const override { return "throws"; }

 protected:
  ExecutedStep before(schedule::Step const& step, schedule::StepPlan const& plan) override {
    if (step_ == at_) throw std::runtime_error("planted: an illegal memory access was encountered");
    return inner_.execute(step, plan);
  }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep&) override {}
  std::size_t at_;
};

/// Reports at step `at` that its own check failed (as the GPU executor does when a parallel_do
/// visits an object that was not live at launch).
class SelfCheckFailingExecutor final : public TamperingExecutor {
 public:
  explicit SelfCheckFailingExecutor(std::size_t at) : at_(at) {}
  [[nodiscard]] std::string bug() const override { return "fails its own check"; }

 protected:
  ExecutedStep before(schedule::Step const& step, schedule::StepPlan const& plan) override {
    if (step_ == at_)
      throw heap_family::execution_check_failed(heap_family::checks::kParallelDoVisits,
                                                "planted: visited 3 objects not live at launch");
    return inner_.execute(step, plan);
  }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep&) override {}
  std::size_t at_;
};

/// Reports a hang at step `at` (as the watchdog would).
class HangingExecutor final : public TamperingExecutor {
 public:
  explicit HangingExecutor(std::size_t at) : at_(at) {}
  [[nodiscard]] std::string bug() const override { return "hangs"; }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    if (step_ == at_) out.hang = "'planted spin kernel' did not finish within 0.100 s (watchdog)";
  }
  std::size_t at_;
};

/// Reports one pass more than it ran, for every defrag step.
class WrongPassCountExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "wrong-passes"; }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    if (out.defrag_passes) ++*out.defrag_passes;
  }
};

/// Reports its roots in reverse order whenever there are at least two distinct ones.
class SwappedRootsExecutor final : public TamperingExecutor {
 public:
  [[nodiscard]] std::string bug() const override { return "swapped-roots"; }

 private:
  void tamper(schedule::Step const&, schedule::StepPlan const&, ExecutedStep& out) override {
    if (out.roots && out.roots->size() >= 2 && out.roots->front() != out.roots->back())
      std::swap(out.roots->front(), out.roots->back());
  }
};

template <class Executor, class... Args>
std::unique_ptr<heap_family::DifferentialRunner> differential(Args&&... args) {
  return std::make_unique<heap_family::DifferentialRunner>(
      std::make_unique<Executor>(std::forward<Args>(args)...));
}

}  // namespace heaplab::test
