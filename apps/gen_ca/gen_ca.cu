// `heaplab_apps gen-ca` (gen_ca.hpp; docs/apps.md "gen-ca"): the generational cellular automaton
// of CompactGpu sec. 5 ("Generational CA", Fig. 13) on soa::Heap. Every cell that is not dead
// (alive or dying) is one `Cell` heap object, made when the cell is born and destroyed when it
// dies; a dense grid of object pointers (nullptr: dead) serves the neighbour lookups, as in the
// paper's implementation. One generation is three phases on the heap's stream:
//
//   count:  parallel_do<Cell, &Cell::count>: every alive cell adds 1 to the alive-neighbour
//           counter of its 8 neighbours; the thread whose add finds a dead neighbour's counter at
//           0 appends that neighbour to the birth candidates (each dead cell at most once).
//   update: parallel_do<Cell, &Cell::update>: every object applies the rule to its own state and
//           counter (and zeroes the counter); a cell that becomes dead clears its grid pointer
//           and destroys its own object (allowed in parallel_do: DynaSOAr sec. 2.1).
//   birth:  one kernel over the candidates: a candidate whose count is in B gets a new Cell
//           (heap.make) and its grid pointer; every candidate's counter is zeroed.
//
// Memory orders: within a phase the counters are only added to (relaxed device-scope atomicAdd;
// the value an add returns decides the one appender of a candidate), and every cell writes only
// its own state, grid pointer and counter; the phases are separate kernels on one stream, so a
// kernel boundary orders every write of a phase before the next phase reads it (linearization
// point of generation g: the end of its birth kernel). Births only happen to cells that were dead
// when the count phase ran (their grid pointer was nullptr then and only update clears pointers,
// of cells that had objects), so a cell that dies in update is never born in the same generation,
// which is what Rule::next says.
//
// The baseline (DynaSOAr's "baseline" column): a static dense grid of states, double-buffered,
// one thread per cell, no allocation. --check compares both with the CPU reference (reference.hpp).
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
#include "common/no_device.hpp"
#include "common/phase_clock.cuh"
#include "gen_ca/dense_step.cuh"
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gen_ca.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "reference.hpp"
#include "rule.hpp"

namespace heaplab::apps::gen_ca {

struct Types;
struct World;

/// A cell that is alive (state 1) or dying (2 .. C-1); dead cells have no object.
class Cell {
 public:
  HEAPLAB_SOA_FIELDS(Cell, (std::uint32_t, index_), (std::uint8_t, state_));

  HEAPLAB_HD explicit Cell(std::uint32_t index) : index_(index), state_(std::uint8_t{kAlive}) {}

  __device__ void count(World w);
  __device__ void update(soa::HeapRef<Types> heap, World w);
  __device__ void export_state(std::uint8_t* states) { states[index_] = state_; }
  __device__ void census(unsigned long long* counts) {
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(&counts[state_ == kAlive ? 0 : 1], 1ull);
  }
};

struct Types : soa::HeapTypes<Cell> {};

/// The device view of one world (trivially copyable, passed by value).
struct World {
  std::uint32_t width  = 0;
  std::uint32_t height = 0;
  Rule rule;
  Cell** cells                = nullptr;  // W * H object pointers; nullptr: dead
  std::uint32_t* neighbours   = nullptr;  // alive-neighbour counters; all 0 between generations
  std::uint32_t* candidates   = nullptr;  // dead cells with an alive neighbour (W * H capacity)
  std::uint32_t* n_candidates = nullptr;
  unsigned long long* failed_births = nullptr;  // heap.make answered nullptr

  [[nodiscard]] __device__ std::uint32_t neighbour(std::uint32_t index, int dx, int dy) const {
    return app_neighbour<kMutantWrapPowerOfTwo>(width, height, index, dx, dy);
  }
};

__device__ void Cell::count(World w) {
  if (state_ != kAlive) return;  // only alive cells are neighbours
  std::uint32_t const self = index_;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      if (dx == 0 && dy == 0) continue;
      std::uint32_t const j = w.neighbour(self, dx, dy);
      // Relaxed add; the add that returns 0 is the one that appends a dead neighbour.
      // order: relaxed (neighbour counts and the candidate list, read by the next kernel; the add
      // that returns 0 appends)
      if (atomicAdd(&w.neighbours[j], 1u) == 0u && w.cells[j] == nullptr)
        w.candidates[atomicAdd(w.n_candidates, 1u)] = j;
    }
}

