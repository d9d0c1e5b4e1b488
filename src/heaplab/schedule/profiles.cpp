// The stress profiles of heap schedules (generators.hpp "Profiles"): schedules shaped for
// `heaplab stress --profile` (small, mixed, large, near-oom).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "heaplab/core/expects.hpp"
#include "heaplab/schedule/generators.hpp"

namespace heaplab::schedule::gen {

namespace {

std::vector<std::uint32_t> concrete(core::HeapConfig const& c) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = 0; t < c.num_types(); ++t)
    if (!c.types[t].is_abstract) out.push_back(t);
  return out;
}

template <class T>
T one_of(std::vector<T> const& v) {
  return v[*rc::gen::inRange<std::size_t>(0, v.size())];
}

std::uint64_t small_seed() { return *rc::gen::inRange<std::uint64_t>(0, 1000); }

/// An alloc wave of `type` asking for about `objects` objects (threads x count, within the
/// format's limits), with a random divergence pattern and random links.
AllocWave sized_wave(core::HeapConfig const& c, std::uint32_t type, std::uint64_t objects) {
  AllocWave w;
  w.type            = type;
  std::uint32_t cnt = *rc::gen::inRange<std::uint32_t>(1, 4);
  w.count           = cnt;
  switch (*rc::gen::inRange(0, 4)) {
    case 0:
      w.divergence = Divergence::alternate;
      objects *= 2;  // half the lanes allocate
      break;
    case 1:
      w.divergence = Divergence::random_mask;
      w.mask_seed  = small_seed();
      objects *= 2;  // about half the lanes allocate
      break;
    default:
      w.divergence = Divergence::all;
      break;
  }
  std::uint64_t const threads = std::max<std::uint64_t>(1, (objects + cnt - 1) / cnt);
  w.threads        = static_cast<std::uint32_t>(std::min<std::uint64_t>(threads, kMaxThreads));
  auto const slots = c.pointer_slots(type);
  for (std::uint32_t s = 0; s < slots.size(); ++s) {
    if (!*rc::gen::inRange(0, 2)) continue;
    LinkRule rule;
    rule.type          = type;
    rule.slot          = s;
    rule.seed          = small_seed();
    rule.null_fraction = *rc::gen::inRange(0, 5) / 8.0;
    w.links.push_back(rule);
  }
  w.roots = *rc::gen::inRange(0, 8) == 0;
  return w;
}

FreeWave thinning(std::uint32_t type) {
  FreeWave f;
  f.select.type     = type;
  f.select.pattern  = SelectPattern::fraction;
  f.select.fraction = *rc::gen::inRange(2, 8) / 8.0;
  f.select.seed     = small_seed();
  return f;
}

Defrag defrag_of(core::HeapConfig const& c, std::uint32_t type) {
  Defrag d;
  d.type    = type;
  d.variant = static_cast<core::RewriteVariant>(*rc::gen::inRange(0, 3));
  d.order   = static_cast<core::CandidateOrder>(*rc::gen::inRange(0, 2));
  if (*rc::gen::inRange(0, 4) == 0) {
    std::uint32_t const max_n = std::min<std::uint32_t>(c.capacity(type) - 1, 4);
    if (max_n >= 1) d.n = *rc::gen::inRange<std::uint32_t>(1, max_n + 1);
  }
  if (*rc::gen::inRange(0, 3) == 0) d.k1 = *rc::gen::inRange<std::uint32_t>(0, 3);
  return d;
}

/// Total capacity of the heap for objects of `type` (every block holding it).
std::uint64_t heap_capacity(core::HeapConfig const& c, std::uint32_t type) {
  return std::uint64_t{c.num_blocks} * c.capacity(type);
}

