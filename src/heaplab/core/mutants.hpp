// Planted bugs (docs/mutants.md): one `constexpr bool` per named bug, true only in a build that
// plants it. A build plants at most one: CMake's -DHEAPLAB_MUTANT=<name> defines
// HEAPLAB_MUTANT_NAME="<name>" for every heaplab target (cmake/HeaplabTargets.cmake), and a
// per-mutant test target defines it for itself (proofs_tests/explore/CMakeLists.txt).
//
// The algorithms select a bug with `if HEAPLAB_MUTANT_CONSTEXPR (mutant::<name>)` or a
// `HEAPLAB_MUTANT_CONSTEXPR` choice of memory order, so both the bug and the real code compile in
// every build, and the real path is never hidden in an `#else`. HEAPLAB_MUTANT_CONSTEXPR is
// `constexpr` in every build but one kind: a host-only test translation unit that defines
// HEAPLAB_MUTANT_RUNTIME, where each switch is a plain `bool` that mutant::plant(name) sets, so
// one test binary plants every bug in turn (proofs_tests/explore/mutant_test.cpp: one binary for
// the explorer's planted bugs instead of one build each). A name that is not in
// HEAPLAB_PLANTED_BUGS below fails to compile (static_assert), so a misspelled -DHEAPLAB_MUTANT
// cannot build the real code silently.
//
// Adding a planted bug: add X(name) to the list, use mutant::name where the bug goes (with a
// `// MUTANT name: ...` comment saying what it breaks), add its row to docs/mutants.md and
// tools/mutant-sweep.
#pragma once

#if defined(HEAPLAB_MUTANT_NAME)
#define HEAPLAB_PLANTED_BUG_NAME HEAPLAB_MUTANT_NAME
#else
#define HEAPLAB_PLANTED_BUG_NAME ""
#endif

// Every planted bug, by name; one X(name) per bug (docs/mutants.md has a row for each).
#define HEAPLAB_PLANTED_BUGS(X)      \
  X(invalidate_no_rollback)          \
  X(init_bitmap_before_type)         \
  X(dealloc_no_reactivate)           \
  X(rollback_no_deferred_deactivate) \
  X(defrag_crossing_from_reload)     \
  X(alloc_retry_forever_on_oom)      \
  X(alloc_null_after_lost_round)     \
  X(reserve_k_update_one_slot)       \
  X(delete_keeps_defrag_bit)         \
  X(hierarchy_skip_set_first)        \
  X(hierarchy_try_propagate)         \
  X(hierarchy_deep_set_stops)        \
  X(hierarchy_deep_clear_stops)      \
  X(free_relaxed)                    \
  X(weak_publish_release)            \
  X(weak_reserve_acquire)            \
  X(weak_invalidate_acquire)         \
  X(weak_delete_release)             \
  X(weak_claim_acquire)              \
  X(claim_wait_unbounded)            \
  X(claim_wait_miss_is_oom)          \
  X(free_search_first_word_only)     \
  X(oom_scan_no_wrap)                \
  X(oom_fallback_trusts_summary)     \
  X(forwarding_before_upper_half)    \
  X(copy_small_arrays_as_one_chunk)  \
  X(coalesce_lockstep_mask)          \
  X(parallel_do_reads_alloc_bitmap)  \
  X(enumerate_chunk_drops_last)      \
  X(rewrite_filter_off_by_one)       \
  X(full_target_stays_active)        \
  X(fused_forwarding_store)          \
  X(copy_widens_narrow_fields)       \
  X(rw_claim_without_atomic)         \
  X(rw_free_relaxed)                 \
  X(rw_bm_success_from_word)         \
  X(rw_steps_unbounded)              \
  X(rw_returns_page_beyond_pool)     \
  X(corw_keeps_lost_claim)           \
  X(corw_offer_not_marked)           \
  X(corw_offer_taken_off_by_one)     \
  X(corw_lock_not_released)          \
  X(rw_malloc_no_rollback)           \
  X(rw_malloc_partial_claim_wins)    \
  X(rw_malloc_rollback_all_bits)     \
  X(rw_preset_modulo)                \
  X(rw_queue_empty_keeps_decrement)  \
  X(rw_cpu_slice_drops_last)         \
  X(rw_size_class_floor_log2)        \
  X(rw_size_class_carve_past_pool)   \
  X(rw_queue_slot_relaxed)           \
  X(gen_ca_skip_dying)               \
  X(collision_merge_drops_mass)      \
  X(wa_tor_shark_eats_without_free)  \
  X(structure_keep_orphan_springs)   \
  X(gen_ca_wrap_assumes_pow2)        \
  X(wa_tor_north_wrap_uses_width)    \
  X(nbody_force_skips_tail_tile)

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

#else  // HEAPLAB_MUTANT_RUNTIME: the switches are set at run time (host-only test builds)

#if defined(__CUDACC__)
#error "HEAPLAB_MUTANT_RUNTIME is for host-only test translation units (a bool is not device code)"
#endif
#if defined(HEAPLAB_MUTANT_NAME)
#error "a build plants a bug at compile time (HEAPLAB_MUTANT_NAME) or at run time, not both"
#endif

#define HEAPLAB_MUTANT_CONSTEXPR

/// mutant::<name>: true while plant("<name>") holds. Set only between runs, from the test's
/// thread (plant() happens before the threads of the run it plants for are started).
#define HEAPLAB_PLANTED_BUG_SWITCH(name) inline bool name = false;
HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_SWITCH)
#undef HEAPLAB_PLANTED_BUG_SWITCH

/// The planted bug's name; "" while none is planted.
inline char const* kPlanted = "";

/// Plants the bug `name` and clears every other switch; "" plants nothing. Returns false (and
/// plants nothing) for a name that is not in HEAPLAB_PLANTED_BUGS.
inline bool plant(char const* name) {
  bool known = detail::same_name(name, "");
  kPlanted   = "";
#define HEAPLAB_PLANTED_BUG_SET(bug)   \
  bug = detail::same_name(name, #bug); \
  if (bug) {                           \
    known    = true;                   \
    kPlanted = #bug;                   \
  }
  HEAPLAB_PLANTED_BUGS(HEAPLAB_PLANTED_BUG_SET)
#undef HEAPLAB_PLANTED_BUG_SET
  return known;
}

#endif  // HEAPLAB_MUTANT_RUNTIME

}  // namespace heaplab::core::mutant
