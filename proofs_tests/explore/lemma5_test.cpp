// The Lemma 5 trace checker (workloads/lemma5.hpp) must be able to fail: it is fed hand-made
// traces of a 130-bit bitmap (level 0: 3 containers, level 1: 1 container) with one mistake each.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "heaplab/families/interleaving/workloads/lemma5.hpp"

namespace core      = heaplab::core;
namespace explore   = heaplab::explore;
namespace workloads = heaplab::interleaving_family::workloads;

namespace {

struct Fixture {
  core::BitmapLayout layout        = core::BitmapLayout::for_bits(130);
  std::vector<std::uint64_t> words = std::vector<std::uint64_t>(layout.total_words, 0);
  std::vector<explore::Event> events;

  void rmw(std::uint32_t word, std::uint64_t before, std::uint64_t after) {
    explore::Event e;
    e.step      = events.size();
    e.op        = after > before ? core::AtomicOp::fetch_or : core::AtomicOp::fetch_and;
    e.address   = &words[word];
    e.old_value = before;
    e.new_value = after;
    events.push_back(e);
    words[word] = after;
  }
  std::vector<std::string> check() {
    return workloads::check_lemma5(
        events,
        {workloads::BitmapUnderCheck{
            "bm", words.data(), layout, std::vector<std::uint64_t>(layout.total_words, 0)}});
  }
};

constexpr std::uint32_t kL1 = 3;  // the level-1 container's word index

}  // namespace

TEST(Lemma5Checker, AcceptsACorrectSetFirstClearLastHistory) {
  Fixture f;
  f.rmw(2, 0, 1);    // set bit 128: set-first of L0[2]
  f.rmw(kL1, 0, 4);  // ... propagated: L1 bit 2
  f.rmw(2, 1, 3);    // set bit 129: not set-first
  f.rmw(2, 3, 2);    // clear 128
  f.rmw(2, 2, 0);    // clear 129: clear-last
  f.rmw(kL1, 4, 0);  // ... propagated
  EXPECT_TRUE(f.check().empty());
}

TEST(Lemma5Checker, ReportsAMissingPropagation) {
  Fixture f;
  f.rmw(2, 0, 1);  // set-first without the level-1 set
  auto const v = f.check();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(v[0].find("Def. 2"), std::string::npos);  // 1 set-first, 0 sets of L1 bit 2
  EXPECT_NE(v[1].find("Def. 1"), std::string::npos);  // and the end state is inconsistent
}

TEST(Lemma5Checker, ReportsADroppedClearEvenIfTheEndStateLooksConsistent) {
  Fixture f;
  f.rmw(2, 0, 1);    // SF
  f.rmw(kL1, 0, 4);  // propagated
  f.rmw(2, 1, 0);    // CL, its clear of L1 dropped ...
  f.rmw(2, 0, 1);    // SF again, its set of L1 dropped (bit already 1): end state consistent
  auto const v = f.check();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("2 set-first and 1 clear-last"), std::string::npos);
}

TEST(Lemma5Checker, ReportsAnIllegalSurplus) {
  Fixture f;
  f.rmw(0, 0, 1);
  f.rmw(kL1, 0, 1);
  f.rmw(0, 0, 1);  // a second 0 -> 1 of bit 0 without a clear (set-surplus 2)
  f.rmw(kL1, 0, 1);
  auto const v = f.check();
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v[0].find("Def. 3"), std::string::npos);
}
