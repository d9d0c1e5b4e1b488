// The random-walk page pool's sequential model (page_model.hpp).
#include "heaplab/model/page_model.hpp"

#include <string>

#include "heaplab/core/expects.hpp"

namespace heaplab::model {

PageModel::PageModel(std::uint32_t num_pages) : num_pages_(num_pages) {
  HEAPLAB_EXPECTS(num_pages > 0, "PageModel: the pool needs at least one page");
  for (std::uint32_t p = 0; p < num_pages; ++p) free_.insert(free_.end(), p);
}

void PageModel::get_page(std::uint32_t owner, std::uint32_t page) {
  if (page == kNoPage) {
    if (free_.empty())
      ++out_of_pages_;
    else
      ++exhaustions_;  // legal: the walk is bounded (page_model.hpp)
    return;
  }
  HEAPLAB_EXPECTS(page < num_pages_,
                  "getpage for owner " + std::to_string(owner) + " returned page " +
                      std::to_string(page) + " >= T = " + std::to_string(num_pages_));
  HEAPLAB_EXPECTS(free_.count(page) != 0,
                  "getpage for owner " + std::to_string(owner) + " returned page " +
                      std::to_string(page) + ", which owner " + std::to_string(holder(page)) +
                      " still holds (a page handed to two owners)");
  free_.erase(page);
  holder_[page] = owner;
  ++handed_out_;
}

void PageModel::free_page(std::uint32_t owner, std::uint32_t page) {
  HEAPLAB_EXPECTS(
      page < num_pages_,
      "freepage of page " + std::to_string(page) + " >= T = " + std::to_string(num_pages_));
  HEAPLAB_EXPECTS(run_of(page) == nullptr,
                  "owner " + std::to_string(owner) + " frees page " + std::to_string(page) +
                      " alone, but it belongs to a run (free_run frees a run)");
  HEAPLAB_EXPECTS(holder(page) == owner,
                  "owner " + std::to_string(owner) + " frees page " + std::to_string(page) +
                      (is_free(page) ? ", which is free"
                                     : ", which owner " + std::to_string(holder(page)) + " holds"));
  holder_.erase(page);
  free_.insert(page);
}

void PageModel::hand_over(std::uint32_t from, std::uint32_t to, std::uint32_t page) {
  HEAPLAB_EXPECTS(page < num_pages_ && holder(page) == from,
                  "owner " + std::to_string(from) + " hands over page " + std::to_string(page) +
                      ", which it does not hold");
  HEAPLAB_EXPECTS(run_of(page) == nullptr,
                  "owner " + std::to_string(from) + " hands over page " + std::to_string(page) +
                      ", which belongs to a run");
  holder_[page] = to;
}

void PageModel::get_run(std::uint32_t owner, std::uint32_t first, std::uint32_t n) {
  std::string const who =
      "rw_malloc of " + std::to_string(n) + " pages for owner " + std::to_string(owner);
  HEAPLAB_EXPECTS(n >= 1, who + ": an empty request");
  if (first == kNoPage) {
    if (largest_free_run() < n)
      ++out_of_pages_;
    else
      ++exhaustions_;  // legal: the walk is bounded (page_model.hpp)
    return;
  }
  HEAPLAB_EXPECTS(first < num_pages_ && n <= num_pages_ - first,
                  who + " returned pages " + std::to_string(first) + ".." +
                      std::to_string(std::uint64_t{first} + n - 1) +
                      ", beyond T = " + std::to_string(num_pages_));
  for (std::uint32_t p = first; p < first + n; ++p)
    HEAPLAB_EXPECTS(is_free(p),
                    who + " returned the run from page " + std::to_string(first) + ", whose page " +
                        std::to_string(p) + " owner " + std::to_string(holder(p)) +
                        " still holds (a page handed to two owners)");
  for (std::uint32_t p = first; p < first + n; ++p) {
    free_.erase(p);
    holder_[p] = owner;
  }
  runs_[first] = check::RwHeldRun{owner, first, n};
  handed_out_ += n;
}

void PageModel::free_run(std::uint32_t owner, std::uint32_t first, std::uint32_t n) {
  auto const it = runs_.find(first);
  HEAPLAB_EXPECTS(it != runs_.end() && it->second.owner == owner && it->second.count == n,
                  "owner " + std::to_string(owner) + " frees a run of " + std::to_string(n) +
                      " pages from page " + std::to_string(first) +
                      ", which is not a run it holds");
  for (std::uint32_t p = first; p < first + n; ++p) {
    holder_.erase(p);
    free_.insert(p);
  }
  runs_.erase(it);
}

check::RwHeldRuns PageModel::runs(std::uint32_t owner) const {
  check::RwHeldRuns out;
  for (auto const& [first, run] : runs_)
    if (run.owner == owner) out.push_back(run);
  return out;
}

check::RwHeldRuns PageModel::runs() const {
  check::RwHeldRuns out;
  for (auto const& [first, run] : runs_) out.push_back(run);
  return out;
}

std::uint32_t PageModel::largest_free_run() const {
  std::uint32_t best = 0, current = 0, previous = kNoPage;
  for (std::uint32_t p : free_) {
    current  = previous != kNoPage && p == previous + 1 ? current + 1 : 1;
    best     = current > best ? current : best;
    previous = p;
  }
  return best;
}

check::RwHeldRun const* PageModel::run_of(std::uint32_t page) const {
  auto it = runs_.upper_bound(page);
  if (it == runs_.begin()) return nullptr;
  --it;
  return page - it->first < it->second.count ? &it->second : nullptr;
}

std::uint32_t PageModel::holder(std::uint32_t page) const {
  auto const it = holder_.find(page);
  return it == holder_.end() ? kNoPage : it->second;
}

std::vector<std::vector<std::uint32_t>> PageModel::owners(std::uint32_t num_owners) const {
  std::vector<std::vector<std::uint32_t>> out(num_owners);
  for (auto const& [page, owner] : holder_) {
    if (owner >= out.size()) out.resize(owner + 1);
    out[owner].push_back(page);
  }
  return out;
}

}  // namespace heaplab::model
