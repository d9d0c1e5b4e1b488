// `heaplab_bench rw fig12` (rw_bench.hpp; docs/rw.md "Benchmarks"): RW sec. 5.2.3's case study,
// simplified. A hash join of two tables of n tuples each, written by us:
//   build table R: n distinct 31-bit keys (PagePermutation of [0, 2^31)), row ids 0..n-1;
//   probe table S: tuple s matches R row j(s) with probability --match-rate (its key is R's
//                  key of row j), otherwise it has a key with bit 31 set, which R never has.
// build: an open-addressing hash table (linear probing, capacity the power of two >= 2n) from R;
// probe: one thread per S tuple; a thread whose key matches asks the allocator under test for one
// output page (RW, RW-BM, CoRW, the queue, DO's counter, or Ouroboros in a build with it:
// ouroboros_bench.hpp's OuroborosProbe, a page-sized malloc numbered as a page) and writes its
// record (key, R row, S row) at the start of the page; it records the page in out_page[s]. Threads
// without a match ask for nothing (divergence within warps, as in the paper's kernel).
// Timed: the build and the probe kernels ("join"), each with CUDA events; the allocator's reset
// and the table's clearing are outside. Verified after every run on the device: every match's
// record present exactly once (count, and a checksum over (key, R row, S row)) against the host's
// reference computed from the generator, no output for a non-match; up to --check-rows-max also
// on the host: the output pages of all matches are distinct.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "heaplab/core/mix.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/rw/device_baselines.hpp"
#include "heaplab/rw/device_pool.hpp"
#include "heaplab/rw/page_sources.cuh"
#include "heaplab/rw/preset.hpp"
#include "rw_bench.hpp"
#include "rw_bench_support.hpp"
#include "rw_hash_join.cuh"
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
#include "heaplab/families/malloc/ouroboros_geometry.hpp"
#include "ouroboros_bench.hpp"
#endif
#include "timing.hpp"

namespace heaplab::bench {

namespace {

using join::kEmptyEntry;
using join::key_hash;
using join::probe_kernel;
using join::record_mix;

constexpr unsigned kBlock = 256;

/// The two tables and the expected result, generated on the host.
struct JoinInput {
  std::vector<std::uint32_t> r_key, s_key;
  std::vector<std::uint32_t> expected_r;  // per S tuple: the matching R row, or kNoPage
  std::uint64_t matches  = 0;
  std::uint64_t checksum = 0;  // sum of record_mix over the matches (mod 2^64)
};

JoinInput generate(std::uint64_t n, double match_rate, std::uint64_t seed) {
  JoinInput in;
  rw::PagePermutation const keys(1u << 31, seed);
  in.r_key.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) in.r_key[i] = keys(static_cast<std::uint32_t>(i));
  in.s_key.resize(n);
  in.expected_r.assign(n, rw::kNoPage);
  auto const threshold = static_cast<std::uint64_t>(match_rate * 4294967296.0);
  for (std::uint64_t s = 0; s < n; ++s) {
    std::uint64_t const u = core::splitmix64(seed ^ (s * core::kGoldenGamma) ^ 0x5bd1e995u);
    if ((u >> 32) < threshold) {
      auto const j     = static_cast<std::uint32_t>(((u & 0xFFFFFFFFu) * n) >> 32);
      in.s_key[s]      = in.r_key[j];
      in.expected_r[s] = j;
      ++in.matches;
      in.checksum += record_mix(in.s_key[s], j, static_cast<std::uint32_t>(s));
    } else {
      in.s_key[s] = 0x80000000u | static_cast<std::uint32_t>(u & 0x7FFFFFFFu);
    }
  }
  return in;
}

__global__ void build_kernel(std::uint32_t const* r_key,
                             std::uint32_t n,
                             std::uint64_t* table,
                             std::uint32_t mask) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::uint64_t const entry = std::uint64_t{r_key[i]} << 32 | i;
  for (std::uint32_t slot = key_hash(r_key[i]) & mask;; slot = (slot + 1) & mask) {
    auto* cell = reinterpret_cast<unsigned long long*>(table + slot);
    if (atomicCAS(cell, kEmptyEntry, entry) == kEmptyEntry) return;
  }
}

struct VerifyCounters {
  unsigned long long found, checksum, wrong;
};

