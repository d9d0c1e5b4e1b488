// Shared by gpu_rw_bm_tas_test (GPU) and rw_test's RwTasSim.* (CPU): the step statistics of
// one allocation wave (TAS, WAS: RW sec. 3.2.1), and a host simulation of the GPU's wave that runs
// the same walk code (PagePoolRef, the CoRW phase functions) on a HostPool preset exactly like
// rw::DevicePool::preset_free (the free pages PagePermutation(T, seed)(0 .. A - 1)) with the same
// per-thread random numbers (thread_rng(seed, i)). docs/rw.md "TAS and WAS".
//
// The simulation is round-interleaved, the mean-field picture of N GPU threads walking at once:
// in round r every thread that still needs a page takes its r-th step (the order of the threads
// is reshuffled each round). RW, RW-BM: either one thread after another (get_page_* bounded to one
// step: no collisions) or all reads of the round before all claims (every step overlaps: the most
// collisions, RW sec. 3.2.2; the GPU's first steps are close to this); the GPU lies between.
// CoRW runs round r of every warp phase by phase across the warps (all warps read and lock, then
// each distributes, then all claim and unlock), so the LockMap is held across warps as on the GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "heaplab/core/atomics.hpp"
#include "heaplab/rw/analysis.hpp"
#include "heaplab/rw/corw.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/rw/preset.hpp"
#include "heaplab/rw/step_executor.hpp"

namespace heaplab::rw_test {

/// One wave's step statistics: TAS = mean X_i over the threads that got a page, WAS = mean over
/// warps (32 consecutive threads) of the warp's largest X_i; nulls = threads without a page.
struct WaveSteps {
  double tas          = 0;
  double was          = 0;
  double warp_max_sq  = 0;  // sum of the squared warp maxima (for their spread)
  std::uint32_t warps = 0;
  std::uint32_t nulls = 0;
};

inline WaveSteps wave_steps(rw::AllocResult const& r) {
  WaveSteps s;
  auto const n      = static_cast<std::uint32_t>(r.steps.size());
  std::uint64_t sum = 0, warp_sum = 0;
  std::uint32_t warp_max = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (r.first[i] == rw::kNoPage) ++s.nulls;
    sum += r.steps[i];
    warp_max = std::max(warp_max, r.steps[i]);
    if (i % rw::kWarpLanes == rw::kWarpLanes - 1 || i + 1 == n) {
      warp_sum += warp_max;
      s.warp_max_sq += static_cast<double>(warp_max) * warp_max;
      warp_max = 0;
      ++s.warps;
    }
  }
  s.tas = n == 0 ? 0.0 : static_cast<double>(sum) / n;
  s.was = s.warps == 0 ? 0.0 : static_cast<double>(warp_sum) / s.warps;
  return s;
}

/// "" if every thread got a distinct page below t, else what is wrong (the first problem).
inline std::string ownership_problem(rw::AllocResult const& r, std::uint32_t t) {
  std::vector<std::uint32_t> pages;
  for (std::size_t i = 0; i < r.first.size(); ++i) {
    if (r.first[i] >= t)
      return "thread " + std::to_string(i) + " got no page or a page beyond T (" +
             std::to_string(r.steps[i]) + " steps)";
    pages.push_back(r.first[i]);
  }
  std::sort(pages.begin(), pages.end());
  auto const dup = std::adjacent_find(pages.begin(), pages.end());
  return dup == pages.end() ? "" : "page " + std::to_string(*dup) + " went to two threads";
}

/// A host pool preset like DevicePool::preset_free(a, seed): every page used except
/// PagePermutation(T, seed)(0 .. a - 1).
template <class W>
void preset_free_like_device(rw::HostPool<W>& pool, std::uint32_t a, std::uint64_t seed) {
  rw::PoolStorage<W> const s = pool.storage();
  std::fill(s.used, s.used + s.num_words, static_cast<W>(~W{0}));
  rw::PagePermutation const perm(s.num_pages, seed);
  constexpr std::uint32_t bits = sizeof(W) * 8;
  for (std::uint32_t i = 0; i < a; ++i) {
    std::uint32_t const p = perm(i);
    s.used[p / bits] &= static_cast<W>(~(W{1} << (p % bits)));
  }
}

