// The deterministic "random" choices of a schedule (docs/schedules.md "Choices").
//
// Every decision a schedule leaves to chance (which objects a free wave selects, which lanes of a
// warp allocate, which existing object a new pointer refers to) is a pure function of a seed from
// the schedule file and object ids or thread indices. Any implementation that knows the id graph
// (the model, the host side of the GPU interpreter) therefore makes the same decisions, and a
// schedule file replays identically everywhere. No std:: distribution is used: their results
// differ between standard libraries.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heaplab/core/cookie.hpp"

namespace heaplab::schedule {

/// Salts that separate the decisions made from one seed about one object (docs/schedules.md).
inline constexpr std::uint64_t kSaltSelect       = 0;  // does this object act / get selected?
inline constexpr std::uint64_t kSaltRelinkNull   = 1;  // relink: leave the slot null?
inline constexpr std::uint64_t kSaltRelinkTarget = 2;  // relink: which target?
/// Link rules use 2 * slot (null?) and 2 * slot + 1 (which target?) as salts.
inline constexpr std::uint64_t link_null_salt(std::uint32_t slot) { return 2ull * slot; }
inline constexpr std::uint64_t link_target_salt(std::uint32_t slot) { return 2ull * slot + 1; }

/// mix(seed, a, b) = c(c(c(seed) ^ a) ^ b), with c the splitmix64 finalizer (core::cookie_of).
constexpr std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return core::cookie_of(core::cookie_of(core::cookie_of(seed) ^ a) ^ b);
}

/// The top 53 bits of h as a double in [0, 1), exactly (no rounding).
constexpr double unit_interval(std::uint64_t h) {
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

/// True with "probability" `fraction`: unit(mix(seed, id, salt)) < fraction. fraction 0 never
/// selects, fraction 1 always does.
constexpr bool selected(double fraction, std::uint64_t seed, std::uint64_t id, std::uint64_t salt) {
  return unit_interval(mix(seed, id, salt)) < fraction;
}

/// An index in [0, n) (n >= 1): mix(seed, id, salt) % n.
constexpr std::size_t pick(std::size_t n,
                           std::uint64_t seed,
                           std::uint64_t id,
                           std::uint64_t salt) {
  return static_cast<std::size_t>(mix(seed, id, salt) % n);
}

}  // namespace heaplab::schedule
