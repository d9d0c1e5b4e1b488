// Planted bugs (docs/mutants.md): one `constexpr bool` per named bug, true only in a build that
// plants it. A build plants at most one: CMake's -DHEAPLAB_MUTANT=<name> defines
// HEAPLAB_MUTANT_NAME="<name>" for every heaplab target (cmake/HeaplabTargets.cmake), and a
// per-mutant test target defines it for itself (proofs_tests/explore/CMakeLists.txt).
//
// The algorithms select a bug with `if HEAPLAB_MUTANT_CONSTEXPR (mutant::<name>)` or a
// `HEAPLAB_MUTANT_CONSTEXPR` choice of memory order, so both the bug and the real code compile in
// every build, and the real path is never hidden in an `#else`. HEAPLAB_MUTANT_CONSTEXPR is
// `constexpr` in every build but where HEAPLAB_MUTANT_RUNTIME is defined: there each switch is a
// run-time `bool` that mutant::plant(name) sets, so one binary plants every bug in turn. Two
// kinds: a host-only test translation unit (proofs_tests/explore/mutant_test.cpp: one binary for
// the explorer's planted bugs instead of one build each), and a planting build, where every
// target's code, device code included, reads the switches and the programs plant the bug that
// HEAPLAB_PLANT names (plant_from_environment; tools/mutant-sweep --planting: one build for every
// planted bug instead of one each). A name that is not in
// HEAPLAB_PLANTED_BUGS below fails to compile (static_assert), so a misspelled -DHEAPLAB_MUTANT
// cannot build the real code silently.
//
// Adding a planted bug: add X(name) to the list, use mutant::name where the bug goes (with a
// `// MUTANT name: ...` comment saying what it breaks), add its row to docs/mutants.md and
// tools/mutant-sweep.
#pragma once

// A planting build (-DHEAPLAB_MUTANT=runtime, docs/mutants.md "One build for every planted bug")
// compiles every switch as a run-time one, except in a target that plants its own bug at compile
// time (e.g. the apps' and the tests' per-target mutants): that target's HEAPLAB_MUTANT_NAME wins.
#if defined(HEAPLAB_MUTANT_RUNTIME_BUILD) && !defined(HEAPLAB_MUTANT_NAME) && \
    !defined(HEAPLAB_MUTANT_RUNTIME)
#define HEAPLAB_MUTANT_RUNTIME 1
#endif

#include <cstdlib>
#include <string>
#if defined(HEAPLAB_MUTANT_RUNTIME)
#include <cstdio>
#include <vector>
#endif

#if defined(HEAPLAB_MUTANT_NAME)
#define HEAPLAB_PLANTED_BUG_NAME HEAPLAB_MUTANT_NAME
#else
#define HEAPLAB_PLANTED_BUG_NAME ""
#endif

// Every planted bug, by name; one X(name) per bug (docs/mutants.md has a row for each).
#define HEAPLAB_PLANTED_BUGS(X)         \
  X(invalidate_no_rollback)             \
  X(init_bitmap_before_type)            \
  X(dealloc_no_reactivate)              \
  X(rollback_no_deferred_deactivate)    \
  X(defrag_crossing_from_reload)        \
  X(alloc_retry_forever_on_oom)         \
  X(alloc_null_after_lost_round)        \
  X(hint_skips_type_check)              \
  X(reserve_k_update_one_slot)          \
  X(delete_keeps_defrag_bit)            \
  X(hierarchy_skip_set_first)           \
  X(hierarchy_try_propagate)            \
  X(hierarchy_deep_set_stops)           \
  X(hierarchy_deep_clear_stops)         \
  X(free_relaxed)                       \
  X(weak_publish_release)               \
  X(weak_reserve_acquire)               \
  X(weak_invalidate_acquire)            \
  X(weak_delete_release)                \
  X(weak_claim_acquire)                 \
  X(claim_wait_unbounded)               \
  X(claim_wait_miss_is_oom)             \
  X(free_search_first_word_only)        \
  X(oom_scan_no_wrap)                   \
  X(oom_fallback_trusts_summary)        \
  X(forwarding_before_upper_half)       \
  X(copy_small_arrays_as_one_chunk)     \
  X(coalesce_lockstep_mask)             \
  X(parallel_do_reads_alloc_bitmap)     \
  X(enumerate_chunk_drops_last)         \
  X(rewrite_filter_off_by_one)          \
  X(full_target_stays_active)           \
  X(fused_forwarding_store)             \
  X(copy_widens_narrow_fields)          \
  X(rw_claim_without_atomic)            \
  X(rw_free_relaxed)                    \
  X(rw_bm_success_from_word)            \
  X(rw_steps_unbounded)                 \
  X(rw_returns_page_beyond_pool)        \
  X(corw_keeps_lost_claim)              \
  X(corw_offer_not_marked)              \
  X(corw_offer_taken_off_by_one)        \
  X(corw_lock_not_released)             \
  X(rw_malloc_no_rollback)              \
  X(rw_malloc_partial_claim_wins)       \
  X(rw_malloc_rollback_all_bits)        \
  X(rw_preset_modulo)                   \
  X(rw_queue_empty_keeps_decrement)     \
  X(rw_cpu_slice_drops_last)            \
  X(rw_size_class_floor_log2)           \
  X(rw_size_class_carve_past_pool)      \
  X(rw_queue_slot_relaxed)              \
  X(gen_ca_skip_dying)                  \
  X(collision_merge_drops_mass)         \
  X(wa_tor_shark_eats_without_free)     \
  X(structure_keep_orphan_springs)      \
  X(gen_ca_wrap_assumes_pow2)           \
  X(wa_tor_north_wrap_uses_width)       \
  X(nbody_force_skips_tail_tile)        \
  X(game_of_life_orthogonal_candidates) \
  X(game_of_life_candidate_without_cas) \
  X(sugarscape_father_does_not_pay)     \
  X(traffic_merge_without_claim)        \
  X(barnes_hut_quadrant_swaps_axes)

