// Random-walk page pool workloads (issue 11; docs/rw.md "Under the controlled scheduler"): logical
// threads run getpage / freepage / hand-over lists on a tiny pool (1-3 used words, most pages
// taken before the run so that only 1-4 are free) with RW (Alg. 1) or RW-BM (sec. 4.1, 32- or
// 64-bit words). In a third of the other workloads some threads are CoRW warps (Alg. 2,
// sec. 4.2): a CPU lock-step warp of 2-4 lanes (rw/corw.hpp, corw_get_pages) whose getpage asks
// for a page per lane, racing with the RW / RW-BM threads, which ignore the LockMap (so CoRW claims
// get lost). Checks:
//   - the model (model::PageModel) is the ownership log: a page is recorded as held after
//     getpage returned it and as free before freepage starts, so a correct pool can never trip
//     it; the model rejects a page that is held, >= T, or freed by someone who does not hold it;
//   - each request's step count X_i is in 1..max_steps, and a null answer took exactly max_steps
//     (for a CoRW lane: the rounds until it kept its page);
//   - at a mid-run barrier and after the run, the rw catalog (check/rw_invariants.hpp) holds on
//     the pool's words against the model's owners; after the drain only the pre-taken pages are
//     used;
//   - observed_pages (the rw-weak workload, for the weak-memory mode): each page has a payload
//     word written by its owner through the policy (relaxed); every new owner must read the last
//     value written to it (the free's release pairs with the claim's acquire).
// RW_malloc workloads (a third of the seeds; RW Alg. 3): some threads are lock-step warps of 2-4
// lanes (rw::rw_malloc_warp) asking for runs of mixed sizes and freeing them (free_run), the
// others RW-BM single-page walkers, on 2-3 used words whose free pages lie in a few short runs,
// often across a word boundary, so that walkers take pages out of a warp's candidate runs (lost
// claims, rollbacks). The model records runs (get_run / free_run) and the catalog checks them.
// A null answer is legal (bounded walk) and counted by the model (out of pages / bounded-walk
// exhaustion). Header-only: mutant test targets compile it with their HEAPLAB_MUTANT_* name.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/bitops.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/rw_algorithm.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/workloads/page_ownership.hpp"
#include "heaplab/families/interleaving/workloads/workload_kind.hpp"
#include "heaplab/model/page_model.hpp"
#include "heaplab/rw/corw.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.hpp"

namespace heaplab::interleaving_family::workloads {

struct RwOp {
  enum class Kind : std::uint8_t { get, free_own, give, take_and_free, malloc };
  Kind kind         = Kind::get;
  std::uint32_t arg = 0;  // free_own: which held page (mod count); give / take: mailbox cell
  std::array<std::uint16_t, 4> lanes{};  // malloc: the pages each lane asks for (0: inactive)
};

struct RwWorkload {
  rw::PoolConfig config;
  core::RwAlgorithm algorithm = core::RwAlgorithm::rw;
  std::vector<std::uint32_t> pretaken;  // pages used before the run (held by the "pool" owner)
  std::vector<std::vector<RwOp>> threads;
  std::uint32_t mailbox_cells = 1;
  std::uint64_t seed_salt     = 0;
  bool observed_pages         = false;

  // Per thread (empty: none): 0 = the thread walks with `algorithm`; otherwise it is a CoRW
  // lock-step warp whose lanes asking for a page are these bits (of lanes 0..3).
  std::vector<std::uint32_t> corw_lanes;