/// HostAtomics without the yield on a failed step: the simulation is one thread.
struct SimAtomics : core::HostAtomics {
  static void backoff(core::Backoff) {}
};

namespace detail {

/// How the steps of one round overlap. one_by_one: each thread's step sees the claims of the
/// steps before it in the round (get_page_* bounded to one step: no two walkers ever target the
/// same page at once). together: every needy thread reads (step_candidate), then every one claims
/// (claim_bits) -- all steps of a round overlap, the most collisions; the GPU is close to this for
/// the first steps of a wave (docs/rw.md "TAS and WAS").
enum class Overlap : std::uint8_t { one_by_one, together };

/// The candidate of one step of get_page_rw / get_page_bm (RW Alg. 1 lines 2-3; sec. 4.1) from
/// the same random numbers: the used word and the bit to claim, or none (the page was used, the
/// word full). page_pool.hpp's step without its claim; RwTasSim.StepCandidateIsTheWalksStep
/// checks it against get_page_* bounded to one step.
struct Candidate {
  std::uint32_t word = 0, bit = 0;
  bool ok = false;
};

template <class A, class W>
Candidate step_candidate(rw::PagePoolRef<A, W> const& ref, core::RwAlgorithm a, rw::PageRng& rng) {
  constexpr std::uint32_t bits = sizeof(W) * 8;
  rw::PoolStorage<W> const& s  = ref.storage();
  Candidate c;
  if (a == core::RwAlgorithm::rw) {
    std::uint32_t const p = rng.below(s.num_pages);
    c.word                = p / bits;
    c.bit                 = p % bits;
    c.ok                  = ((ref.load_word(c.word) >> c.bit) & 1u) == 0;
    return c;
  }
  std::uint64_t const x = rng.next();
  c.word                = static_cast<std::uint32_t>(((x >> 32) * s.num_words) >> 32);
  W const v             = ref.load_word(c.word);
  c.ok                  = v != static_cast<W>(~W{0});
  if (c.ok) c.bit = rw::detail::zero_bit_from(v, static_cast<std::uint32_t>(x % bits));
  return c;
}

/// RW / RW-BM: every needy thread takes one step per round, overlapping as `overlap` says.
template <class W>
rw::AllocResult walk_rounds(rw::HostPool<W>& pool,
                            core::RwAlgorithm algorithm,
                            std::uint32_t n,
                            std::uint64_t seed,
                            Overlap overlap) {
  rw::PoolStorage<W> one_step = pool.storage();
  std::uint32_t const bound   = one_step.max_steps;
  one_step.max_steps          = 1;
  rw::PagePoolRef<SimAtomics, W> const ref(one_step);
  constexpr std::uint32_t bits = sizeof(W) * 8;
  std::vector<rw::PageRng> rng(n);
  for (std::uint32_t i = 0; i < n; ++i) rng[i] = rw::thread_rng(seed, i);
  rw::AllocResult out{std::vector<std::uint32_t>(n, rw::kNoPage), std::vector<std::uint32_t>(n, 0)};
  std::vector<std::uint32_t> needy(n);
  std::iota(needy.begin(), needy.end(), 0u);
  std::vector<Candidate> cand(n);
  rw::PageRng order{seed ^ 0x5eedull};
  for (std::uint32_t round = 1; round <= bound && !needy.empty(); ++round) {
    for (std::size_t k = needy.size(); k > 1; --k)  // Fisher-Yates: no thread always goes first
      std::swap(needy[k - 1], needy[order.below(static_cast<std::uint32_t>(k))]);
    if (overlap == Overlap::together)
      for (std::uint32_t i : needy) cand[i] = step_candidate(ref, algorithm, rng[i]);
    std::vector<std::uint32_t> still;
    for (std::uint32_t i : needy) {
      out.steps[i] = round;
      if (overlap == Overlap::one_by_one) {
        rw::GetPageResult const g =
            algorithm == core::RwAlgorithm::rw ? ref.get_page_rw(rng[i]) : ref.get_page_bm(rng[i]);
        if (g.ok())
          out.first[i] = g.page;
        else
          still.push_back(i);
        continue;
      }
      Candidate const c = cand[i];
      bool const won    = c.ok && ref.claim_bits(c.word, static_cast<W>(W{1} << c.bit)) != 0;
      if (won)
        out.first[i] = c.word * bits + c.bit;
      else
        still.push_back(i);
    }
    needy.swap(still);
  }
  return out;
}

/// CoRW: round r of every warp, phase by phase across the warps (corw.hpp's phase functions; the
/// same sequence per warp as corw_get_pages).
template <class W>
rw::AllocResult corw_rounds(rw::HostPool<W>& pool, std::uint32_t n, std::uint64_t seed) {
  auto const ref            = pool.template ref<SimAtomics>();
  std::uint32_t const bound = pool.storage().max_steps;
  std::uint32_t const warps = (n + rw::kWarpLanes - 1) / rw::kWarpLanes;
  std::vector<rw::PageRng> rng(n);
  for (std::uint32_t i = 0; i < n; ++i) rng[i] = rw::thread_rng(seed, i);
  std::vector<rw::corw::LaneRound<W>> lane(std::size_t{warps} * rw::kWarpLanes);
  std::vector<rw::LaneMask> group(warps, 0), need(warps, 0);
  for (std::uint32_t i = 0; i < n; ++i) group[i / rw::kWarpLanes] |= 1u << (i % rw::kWarpLanes);
  need = group;
  rw::AllocResult out{std::vector<std::uint32_t>(n, rw::kNoPage), std::vector<std::uint32_t>(n, 0)};
  auto const in   = [&](std::uint32_t i) { return ((group[i / 32] >> (i % 32)) & 1u) != 0; };
  auto const busy = [&](std::uint32_t g) { return need[g] != 0; };
  for (std::uint32_t round = 1; round <= bound; ++round) {
    bool any = false;
    for (std::uint32_t i = 0; i < n; ++i)  // phase 1: every lane of a warp still at work
      if (in(i) && busy(i / 32)) rw::corw::start_round(ref, lane[i], rng[i]), any = true;
    if (!any) break;
    for (std::uint32_t g = 0; g < warps; ++g)  // phase 2: registers only
      if (busy(g)) rw::corw::distribute(&lane[std::size_t{g} * 32], group[g], need[g]);
    for (std::uint32_t i = 0; i < n; ++i)  // phases 3-4: claims, unlocks
      if (in(i) && busy(i / 32)) rw::corw::claim_and_unlock(ref, lane[i]);
    for (std::uint32_t i = 0; i < n; ++i) {  // settle: a receiver keeps a page its provider won
      std::uint32_t const g = i / 32, l = i % 32;
      if (((need[g] >> l) & 1u) == 0) continue;
      rw::corw::LaneRound<W> const& r = lane[i];
      W const won  = r.provider < 0 ? W{0} : lane[std::size_t{g} * 32 + r.provider].won;
      out.steps[i] = round;
      if (rw::corw::keeps(r, won)) out.first[i] = r.page, need[g] &= ~(1u << l);
    }
  }
  return out;
}

}  // namespace detail