/// Every S tuple: a record exactly where out_page says, with the expected contents.
__global__ void verify_kernel(std::uint32_t const* s_key,
                              std::uint32_t const* expected_r,
                              std::uint32_t n,
                              std::uint32_t const* data,
                              std::uint32_t page_words,
                              std::uint32_t const* out_page,
                              VerifyCounters* c) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto const s             = static_cast<std::uint32_t>(i);
  std::uint32_t const page = out_page[s], r = expected_r[s];
  if (page == rw::kNoPage) return;  // no match, or a failed allocation (counted by the probe)
  std::uint32_t const* record = data + std::uint64_t{page} * page_words;
  if (r == rw::kNoPage || record[0] != s_key[s] || record[1] != r || record[2] != s) {
    atomicAdd(&c->wrong, 1ull);
    return;
  }
  atomicAdd(&c->found, 1ull);
  atomicAdd(&c->checksum, static_cast<unsigned long long>(record_mix(s_key[s], r, s)));
}

/// The join's device state for one table size.
struct JoinDevice {
  std::uint32_t n, mask;
  cudart::device_buffer<std::uint32_t> r_key, s_key, expected_r, out_page;
  cudart::device_buffer<std::uint64_t> table;
  cudart::device_buffer<unsigned long long> failed{1, "join failures"};
  cudart::device_buffer<unsigned long long> wrong_grants{1, "grants that are not pages"};
  cudart::device_buffer<VerifyCounters> counters{1, "join verification"};

