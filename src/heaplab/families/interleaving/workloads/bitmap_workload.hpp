// Token workloads on a multi-level hierarchical bitmap: the set bits are tokens; a thread takes
// one with clear_any (find-and-clear, sec. 4.1.2) and puts held tokens back with set. Every
// token alternates between "in the bitmap" and "held by one thread", so every bit's operation
// multiset is legal (Def. 3) by construction and Lemma 5 promises a consistent hierarchy at the
// end. Tokens sit in few containers of a bitmap with 2 or 3 levels so that set-first and
// clear-last race on the same summary bits (sec. 4.1.3's hazard).
// Checks: no token is taken by two threads (ownership log), the final bitmap holds exactly the
// initial tokens, Lemma 5 on the trace (lemma5.hpp) and Def. 1 at the end.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/core/detail/seed.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/explore/controlled_run.hpp"
#include "heaplab/explore/strategy.hpp"
#include "heaplab/families/interleaving/workloads/lemma5.hpp"
#include "heaplab/families/interleaving/workloads/workload_kind.hpp"

namespace heaplab::interleaving_family::workloads {

struct BitmapOp {
  bool take         = true;  // take: clear_any; put: set one held token (arg: index mod held)
  std::uint32_t arg = 0;
};

struct BitmapWorkload {
  std::uint32_t num_bits = 130;
  std::vector<std::uint32_t> tokens;  // initially set bits, distinct, < num_bits
  std::vector<std::vector<BitmapOp>> threads;
  std::uint64_t seed_salt = 0;
};

inline std::ostream& operator<<(std::ostream& os, BitmapWorkload const& w) {
  os << "BitmapWorkload{bits=" << w.num_bits
     << ", levels=" << core::BitmapLayout::for_bits(w.num_bits).num_levels << ", tokens=[";
  for (std::size_t i = 0; i < w.tokens.size(); ++i) os << (i ? " " : "") << w.tokens[i];
  os << "], threads:";
  for (std::size_t i = 0; i < w.threads.size(); ++i) {
    os << "\n  T" << i << ":";
    for (auto const& op : w.threads[i])
      os << (op.take ? " take" : " put#") << (op.take ? "" : std::to_string(op.arg));
  }
  return os << "}";
}

/// From one seed: 130..320 bits (2 levels) or 4100..4400 (3 levels), 2-6 tokens within the
/// first two and the last container, 2-4 threads of 2-8 operations.
inline BitmapWorkload random_bitmap_workload(std::uint64_t seed) {
  explore::SplitMix64 rng(seed ^ 0xb17b17b17b17b17bull);
  BitmapWorkload w;
  w.seed_salt = seed;
  w.num_bits  = rng.below(4) == 0 ? 4100 + static_cast<std::uint32_t>(rng.below(300))
                                  : 130 + static_cast<std::uint32_t>(rng.below(190));
  std::uint32_t const last_container = (w.num_bits - 1) / 64;
  std::set<std::uint32_t> tokens;
  std::uint32_t const want = 2 + static_cast<std::uint32_t>(rng.below(5));
  while (tokens.size() < want) {
    std::uint32_t const c   = std::vector<std::uint32_t>{0, 1, last_container}[rng.below(3)];
    std::uint32_t const bit = c * 64 + static_cast<std::uint32_t>(rng.below(64));
    if (bit < w.num_bits) tokens.insert(bit);
  }
  w.tokens.assign(tokens.begin(), tokens.end());
  std::uint32_t const threads = 2 + static_cast<std::uint32_t>(rng.below(3));
  w.threads.resize(threads);
  for (auto& ops : w.threads) {
    std::uint32_t const count = 2 + static_cast<std::uint32_t>(rng.below(7));
    for (std::uint32_t k = 0; k < count; ++k)
      ops.push_back(BitmapOp{rng.below(2) == 0, static_cast<std::uint32_t>(rng.below(8))});
  }
  return w;
}

template <class A>
class BitmapRun {
 public:
  explicit BitmapRun(BitmapWorkload workload)
      : w_(std::move(workload)),
        layout_(core::BitmapLayout::for_bits(w_.num_bits)),
        words_(layout_.total_words, 0),
        holder_(w_.num_bits) {
    // Set the tokens consistently on every level (a quiescent, single-threaded start).
    for (std::uint32_t bit : w_.tokens) {
      std::uint32_t pos = bit;
      for (std::uint32_t l = 0; l < layout_.num_levels; ++l, pos /= 64)
        words_[layout_.level_offset[l] + pos / 64] |= std::uint64_t{1} << (pos % 64);
    }
    for (auto& h : holder_) h.store(kNever);
    for (std::uint32_t bit : w_.tokens) holder_[bit].store(kInBitmap);
    initial_ = words_;
  }