  [[nodiscard]] core::RwAlgorithm algorithm_of(std::size_t thread) const {
    return thread < corw_lanes.size() && corw_lanes[thread] != 0 ? core::RwAlgorithm::corw
                                                                 : algorithm;
  }
};

inline std::ostream& operator<<(std::ostream& os, RwWorkload const& w) {
  static char const* const algorithms[] = {
      "RW", "RW-BM", "CoRW", "RW_malloc + RW-BM"};  // core::RwAlgorithm order
  os << "RwWorkload{" << algorithms[static_cast<int>(w.algorithm)] << ", T=" << w.config.num_pages
     << ", word=" << w.config.word_bits << ", max_steps=" << w.config.max_steps
     << ", salt=" << w.seed_salt << ", pretaken=[";
  for (std::size_t i = 0; i < w.pretaken.size(); ++i) os << (i ? " " : "") << w.pretaken[i];
  os << "]" << (w.observed_pages ? ", pages=observed" : "") << ", threads:";
  for (std::size_t i = 0; i < w.threads.size(); ++i) {
    os << "\n  T" << i
       << (w.algorithm_of(i) == core::RwAlgorithm::corw ? " (CoRW warp, lanes 0x" : "");
    if (w.algorithm_of(i) == core::RwAlgorithm::corw)
      os << std::hex << w.corw_lanes[i] << std::dec << ")";
    os << ":";
    for (auto const& op : w.threads[i]) {
      static char const* const names[] = {
          " get", " free(#", " give(cell ", " take+free(cell ", " malloc(lanes"};
      os << names[static_cast<int>(op.kind)];
      if (op.kind == RwOp::Kind::malloc) {
        for (std::uint16_t n : op.lanes) os << " " << n;
        os << ")";
      } else if (op.kind != RwOp::Kind::get) {
        os << op.arg << ")";
      }
    }
  }
  return os << "}";
}

/// In a third of the workloads (`always`: in all; drawn after everything else, so the other
/// draws stay as they were):
/// each thread becomes a CoRW lock-step warp with probability 1/2 (at least one does), whose
/// lanes asking for a page are 2-4 of lanes 0..3 (not always the lowest: the lane arithmetic
/// sees gaps).
inline void add_corw_warps(RwWorkload& w, explore::SplitMix64& rng, bool always = false) {
  if (!always && rng.below(3) != 0) return;
  w.corw_lanes.assign(w.threads.size(), 0);
  for (std::size_t i = 0; i < w.threads.size(); ++i) {
    if (i + 1 < w.threads.size() && rng.below(2) == 0) continue;  // the last one always
    std::uint32_t lanes = 0;
    while (core::popcount(lanes) < 2) lanes = static_cast<std::uint32_t>(rng.below(16));
    w.corw_lanes[i] = lanes;
  }
}

/// Free pages in 1-3 short runs (1-6 pages), half of them across a used-word boundary.
inline std::vector<bool> malloc_free_pages(std::uint32_t words,
                                           std::uint32_t bits,
                                           std::uint32_t num_pages,
                                           explore::SplitMix64& rng) {
  std::vector<bool> free(num_pages, false);
  std::uint32_t const runs = 1 + static_cast<std::uint32_t>(rng.below(3));
  for (std::uint32_t k = 0; k < runs; ++k) {
    auto const len      = 1 + static_cast<std::uint32_t>(rng.below(6));
    std::uint32_t start = words > 1 && rng.below(2) == 0
                              ? (1 + static_cast<std::uint32_t>(rng.below(words - 1))) * bits -
                                    static_cast<std::uint32_t>(rng.below(len + 1))
                              : static_cast<std::uint32_t>(rng.below(num_pages));
    for (std::uint32_t p = start; p < start + len && p < num_pages; ++p) free[p] = true;
  }
  return free;
}

/// Turns w into an RW_malloc workload (RW Alg. 3): 2-3 used words, free pages from
/// malloc_free_pages, max_steps 2-5 rounds, 2-3 threads: thread 0 a lock-step warp, the others a
/// warp or an RW-BM single-page walker. A warp's ops: malloc (2-4 lanes asking for 0-5 pages,
/// at least one lane active) or free one of its runs; a walker's: get or free.
inline void make_malloc_workload(RwWorkload& w, explore::SplitMix64& rng) {
  w.algorithm               = core::RwAlgorithm::rw_malloc;
  std::uint32_t const bits  = w.config.word_bits;
  std::uint32_t const words = 2 + static_cast<std::uint32_t>(rng.below(2));
  w.config.num_pages =
      (words - 1) * bits + bits / 2 + static_cast<std::uint32_t>(rng.below(bits / 2 + 1));
  w.config.max_steps           = 2 + static_cast<std::uint32_t>(rng.below(4));
  std::vector<bool> const free = malloc_free_pages(words, bits, w.config.num_pages, rng);
  w.pretaken.clear();
  for (std::uint32_t p = 0; p < w.config.num_pages; ++p)
    if (!free[p]) w.pretaken.push_back(p);
  w.threads.assign(2 + rng.below(2), {});
  for (std::size_t t = 0; t < w.threads.size(); ++t) {
    bool const warp           = t == 0 || rng.below(2) == 0;
    std::uint32_t const count = 2 + static_cast<std::uint32_t>(rng.below(3));
    for (std::uint32_t k = 0; k < count; ++k) {
      RwOp op;
      bool const take = k == 0 || rng.below(5) < 3;
      op.kind         = take ? (warp ? RwOp::Kind::malloc : RwOp::Kind::get) : RwOp::Kind::free_own;
      op.arg          = static_cast<std::uint32_t>(rng.below(4));
      if (op.kind == RwOp::Kind::malloc) {
        std::uint32_t const lanes = 2 + static_cast<std::uint32_t>(rng.below(3));
        for (std::uint32_t l = 0; l < lanes; ++l)
          op.lanes[l] = static_cast<std::uint16_t>(rng.below(6));
        if (op.lanes[0] + op.lanes[1] == 0) op.lanes[1] = 1;
      }
      w.threads[t].push_back(op);
    }
  }
}

/// Appends 2-6 random ops to each thread's list: half getpage, the rest free one of mine (arg
/// 0..3), give one through a mailbox cell or take one and free it (arg: a cell below `cells`).
inline void add_random_ops(std::vector<std::vector<RwOp>>& threads,
                           std::uint32_t cells,
                           explore::SplitMix64& rng) {
  for (auto& ops : threads) {
    std::uint32_t const count = 2 + static_cast<std::uint32_t>(rng.below(5));
    for (std::uint32_t k = 0; k < count; ++k) {
      std::uint64_t const r = rng.below(10);
      RwOp op;
      op.kind = r < 5   ? RwOp::Kind::get
                : r < 7 ? RwOp::Kind::free_own
                : r < 8 ? RwOp::Kind::give
                        : RwOp::Kind::take_and_free;
      op.arg  = op.kind == RwOp::Kind::free_own ? static_cast<std::uint32_t>(rng.below(4))
                                                : static_cast<std::uint32_t>(rng.below(cells));
      ops.push_back(op);
    }
  }
}

/// The rw workload of a seed: RW on T = 2..12 pages (one word) or RW-BM on 1-3 words of 32 or 64
/// bits; 1-4 free pages; 2-4 threads of 2-6 ops; max_steps 8..40. A third of the seeds then become
/// RW_malloc workloads (make_malloc_workload); a third of the others get CoRW warps
/// (add_corw_warps; `corw_always`: every seed, and no RW_malloc workloads).
inline RwWorkload random_rw_workload(std::uint64_t seed, bool corw_always = false) {
  explore::SplitMix64 rng(core::splitmix64(seed ^ 0x5257'5241'4E44ull));
  RwWorkload w;
  w.seed_salt        = rng.next();
  w.algorithm        = rng.below(2) == 0 ? core::RwAlgorithm::rw : core::RwAlgorithm::rw_bm;
  w.config.word_bits = rng.below(2) == 0 ? 32 : 64;
  if (w.algorithm == core::RwAlgorithm::rw) {
    w.config.num_pages = 2 + static_cast<std::uint32_t>(rng.below(11));
  } else {
    std::uint32_t const words = 1 + static_cast<std::uint32_t>(rng.below(3));
    w.config.num_pages        = (words - 1) * w.config.word_bits + 1 +
                         static_cast<std::uint32_t>(rng.below(w.config.word_bits));
  }
  w.config.max_steps    = 8 + static_cast<std::uint32_t>(rng.below(33));
  std::uint32_t const T = w.config.num_pages;
  std::uint32_t const free =
      std::min<std::uint32_t>(T, 1 + static_cast<std::uint32_t>(rng.below(4)));
  std::vector<std::uint32_t> pages(T);
  for (std::uint32_t p = 0; p < T; ++p) pages[p] = p;
  for (std::uint32_t p = T; p > 1; --p) std::swap(pages[p - 1], pages[rng.below(p)]);
  w.pretaken.assign(pages.begin() + free, pages.end());
  std::uint32_t const n = 2 + static_cast<std::uint32_t>(rng.below(3));
  w.mailbox_cells       = 1 + static_cast<std::uint32_t>(rng.below(2));
  w.threads.resize(n);
  add_random_ops(w.threads, w.mailbox_cells, rng);
  // After the draws above, so rw / bm seeds keep their workloads.
  if (!corw_always && rng.below(3) == 0)
    make_malloc_workload(w, rng);
  else
    add_corw_warps(w, rng, corw_always);
  return w;
}

/// The rw-weak workload of a seed: the rw workload with observed page payloads.
inline RwWorkload random_rw_weak_workload(std::uint64_t seed) {
  RwWorkload w     = random_rw_workload(seed);
  w.observed_pages = true;
  return w;
}

/// One execution of an rw workload with atomics policy A on words W.
template <class A, class W>
class RwRun {
 public:
  explicit RwRun(RwWorkload workload)
      : w_(std::move(workload)),
        pool_(w_.config),
        ref_(pool_.template ref<A>()),
        own_(w_.config.num_pages,
             static_cast<std::uint32_t>(w_.threads.size()),
             w_.mailbox_cells,
             w_.observed_pages,
             OwnershipStyle{"", "a missing release/acquire", true}) {
    for (std::uint32_t p : w_.pretaken) {
      pool_.mark_used(p);  // before the run, outside the scheduler
      own_.model().get_page(pretaken_owner(), p);
    }
  }