__device__ void Cell::update(soa::HeapRef<Types> heap, World w) {
  std::uint32_t const self = index_;
  std::uint32_t const n    = w.neighbours[self];
  w.neighbours[self]       = 0;
  std::uint8_t const next  = app_next<kMutantSkipDying>(w.rule, state_, n);
  if (next == kDead) {
    w.cells[self] = nullptr;
    heap.destroy(this);
    return;
  }
  state_ = next;
}

namespace {

using Heap = soa::Heap<Types>;
using Ref  = soa::HeapRef<Types>;

/// The initial population: a Cell for every alive cell of `initial`.
__global__ void populate_kernel(Ref heap, World w, std::uint8_t const* initial) {
  std::uint64_t const n = std::uint64_t{w.width} * w.height;
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    Cell* p = nullptr;
    if (initial[i] == kAlive) {
      p = heap.make<Cell>(static_cast<std::uint32_t>(i));
      // order: relaxed (a count, read by the host after the kernel)
      if (p == nullptr) atomicAdd(w.failed_births, 1ull);
    }
    w.cells[i] = p;
  }
}

__global__ void birth_kernel(Ref heap, World w) {
  std::uint32_t const n = *w.n_candidates;
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    std::uint32_t const j = w.candidates[i];
    std::uint32_t const c = w.neighbours[j];
    w.neighbours[j]       = 0;
    if (app_next<kMutantSkipDying>(w.rule, kDead, c) != kAlive) continue;
    Cell* const p = heap.make<Cell>(j);
    // order: relaxed (a count, read by the host after the kernel)
    if (p == nullptr) atomicAdd(w.failed_births, 1ull);
    w.cells[j] = p;
  }
}

/// The grid view of the state: cell i's state read through its grid pointer; 0xFF when the
/// object's index is not i (the pointer grid and the heap disagree).
__global__ void grid_states_kernel(World w, std::uint8_t* states) {
  std::uint64_t const n = std::uint64_t{w.width} * w.height;
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    Cell* const p  = w.cells[i];
    std::uint8_t s = kDead;
    if (p != nullptr) s = p->index_ == i ? p->state_.get() : std::uint8_t{0xFF};
    states[i] = s;
  }
}

struct Phases {
  double count_ms  = 0;
  double update_ms = 0;
  double birth_ms  = 0;
  [[nodiscard]] double total() const { return count_ms + update_ms + birth_ms; }
};

struct Census {
  std::uint64_t alive = 0;
  std::uint64_t dying = 0;
};

