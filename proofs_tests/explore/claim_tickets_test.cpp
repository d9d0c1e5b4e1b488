// What claim tickets are for (issue 13; core/heap_protocol.hpp find_or_claim_block "Claim
// tickets"), shown on the CPU under one deterministic schedule: a cold-start burst in lock step
// (the controlled scheduler switching to the next thread before every atomic operation, as the
// warps of a GPU burst run side by side), on an empty heap whose blocks exactly fit the population
// of two types. With claim tickets off (claim_wait_rounds 0, DynaSOAr Alg. 1) every request misses
// the active lookups before the first block is published and opens a block of its own: more
// blocks than the demand needs, the heap runs out, and requests of one type get null although the
// population fits. With tickets on, exactly ceil(demand / N_T) blocks open per type and every
// request is served.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/workloads/heap_workload.hpp"

namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;
namespace core      = heaplab::core;

namespace {

/// Lock step: at every decision the next runnable thread after the current one, cyclically.
class RoundRobinStrategy final : public explore::Strategy {
 public:
  [[nodiscard]] std::string describe() const override { return "round-robin"; }
  void begin_run(std::uint32_t) override {}
  std::uint32_t pick(explore::Decision const& d) override {
    for (std::uint32_t r : d.runnable)
      if (d.current == explore::kNoThread || r > d.current) return r;
    return d.runnable.front();
  }
};

using Run = workloads::HeapRun<core::ObservedAtomics>;

/// A burst: `w` with no barrier, no drain and the GPU leader's 2 out-of-memory retries, run once
/// in lock step. The heap is left as the burst leaves it (no frees).
struct LockStepRun {
  std::shared_ptr<Run> run;
  explore::RunResult result;
};
LockStepRun run_in_lock_step(workloads::HeapWorkload w) {
  w.barrier       = false;
  w.drain         = false;
  w.oom_retries   = 2;
  w.mailbox_cells = 1;
  auto run        = std::make_shared<Run>(w);
  explore::Program p;
  for (std::uint32_t i = 0; i < w.threads.size(); ++i)
    p.threads.push_back([run, i] { run->thread_body(i); });
  p.check = [run](std::vector<explore::Event> const& events) { return run->final_check(&events); };
  p.describe_address = [run](void const* a) { return run->describe(a); };
  RoundRobinStrategy rr;
  return LockStepRun{run, explore::run_program(p, rr)};
}

/// The blocks that are not free at the end of `run` (single-word free bitmap: <= 64 blocks).
std::vector<std::uint32_t> used_blocks(Run const& run) {
  std::vector<std::uint32_t> used;
  auto const free_words = run.heap().bitmap_words(core::StateBitmap::free_blocks);
  for (std::uint32_t b = 0; b < run.workload().config.num_blocks; ++b)
    if (((free_words[0] >> b) & 1u) == 0) used.push_back(b);
  return used;
}

struct BurstOutcome {
  std::vector<std::uint32_t> blocks_per_type;  // blocks holding objects of each type at the end
  std::uint64_t allocated  = 0;                // objects served
  std::uint64_t nulls      = 0;                // objects requested but not served (out of memory)
  explore::Outcome outcome = explore::Outcome::passed;
  std::string message;
};

/// The burst: 4 blocks; T0 (8 B, N = 64) 3 requests of 32 objects (96: 2 blocks), T1 (16 B,
/// N = 32) 3 requests of 16 (48: 2 blocks); one request per thread, T0's threads first.
BurstOutcome run_burst(std::uint32_t claim_wait_rounds) {
  using K = workloads::ThreadOp::Kind;
  workloads::HeapWorkload w;
  w.config            = workloads::make_config({8, 16}, 4, 1);
  w.seed_salt         = 1;
  w.claim_wait_rounds = claim_wait_rounds;
  w.threads           = {{{K::allocate, 0, 32}},
                         {{K::allocate, 0, 32}},
                         {{K::allocate, 0, 32}},
                         {{K::allocate, 1, 16}},
                         {{K::allocate, 1, 16}},
                         {{K::allocate, 1, 16}}};
  LockStepRun const r = run_in_lock_step(w);
  BurstOutcome o;
  o.outcome = r.result.outcome;
  o.message = r.result.message;
  o.blocks_per_type.assign(w.config.num_types(), 0);
  for (std::uint32_t b : used_blocks(*r.run)) ++o.blocks_per_type.at(r.run->heap().block_type(b));
  o.allocated = r.run->allocations();
  o.nulls     = r.run->out_of_memory();
  return o;
}

}  // namespace

