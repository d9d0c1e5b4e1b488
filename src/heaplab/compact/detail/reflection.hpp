// Type reflection for the pointer scan (CompactGpu sec. 3.4 "Limiting Heap Scans"): which blocks
// and which SOA arrays may hold a pointer to an object of the defragmented type T. Read from the
// layout table (soa/heap_types.hpp), whose incoming list already holds, for each T, every SOA
// array of every concrete type whose declared pointee is T or a supertype of T: fields a type
// declares and fields it inherits, each element of a pointer array separately. Plain C++17.
#pragma once

#include <cstdint>
#include <vector>

namespace heaplab::compact::detail {

/// The SOA arrays of one holder type U to scan when T is defragmented:
/// table.incoming[first .. first + count), all of holder type U.
struct HolderArrays {
  std::uint32_t holder   = 0;  // U: blocks in allocated[U] are scanned
  std::uint32_t capacity = 0;  // N_U
  std::uint32_t first    = 0;  // index into table.incoming
  std::uint32_t count    = 0;  // number of SOA arrays of U that may point to T
};

/// One entry per holder type, ascending type id (the table lists incoming arrays by holder type
/// id, so each holder's arrays are contiguous). Empty when nothing may point to T.
template <class Table>
std::vector<HolderArrays> holder_arrays(Table const& table, std::uint32_t target) {
  std::vector<HolderArrays> out;
  for (std::uint32_t i = table.incoming_begin[target]; i < table.incoming_begin[target + 1]; ++i) {
    std::uint32_t const u = table.incoming[i].type;
    if (out.empty() || out.back().holder != u)
      out.push_back(HolderArrays{u, table.types[u].capacity, i, 0});
    ++out.back().count;
  }
  return out;
}

}  // namespace heaplab::compact::detail
