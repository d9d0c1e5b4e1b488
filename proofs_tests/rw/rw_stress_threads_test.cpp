// Free-running std::threads on the random-walk pool (docs/rw.md "Free-running threads
// (ThreadSanitizer)"): the production host code (rw::HostPool, PagePoolRef over
// core::HostAtomics; CoRW's and RW_malloc's CPU lock-step warps) with more threads than cores,
// for a time budget. Run under the tsan preset, this is the ThreadSanitizer check of the pool's
// memory orders, as core_threads_test is for the heap's.
//
// Each thread takes pages with RW (RW Alg. 1), RW-BM (RW sec. 4.1), CoRW warps (RW Alg. 2) and
// RW_malloc warps (RW Alg. 3), writes PLAIN (non-atomic) payload words into every page it holds,
// checks them before it lets the page go, frees pages (FREEPAGE, RW sec. 3.1; free_run) and hands
// pages to other threads through mailbox cells. The only happens-before edge between a page's
// successive owners must be the pool's own: the previous owner's release fetch_and (the free)
// and the next owner's acquire fetch_or (the claim), RW sec. 3.1 and docs/rw.md "Linearization
// points and memory orders". So the harness adds no synchronization of its own while threads run:
//   - the ownership log (who holds page p) is a relaxed atomic exchanged by each new and old
//     owner (relaxed RMWs carry no happens-before; coherence alone makes a correct pool pass);
//   - a hand-over goes THROUGH the pool: the giver frees the page (release) and publishes its id
//     in a mailbox cell with a relaxed store; the taker empties the cell with a relaxed exchange
//     and claims exactly that page with PagePoolRef::claim_bits (acquire fetch_or, the claim CoRW
//     and RW_malloc use). If a walker claimed the page first, the hand-over is lost (legal);
//   - the stop flag is relaxed; statistics are per thread, read after the join; the failure
//     mutex is taken only when a check already failed.
// A free weakened to relaxed (mutant rw_free_relaxed) therefore leaves the next owner's plain
// payload reads unordered after the previous owner's writes: ThreadSanitizer reports a data race
// on a payload word (rw_tsan_mutant_rw_free_relaxed, tsan preset).
//
// Checks: every request's step count X_i is in 1..max_steps and a null took exactly max_steps
// (0 steps and no page for a lane that did not ask); a page is never handed to a thread while
// the ownership log names another holder; the payload of a page is well formed when a new owner
// gets it (written whole by one previous owner, generation not older than the giver's for a
// hand-over) and unchanged when its owner lets it go (an owner's payload overwritten while held:
// the page was held twice); at quiescence (after the join) the rw catalog (check::rw_check_all)
// holds against every thread's pages and RW_malloc runs; then the main thread drains (frees
// everything, checking payloads), the catalog holds with no owners and every page is free again.
//   HEAPLAB_RW_STRESS_SECONDS=<s>  time budget per word width (default 2)
//   HEAPLAB_RW_STRESS_THREADS=<n>  threads (default 2 x cores + 1, at least 5)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/cookie.hpp"
#include "heaplab/core/mutants.hpp"
#include "heaplab/rw/corw.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.hpp"

namespace core  = heaplab::core;
namespace check = heaplab::check;
namespace rw    = heaplab::rw;

namespace {

/// Raised by a harness check inside a thread.
class StressFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::uint64_t from_env(char const* name, std::uint64_t fallback) {
  char const* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

/// Payload words per page: word 0 is the page's generation (how many owners it has had), words
/// 1.. are payload_word(page, generation, k): a pattern only that owner writes.
constexpr std::uint32_t kPayloadWords = 4;

std::uint64_t payload_word(std::uint32_t page, std::uint64_t generation, std::uint32_t k) {
  return core::cookie_of((std::uint64_t{page} << 40) ^ (generation << 2) ^ k);
}

enum class Source : std::uint8_t { rw, bm, corw, malloc, take };
constexpr char const* kSourceNames[] = {"RW", "RW-BM", "CoRW", "RW_malloc", "hand-over"};
constexpr std::size_t kSources       = 5;

/// What one thread did (its own; summed after the join).
struct Stats {
  std::uint64_t requests[kSources]{};  // GETPAGE requests / lanes asking / takes tried
  std::uint64_t served[kSources]{};    // requests that got their page or run
  std::uint64_t nulls[kSources]{};     // requests that gave up (takes: lost to a walker)
  std::uint64_t frees = 0, gives = 0;

