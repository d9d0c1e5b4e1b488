// The random-walk page allocation algorithms of the ICS'22 paper (RW sec. 3-4): one vocabulary
// for the rw schedule files (schedule::RwAllocWave), the pools that run them (rw::GetPageWave)
// and the explorer's rw workload. Host code (names for files and the command line).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace heaplab::core {

enum class RwAlgorithm : std::uint8_t {
  rw,         // RW Alg. 1: random page, one bit
  rw_bm,      // RW sec. 4.1: random word of the used bitmap
  corw,       // RW Alg. 2: warp-collaborative walk with the LockMap
  rw_malloc,  // RW Alg. 3: runs of consecutive pages
};

inline constexpr RwAlgorithm kRwAlgorithms[] = {
    RwAlgorithm::rw, RwAlgorithm::rw_bm, RwAlgorithm::corw, RwAlgorithm::rw_malloc};

/// "rw", "rw-bm", "corw", "rw-malloc" (the names of the CLI and of schedule files).
inline char const* rw_algorithm_name(RwAlgorithm a) {
  switch (a) {
    case RwAlgorithm::rw:
      return "rw";
    case RwAlgorithm::rw_bm:
      return "rw-bm";
    case RwAlgorithm::corw:
      return "corw";
    case RwAlgorithm::rw_malloc:
      return "rw-malloc";
  }
  return "?";
}

/// The algorithm of a name of rw_algorithm_name, or nullopt.
inline std::optional<RwAlgorithm> parse_rw_algorithm(std::string_view name) {
  for (RwAlgorithm a : kRwAlgorithms)
    if (name == rw_algorithm_name(a)) return a;
  return std::nullopt;
}

}  // namespace heaplab::core
