// The bump family's generator (BumpFamily::profiles, BumpFamily::generate): random schedules by
// profile, a pure function of (request, seed, size). Every draw is schedule::mix(seed, n, salt)
// for the n-th draw, so a case reproduces from its seed on every platform.
#include <algorithm>
#include <cstdint>

#include "bump_family.hpp"
#include "heaplab/core/expects.hpp"
#include "heaplab/schedule/choice.hpp"

namespace heaplab::bump_family {

namespace {

/// The n-th draw of a case: mix(seed, n, salt).
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : seed_(seed) {}
  /// A value in [0, bound) (bound >= 1).
  std::uint64_t below(std::uint64_t bound) {
    return schedule::mix(seed_, n_++, 0x62756d7067656eull) % bound;
  }
  /// A value in [lo, hi].
  std::uint64_t in(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
  /// True once in `n` draws (n >= 1).
  bool one_in(std::uint64_t n) { return below(n) == 0; }
  std::uint64_t any() { return schedule::mix(seed_, n_++, 0x73656564ull); }

 private:
  std::uint64_t seed_;
  std::uint64_t n_ = 0;
};

/// The shape of a profile's cases at RapidCheck size `size` (1..100).
struct Shape {
  std::uint64_t min_arena_log = 6;  // arena in [2^min, 2^(max + 1))
  std::uint64_t max_arena_log = 13;
  std::uint64_t max_steps     = 2;
  std::uint64_t max_threads   = 2;
  std::uint64_t max_size      = 128;  // a request's bytes
  std::uint64_t max_align_log = 6;    // alignments 1..2^max
};

Shape shape_of(std::string const& profile, std::uint32_t size) {
  std::uint64_t const s = std::clamp<std::uint32_t>(size, 1, 100);
  Shape shape;
  if (profile == "small") {
    shape.max_steps   = 2 + s / 4;
    shape.max_threads = 2 + s * 62 / 100;
  } else if (profile == "wide") {
    shape.min_arena_log = 16, shape.max_arena_log = 19;
    shape.max_steps   = 2 + s / 12;
    shape.max_threads = 8 + s * 1016 / 100;
    shape.max_size = 1024, shape.max_align_log = 12;
  } else if (profile == "tiny") {
    shape.min_arena_log = 0, shape.max_arena_log = 5;
    shape.max_steps   = 2 + s / 10;
    shape.max_threads = 2 + s / 15;
    shape.max_size = 24, shape.max_align_log = 3;
  } else {
    HEAPLAB_EXPECTS(false, "unknown bump profile '" + profile + "'; profiles: small, wide, tiny");
  }
  return shape;
}

BumpAlloc draw_wave(Draw& d, Shape const& shape, std::uint64_t arena) {
  BumpAlloc a;
  a.threads = static_cast<std::uint32_t>(d.in(1, shape.max_threads));
  a.sizes.assign(d.one_in(2) ? 1 : d.in(2, 4), 0);
  for (auto& size : a.sizes)
    size = d.one_in(24) ? std::min(kMaxArena, arena + d.in(1, 64))  // never fits: always null
                        : d.in(1, shape.max_size);
  a.align = std::uint64_t{1} << d.below(shape.max_align_log + 1);
  a.seed  = d.any();
  return a;
}

}  // namespace

std::vector<runner::Profile> BumpFamily::profiles() const {
  return {{"small", "arenas of 64 B-16 KiB, up to 64 threads a wave: most cases run out of arena"},
          {"wide", "arenas of 64 KiB-1 MiB, up to 1024 threads a wave, alignments up to 4096"},
          {"tiny", "arenas of 1-63 B, a few threads: every edge of the end check"}};
}

runner::AnySchedule BumpFamily::generate(runner::GenerationRequest const& request,
                                         std::uint64_t seed,
                                         std::uint32_t size) const {
  Shape const shape = shape_of(request.profile, size);
  Draw d(seed);
  BumpSchedule s;
  std::uint64_t const base = std::uint64_t{1} << d.in(shape.min_arena_log, shape.max_arena_log);
  s.arena                  = base + d.below(base);
  if (request.max_size != 0) s.arena = std::min<std::uint64_t>(s.arena, request.max_size);
  std::uint64_t const steps = d.in(1, shape.max_steps);
  for (std::uint64_t i = 0; i < steps; ++i) {
    if (i > 0 && d.one_in(4))
      s.steps.push_back(BumpFreeAll{});
    else
      s.steps.push_back(draw_wave(d, shape, s.arena));
  }
  return wrap(std::move(s));
}

}  // namespace heaplab::bump_family