  void add(Stats const& o) {
    for (std::size_t s = 0; s < kSources; ++s) {
      requests[s] += o.requests[s];
      served[s] += o.served[s];
      nulls[s] += o.nulls[s];
    }
    frees += o.frees;
    gives += o.gives;
  }
  [[nodiscard]] std::string summary() const {
    std::string s;
    for (std::size_t k = 0; k < kSources; ++k)
      s += std::string(kSourceNames[k]) + ": " + std::to_string(served[k]) + " of " +
           std::to_string(requests[k]) + " requests served (" + std::to_string(nulls[k]) +
           (k == kSources - 1 ? " lost" : " nulls") + "); ";
    return s + std::to_string(frees) + " frees, " + std::to_string(gives) + " pages given";
  }
};

/// A page or an RW_malloc run a thread holds.
struct Held {
  std::uint32_t first = 0;
  std::uint32_t count = 1;
  bool run            = false;  // from RW_malloc: freed with free_run
};

/// One thread's private state.
struct Worker {
  std::uint32_t id = 0;
  rw::PageRng rng{};
  std::vector<Held> held;
  std::uint32_t held_pages = 0;
  std::vector<std::uint64_t> generation;  // per page: the generation this thread wrote
  Stats stats;
};

template <class W>
class RwStress {
 public:
  using Pool                           = rw::PagePoolRef<core::HostAtomics, W>;
  static constexpr std::uint32_t kBits = sizeof(W) * 8;
  static constexpr std::uint32_t kFree = 0xFFFFFFFFu;

  RwStress(rw::PoolConfig const& c, std::uint32_t threads, std::uint32_t cells)
      : pool_(c),
        ref_(pool_.template ref<core::HostAtomics>()),
        payload_(std::size_t{c.num_pages} * kPayloadWords),
        owner_(c.num_pages),
        mailbox_(cells) {
    for (std::uint32_t p = 0; p < c.num_pages; ++p) {
      owner_[p].store(kFree, std::memory_order_relaxed);
      for (std::uint32_t k = 1; k < kPayloadWords; ++k) word(p, k) = payload_word(p, 0, k);
    }
    for (auto& m : mailbox_) m.store(0, std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < threads; ++i) {
      Worker w;
      w.id  = i;
      w.rng = rw::thread_rng(0x5254'5341'4eull ^ c.word_bits, i);
      w.generation.assign(c.num_pages, 0);
      workers_.push_back(std::move(w));
    }
  }

  [[nodiscard]] rw::HostPool<W>& pool() { return pool_; }
  [[nodiscard]] Pool const& ref() const { return ref_; }
  [[nodiscard]] Worker& worker(std::uint32_t i) { return workers_[i]; }
  /// Payload word k of page p (the tests break it on purpose).
  std::uint64_t& payload(std::uint32_t p, std::uint32_t k) { return word(p, k); }

