// The random-walk page pool at quiescence (docs/rw.md "What is checked"): a snapshot of its
// words, the owners' view (which logical owner holds which pages) and the invariant catalog
// over both. Host code; includes only core. The snapshot is built from raw words, so the GPU
// pool (later) and the CPU pool (rw::HostPool) produce the same thing.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "heaplab/check/invariants.hpp"

namespace heaplab::check {

/// The pool's shared words at quiescence. Words of 32-bit pools are stored widened to 64 bits;
/// word_bits says how many of each word's bits are real.
struct RwPoolSnapshot {
  std::uint32_t num_pages = 0;  // T
  std::uint32_t word_bits = 32;
  std::vector<std::uint64_t> used_words;  // ceil(T / word_bits) words
  std::vector<std::uint64_t> lock_words;  // ceil(used words / word_bits) words
};

/// owners[i]: the pages logical owner i holds (a thread, the hand-over mailbox, ...).
using RwOwners = std::vector<std::vector<std::uint32_t>>;

/// A run of consecutive pages handed out as one allocation by RW_malloc (RW Alg. 3): pages
/// first .. first + count - 1, held by `owner` (an index into RwOwners, whose list also names
/// each of its pages).
struct RwHeldRun {
  std::uint32_t owner = 0;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
};
using RwHeldRuns = std::vector<RwHeldRun>;

/// A snapshot from the pool's word arrays (W: uint32_t or uint64_t).
template <class W>
RwPoolSnapshot rw_snapshot(std::uint32_t num_pages,
                           W const* used,
                           std::size_t num_used,
                           W const* locks,
                           std::size_t num_locks) {
  RwPoolSnapshot s;
  s.num_pages = num_pages;
  s.word_bits = sizeof(W) * 8;
  s.used_words.assign(used, used + num_used);
  s.lock_words.assign(locks, locks + num_locks);
  return s;
}

struct RwInvariant {
  std::string_view name;
  std::string_view citation;
  std::string_view statement;
  void (*check)(RwPoolSnapshot const&, RwOwners const&, RwHeldRuns const&, std::vector<Violation>&);
};

/// rw-pool-shape, rw-no-page-beyond-pool, rw-page-owned-once, rw-owned-page-used,
/// rw-freed-page-free, rw-used-count-matches-owned, rw-lock-map-clear-at-quiescence,
/// rw-run-inside-pool, rw-run-pages-owned-by-run.
std::vector<RwInvariant> const& rw_catalog();

/// Runs the whole catalog. A snapshot of the wrong shape reports rw-pool-shape only.
std::vector<Violation> rw_check_all(RwPoolSnapshot const& snapshot, RwOwners const& owners);
/// The same with the runs handed out by RW_malloc (their pages are in `owners` too).
std::vector<Violation> rw_check_all(RwPoolSnapshot const& snapshot,
                                    RwOwners const& owners,
                                    RwHeldRuns const& runs);

/// Runs one named invariant; throws core::precondition_error for an unknown name.
std::vector<Violation> rw_check_one(std::string_view name,
                                    RwPoolSnapshot const& snapshot,
                                    RwOwners const& owners,
                                    RwHeldRuns const& runs = {});

}  // namespace heaplab::check