namespace heaplab::core::mutant {
namespace detail {

constexpr bool same_name(char const* a, char const* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

#define HEAPLAB_PLANTED_BUG_IS_KNOWN(name) || same_name(HEAPLAB_PLANTED_BUG_NAME, #name)
constexpr bool planted_name_is_known() {
  return same_name(HEAPLAB_PLANTED_BUG_NAME, "") HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_IS_KNOWN);
}
#undef HEAPLAB_PLANTED_BUG_IS_KNOWN

}  // namespace detail

static_assert(detail::planted_name_is_known(),
              "HEAPLAB_MUTANT names no planted bug (src/heaplab/core/mutants.hpp lists them; "
              "docs/mutants.md says what each one breaks)");

#if !defined(HEAPLAB_MUTANT_RUNTIME)

#define HEAPLAB_MUTANT_CONSTEXPR constexpr

/// mutant::<name>: true iff this build plants that bug.
#define HEAPLAB_PLANTED_BUG_SWITCH(name) \
  inline constexpr bool name = detail::same_name(HEAPLAB_PLANTED_BUG_NAME, #name);
HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_SWITCH)
#undef HEAPLAB_PLANTED_BUG_SWITCH

/// The planted bug's name; "" in the real build.
inline constexpr char const* kPlanted = HEAPLAB_PLANTED_BUG_NAME;

/// HEAPLAB_PLANT=<name> asks a planting build to plant a bug. This build cannot: unless the name
/// is the bug it plants at compile time, returns why (so that a researcher who set it does not
/// take a pass of the real code for a pass with the bug); "" when HEAPLAB_PLANT is unset.
inline std::string plant_from_environment() {
  char const* name = std::getenv("HEAPLAB_PLANT");
  if (name == nullptr || *name == '\0' || detail::same_name(name, kPlanted)) return "";
  return std::string("HEAPLAB_PLANT=") + name + " asks for a planted bug, but this build " +
         (*kPlanted == '\0' ? std::string("is the real code")
                            : std::string("plants '") + kPlanted + "' at compile time") +
         " and cannot plant another at run time (a planting build: -DHEAPLAB_MUTANT=runtime, "
         "docs/mutants.md)";
}

#else  // HEAPLAB_MUTANT_RUNTIME: the switches are set at run time

#if defined(HEAPLAB_MUTANT_NAME)
#error "a build plants a bug at compile time (HEAPLAB_MUTANT_NAME) or at run time, not both"
#endif

#define HEAPLAB_MUTANT_CONSTEXPR

/// Everything of the run-time kind has names of its own (the inline namespace), so a binary that
/// links a run-time translation unit with libraries of the constexpr kind (explore_mutant_test,
/// planting_gpu_test) holds no two definitions of one name.
inline namespace planting {

/// The host's switches: one bool per planted bug for the whole program, true while
/// plant("<name>") holds. Set only between runs, from one thread (plant() happens before the
/// threads or kernels of the run it plants for are started).
namespace host_switch {
#define HEAPLAB_PLANTED_BUG_SWITCH(name) inline bool name = false;
HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_SWITCH)
#undef HEAPLAB_PLANTED_BUG_SWITCH
}  // namespace host_switch

#if defined(__CUDACC__)
/// The device's switches: without separate compilation every CUDA translation unit is a module of
/// its own, so each has its own copy (internal linkage), written by plant() through the setter
/// the unit registers below. Device code reads its unit's copy, host code the host's switch: one
/// name, mutant::<name>, chosen per compilation pass.
namespace device_switch {
#define HEAPLAB_PLANTED_BUG_SWITCH(name) [[maybe_unused]] static __device__ bool name = false;
HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_SWITCH)
#undef HEAPLAB_PLANTED_BUG_SWITCH
}  // namespace device_switch
#endif

