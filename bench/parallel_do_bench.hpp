// `heaplab_bench parallel-do` (issue 13; docs/allocator.md "Benchmark"): the cost of DynaSOAr's
// do-all (parallel_do, DynaSOAr sec. 2.1, 3.7) against a plain structure-of-arrays loop doing the
// same arithmetic on the same number of live objects, measured in the same run, on a full heap
// and on the same heap after a random half of its objects was deleted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heaplab/core/host_device.hpp"
#include "heaplab/core/mix.hpp"

namespace heaplab::bench {

struct ParallelDoBenchOptions {
  /// Objects before deletion, one heap per entry; multiples of 64 (the objects per block), so
  /// that the full heap has every block full. Default 2^20, 2^22, 2^24, 2^26.
  std::vector<std::uint64_t> objects{std::uint64_t{1} << 20,
                                     std::uint64_t{1} << 22,
                                     std::uint64_t{1} << 24,
                                     std::uint64_t{1} << 26};
  /// k: the method reads fields 0..k-1 (k = 1: field 0 only) and writes field 0.
  std::vector<int> fields{1, 2, 3, 4};
  /// "full" (every block full) and/or "fragmented" (a random half of the objects deleted).
  std::vector<std::string> cases{"full", "fragmented"};
  int warmup         = 1;
  int repeats        = 5;
  std::uint64_t seed = 1;  // which half is deleted
  std::string csv;
};

/// Throws std::invalid_argument naming the option for settings the benchmark cannot run (objects
/// not a positive multiple of 64 or above 2^30, k outside 1..4, an unknown case, empty lists).
/// Needs no GPU.
void validate_parallel_do_bench(ParallelDoBenchOptions const& options);

/// Prints the table (and the CSV); returns the process exit status: 1 if a result check failed.
int run_parallel_do_bench(ParallelDoBenchOptions const& options);

/// The objects deleted in the fragmented case: object i (the i-th slot of the full heap in block
/// order, i = block * 64 + slot) is deleted iff permutation(i) < n / 2, where the permutation of
/// [0, n) is a 4-round Feistel network over the smallest even number of bits whose range covers n,
/// walked until it lands below n (cycle walking keeps it a bijection). Exactly floor(n / 2)
/// objects are deleted, scattered over all blocks (per block: hypergeometric around 32 of 64),
/// the same objects for the same seed.
class RandomHalf {
 public:
  RandomHalf(std::uint64_t n, std::uint64_t seed) : n_(n), seed_(seed) {
    unsigned bits = 2;
    while (bits < 64 && (std::uint64_t{1} << bits) < n) bits += 2;
    half_bits_ = bits / 2;
  }

  HEAPLAB_HD std::uint64_t permutation(std::uint64_t i) const {
    std::uint64_t x = feistel(i);
    while (x >= n_) x = feistel(x);
    return x;
  }
  HEAPLAB_HD bool deleted(std::uint64_t i) const { return permutation(i) < n_ / 2; }

 private:
  HEAPLAB_HD std::uint64_t feistel(std::uint64_t x) const {
    std::uint64_t const mask = (std::uint64_t{1} << half_bits_) - 1;
    std::uint64_t left       = (x >> half_bits_) & mask;
    std::uint64_t right      = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      std::uint64_t const f = core::splitmix64(right ^ (seed_ + round * core::kGoldenGamma)) & mask;
      std::uint64_t const next = left ^ f;
      left                     = right;
      right                    = next;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t n_    = 0;
  std::uint64_t seed_ = 0;
  unsigned half_bits_ = 1;
};

}  // namespace heaplab::bench