/// The heap app: the world's device arrays and the heap.
class HeapApp {
 public:
  HeapApp(GenCaOptions const& o, Rule const& rule, Grid const& initial)
      : cells_(initial.cells.size(), "gen-ca cell pointers"),
        neighbours_(initial.cells.size(), "gen-ca neighbour counters"),
        candidates_(initial.cells.size(), "gen-ca candidates"),
        n_candidates_(1, "gen-ca candidate count"),
        failed_(1, "gen-ca failed births"),
        counts_(2, "gen-ca census"),
        states_(initial.cells.size(), "gen-ca states"),
        heap_(Heap::with_blocks(heap_blocks(o, initial), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Cell>}) {
    w_.width         = initial.width;
    w_.height        = initial.height;
    w_.rule          = rule;
    w_.cells         = cells_.data();
    w_.neighbours    = neighbours_.data();
    w_.candidates    = candidates_.data();
    w_.n_candidates  = n_candidates_.data();
    w_.failed_births = failed_.data();
    auto const s     = heap_.stream();
    neighbours_.set_zero_async(s);
    failed_.set_zero_async(s);
    cudart::copy_to_device_async(states_.data(), initial.cells.data(), initial.cells.size(), s);
    populate_kernel<<<blocks_for(initial.cells.size()), kThreads, 0, s>>>(
        heap_.ref(), w_, states_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    throw_on_failed_births(0);
    // The pointer grid is the only place that points at cells: a defragmentation rewrites it.
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(cells_.data()), cells_.size(), Types::type_id<Cell>});
    (void)census();  // untimed: the first parallel_do allocates its scratch (R, CUB storage)
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.config().num_blocks; }

  /// One generation; phase times from CUDA events recorded between the phases and read once at
  /// its end (common/phase_clock.cuh: no synchronize per phase, docs/apps.md "Timing").
  Phases step() {
    auto const s = heap_.stream();
    clock_.start();
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(w_.n_candidates, 0, sizeof(std::uint32_t), s));
    // count creates and destroys no Cell: update runs on count's enumeration (Heap::Enumeration)
    // and, as its last do-all, may destroy cells.
    auto cells = heap_.enumerate<Cell>();
    cells.parallel_do<&Cell::count>(w_);
    clock_.mark();
    cells.last_parallel_do<&Cell::update>(heap_.ref(), w_);
    clock_.mark();
    birth_kernel<<<blocks_for(cells_.size()), kThreads, 0, s>>>(heap_.ref(), w_);
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    clock_.mark();
    auto const ms = clock_.phases_ms();
    return {ms.at(0), ms.at(1), ms.at(2)};
  }

  void throw_on_failed_births(int generation) {
    auto const failed = cudart::value_to_host(failed_.data(), heap_.stream());
    if (failed != 0)
      throw std::runtime_error("gen-ca: generation " + std::to_string(generation) + ": " +
                               std::to_string(failed) +
                               " births found the heap full; raise --heap-blocks (now " +
                               std::to_string(num_blocks()) + ")");
  }

  Census census() {
    counts_.set_zero_async(heap_.stream());
    heap_.parallel_do<Cell, &Cell::census>(counts_.data());
    std::vector<unsigned long long> c(2);
    cudart::copy_to_host(c.data(), counts_.data(), 2, heap_.stream());
    return {c[0], c[1]};
  }

  /// The state as the heap's objects say (every object writes its state at its index).
  Grid heap_states() {
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(states_.data(), 0, states_.size(), heap_.stream()));
    heap_.parallel_do<Cell, &Cell::export_state>(states_.data());
    return download();
  }

  /// The state as the pointer grid says (0xFF where a pointer names an object of another cell).
  Grid grid_states() {
    grid_states_kernel<<<blocks_for(cells_.size()), kThreads, 0, heap_.stream()>>>(w_,
                                                                                   states_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    return download();
  }

  /// The defragmentation policy's turn after a generation (CompactGpu sec. 3.7).
  void end_of_generation(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }

  soa::HeapStatistics statistics() const { return heap_.statistics(); }
  check::HeapSnapshot snapshot() const { return heap_.snapshot(); }
  std::optional<std::string> device_errors() const { return heap_.device_errors(); }

 private:
  static std::uint32_t heap_blocks(GenCaOptions const& o, Grid const& g) {
    if (o.heap.heap_blocks != 0) return o.heap.heap_blocks;
    constexpr std::uint64_t cap = Types::capacity<Cell>;
    std::uint64_t const b       = 4 * ((g.cells.size() + cap - 1) / cap) + 64;
    if (b > 0xFFFFFFFFull) throw std::invalid_argument("gen-ca: grid too large");
    return static_cast<std::uint32_t>(b);
  }

  Grid download() {
    Grid g(w_.width, w_.height);
    cudart::copy_to_host(g.cells.data(), states_.data(), g.cells.size(), heap_.stream());
    return g;
  }

  cudart::device_buffer<Cell*> cells_;
  cudart::device_buffer<std::uint32_t> neighbours_;
  cudart::device_buffer<std::uint32_t> candidates_;
  cudart::device_buffer<std::uint32_t> n_candidates_;
  cudart::device_buffer<unsigned long long> failed_;
  cudart::device_buffer<unsigned long long> counts_;
  cudart::device_buffer<std::uint8_t> states_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  World w_;
  PhaseClock clock_{heap_.stream(), 3};
};

struct CsvRow {
  char const* variant;
  int iteration;
  Census census;
  std::uint64_t live_objects;
  std::uint64_t allocated_blocks;
  double fragmentation;
  Phases phases;
};