TEST(ClaimTickets, WithoutTicketsALockStepBurstOpensABlockPerRequestAndRunsOut) {
  BurstOutcome const o = run_burst(0);
  // A legal run (catalog, ownership, Lemma 5, and every null is justified: no block stayed free).
  EXPECT_EQ(o.outcome, explore::Outcome::passed) << o.message;
  std::printf("tickets off: T0 %u blocks, T1 %u blocks, %llu objects served, %llu null\n",
              o.blocks_per_type[0],
              o.blocks_per_type[1],
              static_cast<unsigned long long>(o.allocated),
              static_cast<unsigned long long>(o.nulls));
  EXPECT_EQ(o.blocks_per_type[0], 3u);  // 96 objects of T0 need 2
  EXPECT_EQ(o.blocks_per_type[1], 1u);  // 48 objects of T1 need 2: one request gets null
  EXPECT_EQ(o.nulls, 16u);
  EXPECT_EQ(o.allocated, 96u + 32u);
}

TEST(ClaimTickets, WithTicketsTheSameBurstOpensCeilDemandOverCapacityBlocksPerType) {
  BurstOutcome const o = run_burst(core::kDefaultClaimWaitRounds);
  EXPECT_EQ(o.outcome, explore::Outcome::passed) << o.message;
  std::printf("tickets on:  T0 %u blocks, T1 %u blocks, %llu objects served, %llu null\n",
              o.blocks_per_type[0],
              o.blocks_per_type[1],
              static_cast<unsigned long long>(o.allocated),
              static_cast<unsigned long long>(o.nulls));
  EXPECT_EQ(o.blocks_per_type[0], 2u);  // ceil(96 / 64)
  EXPECT_EQ(o.blocks_per_type[1], 2u);  // ceil(48 / 32)
  EXPECT_EQ(o.nulls, 0u);
  EXPECT_EQ(o.allocated, 96u + 48u);
}

namespace {

/// One run's holders in lock step: 4 threads each allocate 16 objects of T0 (N = 64) on an empty
/// heap of 2 blocks; thread 0's tickets start the run (the opener), threads 1-3 wait for it.
/// Returns, per thread, the slots it owns at the end in the one block used (bit s: slot s).
std::vector<std::uint64_t> one_run_in_lock_step(std::size_t& blocks_used) {
  using K = workloads::ThreadOp::Kind;
  workloads::HeapWorkload w;
  w.config            = workloads::make_config({8}, 2, 1);
  w.seed_salt         = 7;
  w.claim_wait_rounds = core::kDefaultClaimWaitRounds;
  w.threads.assign(4, {{K::allocate, 0, 16}});
  LockStepRun const r = run_in_lock_step(w);
  EXPECT_EQ(r.result.outcome, explore::Outcome::passed) << r.result.message;
  EXPECT_EQ(r.run->allocations(), 64u);
  std::vector<std::uint64_t> slots(w.threads.size(), 0);
  std::vector<std::uint32_t> const used = used_blocks(*r.run);
  blocks_used                           = used.size();
  if (used.size() != 1) return slots;
  for (std::uint32_t s = 0; s < 64; ++s) {
    std::uint32_t const owner = r.run->owner_of(core::SlotRef{used[0], s});
    if (owner < slots.size()) slots[owner] |= std::uint64_t{1} << s;
  }
  return slots;
}

}  // namespace

// find_or_claim_block "Ticket slots": the holders of one run aim at the slots of their tickets,
// so in lock step each gets exactly them: thread i (tickets 16i .. 16i + 15) slots 16i .. 16i + 15
// of the one block the run opened. With the search starting at a random rotation (as a lookup's),
// they would pick overlapping ranges, retry and end up with other slots.
TEST(ClaimTickets, TheHoldersOfOneRunGetTheSlotsOfTheirTickets) {
  std::size_t blocks_used                = 0;
  std::vector<std::uint64_t> const slots = one_run_in_lock_step(blocks_used);
  ASSERT_EQ(blocks_used, 1u);  // one run of 64 tickets: one block
  for (std::uint32_t i = 0; i < slots.size(); ++i)
    EXPECT_EQ(slots[i], std::uint64_t{0xFFFF} << (16 * i)) << "thread " << i;
}
