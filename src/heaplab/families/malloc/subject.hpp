// A subject of the malloc family: one device (or host) allocator with malloc(size) / free(ptr),
// as the family's runner drives it (docs/malloc.md "Subjects"). A subject runs waves; it checks
// nothing. The runner (runner.hpp) checks the catalog (catalog.hpp) on what the subject answered
// and on what its memory holds.
//
// Adding an allocator is one Subject: CUDA's device malloc, RW_malloc and the peers (Gallatin,
// Ouroboros, ScatterAlloc) are GPU subjects (gpu/), the reference allocator is a host one
// (reference.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/cuda/detail/budget_wait.hpp"

namespace heaplab::malloc_family {

/// What a subject promises, which the catalog holds it to.
struct SubjectInfo {
  std::string name;              // "cuda-malloc", "rw-malloc", "reference"
  std::uint64_t alignment = 16;  // every grant is a multiple of this (a power of two)
  /// Out-of-memory policy (docs/malloc.md "Out of memory"). A null is a failure when, after the
  /// wave, the bytes live plus the request are at most null_floor x pool (0: a null is never
  /// judged, only measured). When `exact_gaps`, a null is a failure when an aligned free gap of
  /// the pool (given every live allocation after the wave) would hold the request: for allocators
  /// that manage the pool's bytes exactly, without headers (the reference).
  double null_floor = 0;
  bool exact_gaps   = false;
  /// A fill from an empty pool must reach at least this fraction of the bytes the first fill
  /// from an empty pool reached (0: not judged). Freed memory comes back.
  double recovery = 0;
  /// The smallest pool (bytes) it can be set up with; a schedule with a smaller pool is not
  /// supported by its runner (stress counts the case as skipped, replay says why).
  std::uint64_t min_pool = 0;
  /// For a subject without a usable out-of-memory path (one that must never be asked for more
  /// than its pool holds, or whose out-of-memory answer takes minutes; docs/malloc.md "Out of
  /// memory"): a schedule is supported only when its alloc
  /// waves ask for at most max_demand x pool bytes together, frees not subtracted
  /// (demand_bytes), and it has no fill. 0: every schedule.
  double max_demand = 0;
  /// The watchdog budget of one of its kernels (ms) when neither --watchdog-ms nor
  /// HEAPLAB_WATCHDOG_MS sets one; 0: the process default (5 s). For subjects whose waves are slow
  /// by nature (CUDA's malloc takes milliseconds per request near a full heap).
  std::uint32_t watchdog_ms = 0;
};

/// The budget of one of a subject's kernels: `asked` (--watchdog-ms) when not 0, else
/// HEAPLAB_WATCHDOG_MS when it is set, else the subject's SubjectInfo::watchdog_ms when not 0,
/// else the process default (5 s).
inline std::chrono::milliseconds watchdog_budget(unsigned asked, SubjectInfo const& info) {
  if (asked != 0) return std::chrono::milliseconds(asked);
  if (cudart::parse_watchdog_ms(std::getenv("HEAPLAB_WATCHDOG_MS")) || info.watchdog_ms == 0)
    return cudart::default_watchdog_budget();
  return std::chrono::milliseconds(info.watchdog_ms);
}

/// An address range [begin, end); empty when the subject does not say where its pool is.
struct AddressRange {
  std::uint64_t begin = 0;
  std::uint64_t end   = 0;
  [[nodiscard]] bool known() const { return end > begin; }
};

/// An allocation as the subject sees it: its address, its size, its id (the cookie's seed) and the
/// epoch its content was last written at.
struct Block {
  std::uint64_t address = 0;
  std::uint64_t size    = 0;
  std::uint64_t id      = 0;
  std::uint32_t epoch   = 0;
};

/// An alloc wave as a subject runs it: thread t makes requests k = 0 .. per_thread - 1, each of
/// sizes[t * per_thread + k] bytes (0: no request) with id ids[t * per_thread + k]. A granted
/// request is written with its cookie at epoch 0 (cookie.hpp) by the thread that got it, at once.
///
/// Fill (`fill` true): thread t asks for sizes[t * per_thread] bytes again and again (request k
/// with id ids[t * per_thread + k]) until its first null or per_thread - 1 grants, then once more
/// after its first null (the answer lands in the next slot); answers after that stay 0.
struct AllocPlan {
  std::uint32_t threads    = 0;
  std::uint32_t per_thread = 0;
  bool fill                = false;
  std::vector<std::uint64_t> sizes;  // threads x per_thread
  std::vector<std::uint64_t> ids;    // threads x per_thread
};

/// What a subject does that can fail (a CUDA error, a trap, a timeout) throws; the runner makes it
/// a crash (or a hang: subject_hang) of the step.
class Subject {
 public:
  virtual ~Subject()                 = default;
  Subject()                          = default;
  Subject(Subject const&)            = delete;
  Subject& operator=(Subject const&) = delete;

  [[nodiscard]] virtual SubjectInfo info() const = 0;
  /// A fresh allocator with a pool of `pool_bytes` bytes: nothing of an earlier run remains.
  virtual void reset(std::uint64_t pool_bytes) = 0;
  /// Where the pool lies, when the subject knows (after reset).
  [[nodiscard]] virtual AddressRange pool() const = 0;
  /// One alloc (or fill) wave: the address request i got (0: null), i in 0 .. threads x
  /// per_thread - 1.
  virtual std::vector<std::uint64_t> alloc_wave(AllocPlan const& plan) = 0;
  /// One free wave: thread i frees addresses[i] (each live, each once).
  virtual void free_wave(std::vector<std::uint64_t> const& addresses) = 0;
  /// Writes each block's cookie at its epoch over its bytes (one thread per block).
  virtual void write(std::vector<Block> const& blocks) = 0;
  /// For each block, the first offset whose byte is not its cookie at its epoch, or its size when
  /// all are (one thread per block).
  virtual std::vector<std::uint64_t> verify(std::vector<Block> const& blocks) = 0;
  /// The device it runs on ("none" for the host).
  [[nodiscard]] virtual std::string device_name() const { return "none"; }
  /// False after a hang (the device still runs the stuck kernel).
  [[nodiscard]] virtual bool usable() const { return true; }
};

/// A subject's kernel did not finish within the watchdog's budget (the runner reports a hang).
class subject_hang : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace heaplab::malloc_family