void write_row(std::FILE* csv, CsvRow const& r) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%d,%llu,%llu,%llu,%llu,%.6f,%.4f,%.4f,%.4f\n",
               r.variant,
               r.iteration,
               static_cast<unsigned long long>(r.census.alive),
               static_cast<unsigned long long>(r.census.dying),
               static_cast<unsigned long long>(r.live_objects),
               static_cast<unsigned long long>(r.allocated_blocks),
               r.fragmentation,
               r.phases.count_ms,
               r.phases.update_ms,
               r.phases.birth_ms);
}

/// --check of the heap app after `generation`: the heap's objects, the pointer grid and the
/// live-object count agree exactly with the reference, and the invariant catalog holds on a
/// snapshot. Prints the first problem; false when there is one.
bool check_heap(HeapApp& app, Grid const& reference, int generation) {
  auto const fail = [&](std::string const& what) {
    std::printf("gen-ca --check FAILED at generation %d: %s\n", generation, what.c_str());
    return false;
  };
  if (auto d = first_difference(reference, app.heap_states()))
    return fail("heap objects differ from the CPU reference at " + d->to_string());
  if (auto d = first_difference(reference, app.grid_states()))
    return fail("pointer grid differs from the CPU reference at " + d->to_string() +
                " (255: the pointer names another cell's object)");
  auto const pop   = population(reference);
  auto const stats = app.statistics();
  if (stats.used_slots != pop.alive + pop.dying)
    return fail("heap holds " + std::to_string(stats.used_slots) + " live objects, the reference " +
                std::to_string(pop.alive + pop.dying) + " alive or dying cells");
  if (auto e = app.device_errors()) return fail(*e);
  auto const violations = check::check_all(app.snapshot());
  if (!violations.empty())
    return fail("invariant catalog: " + std::to_string(violations.size()) +
                " violations, first: " + violations.front().to_string());
  return true;
}

bool check_due(GenCaOptions const& o, int generation) {
  return o.check && (generation % o.check_every == 0 || generation == o.iterations);
}

