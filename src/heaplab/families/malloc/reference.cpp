// The reference subject (reference.hpp).
#include "heaplab/families/malloc/reference.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/families/malloc/host_arena.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::malloc_family {

namespace {

constexpr std::uint64_t kGrain = 16;
/// Salt of the wave's thread order (ASCII "ord").
constexpr std::uint64_t kSaltOrder = 0x6f7264;

std::uint64_t round_up(std::uint64_t x) { return (x + kGrain - 1) / kGrain * kGrain; }

class ReferenceSubject final : public Subject {
 public:
  [[nodiscard]] SubjectInfo info() const override {
    SubjectInfo i;
    i.name       = "reference";
    i.alignment  = kGrain;
    i.exact_gaps = true;
    i.recovery   = 0.9;
    return i;
  }

  void reset(std::uint64_t pool_bytes) override {
    arena_.reset(pool_bytes);
    gaps_ = {{0, arena_.size()}};
    used_.clear();
  }

  [[nodiscard]] AddressRange pool() const override { return arena_.range(); }

  std::vector<std::uint64_t> alloc_wave(AllocPlan const& plan) override {
    std::vector<std::uint64_t> answers(plan.sizes.size(), 0);
    std::vector<std::uint32_t> order(plan.threads);
    for (std::uint32_t t = 0; t < plan.threads; ++t) order[t] = t;
    std::uint64_t const seed = plan.ids.empty() ? 0 : plan.ids.front();
    for (std::uint32_t i = plan.threads; i > 1; --i)
      std::swap(order[i - 1], order[schedule::pick(i, seed, i, kSaltOrder)]);
    // A fill thread stops after the retry that follows its first null.
    std::vector<int> nulls(plan.threads, 0);
    for (std::uint32_t k = 0; k < plan.per_thread; ++k)
      for (std::uint32_t t : order) {
        std::size_t const slot = std::size_t{t} * plan.per_thread + k;
        if (plan.fill) {
          if (nulls[t] == 2 || (nulls[t] == 0 && k + 1 == plan.per_thread)) continue;
          std::uint64_t const size = plan.sizes[std::size_t{t} * plan.per_thread];
          answers[slot]            = allocate(size, plan.ids[slot]);
          if (answers[slot] == 0 || nulls[t] == 1) nulls[t] = nulls[t] == 0 ? 1 : 2;
          continue;
        }
        if (plan.sizes[slot] != 0) answers[slot] = allocate(plan.sizes[slot], plan.ids[slot]);
      }
    return answers;
  }

  void free_wave(std::vector<std::uint64_t> const& addresses) override {
    for (std::uint64_t a : addresses) release(a);
  }

  void write(std::vector<Block> const& blocks) override { arena_.write(blocks); }
  std::vector<std::uint64_t> verify(std::vector<Block> const& blocks) override {
    return arena_.verify(blocks);
  }

 private:
  /// First fit; writes the grant's cookie at epoch 0.
  std::uint64_t allocate(std::uint64_t size, std::uint64_t id) {
    std::uint64_t const need = round_up(size);
    for (auto it = gaps_.begin(); it != gaps_.end(); ++it) {
      if (it->second < need) continue;
      std::uint64_t const offset = it->first, left = it->second - need;
      gaps_.erase(it);
      if (left > 0) gaps_.emplace(offset + need, left);
      used_.emplace(offset, need);
      arena_.write({arena_.address(offset), size, id, 0});
      return arena_.address(offset);
    }
    return 0;
  }

  void release(std::uint64_t address) {
    auto const it = address >= arena_.base() ? used_.find(address - arena_.base()) : used_.end();
    if (it == used_.end())
      throw std::runtime_error("reference: free of an address it did not hand out");
    std::uint64_t offset = it->first, size = it->second;
    used_.erase(it);
    auto next = gaps_.lower_bound(offset);
    if (next != gaps_.end() && next->first == offset + size) {
      size += next->second;
      next = gaps_.erase(next);
    }
    if (next != gaps_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        gaps_.erase(prev);
      }
    }
    gaps_.emplace(offset, size);
  }

  HostArena arena_;
  std::map<std::uint64_t, std::uint64_t> gaps_;  // offset -> bytes, disjoint, coalesced
  std::map<std::uint64_t, std::uint64_t> used_;  // offset -> bytes (rounded)
};

}  // namespace

std::unique_ptr<Subject> make_reference_subject() { return std::make_unique<ReferenceSubject>(); }

}  // namespace heaplab::malloc_family