  [[nodiscard]] model::PageModel const& model() const { return own_.model(); }
  [[nodiscard]] std::vector<std::uint32_t> const& steps() const { return steps_; }

  /// The body of logical thread i.
  void thread_body(std::uint32_t i) {
    std::vector<HeldPages> mine;
    rw::PageRng rng{core::splitmix64(w_.seed_salt ^ (std::uint64_t{i} << 40))};
    auto const free_fn = [this, i](HeldPages const& h) { free_held(i, h); };
    for (RwOp const& op : w_.threads[i]) {
      switch (op.kind) {
        case RwOp::Kind::get:
          get(i, rng, mine);
          break;
        case RwOp::Kind::free_own:
          if (mine.empty()) break;
          free_held(i, take_held(mine, mine.size() - 1 - op.arg % mine.size()));
          break;
        case RwOp::Kind::give:
          if (mine.empty()) break;
          give(i, take_held(mine, 0), op.arg);
          break;
        case RwOp::Kind::take_and_free:
          own_.take_and_free(i, op.arg, free_fn);
          break;
        case RwOp::Kind::malloc:
          malloc_warp(i, rng, op, mine);
          break;
      }
    }
    own_.barrier([this] { return catalog_now("the barrier"); });
    while (!mine.empty()) free_held(i, take_held(mine, mine.size() - 1));
    for (std::uint32_t c = 0; c < w_.mailbox_cells; ++c) own_.take_and_free(i, c, free_fn);
  }

