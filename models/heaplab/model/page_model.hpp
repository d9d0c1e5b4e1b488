// The sequential reference of the random-walk page pool (docs/rw.md "The model"): a set of free
// pages and who holds each used one, written plainly.
//
// GETPAGE is checked by refinement: the implementation chooses the page (at random), and the
// model accepts ANY page that is free and < T, then records its owner. A null answer (kNoPage)
// is always legal, because the walk is bounded by max_steps; the model counts it as
//   - out of pages          when no page was free, or
//   - bounded-walk exhaustion when free pages were left: the walk gave up before it hit one.
//     This is the price of the bound (RW Alg. 1 as printed loops forever), not a bug; how often
//     it happens is a performance question (TAS / WAS), not a correctness one.
// FREEPAGE must free a page the caller holds. Violations throw core::precondition_error with a
// message naming the page and its holder.
//
// Runs (RW_malloc, RW Alg. 3) the same way: get_run accepts ANY run of n free pages inside the
// pool and records it (its pages are held by the owner like single pages, and the run as one
// allocation); a null answer is out of memory when no run of n free pages existed
// (largest_free_run() < n), else bounded-walk exhaustion. free_run must name exactly a run the
// owner holds; a page of a run cannot be freed or handed over alone.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "heaplab/check/rw_invariants.hpp"

namespace heaplab::model {

class PageModel {
 public:
  static constexpr std::uint32_t kNoPage = 0xFFFFFFFFu;

  explicit PageModel(std::uint32_t num_pages);

  /// The implementation's GETPAGE for `owner` answered `page` (kNoPage: null).
  void get_page(std::uint32_t owner, std::uint32_t page);
  /// `owner` frees `page` (FREEPAGE).
  void free_page(std::uint32_t owner, std::uint32_t page);
  /// `page` moves from `from` to `to` (a hand-over between owners; the pool is not involved).
  void hand_over(std::uint32_t from, std::uint32_t to, std::uint32_t page);
  /// The implementation's RW_malloc for `owner` of n >= 1 pages answered `first` (kNoPage: null).
  void get_run(std::uint32_t owner, std::uint32_t first, std::uint32_t n);
  /// `owner` frees its run of n pages from `first`.
  void free_run(std::uint32_t owner, std::uint32_t first, std::uint32_t n);

  [[nodiscard]] std::uint32_t num_pages() const { return num_pages_; }
  [[nodiscard]] std::size_t free_count() const { return free_.size(); }
  [[nodiscard]] bool is_free(std::uint32_t page) const { return free_.count(page) != 0; }
  /// The holder of `page`, kNoPage if it is free.
  [[nodiscard]] std::uint32_t holder(std::uint32_t page) const;
  /// The pages of every owner 0..max owner (owners without pages get empty lists).
  [[nodiscard]] std::vector<std::vector<std::uint32_t>> owners(std::uint32_t num_owners) const;
  [[nodiscard]] std::uint64_t out_of_pages() const { return out_of_pages_; }
  [[nodiscard]] std::uint64_t bounded_walk_exhaustions() const { return exhaustions_; }
  [[nodiscard]] std::uint64_t pages_handed_out() const { return handed_out_; }
  /// The runs `owner` holds, by first page.
  [[nodiscard]] check::RwHeldRuns runs(std::uint32_t owner) const;
  /// Every run held, by first page (the catalog's run list).
  [[nodiscard]] check::RwHeldRuns runs() const;
  /// The length of the longest stretch of consecutive free pages (0 if none is free): a run of n
  /// pages can be handed out iff n <= largest_free_run().
  [[nodiscard]] std::uint32_t largest_free_run() const;

 private:
  std::uint32_t num_pages_;
  std::set<std::uint32_t> free_;
  std::map<std::uint32_t, std::uint32_t> holder_;   // page -> owner
  std::map<std::uint32_t, check::RwHeldRun> runs_;  // first page -> run
  /// The run that contains `page`, or nullptr.
  [[nodiscard]] check::RwHeldRun const* run_of(std::uint32_t page) const;
  std::uint64_t out_of_pages_ = 0;
  std::uint64_t exhaustions_  = 0;
  std::uint64_t handed_out_   = 0;
};

}  // namespace heaplab::model