rc::Gen<Schedule> large_schedule(std::uint32_t heap_mib,
                                 std::uint32_t max_blocks,
                                 rc::Gen<core::HeapConfig> const& configs) {
  return rc::gen::withSize([=](int size) {
    return rc::gen::exec([=] {
      core::HeapConfig c     = *configs;
      std::uint32_t const hi = std::max<std::uint32_t>(
          2, std::min(blocks_for_heap(c, heap_mib), std::min(max_blocks, kMaxBlocks)));
      c.num_blocks = *rc::gen::inRange<std::uint32_t>(std::max<std::uint32_t>(2, hi / 2), hi + 1);
      auto const types = concrete(c);
      Schedule s;
      s.config                     = c;
      std::uint32_t const episodes = 1 + static_cast<std::uint32_t>(size) / 3;
      for (std::uint32_t e = 0; e < episodes; ++e) {
        std::uint32_t const t = one_of(types);
        switch (*rc::gen::inRange(0, 12)) {
          case 0:
          case 1:
          case 2:
            s.steps.push_back(*step(c));
            break;
          case 3:
          case 4:  // 1/16 .. 4/16 of the heap's capacity, split among the types
            s.steps.push_back(sized_wave(
                c, t, heap_capacity(c, t) * *rc::gen::inRange(1, 5) / 16 / types.size()));
            break;
          case 5:
          case 6:
          case 7:
            s.steps.push_back(thinning(t));
            break;
          case 8:
          case 9:
            s.steps.push_back(defrag_of(c, t));
            break;
          default:  // fill, thin, defragment: the CompactGpu episode at scale
            s.steps.push_back(sized_wave(c, t, heap_capacity(c, t) / 2));
            s.steps.push_back(thinning(t));
            s.steps.push_back(defrag_of(c, t));
            break;
        }
      }
      return s;
    });
  });
}

rc::Gen<Schedule> near_oom_schedule(std::uint32_t heap_mib,
                                    std::uint32_t max_blocks,
                                    rc::Gen<core::HeapConfig> const& configs) {
  return rc::gen::withSize([=](int size) {
    return rc::gen::exec([=] {
      core::HeapConfig c     = *configs;
      std::uint32_t const hi = std::max<std::uint32_t>(
          2, std::min({blocks_for_heap(c, heap_mib), max_blocks, std::uint32_t{48}}));
      c.num_blocks     = *rc::gen::inRange<std::uint32_t>(2, hi + 1);
      auto const types = concrete(c);
      Schedule s;
      s.config                     = c;
      std::uint32_t const episodes = 1 + static_cast<std::uint32_t>(size) / 3;
      for (std::uint32_t e = 0; e < episodes; ++e) {
        std::uint32_t const t = one_of(types);
        switch (*rc::gen::inRange(0, 10)) {
          case 0:
          case 1:
          case 2:  // ask for 90-130% of the heap's capacity for t
            s.steps.push_back(
                sized_wave(c, t, heap_capacity(c, t) * *rc::gen::inRange(9, 14) / 10));
            break;
          case 3:
          case 4:
            s.steps.push_back(*step(c));  // parallel_do children, relinks, ...
            break;
          case 5:
          case 6:
            s.steps.push_back(thinning(t));
            break;
          case 7:
          case 8:
            s.steps.push_back(defrag_of(c, t));
            break;
          default:
            s.steps.push_back(Check{});
            break;
        }
      }
      return s;
    });
  });
}

/// The bitmap-hierarchy classes of the mixed profile: M ranges whose hierarchical bitmaps have 1,
/// 2 and 3 levels (64-bit words, DynaSOAr sec. 4.2), and how often each is drawn.
struct DepthClass {
  std::uint32_t lo, hi;
  int weight;
};
constexpr DepthClass kDepthClasses[] = {{2, 64, 5}, {65, 4096, 3}, {4097, 8192, 2}};

/// Largest wave of the mixed profile, in objects: enough to spill into the higher levels of the
/// hierarchies (bitmap rotation spreads even small waves over the heap, sec. 4.2 "Bitmap
/// Rotation"), small enough that the sequential model keeps the case rate up at M = 8192.
constexpr std::uint64_t kMixedMaxWave = 6144;