  /// After every thread finished: the catalog against the model's owners, and only the pre-taken
  /// pages still used.
  std::vector<std::string> final_check() {
    std::vector<std::string> out = catalog_now("the end");
    for (std::uint32_t o = 0; o < mailbox_owner(); ++o)
      if (!owners()[o].empty()) out.push_back("T" + std::to_string(o) + " still holds pages");
    if (own_.model().free_count() + w_.pretaken.size() != w_.config.num_pages)
      out.push_back("after the drain " + std::to_string(own_.model().free_count()) + " of " +
                    std::to_string(w_.config.num_pages) + " pages are free, expected all but the " +
                    std::to_string(w_.pretaken.size()) + " pre-taken ones");
    return out;
  }

  [[nodiscard]] std::string describe(void const* a) const {
    std::string name = pool_.describe_address(a);
    if (!name.empty()) return name;
    return own_.describe(a);
  }

 private:
  std::uint32_t num_threads() const { return static_cast<std::uint32_t>(w_.threads.size()); }
  std::uint32_t mailbox_owner() const { return own_.mailbox_owner(); }
  std::uint32_t pretaken_owner() const { return num_threads() + 1; }
  check::RwOwners owners() const { return own_.model().owners(pretaken_owner() + 1); }

  void get(std::uint32_t i, rw::PageRng& rng, std::vector<HeldPages>& mine) {
    core::RwAlgorithm const a = w_.algorithm_of(i);
    if (a == core::RwAlgorithm::corw) return get_corw(i, rng, mine);
    record_get(i, a == core::RwAlgorithm::rw ? ref_.get_page_rw(rng) : ref_.get_page_bm(rng), mine);
  }

  /// A CoRW warp's getpage: one corw_get_pages for its lanes (each with its own PageRng), then
  /// every asking lane's answer is recorded as a request of thread i.
  void get_corw(std::uint32_t i, rw::PageRng& rng, std::vector<HeldPages>& mine) {
    rw::CorwLane lanes[4];
    std::uint64_t const seed = rng.next();
    for (std::uint32_t l = 0; l < 4; ++l)
      lanes[l] = rw::CorwLane{rw::thread_rng(seed, l), ((w_.corw_lanes[i] >> l) & 1u) != 0, {}};
    rw::corw_get_pages(ref_, lanes, 4);
    for (auto const& lane : lanes)
      if (lane.wants) record_get(i, lane.result, mine);
  }

  void record_get(std::uint32_t i, rw::GetPageResult const& r, std::vector<HeldPages>& mine) {
    check_steps(r, "getpage");
    own_.with_model([&](model::PageModel& m) {
      m.get_page(i, r.page);
      steps_.push_back(r.steps);
    });
    if (!r.ok()) return;
    HeldPages h{r.page, core::cookie_of((std::uint64_t{i} << 32) | steps_.size())};
    if (w_.observed_pages) (void)own_.read_as_new_owner(r.page, "getpage");
    own_.write_payload(r.page, h.payload);
    mine.push_back(h);
  }