  explicit JoinDevice(JoinInput const& in)
      : n(static_cast<std::uint32_t>(in.r_key.size())),
        mask(table_capacity(n) - 1),
        r_key(n, "R keys"),
        s_key(n, "S keys"),
        expected_r(n, "expected R rows"),
        out_page(n, "output pages"),
        table(table_capacity(n), "hash table") {
    cudart::copy_to_device_async(r_key.data(), in.r_key.data(), n, nullptr);
    cudart::copy_to_device_async(s_key.data(), in.s_key.data(), n, nullptr);
    cudart::copy_to_device_async(expected_r.data(), in.expected_r.data(), n, nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }
  static std::uint32_t table_capacity(std::uint32_t n) {
    std::uint32_t c = 2;
    while (c < 2 * std::uint64_t{n}) c *= 2;
    return c;
  }
  /// Untimed, before each run: an empty table, no failures.
  void clear() {
    HEAPLAB_CUDA_TRY(cudaMemset(table.data(), 0xFF, table.size_bytes()));
    failed.set_zero_async(nullptr);
    wrong_grants.set_zero_async(nullptr);
    counters.set_zero_async(nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }
  [[nodiscard]] unsigned grid() const { return static_cast<unsigned>(cudart::ceil_div(n, kBlock)); }
};

/// The allocators under test for fig12: one pool per word width, the queue, DO; all on T pages
/// of the shared data region.
class JoinAllocators {
 public:
  JoinAllocators(std::uint32_t t, RwBenchOptions const& o) : t_(t), o_(o) {}

  /// Every page free again (untimed).
  void reset(RwAllocator a, std::uint64_t seed) {
    if (a == RwAllocator::queue)
      queue().preset_free(t_, seed);
    else if (a == RwAllocator::direct_output)
      direct().reset();
    else
      pool(a).reset();
  }
  /// f(source) with the allocator's page source.
  template <class F>
  void with_source(RwAllocator a, F&& f) {
    if (a == RwAllocator::queue) {
      f(rw::QueueSource{rw::QueueRef<core::DeviceAtomics>(queue().storage())});
    } else if (a == RwAllocator::direct_output) {
      f(rw::DirectOutputSource{rw::DirectOutputRef<core::DeviceAtomics>(direct().storage())});
    } else {
      core::RwAlgorithm const alg = a == RwAllocator::rw     ? core::RwAlgorithm::rw
                                    : a == RwAllocator::corw ? core::RwAlgorithm::corw
                                                             : core::RwAlgorithm::rw_bm;
      rw::with_pool_source(pool(a), alg, f);
    }
  }

 private:
  rw::DevicePool& pool(RwAllocator a) {
    std::uint32_t const bits = a == RwAllocator::rw_bm64 ? 64 : 32;
    auto& p                  = bits == 64 ? pool64_ : pool32_;
    if (!p) {
      rw::PoolConfig c;
      c.num_pages  = t_;
      c.page_bytes = o_.page_bytes;
      c.word_bits  = bits;
      c.max_steps  = o_.max_steps;
      p            = std::make_unique<rw::DevicePool>(c, rw::DevicePoolOptions{false});
    }
    return *p;
  }
  rw::DeviceQueue& queue() {
    if (!queue_) queue_ = std::make_unique<rw::DeviceQueue>(t_);
    return *queue_;
  }
  rw::DeviceDirectOutput& direct() {
    if (!direct_) direct_ = std::make_unique<rw::DeviceDirectOutput>(t_);
    return *direct_;
  }

  std::uint32_t t_;
  RwBenchOptions o_;
  std::unique_ptr<rw::DevicePool> pool32_, pool64_;
  std::unique_ptr<rw::DeviceQueue> queue_;
  std::unique_ptr<rw::DeviceDirectOutput> direct_;
};

/// One allocator at one table size: the runs' times and the verification's verdict.
struct JoinCell {
  rwb::Times join, build, probe;
  std::uint64_t failed = 0;
  std::string status   = "ok";  // or what the verification found wrong
};

/// The output pages of all matches are distinct (host, small sizes).
bool pages_distinct(JoinDevice const& d) {
  std::vector<std::uint32_t> pages = cudart::to_host(d.out_page.data(), d.n);
  pages.erase(std::remove(pages.begin(), pages.end(), rw::kNoPage), pages.end());
  std::sort(pages.begin(), pages.end());
  return std::adjacent_find(pages.begin(), pages.end()) == pages.end();
}

/// The verdict of one run's output: "" when right.
std::string verify(JoinDevice& d,
                   JoinInput const& in,
                   std::uint32_t* data,
                   std::uint32_t page_words,
                   std::uint64_t failed,
                   bool check_pages) {
  verify_kernel<<<d.grid(), kBlock>>>(d.s_key.data(),
                                      d.expected_r.data(),
                                      d.n,
                                      data,
                                      page_words,
                                      d.out_page.data(),
                                      d.counters.data());
  HEAPLAB_CHECK_LAUNCH();
  VerifyCounters const c = cudart::value_to_host(d.counters.data());
  if (c.wrong != 0) return std::to_string(c.wrong) + " wrong or overwritten output records";
  if (c.found + failed != in.matches)
    return std::to_string(c.found) + " records + " + std::to_string(failed) + " failed pages for " +
           std::to_string(in.matches) + " matches";
  if (failed == 0 && c.checksum != in.checksum) return "checksum differs from the host reference";
  if (check_pages && !pages_distinct(d)) return "two matches got the same output page";
  return "";
}

/// One allocator under fig12: its untimed reset before a run, and the probe kernel with it as the
/// page source (timed with CUDA events).
struct JoinSubject {
  std::string name;
  std::optional<RwAllocator> rw;  // nullopt: Ouroboros
  std::function<void(std::uint64_t seed)> reset;
  std::function<float(JoinDevice& d, std::uint64_t seed, std::uint32_t* data)> probe;
};

JoinCell join_cell(JoinSubject const& subject,
                   JoinDevice& d,
                   JoinInput const& in,
                   std::uint32_t* data,
                   RwFig12Options const& o,
                   std::uint64_t cell_index) {
  JoinCell cell;
  std::uint32_t const page_words = o.common.page_bytes / 4;
  for (int run = 0; run < o.common.warmup + o.common.runs; ++run) {
    std::uint64_t const seed = rwb::run_seed(o.common.seed, cell_index, run);
    subject.reset(seed);
    d.clear();
    float const build_ms       = time_once_ms([&] {
      build_kernel<<<d.grid(), kBlock>>>(d.r_key.data(), d.n, d.table.data(), d.mask);
      HEAPLAB_CHECK_LAUNCH();
    });
    float const probe_ms       = subject.probe(d, seed, data);
    std::uint64_t const failed = cudart::value_to_host(d.failed.data());
    std::uint64_t const bad    = cudart::value_to_host(d.wrong_grants.data());
    bool const last            = run + 1 == o.common.warmup + o.common.runs;
    std::string const wrong =
        bad != 0 ? std::to_string(bad) + " grants that are not pages of a chunk"
                 : verify(d, in, data, page_words, failed, last && d.n <= o.check_rows_max);
    if (!wrong.empty()) {
      cell.status = "WRONG: " + wrong;
      return cell;
    }
    if (run < o.common.warmup) continue;
    cell.build.ms.push_back(build_ms);
    cell.probe.ms.push_back(probe_ms);
    cell.join.ms.push_back(build_ms + probe_ms);
    cell.failed += failed;
  }
  return cell;
}

/// fig12's subject for a random-walk allocator, the queue or DO (JoinAllocators).
JoinSubject rw_join_subject(RwAllocator a, JoinAllocators& pools, std::uint32_t page_words) {
  JoinSubject s;
  s.name  = rw_allocator_name(a);
  s.rw    = a;
  s.reset = [a, &pools](std::uint64_t seed) { pools.reset(a, seed); };
  s.probe = [a, &pools, page_words](JoinDevice& d, std::uint64_t seed, std::uint32_t* data) {
    float ms = 0;
    pools.with_source(a, [&](auto const& source) {
      ms = time_once_ms([&] {
        probe_kernel<<<d.grid(), kBlock>>>(source,
                                           d.s_key.data(),
                                           d.n,
                                           d.table.data(),
                                           d.mask,
                                           seed,
                                           data,
                                           page_words,
                                           d.out_page.data(),
                                           d.failed.data());
        HEAPLAB_CHECK_LAUNCH();
      });
    });
    return ms;
  };
  return s;
}

#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
/// fig12's subject for Ouroboros (RW sec. 5.2.3 "augmented by various GETPAGE implementations:
/// Ouroboros, ..."): one page-sized malloc per match, a fresh instance before each run, chunks
/// whose pages hold the T pages and a guard for the largest table's matches
/// (ouroboros_bench.hpp). The record goes to the shared data region at the grant's page number.
JoinSubject ouroboros_join_subject(std::string const& name,
                                   std::uint32_t t,
                                   std::uint64_t max_tuples,
                                   RwFig12Options const& o,
                                   std::vector<std::unique_ptr<OuroborosWaves>>& keep) {
  namespace ouro    = malloc_family::ouroboros;
  auto const queues = OuroborosWaves::parse(name);
  if (!queues) throw std::invalid_argument("rw fig12: unknown allocator '" + name + "'");
  keep.push_back(std::make_unique<OuroborosWaves>(
      *queues,
      ouro::pool_chunks_for(std::uint64_t{t} * o.common.page_bytes),
      ouro::guard_chunks(max_tuples, o.common.page_bytes)));
  OuroborosWaves* const waves = keep.back().get();
  JoinSubject s;
  s.name  = name;
  s.reset = [waves](std::uint64_t) { waves->reset(); };
  s.probe = [waves, &o, t](JoinDevice& d, std::uint64_t seed, std::uint32_t* data) {
    OuroborosProbe p;
    p.s_key         = d.s_key.data();
    p.n             = d.n;
    p.table         = d.table.data();
    p.mask          = d.mask;
    p.seed          = seed;
    p.data          = data;
    p.page_words    = o.common.page_bytes / 4;
    p.pages         = t;
    p.out_page      = d.out_page.data();
    p.failed        = d.failed.data();
    p.wrong         = d.wrong_grants.data();
    p.block_threads = kBlock;
    return waves->probe(p);
  };
  return s;
}
#endif

struct Fig12Context {
  RwFig12Options const& o;
  std::uint32_t t;
  std::vector<JoinSubject> const& subjects;
  std::uint32_t* data;
  rwb::Csv const& csv;
};

/// One allocator's row of a table size (and its CSV line).
void fig12_row(Fig12Context const& x,
               std::string const& name,
               JoinCell const& c,
               std::uint64_t n,
               std::uint64_t matches,
               double do_ms) {
  std::string const verdict =
      c.status == "ok" ? (c.failed ? "verified (count)" : "verified") : c.status;
  std::printf("  %-15s %10s %10s %10s %10s %9s %8llu  %s\n",
              name.c_str(),
              rwb::cell(c.join.median(), "%.4f").c_str(),
              rwb::cell(c.join.mean(), "%.4f").c_str(),
              rwb::cell(c.build.median(), "%.4f").c_str(),
              rwb::cell(c.probe.median(), "%.4f").c_str(),
              rwb::cell(do_ms / c.join.median(), "%.2fx").c_str(),
              static_cast<unsigned long long>(c.failed),
              verdict.c_str());
  if (x.csv.file())
    std::fprintf(x.csv.file(),
                 "fig12,%s,%llu,%.3f,%llu,%u,%zu,%.5f,%.5f,%.5f,%.5f,%llu,%s\n",
                 name.c_str(),
                 static_cast<unsigned long long>(n),
                 x.o.match_rate,
                 static_cast<unsigned long long>(matches),
                 x.t,
                 c.join.ms.size(),
                 c.join.median(),
                 c.join.mean(),
                 c.build.median(),
                 c.probe.median(),
                 static_cast<unsigned long long>(c.failed),
                 c.status.c_str());
}

/// One table size: every allocator's row. Returns false when an output was wrong.
bool fig12_size(Fig12Context const& x, std::uint64_t n, std::uint64_t& cell_index) {
  JoinInput const in = generate(n, x.o.match_rate, x.o.common.seed + n);
  JoinDevice d(in);
  std::printf("\n%llu tuples per table, %llu matches (%.1f %% of T = %u pages)\n",
              static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(in.matches),
              100.0 * in.matches / x.t,
              x.t);
  std::printf("  %-15s %10s %10s %10s %10s %9s %8s  %s\n",
              "alloc",
              "join ms",
              "mean ms",
              "build ms",
              "probe ms",
              "do/x",
              "failed",
              "output");
  // Every allocator first, then the rows: do/x needs DO's time, wherever DO is in the list.
  std::vector<JoinCell> cells;
  double do_ms = NAN;
  for (JoinSubject const& subject : x.subjects) {
    std::fprintf(stderr,
                 "[rw fig12] %llu tuples: %s ...\n",
                 static_cast<unsigned long long>(n),
                 subject.name.c_str());
    cells.push_back(join_cell(subject, d, in, x.data, x.o, cell_index++));
    if (subject.rw == RwAllocator::direct_output) do_ms = cells.back().join.median();
  }
  bool ok = true;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    ok = ok && cells[k].status.rfind("WRONG", 0) != 0;
    fig12_row(x, x.subjects[k].name, cells[k], n, in.matches, do_ms);
  }
  return ok;
}

int fig12(RwFig12Options const& o) {
  for (std::uint64_t n : o.tuples)
    if (n == 0 || n > (1u << 30))
      throw std::invalid_argument("rw fig12: table size " + std::to_string(n) + " (1 .. 2^30)");
  std::uint32_t const t = rwb::pool_pages(o.common);
  cudart::device_buffer<std::uint32_t> data(std::uint64_t{t} * (o.common.page_bytes / 4),
                                            "output pages");
  JoinAllocators pools(t, o.common);
  std::vector<JoinSubject> subjects;
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
  std::vector<std::unique_ptr<OuroborosWaves>> ouroboros;
  std::uint64_t const max_tuples = *std::max_element(o.tuples.begin(), o.tuples.end());
#endif
  for (auto const& name : o.allocators) {
#if defined(HEAPLAB_HAVE_OUROBOROS_BENCH)
    if (OuroborosWaves::parse(name)) {
      if (o.common.page_bytes > malloc_family::ouroboros::kLargestPage)
        throw std::invalid_argument("rw fig12: " + name + " serves pages of at most 8192 B");
      subjects.push_back(ouroboros_join_subject(name, t, max_tuples, o, ouroboros));
      continue;
    }
#endif
    auto const a = parse_rw_allocator(name);
    if (!a) throw std::invalid_argument("rw fig12: unknown allocator '" + name + "'");
    subjects.push_back(rw_join_subject(*a, pools, o.common.page_bytes / 4));
  }
  std::printf(
      "rw fig12: hash-join probe with output pages (median / mean of %d runs after %d warm-up)\n",
      o.common.runs,
      o.common.warmup);
  std::printf(
      "pool: T = %u pages of %u B (%.2f GiB), every page free at the start of each run; match rate "
      "%.2f\n",
      t,
      o.common.page_bytes,
      static_cast<double>(t) * o.common.page_bytes / (1u << 30),
      o.match_rate);
  rwb::Csv const csv(o.common.csv,
                     "figure,allocator,tuples,match_rate,matches,pages,runs,join_median_ms,"
                     "join_mean_ms,build_median_ms,probe_median_ms,failed,status");
  Fig12Context const x{o, t, subjects, data.data(), csv};
  std::uint64_t cell_index = 0;
  bool ok                  = true;
  for (std::uint64_t n : o.tuples) ok = fig12_size(x, n, cell_index) && ok;
  return ok ? 0 : 1;
}

}  // namespace

int run_rw_fig12(RwFig12Options const& o) { return fig12(o); }

}  // namespace heaplab::bench