rc::Gen<Schedule> mixed_schedule(std::uint32_t heap_mib,
                                 std::uint32_t max_blocks,
                                 rc::Gen<core::HeapConfig> const& configs) {
  return rc::gen::withSize([=](int size) {
    return rc::gen::exec([=] {
      core::HeapConfig c = *configs;
      // The class is drawn at the nominal size (inRange scales with the size, and stress runs
      // small sizes first), so every depth is drawn at every size.
      int const pick      = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 10));
      DepthClass const& d = pick < 5   ? kDepthClasses[0]
                            : pick < 8 ? kDepthClasses[1]
                                       : kDepthClasses[2];
      if (pick < 5) {
        // One-level heaps get the property tests' schedules (the small profile's, whose step
        // mix keeps parallel_do and every divergence pattern frequent) with M up to 64.
        c.num_blocks = std::min<std::uint32_t>(
            *rc::gen::inRange<std::uint32_t>(d.lo, d.hi + 1),
            std::max<std::uint32_t>(2, std::min(blocks_for_heap(c, heap_mib), max_blocks)));
        return *schedule_for(c);
      }
      std::uint32_t const cap = std::max<std::uint32_t>(
          2, std::min({blocks_for_heap(c, heap_mib), max_blocks, kMaxBlocks}));
      std::uint32_t const hi = std::min(d.hi, cap);
      std::uint32_t const lo = std::min(d.lo, hi);
      // Log-uniform in [lo, hi]: small 2-level heaps (65..512) are as likely as large ones, and
      // cheaper for the model, which follows every step.
      double const u = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 1001)) / 1000.0;
      c.num_blocks   = std::clamp<std::uint32_t>(
          static_cast<std::uint32_t>(std::lround(lo * std::pow(double(hi) / lo, u))), lo, hi);
      auto const types = concrete(c);
      Schedule s;
      s.config     = c;
      auto wave_of = [&](std::uint32_t t, std::uint64_t objects) {
        return sized_wave(c, t, std::min<std::uint64_t>(objects, kMixedMaxWave));
      };
      std::uint32_t const episodes = 2 + static_cast<std::uint32_t>(size) / 12;
      for (std::uint32_t e = 0; e < episodes; ++e) {
        std::uint32_t const t = one_of(types);
        switch (*rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 10))) {
          case 0:
          case 1:
          case 2:
          case 3:  // parallel_do actions, relinks, divergent waves, checks, ... (gen::step's
                   // kinds scale with the size: drawn at the nominal size, all are frequent)
            s.steps.push_back(*rc::gen::resize(rc::kNominalSize, step(c)));
            break;
          case 4:
          case 5:
            s.steps.push_back(wave_of(t, heap_capacity(c, t) * *rc::gen::inRange(1, 5) / 16));
            break;
          case 6:
            s.steps.push_back(thinning(t));
            break;
          default:  // fill, thin, defragment
            s.steps.push_back(wave_of(t, heap_capacity(c, t) / 2));
            s.steps.push_back(thinning(t));
            s.steps.push_back(defrag_of(c, t));
            break;
        }
      }
      // Every case defragments at least once.
      s.steps.push_back(defrag_of(c, one_of(types)));
      return s;
    });
  });
}

}  // namespace

std::uint64_t block_bytes(core::HeapConfig const& config) {
  return std::uint64_t{core::kMaxCapacity} * config.smallest_size();
}

std::uint32_t blocks_for_heap(core::HeapConfig const& config, std::uint32_t heap_mib) {
  std::uint64_t const blocks =
      (std::uint64_t{heap_mib} << 20) / std::max<std::uint64_t>(1, block_bytes(config));
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(blocks, 1, 0xFFFFFFFFu));
}

std::vector<std::string> const& profile_names() {
  static std::vector<std::string> const names = {"small", "mixed", "large", "near-oom"};
  return names;
}

rc::Gen<Schedule> profile_schedule(std::string const& profile,
                                   std::uint32_t heap_mib,
                                   std::uint32_t max_blocks,
                                   rc::Gen<core::HeapConfig> configs) {
  if (profile == "large") return large_schedule(heap_mib, max_blocks, configs);
  if (profile == "near-oom") return near_oom_schedule(heap_mib, max_blocks, configs);
  if (profile == "mixed") return mixed_schedule(heap_mib, max_blocks, configs);
  HEAPLAB_EXPECTS(
      profile == "small",
      "unknown heap profile '" + profile + "'; profiles: small, mixed, large, near-oom");
  return rc::gen::mapcat(configs, [=](core::HeapConfig c) {
    c.num_blocks = std::max<std::uint32_t>(
        1, std::min({c.num_blocks, blocks_for_heap(c, heap_mib), max_blocks}));
    return schedule_for(c);
  });
}

}  // namespace heaplab::schedule::gen
