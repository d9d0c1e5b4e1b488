// Schedules of the test-only bump family (proofs_tests/families/bump/README.md): an arena of
// `arena` bytes and a list of steps, each an alloc wave (T threads, each asking for a size
// aligned to the wave's power-of-two alignment) or a free_all. Its JSON form:
//
//   {"format": "heaplab-bump-schedule", "version": 1, "description": "...", "arena": 4096,
//    "steps": [{"op": "alloc", "threads": 8, "size": 24, "align": 8, "seed": 3},
//              {"op": "alloc", "threads": 5, "sizes": [8, 100], "align": 16, "seed": 4},
//              {"op": "free_all"}]}
//
// Thread t of a wave asks for sizes[t % sizes.size()] bytes ("size": S is the one-element list).
// The seed fixes an order of the wave's threads (wave_order): the order in which the sequential
// model runs them, and how the CPU runner deals them to its OS threads. It decides nothing a
// correct allocator's answers depend on beyond that order.
//
// Reading is strict (heaplab/schedule/strict_json.hpp): unknown or duplicate keys refused (with
// the closest known one), wrong types, values out of range and missing fields are schedule_errors
// naming the field path ("steps[3].align"). "align" and "seed" may be left out (1 and 0);
// to_json writes every field, with "size" for a one-element list, so it is canonical.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace heaplab::bump_family {

inline constexpr char const* kBumpFormatName      = "heaplab-bump-schedule";
inline constexpr std::uint32_t kBumpFormatVersion = 1;

/// Limits of the format: a hostile file can neither exhaust memory nor run for long.
inline constexpr std::uint64_t kMaxArena   = 1ull << 30;  // bytes (1 GiB)
inline constexpr std::uint32_t kMaxThreads = 4096;        // threads of one wave
inline constexpr std::size_t kMaxSteps     = 4096;        // steps of a schedule
inline constexpr std::size_t kMaxSizes     = 16;          // entries of a wave's size list
inline constexpr std::uint64_t kMaxAlign   = 4096;        // a power of two, 1..4096

/// An alloc wave: `threads` threads ask at once; thread t for size_of(t) bytes aligned to
/// `align`.
struct BumpAlloc {
  std::uint32_t threads            = 1;    // 1..kMaxThreads
  std::vector<std::uint64_t> sizes = {8};  // 1..kMaxSizes entries, each 1..kMaxArena
  std::uint64_t align              = 1;    // a power of two, 1..kMaxAlign
  std::uint64_t seed               = 0;    // the threads' order (wave_order)

  [[nodiscard]] std::uint64_t size_of(std::uint32_t thread) const {
    return sizes[thread % sizes.size()];
  }
  friend bool operator==(BumpAlloc const& a, BumpAlloc const& b) {
    return a.threads == b.threads && a.sizes == b.sizes && a.align == b.align && a.seed == b.seed;
  }
};

/// Everything allocated so far is released at once; the bump pointer goes back to 0.
struct BumpFreeAll {
  friend bool operator==(BumpFreeAll const&, BumpFreeAll const&) { return true; }
};

using BumpStep = std::variant<BumpAlloc, BumpFreeAll>;

struct BumpSchedule {
  std::string description;
  std::uint64_t arena = 4096;  // bytes, 1..kMaxArena
  std::vector<BumpStep> steps;
  friend bool operator==(BumpSchedule const& a, BumpSchedule const& b) {
    return a.description == b.description && a.arena == b.arena && a.steps == b.steps;
  }
};

/// Throws schedule::schedule_error naming the field ("steps[2].align") when a value is outside
/// the format's limits. The JSON reader checks the same; so must code that builds schedules.
void validate(BumpSchedule const& schedule);

/// "alloc" or "free_all".
std::string step_name(BumpStep const& step);
/// "alloc threads=8 size=24 align=8 seed=3", "alloc threads=5 sizes=[8,100] align=16 seed=4",
/// "free_all".
std::string describe(BumpStep const& step);

/// The order of a wave's threads fixed by its seed: a permutation of 0..threads-1 (Fisher-Yates
/// with schedule::pick, the same on every platform).
std::vector<std::uint32_t> wave_order(BumpAlloc const& wave);

/// The canonical document.
nlohmann::ordered_json to_json(BumpSchedule const& schedule);
/// Strict reader of a parsed document (errors name the field path).
BumpSchedule bump_from_json(nlohmann::json const& document);
/// The canonical text: to_json(schedule).dump(2) plus a final newline.
std::string dump(BumpSchedule const& schedule);

}  // namespace heaplab::bump_family
