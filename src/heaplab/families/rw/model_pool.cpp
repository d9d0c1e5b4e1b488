// ModelPool (rw_model_pool.hpp).
#include "heaplab/families/rw/model_pool.hpp"

#include "heaplab/core/expects.hpp"

namespace heaplab::rw_family {

ModelPool::ModelPool(rw::PoolConfig const& config) : config_(config), used_(config.num_pages) {
  config.validate();
}

void ModelPool::mark_used(std::vector<std::uint32_t> const& pages) {
  for (std::uint32_t p : pages) {
    HEAPLAB_EXPECTS(p < used_.size() && !used_[p], "ModelPool::mark_used: bad or used page");
    used_[p] = true;
  }
}

std::uint32_t ModelPool::find_run(std::uint32_t start, std::uint32_t n) const {
  auto const T = static_cast<std::uint32_t>(used_.size());
  if (n == 0 || n > T) return rw::kNoPage;
  for (std::uint32_t pass = 0; pass < 2; ++pass) {
    std::uint32_t run = 0;
    for (std::uint32_t p = pass == 0 ? start : 0; p < T; ++p) {
      run = used_[p] ? 0 : run + 1;
      if (run == n) return p + 1 - n;
    }
  }
  return rw::kNoPage;
}

rw::AllocResult ModelPool::allocate(rw::GetPageWave const& wave) {
  auto const n = static_cast<std::uint32_t>(wave.pages.size());
  rw::AllocResult out;
  out.first.assign(n, rw::kNoPage);
  out.steps.assign(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (wave.pages[i] == 0) continue;
    rw::PageRng rng           = rw::thread_rng(wave.seed, i);
    std::uint32_t const first = find_run(rng.below(config_.num_pages), wave.pages[i]);
    out.steps[i]              = first == rw::kNoPage ? config_.max_steps : 1;
    out.first[i]              = first;
    if (first == rw::kNoPage) continue;
    for (std::uint32_t j = 0; j < wave.pages[i]; ++j) used_[first + j] = true;
  }
  return out;
}

void ModelPool::free(rw::FreePageWave const& wave) {
  for (std::size_t i = 0; i < wave.first.size(); ++i)
    for (std::uint32_t j = 0; j < wave.count[i]; ++j) {
      std::uint32_t const p = wave.first[i] + j;
      HEAPLAB_EXPECTS(p < used_.size() && used_[p], "ModelPool::free: the page is not in use");
      used_[p] = false;
    }
}

rw::PoolWords ModelPool::words() const {
  std::uint32_t const w = config_.word_bits;
  rw::PoolWords out;
  out.used.assign(config_.used_words(), 0);
  out.locks.assign(config_.lock_words(), 0);
  for (std::uint64_t p = 0; p < std::uint64_t{out.used.size()} * w; ++p)
    if (p >= used_.size() || used_[p]) out.used[p / w] |= std::uint64_t{1} << (p % w);
  return out;
}

}  // namespace heaplab::rw_family
