// Helpers shared by the model tests: small configs, explicit placements, and a RapidCheck runner
// that guarantees a minimum number of cases.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/model/heap_model.hpp"
#include "property.hpp"

namespace heaplab::model::testing {

/// One concrete type "T" of `size` bytes plus, if size > 8, a concrete "Small" type of 8 bytes
/// declared first, so that T's capacity is floor(64 * 8 / size) (DynaSOAr sec. 3.2).
inline core::HeapConfig single_type_config(std::uint32_t size,
                                           std::uint32_t num_blocks,
                                           std::uint32_t n,
                                           std::uint32_t k1) {
  core::HeapConfig c;
  if (size > 8) c.types.push_back({"Small", 8, std::nullopt, false, {}});
  c.types.push_back({"T", size, std::nullopt, false, {}});
  c.num_blocks    = num_blocks;
  c.defrag_factor = n;
  c.k1            = k1;
  c.validate();
  return c;
}

/// Places objects of `type` at exactly `slots` of `block` through accept_allocations, with ids
/// first_id, first_id + 1, ... in the order given; returns the ids.
inline std::vector<ObjectId> place_at(HeapModel& model,
                                      TypeId type,
                                      std::uint32_t block,
                                      std::vector<std::uint32_t> const& slots,
                                      ObjectId first_id) {
  std::vector<ObservedAllocation> batch;
  std::vector<ObjectId> ids;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    ObservedAllocation a;
    a.id    = first_id + i;
    a.type  = type;
    a.block = block;
    a.slot  = slots[i];
    batch.push_back(a);
    ids.push_back(a.id);
  }
  auto const error = model.accept_allocations(batch);
  EXPECT_FALSE(error.has_value()) << (error ? error->to_string() : "");
  return ids;
}

/// [lo, hi) as a list.
inline std::vector<std::uint32_t> range(std::uint32_t lo, std::uint32_t hi) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = lo; i < hi; ++i) out.push_back(i);
  return out;
}

inline std::vector<std::uint32_t> concat(std::initializer_list<std::vector<std::uint32_t>> parts) {
  std::vector<std::uint32_t> out;
  for (auto const& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

using heaplab::testing::check_property;  // property.hpp

}  // namespace heaplab::model::testing
