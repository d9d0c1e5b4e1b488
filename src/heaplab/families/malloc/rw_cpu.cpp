// RW_malloc on CPU threads as a malloc/free subject (reference.hpp, make_rw_cpu_subject): the very
// code the GPU runs (rw/rw_malloc.hpp over rw::HostPool and core::HostAtomics), one lock-step warp
// per 32 consecutive threads of a wave (RW Alg. 3 is warp-collective), warps taken by OS threads
// from a shared counter. The pool's pages are 16 bytes of a host arena (host_arena.hpp);
// malloc(b) is a run of ceil(b / 16) pages, at most max_run_pages(64) = 2048 (32 KiB: a larger
// request gets null without a walk); the run's length is kept per first page for free.
//
// Linearization points and memory orders are those of rw/rw_malloc.hpp: a run is allocated at the
// acquire fetch_or of its last word, freed page by page at each word's release fetch_and. The run
// table (run_pages_) and the answers are written by the OS thread that ran the warp, at an index
// no other OS thread writes during the wave; the joins at the end of the wave publish them to the
// next wave (a free reads the run length written by an earlier wave).
#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

#include "heaplab/families/malloc/host_arena.hpp"
#include "heaplab/families/malloc/reference.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/rw_malloc.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::malloc_family {

namespace {

constexpr std::uint64_t kPage     = 16;
constexpr std::uint32_t kMaxRun   = rw::max_run_pages(64);
constexpr std::uint64_t kSaltSeed = 0x7277;  // ASCII "rw"

/// body(i) for i in [0, n) on `workers` OS threads taking indices from one counter; rethrows the
/// first exception after every thread joined (the joins publish what the bodies wrote).
template <class Body>
void on_threads(std::uint32_t n, unsigned workers, Body const& body) {
  std::atomic<std::uint32_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto work = [&] {
    try {
      for (std::uint32_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) body(i);
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < std::min<unsigned>(workers, n); ++w) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

class RwCpuSubject final : public Subject {
 public:
  explicit RwCpuSubject(unsigned threads)
      : threads_(threads ? threads : std::clamp(std::thread::hardware_concurrency(), 1u, 4u)) {}

  [[nodiscard]] SubjectInfo info() const override {
    SubjectInfo i;
    i.name      = "rw-malloc-cpu";
    i.alignment = kPage;
    i.recovery  = 0.5;
    return i;
  }

  void reset(std::uint64_t pool_bytes) override {
    arena_.reset(pool_bytes);
    rw::PoolConfig c;
    c.num_pages  = static_cast<std::uint32_t>(arena_.size() / kPage);
    c.page_bytes = kPage;
    c.word_bits  = 64;
    pool_        = std::make_unique<rw::HostPool<std::uint64_t>>(c);
    run_pages_.assign(c.num_pages, 0);
    waves_ = 0;
  }

  [[nodiscard]] AddressRange pool() const override { return arena_.range(); }

  std::vector<std::uint64_t> alloc_wave(AllocPlan const& plan) override {
    std::vector<std::uint64_t> answers(plan.sizes.size(), 0);
    // Fill: 0 asking, 1 its retry is next, 2 done.
    std::vector<std::uint8_t> state(plan.threads, 0);
    for (std::uint32_t k = 0; k < plan.per_thread; ++k) {
      std::vector<std::uint64_t> sizes(plan.threads, 0);
      for (std::uint32_t t = 0; t < plan.threads; ++t) {
        std::size_t const base = std::size_t{t} * plan.per_thread;
        if (!plan.fill)
          sizes[t] = plan.sizes[base + k];
        else if (state[t] == 1 || (state[t] == 0 && k + 1 < plan.per_thread))
          sizes[t] = plan.sizes[base];
      }
      round(plan, k, sizes, answers);
      if (!plan.fill) continue;
      for (std::uint32_t t = 0; t < plan.threads; ++t) {
        if (sizes[t] == 0) continue;
        bool const null = answers[std::size_t{t} * plan.per_thread + k] == 0;
        if (state[t] == 1)
          state[t] = 2;
        else if (null)
          state[t] = 1;
      }
    }
    return answers;
  }

  void free_wave(std::vector<std::uint64_t> const& addresses) override {
    std::vector<std::uint32_t> first(addresses.size());
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      std::uint64_t const a = addresses[i];
      std::uint64_t const p = (a - arena_.base()) / kPage;
      if (a < arena_.base() || (a - arena_.base()) % kPage != 0 || p >= run_pages_.size() ||
          run_pages_[p] == 0)
        throw std::runtime_error("rw-malloc-cpu: free of an address it did not hand out");
      first[i] = static_cast<std::uint32_t>(p);
    }
    auto const ref = pool_->ref<core::HostAtomics>();
    on_threads(static_cast<std::uint32_t>(first.size()), threads_, [&](std::uint32_t i) {
      std::uint32_t const n = run_pages_[first[i]];
      run_pages_[first[i]]  = 0;
      rw::free_run(ref, first[i], n);
    });
  }

  void write(std::vector<Block> const& blocks) override { arena_.write(blocks); }
  std::vector<std::uint64_t> verify(std::vector<Block> const& blocks) override {
    return arena_.verify(blocks);
  }

 private:
  /// Request k of every thread with sizes[t] != 0, one lock-step warp per 32 threads; a grant is
  /// recorded and written with its cookie by the OS thread that ran its warp.
  void round(AllocPlan const& plan,
             std::uint32_t k,
             std::vector<std::uint64_t> const& sizes,
             std::vector<std::uint64_t>& answers) {
    std::uint64_t const seed = schedule::mix(plan.ids.empty() ? 0 : plan.ids.front(), k, kSaltSeed);
    auto const ref           = pool_->ref<core::HostAtomics>();
    std::uint32_t const warps = (plan.threads + rw::kWarpLanes - 1) / rw::kWarpLanes;
    on_threads(warps, threads_, [&](std::uint32_t w) {
      std::uint32_t const begin = w * rw::kWarpLanes;
      std::uint32_t const end   = std::min(plan.threads, begin + rw::kWarpLanes);
      std::vector<rw::MallocLane> lanes;
      for (std::uint32_t t = begin; t < end; ++t) {
        std::uint64_t const n = rw::pages_for_bytes(sizes[t], kPage);
        lanes.push_back(
            {n <= kMaxRun ? static_cast<std::uint32_t>(n) : 0u, rw::thread_rng(seed, t)});
      }
      std::vector<rw::GetPageResult> const got = rw::rw_malloc_warp(ref, lanes);
      for (std::uint32_t t = begin; t < end; ++t) {
        if (lanes[t - begin].n == 0 || !got[t - begin].ok()) continue;
        std::uint32_t const page = got[t - begin].page;
        std::size_t const slot   = std::size_t{t} * plan.per_thread + k;
        run_pages_[page]         = lanes[t - begin].n;
        answers[slot]            = arena_.address(std::uint64_t{page} * kPage);
        arena_.write({answers[slot], sizes[t], plan.ids[slot], 0});
      }
    });
    ++waves_;
  }

  unsigned threads_;
  HostArena arena_;
  std::unique_ptr<rw::HostPool<std::uint64_t>> pool_;
  std::vector<std::uint32_t> run_pages_;  // first page of a live run -> its pages (0: none)
  std::uint64_t waves_ = 0;
};

}  // namespace

std::unique_ptr<Subject> make_rw_cpu_subject(unsigned threads) {
  return std::make_unique<RwCpuSubject>(threads);
}

}  // namespace heaplab::malloc_family
