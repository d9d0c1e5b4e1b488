// The interleaving family (family.hpp) and the registration of its runner "explore".
#include "heaplab/families/interleaving/family.hpp"

#include <cstdio>
#include <ostream>

#include "heaplab/core/expects.hpp"
#include "heaplab/families/interleaving/explore_runner.hpp"
#include "heaplab/runner/registry.hpp"

namespace heaplab::interleaving_family {

namespace {

std::uint64_t count_of(runner::StressCounts const& s, std::string const& key) {
  auto const it = s.counts.find(key);
  return it == s.counts.end() ? 0 : it->second;
}

/// One line per workload kind, for the profiles (heaplab_explore --workload says the same).
char const* workload_help(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::heap:
      return "random allocate / free / hand-over workloads on a tiny heap (2-6 threads)";
    case WorkloadKind::heap_k:
      return "heap with k-slot requests of 1..8 objects (the GPU leader's loop)";
    case WorkloadKind::bitmap:
      return "tokens moved in and out of a 2- or 3-level hierarchical bitmap";
    case WorkloadKind::turnover:
      return "the one fixed two-thread workload in which a block changes type";
    case WorkloadKind::heap_weak:
      return "heap with the object words checked for stale reads (release_acquire)";
    case WorkloadKind::rw:
      return "the random-walk page pool: RW, RW-BM, CoRW and RW_malloc warps on a tiny pool";
    case WorkloadKind::rw_weak:
      return "rw with the page words checked for stale reads (release_acquire)";
    case WorkloadKind::queue:
      return "the random-walk paper's queue baseline on a ring of 2-6 slots";
    case WorkloadKind::queue_weak:
      return "queue with the page words checked for stale reads (release_acquire)";
    case WorkloadKind::burst:
      return "cold-start k-slot bursts on a heap of 2-8 blocks (every claim-ticket path)";
    case WorkloadKind::heap_large:
      return "prefilled heaps of 65..192 blocks near out of memory (two-level bitmaps)";
  }
  return "";
}

std::string strategy_coverage(InterleavingSchedule const& s) {
  if (!s.strategy) return "decisions";
  if (s.strategy->name == SeededStrategy::Name::random) return "random";
  return "pct(d=" + std::to_string(s.strategy->depth) + ")";
}

/// Every check of the workloads, as explore_runner.hpp names them (invariants()).
struct CheckInfo {
  char const* name;
  char const* citation;
  char const* statement;
};
CheckInfo const kChecks[] = {
    {checks::kProtocol,
     "DynaSOAr Alg. 1-9, App. A; RW Alg. 1-3",
     "HEAPLAB_PROTOCOL_CHECK: the protocol never reaches a state its correctness argument "
     "excludes"},
    {checks::kPrecondition,
     "core/expects.hpp",
     "no precondition of the core fails inside a thread (a double free, a wrong type)"},
    {checks::kCatalogAtBarrier,
     "DynaSOAr App. A.5 (docs/invariants.md)",
     "the invariant catalog holds at the mid-run barrier, every thread quiescent"},
    {checks::kBarrierOwnership,
     "ownership log",
     "at the barrier the allocated slots are exactly the owned slots"},
    {checks::kCatalogAtEnd,
     "DynaSOAr App. A.5 (docs/invariants.md)",
     "the invariant catalog holds after the run"},
    {checks::kCapacityLost,
     "DynaSOAr Alg. 2, 9",
     "after every object was freed every block is free again (a prefilled block keeps exactly "
     "its permanent objects)"},
    {checks::kOwnershipLog,
     "ownership log",
     "a slot has one owner at a time (an allocation, a hand-over through the mailbox, a free "
     "move it from its owner)"},
    {checks::kAllocationResult,
     "DynaSOAr Alg. 1, sec. 4.2",
     "an allocation returns a slot of a block of its type, the slot's bit set, below the "
     "capacity; a k-slot reservation at most k slots"},
    {checks::kPayload,
     "ownership log",
     "an owned object's (page's) payload word is not overwritten while owned"},
    {checks::kHappensBefore,
     "docs/core.md \"Memory orders\"",
     "weak-memory mode: a new owner reads the last value written to the object (page) word: "
     "the previous owner's accesses happen before the new owner's"},
    {checks::kOomJustified,
     "docs/explorer.md \"Out-of-memory legitimacy\"",
     "an allocation returns null only if every block held an object during the run (and, on a "
     "prefilled heap of single-object allocations, every slot of a block that never emptied was "
     "taken)"},
    {checks::kLemma5,
     "DynaSOAr App. A.5 Lemma 5, Def. 1-3",
     "the state bitmaps' set and clear multisets on the trace satisfy Lemma 5"},
    {checks::kBoundedWaiting,
     "claim tickets (issue 13)",
     "a claim-ticket waiter polls its run's entry at most claim_wait_rounds times"},
    {checks::kClaimPaths,
     "core/heap_protocol.hpp find_or_claim_block",
     "the trace follows the claim-ticket paths (an opener publishes its run)"},
    {checks::kBitmapTokens,
     "DynaSOAr sec. 4.1.3",
     "a bitmap token is held by one thread at a time, and tokens are conserved"},
    {checks::kPageModel,
     "RW sec. 3 (models/ page model)",
     "every getpage, freepage and hand-over is legal in the page model"},
    {checks::kRwCatalog,
     "check::rw_catalog (docs/rw.md)",
     "the rw catalog holds against the model's owners at the barrier and after the run"},
    {checks::kRequestSteps,
     "RW sec. 3.2.1",
     "a getpage takes 1..max_steps steps and a null exactly max_steps (the queue: 1)"},
    {checks::kPagesLost,
     "page model",
     "after the drain nobody holds a page and every page but the pre-taken ones is free"},
    {checks::kQueueRing,
     "RW baselines (docs/rw.md \"Baselines\")",
     "the ring's count, head, tail and slot codes agree with the model's free pages"},
    {checks::kDeadlock,
     "DynaSOAr App. A.5 Def. 3",
     "some live thread can always run: none waits for a memory change nobody can make"},
    {checks::kLivelock,
     "the step budget",
     "a run ends within its step budget of atomic operations"},
    {checks::kScheduler,
     "explore/controlled_run.hpp",
     "the scheduling strategy picks a runnable thread"},
    {checks::kThreadException,
     "explore/controlled_run.hpp",
     "no other exception escapes a logical thread"},
    {checks::kPostRunCheck,
     "explore/controlled_run.hpp",
     "the program's post-run check finds nothing else"},
};

}  // namespace

