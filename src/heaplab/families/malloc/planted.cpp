// Planted bugs of a subject adapter (reference.hpp, PlantedBug): a wrapper around any subject
// that gets one thing wrong the way an adapter (or an allocator) could. The family's tests run the
// generic stress on them and expect the catalog to catch each within seconds: the harness is shown
// to catch a class of bug before it is used to accuse an allocator (docs/malloc.md "Planted bugs").
#include <map>
#include <utility>

#include "heaplab/families/malloc/reference.hpp"

namespace heaplab::malloc_family {

namespace {

class PlantedSubject final : public Subject {
 public:
  PlantedSubject(std::unique_ptr<Subject> inner, PlantedBug bug)
      : inner_(std::move(inner)), bug_(bug) {}

  [[nodiscard]] SubjectInfo info() const override {
    SubjectInfo i = inner_->info();
    i.name += std::string("+planted-") + to_string(bug_);
    return i;
  }
  void reset(std::uint64_t pool_bytes) override {
    inner_->reset(pool_bytes);
    real_.clear();
    frees_ = grants_ = 0;
  }
  [[nodiscard]] AddressRange pool() const override { return inner_->pool(); }
  [[nodiscard]] std::string device_name() const override { return inner_->device_name(); }
  [[nodiscard]] bool usable() const override { return inner_->usable(); }

  std::vector<std::uint64_t> alloc_wave(AllocPlan const& plan) override {
    std::vector<std::uint64_t> answers = inner_->alloc_wave(plan);
    std::uint64_t previous             = 0;
    std::vector<Block> writes;
    for (std::size_t slot = 0; slot < answers.size(); ++slot) {
      std::uint64_t const real = answers[slot];
      if (real == 0) continue;
      std::uint64_t const size =
          plan.fill ? plan.sizes[slot / plan.per_thread * plan.per_thread] : plan.sizes[slot];
      ++grants_;
      std::uint64_t answer = real;
      if (bug_ == PlantedBug::overlap && previous != 0 && grants_ % 7 == 0) answer = previous;
      if (bug_ == PlantedBug::misaligned && grants_ % 5 == 0) answer = real + 8;
      std::uint64_t const written = bug_ == PlantedBug::overrun ? size + 16 : size;
      if (answer != real || written != size) writes.push_back({answer, written, plan.ids[slot], 0});
      if (answer != real) real_[answer] = real;
      answers[slot] = answer;
      previous      = real;
    }
    // What the allocating thread writes into what it was answered.
    if (!writes.empty()) inner_->write(writes);
    return answers;
  }

  void free_wave(std::vector<std::uint64_t> const& addresses) override {
    std::vector<std::uint64_t> forwarded;
    for (std::uint64_t a : addresses) {
      if (bug_ == PlantedBug::lost_free && ++frees_ % 4 != 0) continue;
      auto const it = real_.find(a);
      if (it == real_.end()) {
        forwarded.push_back(a);
        continue;
      }
      // The overlapping answer's real grant leaks; the misaligned one is freed as allocated.
      if (bug_ == PlantedBug::misaligned) forwarded.push_back(it->second);
      real_.erase(it);
    }
    if (!forwarded.empty()) inner_->free_wave(forwarded);
  }

  void write(std::vector<Block> const& blocks) override { inner_->write(blocks); }
  std::vector<std::uint64_t> verify(std::vector<Block> const& blocks) override {
    return inner_->verify(blocks);
  }

 private:
  std::unique_ptr<Subject> inner_;
  PlantedBug bug_;
  std::map<std::uint64_t, std::uint64_t> real_;  // answered address -> the inner grant
  std::uint64_t frees_ = 0, grants_ = 0;
};

}  // namespace

char const* to_string(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::overlap:
      return "overlap";
    case PlantedBug::lost_free:
      return "lost-free";
    case PlantedBug::misaligned:
      return "misaligned";
    case PlantedBug::overrun:
      return "overrun";
  }
  return "?";
}

std::unique_ptr<Subject> make_planted_subject(std::unique_ptr<Subject> inner, PlantedBug bug) {
  return std::make_unique<PlantedSubject>(std::move(inner), bug);
}

}  // namespace heaplab::malloc_family