/// One allocation wave of n threads (one page each, thread i walking with thread_rng(seed, i)) on
/// a pool of `config` preset with `a` free pages by `preset_seed`, simulated on the host as
/// described at the top. Threads still needy after max_steps rounds get kNoPage.
template <class W>
rw::AllocResult simulate_wave(rw::PoolConfig const& config,
                              core::RwAlgorithm algorithm,
                              std::uint32_t a,
                              std::uint64_t preset_seed,
                              std::uint32_t n,
                              std::uint64_t seed,
                              detail::Overlap overlap = detail::Overlap::one_by_one) {
  rw::HostPool<W> pool(config);
  preset_free_like_device(pool, a, preset_seed);
  if (algorithm == core::RwAlgorithm::corw) return detail::corw_rounds(pool, n, seed);
  return detail::walk_rounds(pool, algorithm, n, seed, overlap);
}

// ---------------------------------------------------------------------------------------------
// The checks of the GPU test, shared with the CPU test that runs them on the simulation and feeds
// them broken measurements (docs/rw.md "TAS and WAS": the tolerances and why).

/// One cell of the table: an algorithm on w-bit words, T pages, A free, N threads asking.
struct TasCell {
  core::RwAlgorithm algorithm = core::RwAlgorithm::rw_bm;
  unsigned w                  = 32;  // 1 for RW (the model's w); the pool's words are then 32 bits
  std::uint32_t t = 0, a = 0, n = 0;
  [[nodiscard]] unsigned word_bits() const { return w == 64 ? 64 : 32; }
  [[nodiscard]] std::string name() const {
    std::string const alg = core::rw_algorithm_name(algorithm);
    return algorithm == core::RwAlgorithm::rw ? alg : alg + std::to_string(w);
  }
};

