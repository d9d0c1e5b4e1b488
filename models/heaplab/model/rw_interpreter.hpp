// The random-walk schedule interpreter of the model (docs/rw.md "Schedules and runners"): runs
// an RwSchedule on model::PageModel with the implementation's answers.
//
// Allocation is checked by refinement (RW Alg. 1 and sec. 4.1 choose pages at random): every
// answer the implementation gives is accepted if it is legal (each page of it < T and free at
// that point), and then held by a new handle; a null is always legal (the walk is bounded) and
// counted as out of pages (no free page, or no free run of the size asked for, was left at the
// end of the wave) or as a bounded-walk exhaustion. Free waves are exact: the schedule selects
// the handles (rw_free_selection over the held handles in id order), the model frees them and
// hands the list to the implementation, which must free the same pages.
//
// Handles are numbered in the order (wave, thread) of successful allocations (rw_schedule.hpp).
// Owners in the catalog's terms (check::RwOwners): owner 0 holds the pre-taken pages, owner
// 1 + i the pages of held()[i].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heaplab/check/rw_invariants.hpp"
#include "heaplab/model/page_model.hpp"
#include "heaplab/schedule/rw_schedule.hpp"

namespace heaplab::model {

/// One successful allocation: a page (count 1) or an RW_malloc run of `count` pages.
struct RwHandle {
  std::uint64_t id     = 0;
  std::uint32_t first  = 0;
  std::uint32_t count  = 1;
  std::uint32_t wave   = 0;
  std::uint32_t thread = 0;
  friend bool operator==(RwHandle const& a, RwHandle const& b) {
    return a.id == b.id && a.first == b.first && a.count == b.count && a.wave == b.wave &&
           a.thread == b.thread;
  }
};

/// An answer the model refused: the thread and why.
struct RwRejection {
  std::uint32_t thread = 0;
  std::string message;
};

class RwModelInterpreter {
 public:
  /// An empty pool of pool.num_pages pages with the pre-taken pages held by owner 0.
  explicit RwModelInterpreter(schedule::RwPool const& pool);

  /// The implementation's answers to alloc wave `wave`: thread i asked for requests[i] pages
  /// (0: inactive) and got the run starting at first[i] (kNoPage: nothing). Accepts them in
  /// thread order; the first illegal one is returned (and nothing after it is applied).
  std::optional<RwRejection> alloc(std::uint32_t wave,
                                   std::vector<std::uint32_t> const& requests,
                                   std::vector<std::uint32_t> const& first);

  /// Frees the handles free wave `wave` selects and returns them (in id order): what the
  /// implementation must free.
  std::vector<RwHandle> free(schedule::RwFreeWave const& wave);

  [[nodiscard]] std::vector<RwHandle> const& held() const { return held_; }
  [[nodiscard]] std::vector<std::uint32_t> const& pretaken() const { return pretaken_; }
  /// Owner 0: the pre-taken pages; owner 1 + i: the pages of held()[i].
  [[nodiscard]] check::RwOwners owners() const;
  [[nodiscard]] PageModel const& pages() const { return pages_; }

  [[nodiscard]] std::uint64_t out_of_pages() const { return out_of_pages_; }
  [[nodiscard]] std::uint64_t bounded_walk_exhaustions() const { return exhaustions_; }
  [[nodiscard]] std::uint64_t handles_made() const { return next_id_; }

 private:
  std::optional<RwRejection> take(std::uint32_t wave,
                                  std::uint32_t thread,
                                  std::uint32_t first,
                                  std::uint32_t count);
  /// The longest run of free pages now.
  [[nodiscard]] std::uint32_t longest_free_run() const;

  PageModel pages_;
  std::vector<std::uint32_t> pretaken_;
  std::vector<RwHandle> held_;  // ascending id
  std::uint64_t next_id_      = 0;
  std::uint64_t out_of_pages_ = 0;
  std::uint64_t exhaustions_  = 0;
};

}  // namespace heaplab::model
