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
  holder_[page] = to;
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