  void thread_body(std::uint32_t i) {
    core::BitmapRef<A> const bm(words_.data(), layout_);
    std::vector<std::uint32_t> held;
    auto const& ops = w_.threads[i];
    for (std::uint32_t k = 0; k < ops.size(); ++k) {
      if (ops[k].take) {
        std::uint64_t const seed =
            core::detail::mix_seed(w_.seed_salt, (std::uint64_t{i} << 32) | k);
        std::uint32_t const bit = bm.clear_any(seed, core::MemoryOrder::acquire);
        if (bit == core::kNotFound) continue;
        if (bit >= w_.num_bits)
          throw std::runtime_error("clear_any returned bit " + std::to_string(bit) +
                                   " past the end");
        std::uint32_t const prev = holder_[bit].exchange(i);
        if (prev != kInBitmap)
          throw std::runtime_error(
              "token " + std::to_string(bit) + " taken by T" + std::to_string(i) + " while " +
              (prev == kNever ? "never set" : "held by T" + std::to_string(prev)));
        held.push_back(bit);
      } else if (!held.empty()) {
        std::size_t const idx = ops[k].arg % held.size();
        put(bm, i, held[idx]);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(idx));
      }
    }
    for (std::uint32_t bit : held) put(bm, i, bit);
  }

  std::vector<std::string> final_check(std::vector<explore::Event> const* events) const {
    std::vector<std::string> out;
    std::vector<std::uint32_t> set_now;
    for (std::uint32_t b = 0; b < w_.num_bits; ++b)
      if ((words_[b / 64] >> (b % 64)) & 1u) set_now.push_back(b);
    if (set_now != w_.tokens) {
      std::string s = "tokens not conserved: set bits at the end:";
      for (auto b : set_now) s += " " + std::to_string(b);
      out.push_back(s);
    }
    std::vector<BitmapUnderCheck> bms{BitmapUnderCheck{"bitmap", words_.data(), layout_, initial_}};
    if (events != nullptr) {
      auto const lemma = check_lemma5(*events, bms);
      out.insert(out.end(), lemma.begin(), lemma.end());
    } else {
      auto const def1 = check_lemma5({}, bms);  // with no events: Def. 1 only
      out.insert(out.end(), def1.begin(), def1.end());
    }
    return out;
  }

  [[nodiscard]] std::string describe(void const* a) const {
    auto const p = reinterpret_cast<std::uintptr_t>(a);
    auto const b = reinterpret_cast<std::uintptr_t>(words_.data());
    if (p < b || p >= b + words_.size() * sizeof(std::uint64_t)) return {};
    std::uint32_t const w = static_cast<std::uint32_t>((p - b) / sizeof(std::uint64_t));
    std::uint32_t level   = 0;
    while (level + 1 < layout_.num_levels && w >= layout_.level_offset[level + 1]) ++level;
    return "bitmap.L" + std::to_string(level) + "[" +
           std::to_string(w - layout_.level_offset[level]) + "]";
  }

 private:
  static constexpr std::uint32_t kInBitmap = 0xFFFFFFFEu;
  static constexpr std::uint32_t kNever    = 0xFFFFFFFFu;

  void put(core::BitmapRef<A> const& bm, std::uint32_t i, std::uint32_t bit) {
    std::uint32_t const prev = holder_[bit].exchange(kInBitmap);  // logged before the set
    if (prev != i)
      throw std::runtime_error("token " + std::to_string(bit) + " put back by a non-holder");
    bm.set(bit, core::MemoryOrder::release);
  }

  BitmapWorkload w_;
  core::BitmapLayout layout_;
  std::vector<std::uint64_t> words_;
  std::vector<std::atomic<std::uint32_t>> holder_;
  std::vector<std::uint64_t> initial_;
};

inline explore::Program make_bitmap_program(BitmapWorkload const& workload) {
  auto run = std::make_shared<BitmapRun<core::ObservedAtomics>>(workload);
  explore::Program p;
  for (std::uint32_t i = 0; i < workload.threads.size(); ++i)
    p.threads.push_back([run, i] { run->thread_body(i); });
  p.check = [run](std::vector<explore::Event> const& events) { return run->final_check(&events); };
  p.describe_address = [run](void const* a) { return run->describe(a); };
  return p;
}

/// The program of the bitmap kind for a workload seed (programs.hpp dispatches every kind; a mutant
/// test of this kind includes only this header).
inline explore::Program bitmap_kind_program(WorkloadKind kind, std::uint64_t workload_seed) {
  if (kind == WorkloadKind::bitmap)
    return make_bitmap_program(random_bitmap_workload(workload_seed));
  throw std::logic_error(std::string("bitmap_kind_program: not its kind: ") + to_string(kind));
}

}  // namespace heaplab::interleaving_family::workloads
