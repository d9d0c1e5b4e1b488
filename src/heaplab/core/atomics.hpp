// The atomics layer of the portable core: every shared-memory access of the allocator protocol
// goes through one of three compile-time policies with the same static interface.
//
//   DeviceAtomics    GPU kernels (and usable on the host): cuda::atomic_ref with
//                    cuda::thread_scope_device. Backoff is a no-op.
//   HostAtomics      free-running CPU threads (ThreadSanitizer runs this policy): the same
//                    cuda::atomic_ref where libcu++ is available (HEAPLAB_HAVE_CCCL), otherwise the
//                    GCC __atomic builtins with the same orders. Backoff yields the CPU.
//   ObservedAtomics  CPU threads under the controlled scheduler (explore/): like HostAtomics, but
//                    every operation calls the thread's AtomicObserver before (a yield point) and
//                    after (with the old and new value, for the trace); in the explorer's
//                    weak-memory mode the observer also chooses the value a load returns.
//                    Without an observer installed on the calling thread it behaves exactly
//                    like HostAtomics.
//
// Every operation names its memory order explicitly; there are no standalone fences (the
// orderings DynaSOAr Alg. 8 gets from __threadfence are carried by release stores / RMWs and
// acquire RMWs instead, which ThreadSanitizer understands; docs/core.md "Memory orders").
//
// The protocol code (hierarchical_bitmap.hpp, block_headers.hpp, heap_protocol.hpp) is templated on
// the policy, so the very same source runs in kernels, on std::threads and under the explorer.
// core includes nothing of ours besides core; explore/ implements AtomicObserver.
#pragma once

#include <cstdint>
#include <thread>
#include <type_traits>

#include "heaplab/core/host_device.hpp"

#if defined(__CUDACC__) || defined(HEAPLAB_HAVE_CCCL)
#include <cuda/atomic>
#define HEAPLAB_CORE_USE_CCCL 1
#else
#define HEAPLAB_CORE_USE_CCCL 0
#endif

