// Heap schedules built by hand for the heap family's tests and the generic runner tests that run
// on the heap family, and the files and properties helpers they share (namespace heaplab::test).
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <optional>
#include <string>
#include <utility>

#include "heaplab/schedule/schedule.hpp"
#include "property.hpp"
#include "test_files.hpp"

namespace heaplab::test {

using testing::data_file;
using testing::TempDir;

/// One concrete type Node (8 B, capacity 64) with one pointer `next` to Node; M blocks, n = 1.
inline schedule::Schedule tiny_schedule(std::uint32_t num_blocks = 4) {
  schedule::Schedule s;
  s.config.types.push_back({"Node", 8, std::nullopt, false, {{"next", 0, 1}}});
  s.config.num_blocks    = num_blocks;
  s.config.defrag_factor = 1;
  s.config.k1            = 0;
  return s;
}

/// Types A (8 B) and B (16 B, capacity 32), no pointers; 8 blocks.
inline schedule::Schedule two_type_schedule() {
  schedule::Schedule s;
  s.config.types.push_back({"A", 8, std::nullopt, false, {}});
  s.config.types.push_back({"B", 16, std::nullopt, false, {}});
  s.config.num_blocks    = 8;
  s.config.defrag_factor = 1;
  return s;
}

/// An alloc wave of `threads` threads, one object each, of `type`; with a link seed, slot 0 of
/// each new object refers to a live object (never null).
inline schedule::Step alloc(std::uint32_t threads,
                            std::optional<std::uint64_t> link_seed = std::nullopt,
                            std::uint32_t type                     = 0) {
  schedule::AllocWave a;
  a.type    = type;
  a.threads = threads;
  a.count   = 1;
  if (link_seed) a.links.push_back({type, 0, *link_seed, 0.0});
  return a;
}

inline schedule::Step free_fraction(double fraction, std::uint64_t seed, std::uint32_t type = 0) {
  schedule::FreeWave f;
  f.select.type     = type;
  f.select.pattern  = schedule::SelectPattern::fraction;
  f.select.fraction = fraction;
  f.select.seed     = seed;
  return f;
}

inline schedule::Step defrag(std::uint32_t type) {
  schedule::Defrag d;
  d.type = type;
  return d;
}

/// check_property (property.hpp) without the success line.
template <class Testable>
void check_property(int min_cases, Testable&& testable) {
  heaplab::testing::check_property(min_cases, std::forward<Testable>(testable), {true, false});
}

}  // namespace heaplab::test