  /// Runs every worker on its own std::thread for `budget`; returns the failures (empty: none).
  std::vector<std::string> run_for(std::chrono::milliseconds budget) {
    std::vector<std::thread> threads;
    for (auto& w : workers_)
      threads.emplace_back([this, &w] {
        try {
          while (!stop_.load(std::memory_order_relaxed)) step(w);
        } catch (std::exception const& e) {
          fail("T" + std::to_string(w.id) + ": " + e.what());
        }
      });
    auto const until = std::chrono::steady_clock::now() + budget;
    while (!stop_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop_.store(true, std::memory_order_relaxed);
    for (auto& t : threads) t.join();  // publishes the workers' state to this thread
    return failures_;
  }

  /// After the join: the catalog against every thread's pages and runs, the drain (every held
  /// page freed by the main thread on its holder's behalf), the catalog with no owners, and every
  /// page free again (the used words back in the initial state), the ownership log empty.
  std::vector<std::string> quiescent_checks() {
    std::vector<std::string> out;
    check::RwOwners owners(workers_.size());
    check::RwHeldRuns runs;
    for (auto const& w : workers_)
      for (Held const& h : w.held) {
        for (std::uint32_t k = 0; k < h.count; ++k) owners[w.id].push_back(h.first + k);
        if (h.run) runs.push_back(check::RwHeldRun{w.id, h.first, h.count});
      }
    for (auto const& v : check::rw_check_all(snapshot(), owners, runs))
      out.push_back("catalog at quiescence: " + v.to_string());
    try {
      for (auto& w : workers_)
        while (!w.held.empty()) free_one(w, w.held.size() - 1);
    } catch (std::exception const& e) {
      out.push_back(std::string("drain: ") + e.what());
      return out;
    }
    for (auto const& v : check::rw_check_all(snapshot(), check::RwOwners(workers_.size())))
      out.push_back("catalog after the drain: " + v.to_string());
    auto const& used = pool_.used_words();
    for (std::uint32_t w = 0; w < used.size(); ++w)
      if (used[w] != rw::initial_used_word<W>(w, pool_.config().num_pages))
        out.push_back("after the drain used word " + std::to_string(w) +
                      " is not back in its initial state: a page is still used");
    for (std::uint32_t p = 0; p < owner_.size(); ++p)
      if (owner_[p].load(std::memory_order_relaxed) != kFree)
        out.push_back("ownership log: page " + std::to_string(p) + " still held after the drain");
    return out;
  }

  [[nodiscard]] Stats total() const {
    Stats s;
    for (auto const& w : workers_) s.add(w.stats);
    return s;
  }

  // ---- the checks (public: the tests below feed them broken states) ----

  /// X_i of a request: 1..max_steps for a page, exactly max_steps for a null; a lane that did not
  /// ask gets no page and 0 steps.
  static void check_steps(rw::GetPageResult r, bool asked, std::uint32_t max_steps, char const* a) {
    bool const good = !asked   ? (!r.ok() && r.steps == 0)
                      : r.ok() ? (r.steps >= 1 && r.steps <= max_steps)
                               : r.steps == max_steps;
    if (!good)
      throw StressFailure(std::string(a) + (asked ? "" : " (a lane that did not ask)") +
                          " answered page " + (r.ok() ? std::to_string(r.page) : "null") +
                          " after " + std::to_string(r.steps) + " steps (max_steps " +
                          std::to_string(max_steps) + ")");
  }

  /// Page p is now w's (its claim returned): the ownership log must say nobody held it, and the
  /// payload must be one previous owner's whole pattern. Writes w's pattern (a new generation)
  /// and returns the generation it found. Plain reads and writes: after the claim's acquire.
  std::uint64_t take_ownership(Worker& w, std::uint32_t p, char const* how) {
    std::uint32_t const prev = owner_[p].exchange(w.id, std::memory_order_relaxed);
    if (prev != kFree)
      throw StressFailure(std::string(how) + " gave page " + std::to_string(p) + " to T" +
                          std::to_string(w.id) + " while T" + std::to_string(prev) +
                          " holds it (a page held twice)");
    std::uint64_t const g = word(p, 0);
    for (std::uint32_t k = 1; k < kPayloadWords; ++k)
      if (word(p, k) != payload_word(p, g, k))
        throw StressFailure(std::string(how) + ": the payload of page " + std::to_string(p) +
                            " is not one owner's (generation " + std::to_string(g) + ", word " +
                            std::to_string(k) + " torn): two owners wrote it");
    for (std::uint32_t k = 1; k < kPayloadWords; ++k) word(p, k) = payload_word(p, g + 1, k);
    word(p, 0)      = g + 1;
    w.generation[p] = g + 1;
    return g;
  }

  /// w lets page p go: its payload must still be what w wrote, then the log says nobody.
  void release_ownership(Worker& w, std::uint32_t p) {
    std::uint64_t const g = w.generation[p];
    for (std::uint32_t k = 0; k < kPayloadWords; ++k)
      if (word(p, k) != (k == 0 ? g : payload_word(p, g, k)))
        throw StressFailure("payload of page " + std::to_string(p) + " (word " + std::to_string(k) +
                            ") was overwritten while T" + std::to_string(w.id) +
                            " held it (a page held twice)");
    std::uint32_t const prev = owner_[p].exchange(kFree, std::memory_order_relaxed);
    if (prev != w.id)
      throw StressFailure("ownership log: T" + std::to_string(w.id) + " frees page " +
                          std::to_string(p) + " but the log names T" + std::to_string(prev));
  }

  /// Empties mailbox `cell` and, if it named a page, claims that page (acquire fetch_or) for w.
  void take(Worker& w, std::uint32_t cell) {
    std::uint64_t const v = mailbox_[cell].exchange(0, std::memory_order_relaxed);
    if (v == 0) return;
    auto const p                = static_cast<std::uint32_t>(v & 0xFFFFFFFFu) - 1u;
    std::uint64_t const given_g = v >> 32;
    auto const s                = static_cast<std::size_t>(Source::take);
    ++w.stats.requests[s];
    W const bit = static_cast<W>(W{1} << (p % kBits));
    if (ref_.claim_bits(p / kBits, bit) == 0) {  // a walker claimed it since the giver's free
      ++w.stats.nulls[s];
      return;
    }
    ++w.stats.served[s];
    std::uint64_t const seen = take_ownership(w, p, "hand-over");
    w.held.push_back(Held{p, 1, false});
    ++w.held_pages;
    if (seen < given_g)
      throw StressFailure("hand-over of page " + std::to_string(p) +
                          ": the taker reads generation " + std::to_string(seen) +
                          ", older than the giver's " + std::to_string(given_g) +
                          ": the giver's writes do not happen before the taker's claim");
  }

  /// Publishes page p of generation g in `cell` (relaxed: the pool orders the data).
  void publish(std::uint32_t cell, std::uint32_t p, std::uint64_t g) {
    if (g >= (std::uint64_t{1} << 32)) throw StressFailure("generation counter overflow");
    mailbox_[cell].store((g << 32) | (p + 1u), std::memory_order_relaxed);
  }

 private:
  std::uint64_t& word(std::uint32_t p, std::uint32_t k) {
    return payload_[std::size_t{p} * kPayloadWords + k];
  }

  void fail(std::string message) {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    failures_.push_back(std::move(message));
    stop_.store(true, std::memory_order_relaxed);
  }

  check::RwPoolSnapshot snapshot() const {
    return check::rw_snapshot(pool_.config().num_pages,
                              pool_.used_words().data(),
                              pool_.used_words().size(),
                              pool_.lock_words().data(),
                              pool_.lock_words().size());
  }

  void got(Worker& w, Source s, std::uint32_t first, std::uint32_t count) {
    ++w.stats.served[static_cast<std::size_t>(s)];
    for (std::uint32_t k = 0; k < count; ++k)
      take_ownership(w, first + k, kSourceNames[static_cast<std::size_t>(s)]);
    w.held.push_back(Held{first, count, s == Source::malloc});
    w.held_pages += count;
  }

  void get_one(Worker& w, Source s) {
    ++w.stats.requests[static_cast<std::size_t>(s)];
    rw::GetPageResult const r = s == Source::rw ? ref_.get_page_rw(w.rng) : ref_.get_page_bm(w.rng);
    check_steps(r, true, pool_.config().max_steps, kSourceNames[static_cast<std::size_t>(s)]);
    if (r.ok())
      got(w, s, r.page, 1);
    else
      ++w.stats.nulls[static_cast<std::size_t>(s)];
  }

  /// A CoRW lock-step warp of 1-8 lanes, a random nonempty subset of them asking.
  void get_corw(Worker& w) {
    rw::CorwLane lanes[rw::kWarpLanes]{};
    std::uint32_t const n = 1 + w.rng.below(8);
    std::uint32_t asking  = 0;
    while (asking == 0) asking = w.rng.below(1u << n);
    for (std::uint32_t l = 0; l < n; ++l) {
      lanes[l].rng   = rw::PageRng{w.rng.next()};
      lanes[l].wants = ((asking >> l) & 1u) != 0;
    }
    rw::corw_get_pages(ref_, lanes, n);
    auto const s = static_cast<std::size_t>(Source::corw);
    for (std::uint32_t l = 0; l < n; ++l) {
      check_steps(lanes[l].result, lanes[l].wants, pool_.config().max_steps, "CoRW lane");
      if (!lanes[l].wants) continue;
      ++w.stats.requests[s];
      if (lanes[l].result.ok())
        got(w, Source::corw, lanes[l].result.page, 1);
      else
        ++w.stats.nulls[s];
    }
  }

  /// An RW_malloc lock-step warp of 1-4 lanes asking for 0-4 pages each (at least one asks).
  void get_malloc(Worker& w) {
    std::vector<rw::MallocLane> lanes(1 + w.rng.below(4));
    for (auto& l : lanes) {
      l.n   = w.rng.below(5);
      l.rng = rw::PageRng{w.rng.next()};
    }
    if (lanes[0].n == 0) lanes[0].n = 1;
    std::vector<rw::GetPageResult> const r = rw::rw_malloc_warp(ref_, lanes);
    auto const s                           = static_cast<std::size_t>(Source::malloc);
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      check_steps(r[l], lanes[l].n > 0, pool_.config().max_steps, "RW_malloc lane");
      if (lanes[l].n == 0) continue;
      ++w.stats.requests[s];
      if (r[l].ok())
        got(w, Source::malloc, r[l].page, lanes[l].n);
      else
        ++w.stats.nulls[s];
    }
  }