namespace heaplab::core {

/// C++ memory orders (consume omitted). Loads take relaxed/acquire/seq_cst, stores
/// relaxed/release/seq_cst, read-modify-writes any.
enum class MemoryOrder : std::uint8_t { relaxed, acquire, release, acq_rel, seq_cst };

enum class AtomicOp : std::uint8_t {
  load,
  store,
  exchange,
  compare_exchange,
  fetch_add,
  fetch_or,
  fetch_and
};

/// What a retry loop is waiting for; the controlled scheduler uses it to schedule fairly.
enum class Backoff : std::uint8_t {
  /// The failed attempt will fail identically until another thread writes shared memory (a set
  /// or clear that found the bit already in its target state, a barrier). The scheduler runs
  /// other threads until one of them modifies memory, and reports a deadlock if none can.
  until_memory_changes,
  /// A retry that may take another path even if no memory changed (new rotation seed). The
  /// scheduler treats the next switch as free (not a preemption) and PCT lowers the priority.
  retry,
  /// One round of a BOUNDED wait for another thread's progress (an allocation waiting for the
  /// block its claim ticket's owner is opening, heap_protocol.hpp find_or_claim_block). The GPU
  /// sleeps
  /// briefly; the scheduler treats it as `retry`.
  wait,
};

HEAPLAB_HD_INLINE constexpr char const* to_string(MemoryOrder o) {
  switch (o) {
    case MemoryOrder::relaxed:
      return "relaxed";
    case MemoryOrder::acquire:
      return "acquire";
    case MemoryOrder::release:
      return "release";
    case MemoryOrder::acq_rel:
      return "acq_rel";
    case MemoryOrder::seq_cst:
      return "seq_cst";
  }
  return "?";
}

HEAPLAB_HD_INLINE constexpr char const* to_string(AtomicOp op) {
  switch (op) {
    case AtomicOp::load:
      return "load";
    case AtomicOp::store:
      return "store";
    case AtomicOp::exchange:
      return "exchange";
    case AtomicOp::compare_exchange:
      return "cas";
    case AtomicOp::fetch_add:
      return "fetch_add";
    case AtomicOp::fetch_or:
      return "fetch_or";
    case AtomicOp::fetch_and:
      return "fetch_and";
  }
  return "?";
}

namespace detail {

/// The order a failed compare-exchange may use given the success order (no release part).
HEAPLAB_HD_INLINE constexpr MemoryOrder failure_order(MemoryOrder o) {
  return o == MemoryOrder::acq_rel   ? MemoryOrder::acquire
         : o == MemoryOrder::release ? MemoryOrder::relaxed
                                     : o;
}

#if HEAPLAB_CORE_USE_CCCL
HEAPLAB_HD_INLINE constexpr ::cuda::std::memory_order cccl_order(MemoryOrder o) {
  switch (o) {
    case MemoryOrder::relaxed:
      return ::cuda::std::memory_order_relaxed;
    case MemoryOrder::acquire:
      return ::cuda::std::memory_order_acquire;
    case MemoryOrder::release:
      return ::cuda::std::memory_order_release;
    case MemoryOrder::acq_rel:
      return ::cuda::std::memory_order_acq_rel;
    case MemoryOrder::seq_cst:
      return ::cuda::std::memory_order_seq_cst;
  }
  return ::cuda::std::memory_order_seq_cst;
}
template <class T>
using device_atomic_ref = ::cuda::atomic_ref<T, ::cuda::thread_scope_device>;
#else
constexpr int gcc_order(MemoryOrder o) {
  switch (o) {
    case MemoryOrder::relaxed:
      return __ATOMIC_RELAXED;
    case MemoryOrder::acquire:
      return __ATOMIC_ACQUIRE;
    case MemoryOrder::release:
      return __ATOMIC_RELEASE;
    case MemoryOrder::acq_rel:
      return __ATOMIC_ACQ_REL;
    case MemoryOrder::seq_cst:
      return __ATOMIC_SEQ_CST;
  }
  return __ATOMIC_SEQ_CST;
}
#endif

/// The atomic operations themselves: cuda::atomic_ref at device scope when libcu++ is present
/// (always under nvcc), else the GCC builtins (host only). T is a 32- or 64-bit unsigned integer,
/// naturally aligned.
struct NativeAtomics {
  template <class T>
  HEAPLAB_HD_INLINE static T load(T const* p, MemoryOrder o) {
    static_assert(std::is_unsigned_v<T> && (sizeof(T) == 4 || sizeof(T) == 8));
#if HEAPLAB_CORE_USE_CCCL
    return device_atomic_ref<T>(*const_cast<T*>(p)).load(cccl_order(o));
#else
    return __atomic_load_n(p, gcc_order(o));
#endif
  }
  template <class T>
  HEAPLAB_HD_INLINE static void store(T* p, T v, MemoryOrder o) {
#if HEAPLAB_CORE_USE_CCCL
    device_atomic_ref<T>(*p).store(v, cccl_order(o));
#else
    __atomic_store_n(p, v, gcc_order(o));
#endif
  }
  template <class T>
  HEAPLAB_HD_INLINE static T exchange(T* p, T v, MemoryOrder o) {
#if HEAPLAB_CORE_USE_CCCL
    return device_atomic_ref<T>(*p).exchange(v, cccl_order(o));
#else
    return __atomic_exchange_n(p, v, gcc_order(o));
#endif
  }
  /// Strong compare-exchange; on failure `expected` receives the current value.
  template <class T>
  HEAPLAB_HD_INLINE static bool compare_exchange(T* p, T& expected, T desired, MemoryOrder o) {
#if HEAPLAB_CORE_USE_CCCL
    return device_atomic_ref<T>(*p).compare_exchange_strong(
        expected, desired, cccl_order(o), cccl_order(failure_order(o)));
#else
    return __atomic_compare_exchange_n(
        p, &expected, desired, false, gcc_order(o), gcc_order(failure_order(o)));
#endif
  }
  template <class T>
  HEAPLAB_HD_INLINE static T fetch_add(T* p, T v, MemoryOrder o) {
#if HEAPLAB_CORE_USE_CCCL
    return device_atomic_ref<T>(*p).fetch_add(v, cccl_order(o));
#else
    return __atomic_fetch_add(p, v, gcc_order(o));
#endif
  }
  template <class T>
  HEAPLAB_HD_INLINE static T fetch_or(T* p, T v, MemoryOrder o) {
#if HEAPLAB_CORE_USE_CCCL
    return device_atomic_ref<T>(*p).fetch_or(v, cccl_order(o));
#else
    return __atomic_fetch_or(p, v, gcc_order(o));
#endif
  }
  template <class T>
  HEAPLAB_HD_INLINE static T fetch_and(T* p, T v, MemoryOrder o) {
#if HEAPLAB_CORE_USE_CCCL
    return device_atomic_ref<T>(*p).fetch_and(v, cccl_order(o));
#else
    return __atomic_fetch_and(p, v, gcc_order(o));
#endif
  }
};

}  // namespace detail

/// GPU kernels. Device scope: the heap is shared by all thread blocks of one GPU.
struct DeviceAtomics : detail::NativeAtomics {
  /// Retry loops on the GPU rely on independent thread scheduling (Volta and later) for forward
  /// progress of the thread they wait for; no sleep is inserted, except for one round of a
  /// bounded wait (Backoff::wait), which sleeps so that waiters leave the memory system to the
  /// thread they wait for.
  HEAPLAB_HD_INLINE static void backoff([[maybe_unused]] Backoff kind) {
#if HEAPLAB_DEVICE_CODE
    if (kind == Backoff::wait) __nanosleep(256);
#endif
  }
};

/// Free-running CPU threads (the ThreadSanitizer configuration).
struct HostAtomics : detail::NativeAtomics {
  /// With more logical threads than cores a spinning thread must let the one it waits for run.
  static void backoff(Backoff) { std::this_thread::yield(); }
};

// ---------------------------------------------------------------- observation (host only)

/// One atomic operation as the core issues it. `operand` is the stored / or-ed / and-ed / added
/// value (the desired value for compare_exchange, whose expected value is `expected`).
struct AtomicAccess {
  AtomicOp op;
  MemoryOrder order;
  std::uint8_t width;  // bytes: 4 or 8
  void const* address;
  std::uint64_t operand;
  std::uint64_t expected;
};

/// Implemented by the controlled scheduler (explore/). Installed per thread; the core calls it
/// from ObservedAtomics only. before_atomic may block (it is where the scheduler switches
/// threads) and may throw to abort a run; after_atomic runs right after the operation, before
/// the thread can be preempted again, so (old, new) is exactly what the operation did.
/// load_value runs between a load's read of memory and after_atomic: memory holds the latest
/// value of every location, and a weak-memory observer may return an older value that the
/// memory model allows the load to read (docs/explorer.md "Weak memory"); the load returns what
/// it returns. The default keeps the latest value (a sequentially consistent machine).
class AtomicObserver {
 public:
  virtual void before_atomic(AtomicAccess const& access) = 0;
  virtual std::uint64_t load_value(AtomicAccess const& access, std::uint64_t latest) {
    (void)access;
    return latest;
  }
  virtual void after_atomic(AtomicAccess const& access,
                            std::uint64_t old_value,
                            std::uint64_t new_value) = 0;
  virtual void on_backoff(Backoff kind)              = 0;