/// The heap app; returns the total step time (ms) or a negative value when --check failed.
double run_heap(GenCaOptions const& o,
                Rule const& rule,
                Grid const& initial,
                std::FILE* csv,
                ProfileCsv& profile) {
  HeapApp app(o, rule, initial);
  Grid reference = initial;
  std::printf("heap: %u blocks of %u bytes, %u cells per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Cell>));
  if (o.check && !check_heap(app, reference, 0)) return -1;
  Phases total;
  for (int g = 1; g <= o.iterations; ++g) {
    Phases const p = app.step();
    app.throw_on_failed_births(g);
    IterationCost cost;
    cost.app_ms = p.total();
    app.end_of_generation(cost);
    total.count_ms += p.count_ms;
    total.update_ms += p.update_ms;
    total.birth_ms += p.birth_ms;
    if (o.check) reference = step(reference, rule);
    if (check_due(o, g) && !check_heap(app, reference, g)) return -1;
    if (profile.enabled()) profile.write("heap", g, app.statistics(), cost);
    if (csv != nullptr) {
      auto const stats = app.statistics();
      write_row(csv,
                {"heap",
                 g,
                 app.census(),
                 stats.used_slots,
                 stats.allocated_blocks,
                 stats.fragmentation,
                 p});
    }
  }
  auto const c     = app.census();
  auto const stats = app.statistics();
  std::printf(
      "heap:     %d generations, count %.3f ms, update %.3f ms, birth %.3f ms, total %.3f ms\n",
      o.iterations,
      total.count_ms,
      total.update_ms,
      total.birth_ms,
      total.total());
  if (auto const& d = app.defrag_total(); d.defrag_calls > 0)
    std::printf("heap:     defragmentation %s, %.1f%% of the generations' time\n",
                app.defrag_summary().c_str(),
                100.0 * d.defrag_ms / std::max(total.total(), 1e-9));
  std::printf(
      "heap:     final population alive %llu, dying %llu; live objects %llu in %llu blocks, F "
      "%.4f\n",
      static_cast<unsigned long long>(c.alive),
      static_cast<unsigned long long>(c.dying),
      static_cast<unsigned long long>(stats.used_slots),
      static_cast<unsigned long long>(stats.allocated_blocks),
      stats.fragmentation);
  return total.total() + app.defrag_total().defrag_ms;
}

/// The static dense-grid baseline; returns the total step time (ms), negative when --check failed.
double run_baseline(GenCaOptions const& o, Rule const& rule, Grid const& initial, std::FILE* csv) {
  std::size_t const n = initial.cells.size();
  cudart::device_buffer<std::uint8_t> cur(n, "gen-ca baseline grid");
  cudart::device_buffer<std::uint8_t> next(n, "gen-ca baseline grid");
  cudart::copy_to_device_async(cur.data(), initial.cells.data(), n, nullptr);
  Grid reference = initial;
  Grid host(initial.width, initial.height);
  PhaseClock clock(nullptr, 1);  // the same clock as the heap variant's
  double total = 0;
  for (int g = 1; g <= o.iterations; ++g) {
    Phases p;
    clock.start();
    dense_step_kernel<kMutantSkipDying>
        <<<blocks_for(n), kThreads>>>(rule, initial.width, initial.height, cur.data(), next.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    clock.mark();
    p.update_ms = clock.phases_ms().at(0);
    total += p.update_ms;
    cur.swap(next);
    if (o.check) reference = step(reference, rule);
    bool const need_host = check_due(o, g) || csv != nullptr || g == o.iterations;
    if (!need_host) continue;
    cudart::copy_to_host(host.cells.data(), cur.data(), n);
    if (check_due(o, g))
      if (auto d = first_difference(reference, host)) {
        std::printf(
            "gen-ca --check FAILED at generation %d: baseline grid differs from the CPU "
            "reference at %s\n",
            g,
            d->to_string().c_str());
        return -1;
      }
    auto const pop = population(host);
    write_row(csv, {"baseline", g, {pop.alive, pop.dying}, 0, 0, 0.0, p});
    if (g == o.iterations) {
      std::printf("baseline: %d generations, step %.3f ms\n", o.iterations, total);
      std::printf("baseline: final population alive %llu, dying %llu\n",
                  static_cast<unsigned long long>(pop.alive),
                  static_cast<unsigned long long>(pop.dying));
    }
  }
  return total;
}

void validate(GenCaOptions const& o) {
  if (o.width == 0 || o.height == 0)
    throw std::invalid_argument("gen-ca: --width and --height must be >= 1");
  if (std::uint64_t{o.width} * o.height > (std::uint64_t{1} << 31))
    throw std::invalid_argument("gen-ca: at most 2^31 cells");
  if (o.iterations < 0) throw std::invalid_argument("gen-ca: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("gen-ca: --check-every must be >= 1");
  apps::validate(o.heap);
}

}  // namespace

int run_gen_ca(GenCaOptions const& o) {
  validate(o);
  Rule const rule    = parse_rule(o.rule);
  Grid const initial = initial_grid(o.width, o.height, o.seed, o.density);
  auto const d       = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  std::printf(
      "gen-ca: %ux%u torus, rule %s (S mask 0x%x, B mask 0x%x, C %u), density %.3f, seed %llu, "
      "%d generations%s%s\n"
      "gen-ca: heap: %s\n",
      o.width,
      o.height,
      o.rule.c_str(),
      rule.survive,
      rule.birth,
      rule.generations,
      o.density,
      static_cast<unsigned long long>(o.seed),
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str(),
      describe(o.heap).c_str());
  CsvFile const csv = open_csv(o.csv,
                               "gen-ca",
                               "variant,iteration,alive,dying,live_objects,allocated_blocks,"
                               "fragmentation,count_ms,update_ms,birth_ms");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, "gen-ca", Types::block_bytes);
  double const heap_ms = run_heap(o, rule, initial, csv.get(), profile);
  if (heap_ms < 0) return 1;
  if (!o.baseline) {
    if (o.check) std::printf("gen-ca --check passed\n");
    return 0;
  }
  double const base_ms = run_baseline(o, rule, initial, csv.get());
  if (base_ms < 0) return 1;
  if (base_ms > 0) std::printf("heap / baseline: %.2fx (same run)\n", heap_ms / base_ms);
  if (o.check) std::printf("gen-ca --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::gen_ca