  /// Frees w's i-th held page or run (FREEPAGE / free_run: release) after checking its payload.
  void free_one(Worker& w, std::size_t i) {
    Held const h = w.held[i];
    w.held.erase(w.held.begin() + static_cast<std::ptrdiff_t>(i));
    w.held_pages -= h.count;
    for (std::uint32_t k = 0; k < h.count; ++k) release_ownership(w, h.first + k);
    if (h.run)
      rw::free_run(ref_, h.first, h.count);
    else
      ref_.free_page(h.first);
    ++w.stats.frees;
  }

  /// Hands w's i-th held item over if it is a single page: free it, then publish it.
  void give(Worker& w, std::size_t i, std::uint32_t cell) {
    Held const h = w.held[i];
    if (h.count != 1) return free_one(w, i);
    free_one(w, i);  // checks the payload; release fetch_and
    --w.stats.frees;
    ++w.stats.gives;
    publish(cell, h.first, w.generation[h.first]);
  }

  /// One random operation: take pages while holding fewer than 8, else let some go.
  void step(Worker& w) {
    std::uint32_t const r    = w.rng.below(100);
    auto const cell          = w.rng.below(static_cast<std::uint32_t>(mailbox_.size()));
    bool const may_take_more = w.held_pages < 8;
    if (may_take_more && r < 15) return get_one(w, Source::rw);
    if (may_take_more && r < 30) return get_one(w, Source::bm);
    if (may_take_more && r < 42) return get_corw(w);
    if (may_take_more && r < 54) return get_malloc(w);
    if (may_take_more && r < 66) return take(w, cell);
    if (w.held.empty()) return;
    auto const i = w.rng.below(static_cast<std::uint32_t>(w.held.size()));
    if (r % 3 == 0) return give(w, i, cell);
    free_one(w, i);
  }

