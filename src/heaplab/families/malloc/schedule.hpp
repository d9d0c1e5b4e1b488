// Schedules of the malloc family (docs/malloc.md): any device allocator with
// `void* malloc(size_t)` and `free(void*)`, given a pool of `pool` bytes, driven by waves of
// threads. Its JSON form (format "heaplab-malloc-schedule"):
//
//   {"format": "heaplab-malloc-schedule", "version": 1, "description": "...", "pool": 1048576,
//    "steps": [
//      {"op": "alloc", "threads": 256, "per_thread": 4, "sizes": "mixed", "min": 4, "max": 8192,
//       "lanes": "per_lane", "divergence": "alternate", "seed": 7},
//      {"op": "fill", "threads": 64, "size": 256, "max_per_thread": 64},
//      {"op": "free", "select": "random", "fraction": 0.5, "seed": 3},
//      {"op": "touch"}]}
//
//   alloc  threads x per_thread requests. Request k of thread t asks for size_of(t, k) bytes
//          drawn from `sizes` ("fixed": min; "mixed": uniform in [min, max]; "heavy": log-uniform
//          in [min, max], most requests small, a few large), per lane or one size per warp and
//          round ("lanes": "per_lane" | "warp_uniform"); `divergence` says which threads ask at
//          all ("all", "alternate": even lanes only, "random_mask": a seeded lane mask per warp).
//   fill   every thread asks for `size` bytes again and again until its first null (at most
//          max_per_thread grants), then asks once more: what the pool holds at its first null
//          (the survey's out-of-memory test) and whether a null was final.
//   free   frees the live allocations a selector picks: "all"; "random" (each with probability
//          `fraction`); "size" (those of min..max bytes); "oldest" (the oldest `fraction` of them,
//          by allocation id); "warp" (every live allocation of the warp of a seeded live one).
//          Thread i of the free wave frees the i-th selected allocation.
//   touch  every live allocation is written again with a new cookie and read back.
//
// Every decision is a pure function of the step's seed and allocation ids (schedule/choice.hpp),
// so a schedule replays identically on every runner; steps never refer to each other, so any
// subset of them is a schedule (ddmin). Reading is strict (schedule/strict_json.hpp); to_json is
// canonical (every field written, only the fields of the step's kind).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace heaplab::malloc_family {

inline constexpr char const* kMallocFormatName      = "heaplab-malloc-schedule";
inline constexpr std::uint32_t kMallocFormatVersion = 1;

/// Limits of the format, so that a hostile file can exhaust neither memory nor time: a work budget
/// checked at load (validate()).
inline constexpr std::uint64_t kMinPool          = 4096;        // bytes
inline constexpr std::uint64_t kMaxPool          = 1ull << 30;  // bytes (1 GiB)
inline constexpr std::uint64_t kMaxRequest       = 1ull << 20;  // bytes of one request (1 MiB)
inline constexpr std::uint32_t kMaxThreads       = 1u << 16;    // threads of one wave
inline constexpr std::uint32_t kMaxPerThread     = 64;          // requests of one thread (alloc)
inline constexpr std::uint32_t kMaxFillPerThread = 4096;        // grants of one thread (fill)
inline constexpr std::size_t kMaxSteps           = 256;         // steps of a schedule
/// Requests of one wave at most (threads x per_thread, threads x (max_per_thread + 1)).
inline constexpr std::uint64_t kMaxWaveRequests = 1ull << 20;
/// Requests of the whole schedule at most.
inline constexpr std::uint64_t kMaxScheduleRequests = 1ull << 22;

enum class SizeDist { fixed, mixed, heavy };
enum class Lanes { per_lane, warp_uniform };
enum class Divergence { all, alternate, random_mask };
enum class Select { all, random, size, oldest, warp };

char const* to_string(SizeDist d);
char const* to_string(Lanes l);
char const* to_string(Divergence d);
char const* to_string(Select s);
std::optional<SizeDist> size_dist_from_string(std::string const& s);
std::optional<Lanes> lanes_from_string(std::string const& s);
std::optional<Divergence> divergence_from_string(std::string const& s);
std::optional<Select> select_from_string(std::string const& s);