/// Step statistics of one cell over several runs.
struct Measured {
  unsigned runs       = 0;
  double tas          = 0;  // mean over runs of the wave's TAS
  double was          = 0;  // mean over runs of the wave's WAS
  double tas_run_sd   = 0;  // spread of the runs' TAS
  double was_run_sd   = 0;
  double warp_max_sd  = 0;  // spread of the warp maxima, pooled over the runs
  std::uint64_t warps = 0;
  std::uint32_t nulls = 0;
  [[nodiscard]] double tas_se() const { return runs > 1 ? tas_run_sd / std::sqrt(runs) : 0.0; }
  /// The larger of the between-run and the pooled-warp standard errors of the mean WAS.
  [[nodiscard]] double was_se() const {
    double const by_runs  = runs > 1 ? was_run_sd / std::sqrt(runs) : 0.0;
    double const by_warps = warps > 1 ? warp_max_sd / std::sqrt(static_cast<double>(warps)) : 0.0;
    return std::max(by_runs, by_warps);
  }
};

/// A wave of cell.n threads on a pool of cell.t pages preset with cell.a free by `preset_seed`,
/// thread i walking with thread_rng(seed, i): on the GPU (DevicePool) or simulated.
using WaveFn = std::function<rw::AllocResult(TasCell const&, std::uint64_t, std::uint64_t)>;

/// The failures of a table (empty: every check passed).
using Failures = std::vector<std::string>;
/// The prefix of a failure that is not statistical: a page handed out twice, beyond T, or missing.
inline constexpr char const* kOwnershipFailure = "ownership: ";

inline Measured measure(WaveFn const& wave, TasCell const& c, unsigned runs, Failures& failures) {
  Measured m;
  m.runs        = runs;
  double tas_sq = 0, was_sq = 0, warp_sq = 0, warp_sum = 0;
  for (unsigned run = 0; run < runs; ++run) {
    std::uint64_t const preset_seed = 1000u * run + c.a + 17u * c.w;
    std::uint64_t const seed        = 77u + 1009u * run + c.n + static_cast<unsigned>(c.algorithm);
    rw::AllocResult const r         = wave(c, preset_seed, seed);
    std::string const problem       = ownership_problem(r, c.t);
    if (!problem.empty()) failures.push_back(kOwnershipFailure + c.name() + ": " + problem);
    WaveSteps const s = wave_steps(r);
    m.tas += s.tas / runs;
    m.was += s.was / runs;
    tas_sq += s.tas * s.tas / runs;
    was_sq += s.was * s.was / runs;
    warp_sum += s.was * s.warps;
    warp_sq += s.warp_max_sq;
    m.warps += s.warps;
    m.nulls += s.nulls;
  }
  double const fix = runs > 1 ? static_cast<double>(runs) / (runs - 1) : 0.0;  // unbiased
  m.tas_run_sd     = std::sqrt(std::max(0.0, (tas_sq - m.tas * m.tas) * fix));
  m.was_run_sd     = std::sqrt(std::max(0.0, (was_sq - m.was * m.was) * fix));
  double const wm  = m.warps == 0 ? 0.0 : warp_sum / static_cast<double>(m.warps);
  m.warp_max_sd    = m.warps < 2 ? 0.0 : std::sqrt(std::max(0.0, warp_sq / m.warps - wm * wm));
  return m;
}

