// HostHeap: an owning host-side heap state (plain std::vector storage) for a HeapConfig, in the
// state of a freshly created heap, for running the portable core on CPU threads (tests, the
// explorer, ThreadSanitizer stress). Host only. The GPU heap (soa/) builds the same HeapStorage
// over device memory.
//
// Initial state (DynaSOAr sec. 3.4, App. A.2): every block free and invalidated (allocation
// bitmap all ones, iteration bitmap 0, type kNoType); free bitmap full (every level consistent);
// allocated/active/defrag of every type empty. check::make_empty_snapshot describes the same
// state; proofs_tests/core checks that from_core of a fresh HostHeap equals it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heaplab/core/expects.hpp"
#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/heap_protocol.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"

namespace heaplab::core {

/// Which state bitmap (DynaSOAr sec. 3.4, CompactGpu sec. 2.2).
enum class StateBitmap : std::uint8_t { free_blocks, allocated, active, defrag };

class HostHeap {
 public:
  /// Entries per type of the block hints (HeapProtocol::reserve_slots "Block hints"): callers
  /// that pass hint i use entry i mod kHintSlots (the explorer's threads pass their index).
  static constexpr std::uint32_t kHintSlots = 4;

  /// Throws core::precondition_error if the config does not validate or a concrete type has
  /// capacity < 2 (the protocol needs FIRST and EMPTY to be distinct; HeapConfig::validate
  /// already implies it through 1 <= n < min capacity).
  explicit HostHeap(HeapConfig config, std::uint32_t active_lookups = kDefaultActiveLookups)
      : config_(std::move(config)) {
    config_.validate();
    HEAPLAB_EXPECTS(active_lookups >= 1, "HostHeap: active_lookups must be at least 1");
    std::uint32_t const m = config_.num_blocks;
    std::uint32_t const k = config_.num_types();
    layout_               = BitmapLayout::for_bits(m);
    capacities_.resize(k);
    for (std::uint32_t t = 0; t < k; ++t) {
      capacities_[t] = config_.capacity(t);
      HEAPLAB_EXPECTS(config_.types[t].is_abstract || capacities_[t] >= 2,
                      "HostHeap: every concrete type needs a block capacity of at least 2");
    }
    alloc_.assign(m, kFullBitmap);
    iter_.assign(m, 0);
    types_.assign(m, kNoType);
    free_.assign(layout_.total_words, 0);
    allocated_.assign(std::size_t{k} * layout_.total_words, 0);
    active_.assign(std::size_t{k} * layout_.total_words, 0);
    defrag_.assign(std::size_t{k} * layout_.total_words, 0);
    claim_tickets_.assign(k, 0);
    claim_runs_.assign(std::size_t{k} * claim_run_slots_for(m), 0);
    block_hints_.assign(std::size_t{k} * kHintSlots, kNotFound);
    // Free bitmap full: every meaningful bit of every level set.
    for (std::uint32_t l = 0; l < layout_.num_levels; ++l)
      for (std::uint32_t bit = 0; bit < layout_.level_bits[l]; ++bit)
        free_[layout_.level_offset[l] + bit / 64u] |= std::uint64_t{1} << (bit % 64u);
    active_lookups_ = active_lookups;
  }

  // Storage is referenced by pointer: not copyable or movable.
  HostHeap(HostHeap const&)            = delete;
  HostHeap& operator=(HostHeap const&) = delete;

  [[nodiscard]] HeapConfig const& config() const { return config_; }
  [[nodiscard]] BitmapLayout const& layout() const { return layout_; }

  /// Pointers into this heap's vectors (valid for its lifetime).
  [[nodiscard]] HeapStorage storage() {
    HeapStorage s;
    s.alloc_bitmaps   = alloc_.data();
    s.iter_bitmaps    = iter_.data();
    s.block_types     = types_.data();
    s.free_words      = free_.data();
    s.allocated_words = allocated_.data();
    s.active_words    = active_.data();
    s.defrag_words    = defrag_.data();
    s.capacities      = capacities_.data();
    s.claim_tickets   = claim_tickets_.data();
    s.claim_runs      = claim_runs_.data();
    s.claim_run_slots = claim_run_slots_for(config_.num_blocks);
    s.block_hints     = block_hints_.data();
    s.hint_slots      = kHintSlots;
    s.layout          = layout_;
    s.num_blocks      = config_.num_blocks;
    s.num_types       = config_.num_types();
    s.defrag_factor   = config_.defrag_factor;
    s.active_lookups  = active_lookups_;
    return s;
  }