std::string InterleavingFamily::title() const {
  return "the explorer's workloads under the controlled scheduler: one interleaving of the "
         "portable core's protocol or of a random-walk pool per schedule";
}

std::vector<runner::InvariantInfo> InterleavingFamily::invariants() const {
  std::vector<runner::InvariantInfo> out;
  for (CheckInfo const& c : kChecks) out.push_back({c.name, c.citation, c.statement, false});
  return out;
}

runner::AnySchedule InterleavingFamily::from_json(nlohmann::json const& document) const {
  return wrap(interleaving_family::from_json(document));
}

nlohmann::ordered_json InterleavingFamily::to_json(runner::AnySchedule const& s) const {
  return interleaving_family::to_json(unwrap(s));
}

std::size_t InterleavingFamily::steps(runner::AnySchedule const& s) const {
  InterleavingSchedule const& x = unwrap(s);
  return x.strategy ? 1 : x.steps.size();
}

runner::AnySchedule InterleavingFamily::keep_steps(runner::AnySchedule const& s,
                                                   std::vector<std::size_t> const& indices) const {
  InterleavingSchedule const& x = unwrap(s);
  if (!x.strategy) return TypedFamily::keep_steps(s, indices);
  HEAPLAB_EXPECTS(indices.empty() || (indices.size() == 1 && indices[0] == 0),
                  "keep_steps: a step index outside the schedule");
  if (!indices.empty()) return s;
  InterleavingSchedule without = x;  // the run without its strategy: no preemption
  without.strategy.reset();
  return wrap(std::move(without));
}

std::string InterleavingFamily::describe_step(runner::AnySchedule const& s, std::size_t i) const {
  InterleavingSchedule const& x = unwrap(s);
  if (x.strategy) {
    HEAPLAB_EXPECTS(i == 0, "describe_step: a step index outside the schedule");
    return "run: " + describe(*x.strategy);
  }
  return "decision " + std::to_string(i) + ": " + describe(x.steps.at(i));
}

std::string InterleavingFamily::config_summary(runner::AnySchedule const& s) const {
  InterleavingSchedule const& x = unwrap(s);
  return std::string("workload ") + workloads::to_string(x.workload) + " seed " +
         std::to_string(x.workload_seed) + ", " + explore::to_string(x.memory_model) +
         (x.stale_read_bound ? " (stale-read bound " + std::to_string(*x.stale_read_bound) + ")"
                             : std::string()) +
         ", step budget " + std::to_string(x.step_budget) + "; " +
         (x.strategy ? "strategy " + describe(*x.strategy)
                     : std::to_string(x.steps.size()) + " decisions, then no preemption");
}

std::string InterleavingFamily::size_summary(runner::AnySchedule const& s) const {
  std::size_t const n = unwrap(s).steps.size();
  return std::to_string(n) + (n == 1 ? " decision" : " decisions");
}

void InterleavingFamily::show(runner::AnySchedule const& s, std::ostream& out) const {
  InterleavingSchedule const& x = unwrap(s);
  out << "interleaving: " << config_summary(s) << "\n";
  out << "workload: " << describe_workload_of(x) << "\n";
  if (!x.strategy) out << "decisions: " << schedule_text(x.steps) << "\n";
  out << "steps (" << x.steps.size() << "):\n";
  for (std::size_t i = 0; i < x.steps.size(); ++i)
    out << "  " << i << ": " << describe(x.steps[i]) << "\n";
}

