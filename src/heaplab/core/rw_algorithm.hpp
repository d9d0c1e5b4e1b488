// The random-walk page allocation algorithms of the ICS'22 paper (RW sec. 3-4): one vocabulary
// for the rw schedule files (schedule::RwAllocWave), the pools that run them (rw::GetPageWave)
// and the explorer's rw workload. Host code (names for files and the command line).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "heaplab/core/enum_names.hpp"

namespace heaplab::core {

enum class RwAlgorithm : std::uint8_t {
  rw,         // RW Alg. 1: random page, one bit
  rw_bm,      // RW sec. 4.1: random word of the used bitmap
  corw,       // RW Alg. 2: warp-collaborative walk with the LockMap
  rw_malloc,  // RW Alg. 3: runs of consecutive pages
};

/// "rw", "rw-bm", "corw", "rw-malloc" (the names of the CLI and of schedule files).
inline constexpr EnumName<RwAlgorithm> kRwAlgorithmNames[] = {
    {RwAlgorithm::rw, "rw"},
    {RwAlgorithm::rw_bm, "rw-bm"},
    {RwAlgorithm::corw, "corw"},
    {RwAlgorithm::rw_malloc, "rw-malloc"}};

inline char const* rw_algorithm_name(RwAlgorithm a) { return name_of(kRwAlgorithmNames, a); }

/// The algorithm of a name of rw_algorithm_name, or nullopt.
inline std::optional<RwAlgorithm> parse_rw_algorithm(std::string_view name) {
  return value_of(kRwAlgorithmNames, name);
}

}  // namespace heaplab::core