  rw::HostPool<W> pool_;
  Pool ref_;
  std::vector<std::uint64_t> payload_;  // plain memory: TSan checks who touches it when
  std::vector<std::atomic<std::uint32_t>> owner_;
  std::vector<std::atomic<std::uint64_t>> mailbox_;
  std::vector<Worker> workers_;
  std::atomic<bool> stop_{false};
  std::mutex failures_mutex_;
  std::vector<std::string> failures_;
};

std::uint32_t stress_threads() {
  auto const cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<std::uint32_t>(
      from_env("HEAPLAB_RW_STRESS_THREADS", std::max(5u, 2 * cores + 1)));
}

/// T: 8 pages per thread and 5 more (a thread takes pages while it holds fewer than 8, so the
/// pool runs near exhaustion at times), not a multiple of the word width (padding bits);
/// max_steps small so that nulls happen.
rw::PoolConfig stress_config(std::uint32_t word_bits, std::uint32_t threads) {
  rw::PoolConfig c;
  c.num_pages = threads * 8 + 5;
  c.word_bits = word_bits;
  c.max_steps = 16;
  return c;
}

std::string joined(std::vector<std::string> const& v) {
  std::string s;
  for (auto const& x : v) s += x + "\n";
  return s;
}

template <class W>
void run_stress() {
  std::uint32_t const threads = stress_threads();
  rw::PoolConfig const c      = stress_config(sizeof(W) * 8, threads);
  RwStress<W> stress(c, threads, threads / 2 + 1);
  auto const budget   = std::chrono::milliseconds(from_env("HEAPLAB_RW_STRESS_SECONDS", 2) * 1000);
  auto const failures = stress.run_for(budget);
  ASSERT_TRUE(failures.empty()) << joined(failures);
  Stats const s        = stress.total();
  auto const quiescent = stress.quiescent_checks();
  EXPECT_TRUE(quiescent.empty()) << joined(quiescent);
  std::cout << threads << " threads, T = " << c.num_pages << ", " << sizeof(W) * 8
            << "-bit words: " << s.summary() << "\n";
  // Not vacuous: every way of getting a page got some, and pages went round.
  for (std::size_t k = 0; k < kSources; ++k)
    EXPECT_GT(s.served[k], 0u) << kSourceNames[k] << " never served a request: " << s.summary();
  EXPECT_GT(s.frees, 0u);
  EXPECT_GT(s.gives, 0u);
}

}  // namespace

TEST(RwFreeRunningStress, ThirtyTwoBitWords) { run_stress<std::uint32_t>(); }

TEST(RwFreeRunningStress, SixtyFourBitWords) { run_stress<std::uint64_t>(); }

// ---- the checks fed broken states ----

TEST(RwStressChecks, StepCountsOutsideTheirRangeAreReported) {
  using S = RwStress<std::uint32_t>;
  EXPECT_NO_THROW(S::check_steps({3, 1}, true, 8, "RW"));
  EXPECT_NO_THROW(S::check_steps({3, 8}, true, 8, "RW"));
  EXPECT_NO_THROW(S::check_steps({rw::kNoPage, 8}, true, 8, "RW"));
  EXPECT_NO_THROW(S::check_steps({rw::kNoPage, 0}, false, 8, "RW"));
  EXPECT_THROW(S::check_steps({3, 0}, true, 8, "RW"), StressFailure);
  EXPECT_THROW(S::check_steps({3, 9}, true, 8, "RW"), StressFailure);
  EXPECT_THROW(S::check_steps({rw::kNoPage, 7}, true, 8, "RW"), StressFailure);  // gave up early
  EXPECT_THROW(S::check_steps({3, 1}, false, 8, "CoRW lane"), StressFailure);    // page unasked
  EXPECT_THROW(S::check_steps({rw::kNoPage, 2}, false, 8, "CoRW lane"), StressFailure);
}

TEST(RwStressChecks, APageGivenToASecondHolderIsReported) {
  rw::PoolConfig const c = stress_config(32, 2);
  RwStress<std::uint32_t> stress(c, 2, 1);
  stress.take_ownership(stress.worker(0), 7, "RW");
  try {
    stress.take_ownership(stress.worker(1), 7, "RW-BM");
    FAIL() << "page 7 was given to T1 while T0 holds it";
  } catch (StressFailure const& e) {
    EXPECT_NE(std::string(e.what()).find("while T0 holds it"), std::string::npos) << e.what();
  }
}

TEST(RwStressChecks, APayloadOverwrittenWhileHeldIsReported) {
  rw::PoolConfig const c = stress_config(64, 2);
  RwStress<std::uint64_t> stress(c, 2, 1);
  stress.take_ownership(stress.worker(0), 5, "RW");
  stress.take_ownership(stress.worker(1), 6, "RW");
  stress.release_ownership(stress.worker(1), 6);  // intact: no failure
  // A second holder of page 5 (behind the log's back) writes its pattern over T0's.
  stress.payload(5, 2) = payload_word(5, 2, 2);
  try {
    stress.release_ownership(stress.worker(0), 5);
    FAIL() << "T0's payload of page 5 was overwritten";
  } catch (StressFailure const& e) {
    EXPECT_NE(std::string(e.what()).find("overwritten while T0 held it"), std::string::npos)
        << e.what();
  }
}

TEST(RwStressChecks, ATornPayloadIsReportedToTheNewOwner) {
  rw::PoolConfig const c = stress_config(32, 2);
  RwStress<std::uint32_t> stress(c, 2, 1);
  stress.take_ownership(stress.worker(0), 3, "RW");
  stress.release_ownership(stress.worker(0), 3);
  // Page 3's words are generation 1's pattern but for one word of generation 2: two owners wrote.
  stress.payload(3, 3) = payload_word(3, 2, 3);
  try {
    stress.take_ownership(stress.worker(1), 3, "RW-BM");
    FAIL() << "a torn payload was handed to a new owner unnoticed";
  } catch (StressFailure const& e) {
    EXPECT_NE(std::string(e.what()).find("word 3 torn"), std::string::npos) << e.what();
  }
}

TEST(RwStressChecks, AStaleHandOverIsReported) {
  rw::PoolConfig const c = stress_config(32, 2);
  RwStress<std::uint32_t> stress(c, 2, 1);
  // The cell claims the giver wrote generation 5 of page 9, but page 9 has had no owner: the
  // taker sees generation 0, what it would see if the giver's writes did not reach it.
  stress.publish(0, 9, 5);
  try {
    stress.take(stress.worker(1), 0);
    FAIL() << "a taker reading an older generation than the giver's was not reported";
  } catch (StressFailure const& e) {
    EXPECT_NE(std::string(e.what()).find("older than the giver's 5"), std::string::npos)
        << e.what();
  }
}

TEST(RwStressChecks, AHandOverLostToAWalkerIsNoFailure) {
  rw::PoolConfig const c = stress_config(32, 2);
  RwStress<std::uint32_t> stress(c, 2, 1);
  stress.publish(0, 9, 0);
  stress.pool().mark_used(9);  // a walker claimed page 9 after the giver's free
  EXPECT_NO_THROW(stress.take(stress.worker(1), 0));
  EXPECT_TRUE(stress.worker(1).held.empty());
}

TEST(RwStressChecks, ALeakedPageFailsTheQuiescentChecks) {
  rw::PoolConfig const c = stress_config(32, 2);
  RwStress<std::uint32_t> stress(c, 2, 1);
  stress.pool().mark_used(11);  // used, but nobody holds it
  auto const out        = stress.quiescent_checks();
  std::string const all = joined(out);
  EXPECT_NE(all.find("catalog at quiescence: [rw-freed-page-free]"), std::string::npos) << all;
  EXPECT_NE(all.find("catalog after the drain: [rw-freed-page-free]"), std::string::npos) << all;
  EXPECT_NE(all.find("is not back in its initial state"), std::string::npos) << all;
}

TEST(RwStressChecks, APageHeldAtTheEndIsFreedByTheDrain) {
  rw::PoolConfig const c = stress_config(64, 2);
  RwStress<std::uint64_t> stress(c, 2, 1);
  // What run_for leaves: T0 holds a page it claimed, T1 a run of 3 pages.
  auto& t0 = stress.worker(0);
  auto& t1 = stress.worker(1);
  ASSERT_NE(stress.ref().claim_bits(0, std::uint64_t{1} << 2), 0u);
  stress.take_ownership(t0, 2, "RW");
  t0.held.push_back(Held{2, 1, false});
  ASSERT_TRUE(rw::claim_run(stress.ref(), 10, 3));
  for (std::uint32_t p = 10; p < 13; ++p) stress.take_ownership(t1, p, "RW_malloc");
  t1.held.push_back(Held{10, 3, true});
  auto const out = stress.quiescent_checks();
  EXPECT_TRUE(out.empty()) << joined(out);
}