  template <class Atomics>
  [[nodiscard]] HeapProtocol<Atomics> ref() {
    return HeapProtocol<Atomics>(storage());
  }

  // Quiescent reads (no operation in flight).
  [[nodiscard]] std::uint64_t alloc_bitmap(std::uint32_t b) const { return alloc_.at(b); }
  [[nodiscard]] std::uint64_t iter_bitmap(std::uint32_t b) const { return iter_.at(b); }
  [[nodiscard]] std::uint32_t block_type(std::uint32_t b) const { return types_.at(b); }
  /// All levels of one state bitmap (layout()), level 0 first. `type` is ignored for free.
  [[nodiscard]] std::vector<std::uint64_t> bitmap_words(StateBitmap which,
                                                        std::uint32_t type = 0) const {
    std::vector<std::uint64_t> const& v = vector_of(which);
    std::size_t const base =
        which == StateBitmap::free_blocks ? 0 : std::size_t{type} * layout_.total_words;
    HEAPLAB_EXPECTS(which == StateBitmap::free_blocks || type < config_.num_types(),
                    "HostHeap::bitmap_words: type id out of range");
    return std::vector<std::uint64_t>(
        v.begin() + static_cast<std::ptrdiff_t>(base),
        v.begin() + static_cast<std::ptrdiff_t>(base + layout_.total_words));
  }

  /// A symbolic name for an address inside this heap's state, e.g. "alloc_bitmap[block 1]",
  /// "active[T0].L0[0]", "free.L1[0]"; empty if the address is not part of it. Used by traces.
  [[nodiscard]] std::string describe_address(void const* address) const {
    auto const p = reinterpret_cast<std::uintptr_t>(address);
    auto in      = [p](auto const& vec, std::size_t& index) {
      using E          = typename std::decay_t<decltype(vec)>::value_type;
      auto const begin = reinterpret_cast<std::uintptr_t>(vec.data());
      if (vec.empty() || p < begin || p >= begin + vec.size() * sizeof(E)) return false;
      index = (p - begin) / sizeof(E);
      return true;
    };
    std::size_t i = 0;
    if (in(alloc_, i)) return "alloc_bitmap[block " + std::to_string(i) + "]";
    if (in(iter_, i)) return "iter_bitmap[block " + std::to_string(i) + "]";
    if (in(types_, i)) return "type[block " + std::to_string(i) + "]";
    if (in(free_, i)) return "free" + word_name(i);
    if (in(block_hints_, i))
      return "block_hint[" + config_.types[i / kHintSlots].name + "][" +
             std::to_string(i % kHintSlots) + "]";
    struct Kind {
      char const* name;
      std::vector<std::uint64_t> const* words;
    };
    for (Kind const& kind :
         {Kind{"allocated", &allocated_}, Kind{"active", &active_}, Kind{"defrag", &defrag_}}) {
      if (in(*kind.words, i)) {
        std::size_t const t = i / layout_.total_words;
        return std::string(kind.name) + "[" + config_.types[t].name + "]" +
               word_name(i % layout_.total_words);
      }
    }
    return {};
  }

 private:
  [[nodiscard]] std::vector<std::uint64_t> const& vector_of(StateBitmap which) const {
    switch (which) {
      case StateBitmap::free_blocks:
        return free_;
      case StateBitmap::allocated:
        return allocated_;
      case StateBitmap::active:
        return active_;
      case StateBitmap::defrag:
        return defrag_;
    }
    return free_;
  }

  /// ".L<level>[<container>]" for word `w` of a bitmap with layout_.
  [[nodiscard]] std::string word_name(std::size_t w) const {
    std::uint32_t level = 0;
    while (level + 1 < layout_.num_levels && w >= layout_.level_offset[level + 1]) ++level;
    return ".L" + std::to_string(level) + "[" + std::to_string(w - layout_.level_offset[level]) +
           "]";
  }

  HeapConfig config_;
  BitmapLayout layout_{};
  std::vector<std::uint32_t> capacities_;
  std::vector<std::uint64_t> alloc_, iter_;
  std::vector<std::uint32_t> types_;
  std::vector<std::uint64_t> free_, allocated_, active_, defrag_;
  std::vector<std::uint64_t> claim_tickets_;  // HeapStorage::claim_tickets
  std::vector<std::uint64_t> claim_runs_;     // HeapStorage::claim_runs
  std::vector<std::uint32_t> block_hints_;    // HeapStorage::block_hints
  std::uint32_t active_lookups_ = kDefaultActiveLookups;
};

}  // namespace heaplab::core