 protected:
  ~AtomicObserver() = default;
};

/// The calling thread's observer slot (nullptr: none).
inline AtomicObserver*& atomic_observer_slot() noexcept {
  thread_local AtomicObserver* observer = nullptr;
  return observer;
}

/// Installs an observer on the calling thread for the lifetime of this object.
class ScopedAtomicObserver {
 public:
  explicit ScopedAtomicObserver(AtomicObserver* observer) : previous_(atomic_observer_slot()) {
    atomic_observer_slot() = observer;
  }
  ~ScopedAtomicObserver() { atomic_observer_slot() = previous_; }
  ScopedAtomicObserver(ScopedAtomicObserver const&)            = delete;
  ScopedAtomicObserver& operator=(ScopedAtomicObserver const&) = delete;

 private:
  AtomicObserver* previous_;
};

/// CPU threads under the controlled scheduler: each operation is a yield point and is recorded.
struct ObservedAtomics {
  template <class T>
  static T load(T const* p, MemoryOrder o) {
    AtomicObserver* const obs = atomic_observer_slot();
    if (obs == nullptr) return HostAtomics::load(p, o);
    AtomicAccess const a{AtomicOp::load, o, sizeof(T), p, 0, 0};
    obs->before_atomic(a);
    T const v = static_cast<T>(obs->load_value(a, HostAtomics::load(p, o)));
    obs->after_atomic(a, v, v);
    return v;
  }
  template <class T>
  static void store(T* p, T v, MemoryOrder o) {
    AtomicObserver* const obs = atomic_observer_slot();
    if (obs == nullptr) return HostAtomics::store(p, v, o);
    AtomicAccess const a{AtomicOp::store, o, sizeof(T), p, v, 0};
    obs->before_atomic(a);
    // Only this thread runs between before_atomic and after_atomic, so this plain read is the
    // value the store overwrites.
    T const old = HostAtomics::load(p, MemoryOrder::relaxed);
    HostAtomics::store(p, v, o);
    obs->after_atomic(a, old, v);
  }
  template <class T>
  static T exchange(T* p, T v, MemoryOrder o) {
    return rmw(
        AtomicOp::exchange,
        p,
        v,
        o,
        [](T* q, T x, MemoryOrder m) { return HostAtomics::exchange(q, x, m); },
        [](T, T x) { return x; });
  }
  template <class T>
  static bool compare_exchange(T* p, T& expected, T desired, MemoryOrder o) {
    AtomicObserver* const obs = atomic_observer_slot();
    if (obs == nullptr) return HostAtomics::compare_exchange(p, expected, desired, o);
    AtomicAccess const a{AtomicOp::compare_exchange, o, sizeof(T), p, desired, expected};
    obs->before_atomic(a);
    T const wanted  = expected;
    bool const done = HostAtomics::compare_exchange(p, expected, desired, o);
    obs->after_atomic(a, done ? wanted : expected, done ? desired : expected);
    return done;
  }
  template <class T>
  static T fetch_add(T* p, T v, MemoryOrder o) {
    return rmw(
        AtomicOp::fetch_add,
        p,
        v,
        o,
        [](T* q, T x, MemoryOrder m) { return HostAtomics::fetch_add(q, x, m); },
        [](T old, T x) { return static_cast<T>(old + x); });
  }
  template <class T>
  static T fetch_or(T* p, T v, MemoryOrder o) {
    return rmw(
        AtomicOp::fetch_or,
        p,
        v,
        o,
        [](T* q, T x, MemoryOrder m) { return HostAtomics::fetch_or(q, x, m); },
        [](T old, T x) { return static_cast<T>(old | x); });
  }
  template <class T>
  static T fetch_and(T* p, T v, MemoryOrder o) {
    return rmw(
        AtomicOp::fetch_and,
        p,
        v,
        o,
        [](T* q, T x, MemoryOrder m) { return HostAtomics::fetch_and(q, x, m); },
        [](T old, T x) { return static_cast<T>(old & x); });
  }
  static void backoff(Backoff kind) {
    AtomicObserver* const obs = atomic_observer_slot();
    if (obs == nullptr) return HostAtomics::backoff(kind);
    obs->on_backoff(kind);
  }

 private:
  template <class T, class Op, class Result>
  static T rmw(AtomicOp op_kind, T* p, T v, MemoryOrder o, Op op, Result result) {
    AtomicObserver* const obs = atomic_observer_slot();
    if (obs == nullptr) return op(p, v, o);
    AtomicAccess const a{op_kind, o, sizeof(T), p, v, 0};
    obs->before_atomic(a);
    T const old = op(p, v, o);
    obs->after_atomic(a, old, result(old, v));
    return old;
  }
};

}  // namespace heaplab::core