  void free_held(std::uint32_t i, HeldPages const& h) {
    own_.check_payload(h);
    if (h.count != 0) {
      own_.with_model([&](model::PageModel& m) { m.free_run(i, h.page, h.count); });  // as below
      rw::free_run(ref_, h.page, h.count);
      return;
    }
    own_.with_model([&](model::PageModel& m) { m.free_page(i, h.page); });  // before the free
    ref_.free_page(h.page);                                                 // (reuse may follow)
  }

  /// One lock-step warp (RW Alg. 3): lane l asks for op.lanes[l] pages; each run is recorded in
  /// the model after the call returned, with the same step checks as getpage.
  void malloc_warp(std::uint32_t i,
                   rw::PageRng& rng,
                   RwOp const& op,
                   std::vector<HeldPages>& mine) {
    std::vector<rw::MallocLane> lanes;
    for (std::uint16_t n : op.lanes) lanes.push_back(rw::MallocLane{n, rw::PageRng{rng.next()}});
    std::vector<rw::GetPageResult> const got = rw::rw_malloc_warp(ref_, lanes);
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      if (lanes[l].n == 0) continue;
      rw::GetPageResult const r = got[l];
      check_steps(r, "rw_malloc");
      own_.with_model([&](model::PageModel& m) {
        m.get_run(i, r.page, lanes[l].n);
        steps_.push_back(r.steps);
      });
      if (!r.ok()) continue;
      HeldPages h{r.page, core::cookie_of((std::uint64_t{i} << 32) | steps_.size()), lanes[l].n};
      for (std::uint32_t p = r.page; p < r.page + h.count; ++p) {
        if (w_.observed_pages) (void)own_.read_as_new_owner(p, "rw_malloc");
        own_.write_payload(p, h.payload);
      }
      mine.push_back(h);
    }
  }

  void check_steps(rw::GetPageResult const& r, char const* what) const {
    std::uint32_t const max = w_.config.max_steps;
    if (r.steps == 0 || r.steps > max || (!r.ok() && r.steps != max))
      throw RwHarnessFailure(std::string(what) + " took " + std::to_string(r.steps) +
                             " steps (max_steps " + std::to_string(max) + ", page " +
                             (r.ok() ? std::to_string(r.page) : std::string("null")) + ")");
  }

  /// Hands the page over through a mailbox cell (runs are freed: not handed over).
  void give(std::uint32_t i, HeldPages const& h, std::uint32_t cell) {
    if (h.count != 0) return free_held(i, h);
    own_.check_payload(h);
    own_.give(i, h, cell, [this, i](HeldPages const& x) { free_held(i, x); });
  }

  std::vector<std::string> catalog_now(char const* where) {
    auto const& used              = pool_.used_words();
    auto const& locks             = pool_.lock_words();
    check::RwPoolSnapshot const s = check::rw_snapshot(
        w_.config.num_pages, used.data(), used.size(), locks.data(), locks.size());
    std::vector<std::string> out;
    std::lock_guard<std::mutex> lock(own_.model_mutex());
    for (auto const& v : check::rw_check_all(s, owners(), own_.model().runs()))
      out.push_back(std::string("rw catalog at ") + where + ": " + v.to_string());
    return out;
  }

  RwWorkload w_;
  rw::HostPool<W> pool_;
  rw::PagePoolRef<A, W> ref_;
  PageOwnership<A> own_;
  std::vector<std::uint32_t> steps_;  // X_i of every request, in model order (under the lock)
};

template <class W>
explore::Program make_rw_program_words(RwWorkload const& workload) {
  return program_of(std::make_shared<RwRun<core::ObservedAtomics, W>>(workload),
                    workload.threads.size());
}

/// A program for the controlled scheduler: one execution of `workload` (ObservedAtomics).
inline explore::Program make_rw_program(RwWorkload const& workload) {
  return workload.config.word_bits == 32 ? make_rw_program_words<std::uint32_t>(workload)
                                         : make_rw_program_words<std::uint64_t>(workload);
}

/// The program of an rw kind (rw, rw-weak) for a workload seed (programs.hpp dispatches every kind;
/// a mutant test of this kind includes only this header).
inline explore::Program rw_kind_program(WorkloadKind kind, std::uint64_t workload_seed) {
  if (kind == WorkloadKind::rw) return make_rw_program(random_rw_workload(workload_seed));
  if (kind == WorkloadKind::rw_weak) return make_rw_program(random_rw_weak_workload(workload_seed));
  throw std::logic_error(std::string("rw_kind_program: not its kind: ") + to_string(kind));
}

}  // namespace heaplab::interleaving_family::workloads