std::vector<runner::Profile> InterleavingFamily::profiles() const {
  std::vector<runner::Profile> out{{"mixed",
                                    "every workload kind in turn (case k: kind (k mod 100) mod "
                                    "11), even case seeds random, odd PCT"}};
  for (WorkloadKind k : workloads::all_workload_kinds())
    out.push_back({workloads::to_string(k), workload_help(k)});
  return out;
}

SeededStrategy mixed_strategy(std::uint64_t seed) {
  SeededStrategy s;
  s.seed = seed;
  if (seed % 2 == 0) return s;
  s.name          = SeededStrategy::Name::pct;
  s.depth         = 1 + static_cast<std::uint32_t>((seed / 2) % 3);
  s.step_estimate = kDefaultPctSteps;
  return s;
}

InterleavingSchedule generated_schedule(std::string const& profile,
                                        std::uint64_t seed,
                                        std::uint32_t size) {
  auto const& kinds = workloads::all_workload_kinds();
  std::optional<WorkloadKind> kind =
      profile == "mixed"
          ? std::optional<WorkloadKind>(kinds[(size == 0 ? 0 : size - 1) % kinds.size()])
          : workloads::parse_workload_kind(profile);
  HEAPLAB_EXPECTS(kind.has_value(),
                  "unknown interleaving profile '" + profile +
                      "'; profiles: mixed, heap, heap_k, bitmap, turnover, heap-weak, rw, rw-weak, "
                      "queue, queue-weak, burst, heap-large");
  InterleavingSchedule s;
  s.workload      = *kind;
  s.workload_seed = seed;
  s.memory_model  = workloads::is_weak_workload(*kind)
                        ? explore::MemoryModel::release_acquire
                        : explore::MemoryModel::sequential_consistency;
  s.strategy      = mixed_strategy(seed);
  return s;
}

runner::AnySchedule InterleavingFamily::generate(runner::GenerationRequest const& request,
                                                 std::uint64_t seed,
                                                 std::uint32_t size) const {
  return wrap(generated_schedule(request.profile, seed, size));
}

void InterleavingFamily::cover(runner::AnySchedule const& s,
                               std::size_t,
                               runner::Coverage& coverage) const {
  InterleavingSchedule const& x = unwrap(s);
  coverage.add("workloads", workloads::to_string(x.workload));
  coverage.add("strategies", strategy_coverage(x));
  coverage.add("memory_models", explore::to_string(x.memory_model));
}

std::vector<runner::CoverageCategory> InterleavingFamily::coverage_categories() const {
  return {{"workloads", "runs by workload"},
          {"strategies", "runs by strategy"},
          {"memory_models", "runs by memory model"}};
}

std::vector<std::string> InterleavingFamily::stress_notes(runner::StressCounts const& s) const {
  std::uint64_t const runs = count_of(s, "runs");
  char line[400];
  std::snprintf(
      line,
      sizeof line,
      "runs by outcome: passed %llu, thread_error %llu, check_failed %llu, deadlock "
      "%llu, livelock %llu; %llu atomic operations (%.0f per run), %llu preemptions, "
      "%llu stale reads",
      static_cast<unsigned long long>(count_of(s, "passed")),
      static_cast<unsigned long long>(count_of(s, "thread_error")),
      static_cast<unsigned long long>(count_of(s, "check_failed")),
      static_cast<unsigned long long>(count_of(s, "deadlock")),
      static_cast<unsigned long long>(count_of(s, "livelock")),
      static_cast<unsigned long long>(count_of(s, "atomic_operations")),
      runs ? static_cast<double>(count_of(s, "atomic_operations")) / static_cast<double>(runs)
           : 0.0,
      static_cast<unsigned long long>(count_of(s, "preemptions")),
      static_cast<unsigned long long>(count_of(s, "stale_reads")));
  return {line};
}

void InterleavingFamily::reduce(runner::Reducer&, runner::ReductionOptions const&) const {}

InterleavingFamily const& family() {
  static InterleavingFamily const interleaving;
  return interleaving;
}

namespace {

runner::FamilyRegistration const interleaving_registration{family()};

runner::RunnerInfo explore_info() {
  runner::RunnerInfo r;
  r.name   = "explore";
  r.family = "interleaving";
  r.help =
      "the explorer: one controlled run of a workload (one thread at a time, a decision at every "
      "atomic operation) under a random or PCT strategy, or following recorded decisions";
  r.make = [](runner::RunnerOptions const&) -> std::unique_ptr<runner::Runner> {
    return std::make_unique<ExploreRunner>();
  };
  return r;
}

runner::RunnerRegistration const explore_registration{explore_info()};

}  // namespace

}  // namespace heaplab::interleaving_family