/// The TAS model of a walker cell and the derived tolerance (docs/rw.md "TAS and WAS").
struct TasModel {
  double eq4       = 0;  // the paper's Eq. 4 (Eq. 2's exact form for w = 1)
  double occupancy = 0;  // rw_bm_occupancy: Eq. 4 with the word occupancy tracked
  double se        = 0;  // standard error of the measured mean: model's or between runs, larger
  double collide   = 0;  // allowance for concurrent walkers in the same word at the same step
  [[nodiscard]] double tolerance() const { return 5 * se + collide; }
};

inline TasModel tas_model(TasCell const& c, Measured const& m) {
  namespace an                 = rw::analysis;
  an::OccupancyModel const occ = an::rw_bm_occupancy(c.t, c.a, c.n, c.w);
  TasModel model;
  model.eq4       = an::tas(c.t, c.a, c.n, c.w);
  model.occupancy = occ.tas;
  model.se        = std::max(std::sqrt(occ.tas_variance / m.runs), m.tas_se());
  // Two walkers collide when they read the same word in the same step and target the same free
  // page (probability collide_rate); the loser takes one more step. Pairs in a step with a_r
  // walkers: a_r^2 / (2 words); sum_r a_r = N TAS and a_r <= N, so per thread at most
  // N / (2 words) x collide_rate x TAS (RW sec. 3.2.2's birthday count, over all steps). On the
  // GPU the first steps of all N threads overlap (docs/rw.md "TAS and WAS").
  double const words = static_cast<double>(c.t) / c.w;
  model.collide      = c.n / (2.0 * words) * occ.collide_rate * occ.tas;
  return model;
}

