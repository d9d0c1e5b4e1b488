// Schedules of the random-walk page pool (docs/rw.md "Schedules and runners"): a pool and a list
// of allocation and free waves that every pool step executor (the CPU threads pool, the GPU
// pool, the model-only pool) runs, and the model checks.
//
// The algorithm of a wave is core::RwAlgorithm ("rw", "rw-bm", "corw", "rw-malloc"), the type the
// pools take too. Like the heap schedules (schedule.hpp), a schedule leaves nothing to chance that
// an implementation could decide differently: which threads of a wave ask, for how many pages, and
// which held allocations a free wave frees are pure functions of the schedule's seeds and of
// indices (choice.hpp). Only which pages a walk finds is the implementation's freedom (checked by
// refinement, models/heaplab/model/rw_interpreter.hpp).
//
// Handles. Every successful allocation (a page, or an RW_malloc run) is a handle; handles are
// numbered 0, 1, 2, ... in the order (wave, thread) of the schedule, so model and implementation
// number them alike. A free wave selects among the handles still held, in id order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "heaplab/core/rw_algorithm.hpp"

namespace heaplab::schedule {

inline constexpr char const* kRwFormatName      = "heaplab-rw-schedule";
inline constexpr std::uint32_t kRwFormatVersion = 1;

/// Limits of the file format (a hostile file cannot exhaust memory or run forever).
inline constexpr std::uint32_t kRwMaxPages        = 1u << 24;    // T (the model keeps a set of T)
inline constexpr std::uint32_t kRwMaxThreads      = 1u << 20;    // threads of one wave
inline constexpr std::uint32_t kRwMaxWalkSteps    = 1u << 20;    // a pool's max_steps
inline constexpr std::uint32_t kRwMaxWaves        = 1u << 16;    // steps of a schedule
inline constexpr std::uint32_t kRwMaxRunPages     = 1024;        // RW_malloc pages per request
inline constexpr std::uint64_t kRwMaxTotalThreads = 1ull << 31;  // over all alloc waves (handles)

/// Which threads of an alloc wave ask (the others are inactive: divergence).
enum class RwLanes : std::uint8_t {
  all,            // every thread
  every_kth,      // lane l (= thread % 32) asks iff l % k == offset
  random_subset,  // lane l of warp w asks iff bit l of mix(seed, w, 0) is set
};

/// How many pages an active thread asks for (one, except for rw-malloc).
enum class RwSizes : std::uint8_t {
  fixed,    // n
  cycle,    // list[thread % list.size()]
  uniform,  // 1 + mix(seed, thread, 0) % nmax
};

/// Which held handles a free wave frees (in ascending handle id).
enum class RwFreeSelect : std::uint8_t {
  all,       // every held handle
  fraction,  // handle id iff unit(mix(seed, id, 0)) < fraction
  oldest,    // the first `count` held handles
};

/// Pages in use before the first wave (held by "the pool", owner 0 of the catalog): either
/// `count` pages placed by `seed`, or exactly `pages`.
struct RwPretaken {
  std::uint32_t count = 0;
  std::uint64_t seed  = 0;
  std::optional<std::vector<std::uint32_t>> pages;  // set: the list (count and seed unused)
  friend bool operator==(RwPretaken const& a, RwPretaken const& b) {
    return a.count == b.count && a.seed == b.seed && a.pages == b.pages;
  }
};

struct RwPool {
  std::uint32_t num_pages  = 64;    // T
  std::uint64_t page_bytes = 4096;  // a power of two
  std::uint32_t word_bits  = 32;    // 32 or 64 (RW sec. 4.1)
  std::uint32_t max_steps  = 1000;  // steps of one request before it returns null
  RwPretaken pretaken;
  friend bool operator==(RwPool const& a, RwPool const& b) {
    return a.num_pages == b.num_pages && a.page_bytes == b.page_bytes &&
           a.word_bits == b.word_bits && a.max_steps == b.max_steps && a.pretaken == b.pretaken;
  }
};

struct RwAllocWave {
  core::RwAlgorithm algorithm = core::RwAlgorithm::rw;
  std::uint32_t threads       = 32;
  std::uint32_t block_threads = 256;  // a multiple of 32 in [32, 1024]
  std::uint64_t seed          = 0;    // thread i walks with rw::thread_rng(seed, i)
  RwLanes lanes               = RwLanes::all;
  std::uint32_t k             = 1;  // every_kth: 1..32
  std::uint32_t offset        = 0;  // every_kth: < k
  std::uint64_t lane_seed     = 0;  // random_subset
  RwSizes sizes               = RwSizes::fixed;
  std::uint32_t n             = 1;       // fixed
  std::vector<std::uint32_t> size_list;  // cycle: 1..kRwMaxRunPages each
  std::uint32_t nmax      = 1;           // uniform
  std::uint64_t size_seed = 0;           // uniform
  friend bool operator==(RwAllocWave const& a, RwAllocWave const& b) {
    return a.algorithm == b.algorithm && a.threads == b.threads &&
           a.block_threads == b.block_threads && a.seed == b.seed && a.lanes == b.lanes &&
           a.k == b.k && a.offset == b.offset && a.lane_seed == b.lane_seed && a.sizes == b.sizes &&
           a.n == b.n && a.size_list == b.size_list && a.nmax == b.nmax &&
           a.size_seed == b.size_seed;
  }
};

struct RwFreeWave {
  RwFreeSelect select = RwFreeSelect::all;
  double fraction     = 0;  // fraction: in [0, 1]
  std::uint64_t seed  = 0;  // fraction
  std::uint32_t count = 0;  // oldest
  friend bool operator==(RwFreeWave const& a, RwFreeWave const& b) {
    return a.select == b.select && a.fraction == b.fraction && a.seed == b.seed &&
           a.count == b.count;
  }
};

using RwStep = std::variant<RwAllocWave, RwFreeWave>;

struct RwSchedule {
  RwPool pool;
  std::vector<RwStep> steps;
  std::string description;
  friend bool operator==(RwSchedule const& a, RwSchedule const& b) {
    return a.pool == b.pool && a.steps == b.steps && a.description == b.description;
  }
  friend bool operator!=(RwSchedule const& a, RwSchedule const& b) { return !(a == b); }
};

// ------------------------------------------------------------------------------------- names

char const* to_string(core::RwAlgorithm a);
char const* to_string(RwLanes l);
char const* to_string(RwSizes s);
char const* to_string(RwFreeSelect s);
std::optional<core::RwAlgorithm> rw_algorithm_from_string(std::string const& s);
std::optional<RwLanes> rw_lanes_from_string(std::string const& s);
std::optional<RwSizes> rw_sizes_from_string(std::string const& s);
std::optional<RwFreeSelect> rw_free_select_from_string(std::string const& s);

/// "alloc" or "free".
char const* step_name(RwStep const& step);
/// One line: "alloc rw-bm threads=1000 lanes=every_kth(k=2,offset=0) seed=5".
std::string describe(RwStep const& step);

// -------------------------------------------------------------------------------- validation

/// Checks ranges and pattern fields; throws schedule_error naming the field ("pool.max_steps",
/// "steps[3].size_list[2]"). The JSON reader calls it.
void validate(RwSchedule const& schedule);

// --------------------------------------------------------------- the schedule's deterministic
// choices

/// Pages per thread of an alloc wave: 0 for an inactive thread (lanes), else its size.
std::vector<std::uint32_t> rw_requests(RwAllocWave const& wave);

/// The pre-taken pages, ascending (count placed by seed: a partial Fisher-Yates shuffle of
/// 0..T-1 driven by mix(seed, i, 0)).
std::vector<std::uint32_t> rw_pretaken_pages(RwPool const& pool);

/// Which of the held handles (ids ascending) a free wave frees: indices into `held_ids`.
std::vector<std::size_t> rw_free_selection(RwFreeWave const& wave,
                                           std::vector<std::uint64_t> const& held_ids);

}  // namespace heaplab::schedule