#if defined(__CUDA_ARCH__)
#define HEAPLAB_PLANTED_BUG_USE(name) using device_switch::name;
#else
#define HEAPLAB_PLANTED_BUG_USE(name) using host_switch::name;
#endif
HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_USE)
#undef HEAPLAB_PLANTED_BUG_USE

/// The planted bug's name; "" while none is planted.
inline char const* kPlanted = "";

namespace units {

/// Copies the host's switches into one CUDA translation unit's device switches; "" when it did,
/// else the CUDA error.
using DeviceSetter = char const* (*)();

/// Every CUDA translation unit's setter (registered during static initialization).
inline std::vector<DeviceSetter>& device_setters() {
  static std::vector<DeviceSetter> setters;
  return setters;
}

#if defined(__CUDACC__)
/// This unit's setter. A switch the unit's device code never reads may be absent from its module:
/// cudaErrorInvalidSymbol is not a failure. Neither is a machine without a usable device (no
/// device code can run there, so the host's switches are the whole bug); any other error is.
/// Ordering: a copy from pageable host memory may return before its DMA is done, and heaplab's
/// kernels run on non-blocking streams that the legacy stream does not order; the final
/// cudaDeviceSynchronize makes every switch written before plant() returns, so every kernel
/// launched after it reads the new value.
static char const* set_this_units_device_switches() {
  char const* failed = "";
#define HEAPLAB_PLANTED_BUG_COPY(name)                                                            \
  if (cudaMemcpyToSymbol(device_switch::name, &host_switch::name, sizeof(bool)) != cudaSuccess) { \
    cudaError_t const e = cudaGetLastError();                                                     \
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return "";                    \
    if (e != cudaErrorInvalidSymbol && *failed == '\0') failed = cudaGetErrorString(e);           \
  }
  HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_COPY)
#undef HEAPLAB_PLANTED_BUG_COPY
  if (cudaError_t const e = cudaDeviceSynchronize(); e != cudaSuccess && *failed == '\0')
    failed = cudaGetErrorString(e);
  return failed;
}
[[maybe_unused]] static bool const this_unit_registered =
    (device_setters().push_back(&set_this_units_device_switches), true);
#endif

}  // namespace units

/// Plants the bug `name` and clears every other switch, on the host and in every CUDA translation
/// unit's device switches; "" plants nothing. Returns "" when it did; an explanation for a name
/// that is not in HEAPLAB_PLANTED_BUGS (nothing planted) or a device whose switches could not be
/// written (then the host's switches hold the bug and the caller must not run anything).
/// Device switches are written only when some CUDA unit is linked in and `name` is not "", so a
/// host-only binary, or clearing, needs no GPU.
inline std::string plant(char const* name) {
  bool known = detail::same_name(name, "");
#define HEAPLAB_PLANTED_BUG_CHECK(bug) known = known || detail::same_name(name, #bug);
  HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_CHECK)
#undef HEAPLAB_PLANTED_BUG_CHECK
  if (!known)
    return std::string("'") + name +
           "' names no planted bug (src/heaplab/core/mutants.hpp lists them; docs/mutants.md)";
  kPlanted = "";
#define HEAPLAB_PLANTED_BUG_SET(bug)                \
  host_switch::bug = detail::same_name(name, #bug); \
  if (host_switch::bug) kPlanted = #bug;
  HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_SET)
#undef HEAPLAB_PLANTED_BUG_SET
  static bool device_written = false;  // clearing never-written device switches is a no-op
  if (*name == '\0' && !device_written) return "";
  for (units::DeviceSetter set : units::device_setters()) {
    device_written = true;
    if (char const* failed = set(); *failed != '\0')
      return std::string("could not write the device's planted-bug switches: ") + failed;
  }
  return "";
}

/// HEAPLAB_PLANT=<name> in the environment: plants that bug (a planting build's programs call
/// this at start, docs/mutants.md "One build for every planted bug") and says so on stderr, the
/// line tools/mutant-sweep looks for. Returns "" when nothing was asked or the bug is planted.
inline std::string plant_from_environment() {
  char const* name = std::getenv("HEAPLAB_PLANT");
  if (name == nullptr || *name == '\0') return "";
  std::string failed = plant(name);
  if (failed.empty())
    std::fprintf(stderr, "heaplab: planted bug '%s' (HEAPLAB_PLANT; a planting build)\n", name);
  return failed;
}

}  // namespace planting

#endif  // HEAPLAB_MUTANT_RUNTIME

}  // namespace heaplab::core::mutant