inline std::string fmt(char const* format, double a, double b, double c, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

/// RW / RW-BM: the measured TAS against the occupancy model (within the tolerance) and against
/// Eq. 4 (within the tolerance below, and above by at most the model's own error occupancy - Eq.
/// 4: Eq. 4 underestimates RW-BM, never overestimates it).
inline void check_walker_tas(TasCell const& c, Measured const& m, Failures& failures) {
  TasModel const model = tas_model(c, m);
  double const tol     = model.tolerance();
  if (std::fabs(m.tas - model.occupancy) > tol)
    failures.push_back(c.name() + fmt(": TAS %.4f differs from the occupancy model %.4f by more "
                                      "than %.4f",
                                      m.tas,
                                      model.occupancy,
                                      tol));
  double const own_error = std::max(0.0, model.occupancy - model.eq4);
  if (m.tas < model.eq4 - tol || m.tas > model.eq4 + own_error + tol)
    failures.push_back(c.name() + fmt(": TAS %.4f outside Eq. 4 %.4f - %.4f .. + %.4f",
                                      m.tas,
                                      model.eq4,
                                      tol,
                                      own_error + tol));
}

/// The WAS bound a cell's mean warp maximum must stay below: Eq. 5 (Eq. 3 for w = 1) or, where
/// RW-BM's uneven emptying makes full words likelier than Eq. 5 assumes, the same form with the
/// occupancy model's end state; infinite when A <= N.
inline double was_limit(TasCell const& c) {
  return std::max(rw::analysis::was_bound(c.t, c.a, c.n, c.w),
                  rw::analysis::was_bound_occupancy(c.t, c.a, c.n, c.w));
}

/// The measured WAS must stay below was_limit plus the collisions of a warp's 32 lanes (each
/// lane's extra steps are at most tas_model().collide in expectation, and a warp's maximum grows
/// by at most their sum) plus 5 standard errors.
inline void check_was(TasCell const& c, Measured const& m, Failures& failures) {
  double const limit = was_limit(c);
  if (std::isinf(limit)) return;  // A = N: no bound
  double const collide = rw::kWarpLanes * tas_model(c, m).collide;
  if (m.was > limit + collide + 5 * m.was_se())
    failures.push_back(c.name() + fmt(": WAS %.4f above the bound %.4f + collisions %.4f + 5 x "
                                      "%.4f",
                                      m.was,
                                      limit,
                                      collide,
                                      m.was_se()));
}

/// CoRW against RW-BM's model: per lane no more steps than RW-BM's TAS (occupancy model, same w)
/// and the warp's rounds below RW-BM's WAS bound; where one round serves a warp (A/T >= 10 %) the
/// paper's TAS ~ WAS: WAS - TAS <= 0.05.
inline void check_corw(TasCell const& c, Measured const& m, Failures& failures) {
  TasModel const bm = tas_model(c, m);
  if (m.tas > bm.occupancy + bm.tolerance())
    failures.push_back(
        c.name() +
        fmt(": TAS %.4f above RW-BM's %.4f + %.4f", m.tas, bm.occupancy, bm.tolerance()));
  check_was(c, m, failures);
  if (c.a * 10ull >= c.t && m.was - m.tas > 0.05)
    failures.push_back(c.name() + fmt(": WAS %.4f and TAS %.4f differ by more than 0.05 at "
                                      "A/T >= 10 %%",
                                      m.was,
                                      m.tas,
                                      0));
}

/// Theorem 1 at A = N: TAS_RW / TAS_RWBM. The paper's limit is w; at finite T Eq. 2 / Eq. 4
/// gives slightly less, and RW-BM's uneven emptying less again: the expected ratio is
/// Eq. 2 / occupancy model. Tolerance 5 standard errors of the ratio (relative errors added in
/// quadrature).
inline void check_theorem1(TasCell const& rw_cell,
                           Measured const& rw_m,
                           TasCell const& bm_cell,
                           Measured const& bm_m,
                           Failures& failures) {
  TasModel const a = tas_model(rw_cell, rw_m), b = tas_model(bm_cell, bm_m);
  double const ratio    = rw_m.tas / bm_m.tas;
  double const expected = a.occupancy / b.occupancy;
  double const rel      = std::hypot(a.se / rw_m.tas, b.se / bm_m.tas);
  if (std::fabs(ratio - expected) > 5 * rel * expected)
    failures.push_back(bm_cell.name() + fmt(": Theorem 1 ratio %.3f, expected %.3f +- %.3f (w = "
                                            "%.0f)",
                                            ratio,
                                            expected,
                                            5 * rel * expected,
                                            bm_cell.w));
}

/// Theorem 2 (A -> N) as a measured ratio: WAS_RWBM / (WAS_RW / w + (w - 1) / (2w)). Exact between
/// the bounds; the measured ratio is expected at was_bound_occupancy / was_bound (the factor by
/// which the uneven emptying raises RW-BM's bound). Tolerance 5 standard errors of the ratio.
inline void check_theorem2(TasCell const& /*rw_cell*/,
                           Measured const& rw_m,
                           TasCell const& bm_cell,
                           Measured const& bm_m,
                           Failures& failures) {
  namespace an          = rw::analysis;
  double const w        = bm_cell.w;
  double const scaled   = rw_m.was / w + (w - 1) / (2 * w);
  double const ratio    = bm_m.was / scaled;
  double const expected = an::was_bound_occupancy(bm_cell.t, bm_cell.a, bm_cell.n, bm_cell.w) /
                          an::was_bound(bm_cell.t, bm_cell.a, bm_cell.n, bm_cell.w);
  double const rel = std::hypot(bm_m.was_se() / bm_m.was, rw_m.was_se() / w / scaled);
  if (std::fabs(ratio - expected) > 5 * rel * expected)
    failures.push_back(bm_cell.name() + fmt(": Theorem 2 ratio %.3f, expected %.3f +- %.3f (w = "
                                            "%.0f)",
                                            ratio,
                                            expected,
                                            5 * rel * expected,
                                            w));
}

inline void print_row(TasCell const& c, Measured const& m) {
  TasModel const model = tas_model(c, m);
  std::printf("%-8s %5.1f %7u %6u %9.3f %9.3f %9.3f %7.3f %10.3f %10.3f %10.3f %6.3f %5u\n",
              c.name().c_str(),
              100.0 * c.a / c.t,
              c.a,
              c.n,
              m.tas,
              model.eq4,
              model.occupancy,
              model.tolerance(),
              m.was,
              rw::analysis::was_bound(c.t, c.a, c.n, c.w),
              was_limit(c),
              m.tas / m.was,
              m.nulls);
}

/// The whole table on T = 2^20 pages: RW-BM (32, 64) and CoRW (32, 64) at A/T = 50, 10, 1, 0.7,
/// 0.5 % with N = 5000 and at 0.5 % with N = A; RW at 0.5 % with N = 5000 and N = A for the
/// theorems (`rw_runs` runs: its TAS at N = A varies most). Prints a row per cell; returns the
/// failures.
inline Failures run_tas_table(WaveFn const& wave, unsigned runs, unsigned rw_runs) {
  std::uint32_t const t = 1u << 20;
  Failures failures;
  std::printf("%-8s %5s %7s %6s %9s %9s %9s %7s %10s %10s %10s %6s %5s\n",
              "cell",
              "A/T%",
              "A",
              "N",
              "TAS",
              "Eq.4",
              "occupancy",
              "tol",
              "WAS",
              "Eq.5",
              "WAS limit",
              "T/W",
              "nulls");
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sizes;  // (A, N)
  for (double percent : {50.0, 10.0, 1.0, 0.7, 0.5})
    sizes.emplace_back(static_cast<std::uint32_t>(std::llround(t * percent / 100.0)), 5000u);
  std::uint32_t const a_low = sizes.back().first;
  sizes.emplace_back(a_low, a_low);              // N = A: every free page taken
  std::vector<std::pair<TasCell, Measured>> bm;  // the RW-BM cells at 0.5 %, for the theorems
  for (auto const& [a, n] : sizes) {
    for (core::RwAlgorithm alg : {core::RwAlgorithm::rw_bm, core::RwAlgorithm::corw}) {
      for (unsigned w : {32u, 64u}) {
        TasCell const c{alg, w, t, a, n};
        Measured const m = measure(wave, c, runs, failures);
        print_row(c, m);
        if (alg == core::RwAlgorithm::corw) {
          check_corw(c, m, failures);
          continue;
        }
        check_walker_tas(c, m, failures);
        check_was(c, m, failures);
        if (a == a_low) bm.emplace_back(c, m);
      }
    }
  }
  for (std::uint32_t n : {5000u, a_low}) {  // RW at 0.5 %: Theorem 2 (N < A), Theorem 1 (N = A)
    TasCell const c{core::RwAlgorithm::rw, 1, t, a_low, n};
    Measured const m = measure(wave, c, rw_runs, failures);
    print_row(c, m);
    check_walker_tas(c, m, failures);
    check_was(c, m, failures);
    for (auto const& [bc, bmm] : bm) {
      if (bc.n != n) continue;
      if (n == a_low) check_theorem1(c, m, bc, bmm, failures);
      if (n < a_low) check_theorem2(c, m, bc, bmm, failures);
      namespace an = rw::analysis;
      double const ratio =
          n == a_low ? m.tas / bmm.tas : bmm.was / (m.was / bc.w + (bc.w - 1.0) / (2.0 * bc.w));
      double const expected =
          n == a_low
              ? an::tas(t, n, n, 1) / an::rw_bm_occupancy(t, n, n, bc.w).tas
              : an::was_bound_occupancy(t, a_low, n, bc.w) / an::was_bound(t, a_low, n, bc.w);
      std::printf("Theorem %d, %s: measured ratio %.3f, expected %.3f (the paper's limit: %s)\n",
                  n == a_low ? 1 : 2,
                  bc.name().c_str(),
                  ratio,
                  expected,
                  n == a_low ? "w" : "1, i.e. V' = V / w + (w - 1) / (2w)");
    }
  }
  for (auto const& f : failures) std::printf("FAILED: %s\n", f.c_str());
  return failures;
}

}  // namespace heaplab::rw_test
