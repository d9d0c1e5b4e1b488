// The bump family's concurrent allocator and backends (bump_allocator.hpp).
#include "bump_allocator.hpp"

#include <algorithm>
#include <thread>
#include <utility>

namespace heaplab::bump_family {

std::uint64_t AtomicBump::alloc(std::uint64_t size, std::uint64_t align) {
  std::uint64_t top = top_.load(std::memory_order_relaxed);
  for (;;) {
    // `top` is the pointer as this thread last saw it (the load, or the failed CAS below).
    if (!fits(top, size, align, arena_)) return kNull;  // linearization point of a null
    std::uint64_t const start = align_up(top, align);
    // Linearization point of a grant: the CAS that moves the pointer from `top` to our end. On
    // failure it stores the current pointer in `top` and we align up again from there.
    if (top_.compare_exchange_weak(
            top, start + size, std::memory_order_relaxed, std::memory_order_relaxed))
      return start;
  }
}

unsigned default_os_threads() {
  unsigned const hw = std::max(1u, std::thread::hardware_concurrency());
  return std::max(2u, std::min(4u, hw));
}

std::vector<std::uint64_t> run_wave_on_threads(ConcurrentBump& allocator,
                                               BumpAlloc const& wave,
                                               unsigned os_threads) {
  std::vector<std::uint32_t> const order = wave_order(wave);
  unsigned const workers = std::max(1u, std::min<unsigned>(os_threads, wave.threads));
  std::vector<std::uint64_t> answers(wave.threads, kNull);
  std::atomic<unsigned> arrived{0};
  // Each worker waits until all have arrived, so that the wave's requests race; each writes
  // only its own threads' answers, which the caller reads after join().
  auto work = [&](unsigned w) {
    arrived.fetch_add(1, std::memory_order_relaxed);
    while (arrived.load(std::memory_order_relaxed) < workers) std::this_thread::yield();
    for (std::size_t k = w; k < order.size(); k += workers) {
      std::uint32_t const t = order[k];
      answers[t]            = allocator.alloc(wave.size_of(t), wave.align);
    }
  };
  std::vector<std::thread> pool;
  try {
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work, w);
  } catch (...) {
    arrived.fetch_add(workers, std::memory_order_relaxed);  // release those that started
    for (auto& t : pool) t.join();
    throw;
  }
  work(0);
  for (auto& t : pool) t.join();
  return answers;
}

std::vector<std::uint64_t> SequentialBackend::alloc_wave(BumpAlloc const& wave) {
  std::vector<std::uint64_t> answers(wave.threads, kNull);
  for (std::uint32_t const t : wave_order(wave))
    answers[t] = bump_.alloc(wave.size_of(t), wave.align);
  return answers;
}

ThreadsBackend::ThreadsBackend(std::unique_ptr<ConcurrentBump> allocator, unsigned os_threads)
    : allocator_(std::move(allocator)),
      os_threads_(os_threads == 0 ? default_os_threads() : os_threads) {}

}  // namespace heaplab::bump_family
