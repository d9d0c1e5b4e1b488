// The random-walk schedule interpreter of the model (rw_interpreter.hpp).
#include "heaplab/model/rw_interpreter.hpp"

#include <algorithm>

#include "heaplab/core/expects.hpp"

namespace heaplab::model {

namespace {
/// PageModel's owner of handle `id` (owner 0 is the pool's pre-taken pages).
std::uint32_t owner_of(std::uint64_t id) { return static_cast<std::uint32_t>(id + 1); }
}  // namespace

RwModelInterpreter::RwModelInterpreter(schedule::RwPool const& pool)
    : pages_(pool.num_pages), pretaken_(schedule::rw_pretaken_pages(pool)) {
  for (std::uint32_t p : pretaken_) pages_.get_page(0, p);
}

std::optional<RwRejection> RwModelInterpreter::take(std::uint32_t wave,
                                                    std::uint32_t thread,
                                                    std::uint32_t first,
                                                    std::uint32_t count) {
  std::uint64_t const id = next_id_;
  // A run (RW sec. 4.3) is legal iff each of its pages is < T and free; page by page, so that
  // the rejection names the page and its holder (each handle is its own owner in the model, so
  // the run's pages stay together as PageModel::get_run would keep them).
  for (std::uint32_t j = 0; j < count; ++j) {
    std::uint64_t const page = std::uint64_t{first} + j;
    std::string why;
    if (page >= pages_.num_pages())
      why = "page " + std::to_string(page) + " >= T = " + std::to_string(pages_.num_pages());
    else if (!pages_.is_free(static_cast<std::uint32_t>(page)))
      why = "page " + std::to_string(page) + " is not free (" +
            (pages_.holder(static_cast<std::uint32_t>(page)) == 0
                 ? std::string("pre-taken")
                 : "held by handle " +
                       std::to_string(pages_.holder(static_cast<std::uint32_t>(page)) - 1)) +
            "): a page handed out twice";
    if (!why.empty()) {
      for (std::uint32_t k = 0; k < j; ++k) pages_.free_page(owner_of(id), first + k);
      return RwRejection{
          thread,
          "wave " + std::to_string(wave) + " thread " + std::to_string(thread) + " got " +
              (count == 1 ? "page " + std::to_string(first)
                          : "the run " + std::to_string(first) + "+" + std::to_string(count)) +
              ": " + why};
    }
    pages_.get_page(owner_of(id), static_cast<std::uint32_t>(page));
  }
  held_.push_back(RwHandle{id, first, count, wave, thread});
  ++next_id_;
  return std::nullopt;
}

std::optional<RwRejection> RwModelInterpreter::alloc(std::uint32_t wave,
                                                     std::vector<std::uint32_t> const& requests,
                                                     std::vector<std::uint32_t> const& first) {
  HEAPLAB_EXPECTS(requests.size() == first.size(), "RwModelInterpreter::alloc: sizes differ");
  std::vector<std::uint32_t> null_sizes;
  for (std::uint32_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == 0) {
      if (first[i] != PageModel::kNoPage)
        return RwRejection{i,
                           "wave " + std::to_string(wave) + " thread " + std::to_string(i) +
                               " is inactive but got page " + std::to_string(first[i])};
      continue;
    }
    if (first[i] == PageModel::kNoPage) {
      null_sizes.push_back(requests[i]);
      continue;
    }
    if (auto r = take(wave, i, first[i], requests[i])) return r;
  }
  if (!null_sizes.empty()) {
    std::uint32_t const longest = longest_free_run();
    for (std::uint32_t n : null_sizes) (n > longest ? out_of_pages_ : exhaustions_) += 1;
  }
  return std::nullopt;
}

std::vector<RwHandle> RwModelInterpreter::free(schedule::RwFreeWave const& wave) {
  std::vector<std::uint64_t> ids;
  ids.reserve(held_.size());
  for (auto const& h : held_) ids.push_back(h.id);
  auto const chosen = schedule::rw_free_selection(wave, ids);
  std::vector<RwHandle> freed;
  std::vector<bool> gone(held_.size(), false);
  for (std::size_t i : chosen) {
    RwHandle const& h = held_[i];
    // The handle's pages, one by one (its run, RW sec. 4.3, or its one page).
    for (std::uint32_t j = 0; j < h.count; ++j) pages_.free_page(owner_of(h.id), h.first + j);
    freed.push_back(h);
    gone[i] = true;
  }
  std::vector<RwHandle> kept;
  kept.reserve(held_.size() - freed.size());
  for (std::size_t i = 0; i < held_.size(); ++i)
    if (!gone[i]) kept.push_back(held_[i]);
  held_ = std::move(kept);
  return freed;
}

check::RwOwners RwModelInterpreter::owners() const {
  check::RwOwners out;
  out.reserve(held_.size() + 1);
  out.push_back(pretaken_);
  for (auto const& h : held_) {
    std::vector<std::uint32_t> pages(h.count);
    for (std::uint32_t j = 0; j < h.count; ++j) pages[j] = h.first + j;
    out.push_back(std::move(pages));
  }
  return out;
}

std::uint32_t RwModelInterpreter::longest_free_run() const {
  std::uint32_t best = 0, run = 0;
  for (std::uint32_t p = 0; p < pages_.num_pages(); ++p) {
    run  = pages_.is_free(p) ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

}  // namespace heaplab::model