struct AllocWave {
  std::uint32_t threads    = 32;  // 1..kMaxThreads
  std::uint32_t per_thread = 1;   // 1..kMaxPerThread
  SizeDist sizes           = SizeDist::fixed;
  std::uint64_t min        = 64;  // bytes, 1..kMaxRequest ("fixed": the size)
  std::uint64_t max        = 64;  // bytes, min..kMaxRequest (equal to min for "fixed")
  Lanes lanes              = Lanes::per_lane;
  Divergence divergence    = Divergence::all;
  std::uint64_t seed       = 0;
  friend bool operator==(AllocWave const& a, AllocWave const& b) {
    return a.threads == b.threads && a.per_thread == b.per_thread && a.sizes == b.sizes &&
           a.min == b.min && a.max == b.max && a.lanes == b.lanes && a.divergence == b.divergence &&
           a.seed == b.seed;
  }
};

struct FillWave {
  std::uint32_t threads        = 32;  // 1..kMaxThreads
  std::uint64_t size           = 64;  // bytes, 1..kMaxRequest
  std::uint32_t max_per_thread = 64;  // 1..kMaxFillPerThread
  friend bool operator==(FillWave const& a, FillWave const& b) {
    return a.threads == b.threads && a.size == b.size && a.max_per_thread == b.max_per_thread;
  }
};

struct FreeWave {
  Select select      = Select::all;
  double fraction    = 0.5;  // random, oldest: in [0, 1]
  std::uint64_t min  = 1;    // size: bytes
  std::uint64_t max  = kMaxRequest;
  std::uint64_t seed = 0;  // random, warp
  friend bool operator==(FreeWave const& a, FreeWave const& b) {
    return a.select == b.select && a.fraction == b.fraction && a.min == b.min && a.max == b.max &&
           a.seed == b.seed;
  }
};

struct Touch {
  friend bool operator==(Touch const&, Touch const&) { return true; }
};

using MallocStep = std::variant<AllocWave, FillWave, FreeWave, Touch>;

struct MallocSchedule {
  std::string description;
  std::uint64_t pool = 1ull << 20;  // bytes, kMinPool..kMaxPool
  std::vector<MallocStep> steps;
  friend bool operator==(MallocSchedule const& a, MallocSchedule const& b) {
    return a.description == b.description && a.pool == b.pool && a.steps == b.steps;
  }
};

/// Throws schedule::schedule_error naming the field ("steps[2].max") when a value is outside the
/// format's limits or the schedule exceeds the work budget. The reader checks the same.
void validate(MallocSchedule const& schedule);

/// "alloc", "fill", "free" or "touch".
std::string step_name(MallocStep const& step);
/// One line: "alloc threads=256 per_thread=4 sizes=mixed[4,8192] lanes=per_lane
/// divergence=alternate seed=7".
std::string describe(MallocStep const& step);
/// Requests a step makes at most (alloc: threads x per_thread; fill: threads x (max + 1)).
std::uint64_t step_requests(MallocStep const& step);

/// Bytes that request k of thread t of wave `w` asks for; 0 when the thread does not ask
/// (divergence). A pure function of the wave and (t, k).
std::uint64_t request_size(AllocWave const& w, std::uint32_t t, std::uint32_t k);
/// Bytes the wave's requests ask for together (the sum of request_size over its threads and
/// requests).
std::uint64_t wave_bytes(AllocWave const& w);
/// Bytes the schedule's alloc waves ask for together, frees not subtracted: an upper bound of its
/// bytes live at any time. Empty when the schedule has a fill (which asks until the first null).
std::optional<std::uint64_t> demand_bytes(MallocSchedule const& schedule);

nlohmann::ordered_json to_json(MallocSchedule const& schedule);
/// Strict reader of a parsed document (errors name the field path).
MallocSchedule malloc_from_json(nlohmann::json const& document);

}  // namespace heaplab::malloc_family
