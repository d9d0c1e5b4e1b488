#include "defrag_traffic.hpp"

#include "defrag_bench_types.hpp"
#include "heaplab/soa/host_config.hpp"
#include "program_output.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace heaplab::bench {

namespace {

/// Disjoint address ranges for the data a call touches: the block area, and each metadata array
/// on its own (their real places do not matter for a count of distinct sectors).
enum class Region : std::uint64_t {
  blocks,
  R,
  alloc_bitmaps,
  candidates,
  call_sources,
  active,
  defrag,
  allocated,
  free_blocks,
  records,
  holder_words,  // + the holder type id
};

std::uint64_t address(Region r, std::uint64_t offset, std::uint32_t type = 0) {
  return ((static_cast<std::uint64_t>(r) + type) << 48) | offset;
}

/// The distinct sectors one kernel touches (TrafficGeometry::sector_bytes each). Writes count
/// bytes per sector, a byte written twice twice: of the counted writes only the state bitmap
/// words repeat (two sources in one 64-block word), and they are read as well, so whether they
/// are fills does not depend on it.
class SectorSet {
 public:
  explicit SectorSet(std::uint32_t sector_bytes) : sector_(sector_bytes) {}

  void read(std::uint64_t at, std::uint64_t bytes) {
    if (bytes == 0) return;
    for (std::uint64_t s = at / sector_; s <= (at + bytes - 1) / sector_; ++s) read_.insert(s);
  }
  void write(std::uint64_t at, std::uint64_t bytes) {
    while (bytes > 0) {
      std::uint64_t const s    = at / sector_;
      std::uint64_t const here = std::min<std::uint64_t>(bytes, (s + 1) * sector_ - at);
      written_[s] += here;
      at += here, bytes -= here;
    }
  }
  [[nodiscard]] SectorCount count() const {
    SectorCount c;
    c.read    = read_.size();
    c.written = written_.size();
    for (auto const& [s, bytes] : written_)
      if (bytes < sector_ && read_.count(s) == 0) ++c.filled;
    return c;
  }

 private:
  std::uint64_t sector_;
  std::unordered_set<std::uint64_t> read_;
  std::unordered_map<std::uint64_t, std::uint64_t> written_;
};

/// Level-0 word of block b in a bitmap region (8 bytes per 64 blocks).
std::uint64_t word_of(Region r, std::uint32_t b, std::uint32_t type = 0) {
  return address(r, std::uint64_t{b} / 64u * 8u, type);
}

}  // namespace

SectorCount DefragTraffic::total() const {
  SectorCount c = rewrite;
  for (PassTraffic const& p : passes) {
    c += p.copy;
    c += p.scan_and_states;
  }
  return c;
}

namespace {

/// What the counting of one call needs besides the model.
struct CallShape {
  TrafficGeometry const& geometry;
  std::uint32_t n      = 1;
  std::uint32_t blocks = 0;
  bool forwarding      = true;
  std::uint64_t record = 0;  // bytes of a recompute variant's record per source
  [[nodiscard]] std::uint64_t block_at(std::uint32_t b, std::uint64_t offset) const {
    return address(Region::blocks, std::uint64_t{b} * geometry.block_bytes + offset);
  }
};

/// The sectors of one pass (its plan), and the (from) of each move appended to hops_of.
PassTraffic count_pass(CallShape const& c,
                       model::DefragPassPlan const& plan,
                       std::unordered_map<model::ObjectId, std::vector<core::SlotRef>>& hops_of) {
  PassTraffic t;
  t.candidates = static_cast<std::uint32_t>(plan.R.size());
  t.sources    = plan.B;
  SectorSet copy(c.geometry.sector_bytes), states(c.geometry.sector_bytes);
  states.read(address(Region::candidates, 0), (std::uint64_t{c.blocks} + 63u) / 64u * 8u);
  if (!plan.R.empty()) states.write(address(Region::R, 0), 4u * plan.R.size());
  if (plan.B > 0) copy.read(address(Region::R, 0), 4u * std::uint64_t{c.n + 1} * plan.B);
  for (model::SourceAssignment const& a : plan.sources) {
    copy.read(address(Region::alloc_bitmaps, 8u * std::uint64_t{a.source}), 8);
    states.write(address(Region::alloc_bitmaps, 8u * std::uint64_t{a.source}), 8);
    for (Region r : {Region::active,
                     Region::defrag,
                     Region::allocated,
                     Region::free_blocks,
                     Region::call_sources}) {
      states.read(word_of(r, a.source), 8);
      states.write(word_of(r, a.source), 8);
    }
    std::set<std::uint32_t> gained;
    for (std::uint32_t target : a.targets)
      copy.read(address(Region::alloc_bitmaps, 8u * std::uint64_t{target}), 8);
    for (model::Relocation const& m : a.moves) {
      for (TrafficGeometry::Array const& array : c.geometry.arrays) {
        copy.read(c.block_at(m.from.block,
                             array.offset + std::uint64_t{m.from.slot} * array.element_bytes),
                  array.element_bytes);
        copy.write(
            c.block_at(m.to.block, array.offset + std::uint64_t{m.to.slot} * array.element_bytes),
            array.element_bytes);
        t.useful_bytes += 2u * array.element_bytes;
      }
      if (c.forwarding) {
        copy.write(c.block_at(m.from.block, 8u * std::uint64_t{m.from.slot}), 8);
        t.useful_bytes += 8;
      }
      gained.insert(m.to.block);
      hops_of[m.id].push_back(m.from);
    }
    if (!c.forwarding) copy.write(address(Region::records, a.source * c.record), c.record);
    for (std::uint32_t target : gained)
      states.write(address(Region::alloc_bitmaps, 8u * std::uint64_t{target}), 8);
    t.objects_moved += a.moves.size();
  }
  t.copy            = copy.count();
  t.scan_and_states = states.count();
  return t;
}

/// The sectors of the call's one rewrite, over the heap after the last pass: every live object
/// of a holder type.
void count_rewrite(CallShape const& c,
                   model::HeapModel const& model,
                   std::unordered_map<model::ObjectId, std::vector<core::SlotRef>> const& hops_of,
                   DefragTraffic& out) {
  SectorSet rewrite(c.geometry.sector_bytes);
  std::set<std::uint32_t> holder_types, bitmaps_read;
  for (TrafficGeometry::Holder const& h : c.geometry.holders) holder_types.insert(h.type);
  for (std::uint32_t u : holder_types)
    rewrite.read(address(Region::holder_words, 0, u), (std::uint64_t{c.blocks} + 63u) / 64u * 8u);
  for (auto const& [id, object] : model.objects()) {
    if (holder_types.count(object.type) == 0) continue;
    std::uint32_t const b = object.where.block;
    if (bitmaps_read.insert(b).second)
      rewrite.read(address(Region::alloc_bitmaps, 8u * std::uint64_t{b}), 8);
    for (TrafficGeometry::Holder const& h : c.geometry.holders) {
      if (h.type != object.type) continue;
      std::uint64_t const at = c.block_at(b, h.offset + 8u * std::uint64_t{object.where.slot});
      rewrite.read(at, 8);
      ++out.pointers_scanned;
      out.rewrite_useful_bytes += 8;
      std::optional<model::ObjectId> const target = object.refs.at(h.pointer_slot);
      if (!target) continue;
      auto const moved = hops_of.find(*target);
      if (moved != hops_of.end()) {
        for (core::SlotRef const& from : moved->second) {
          rewrite.read(word_of(Region::call_sources, from.block), 8);
          if (c.forwarding)
            rewrite.read(c.block_at(from.block, 8u * std::uint64_t{from.slot}), 8);
          else
            rewrite.read(address(Region::records, from.block * c.record), c.record);
          ++out.hops;
        }
        rewrite.write(at, 8);
        ++out.pointers_rewritten;
        out.rewrite_useful_bytes += 16;
      }
      // Where the pointer ends (not moved, or after its last hop) is no source: one bit read.
      rewrite.read(word_of(Region::call_sources, model.object(*target).where.block), 8);
    }
  }
  out.rewrite = rewrite.count();
}

}  // namespace

DefragTraffic defrag_traffic(model::HeapModel& model,
                             std::uint32_t type,
                             core::DefragOptions const& options,
                             TrafficGeometry const& geometry) {
  core::CandidateOrder const order = options.order;
  std::uint32_t const n            = options.n.value_or(model.config().defrag_factor);
  std::uint32_t const cap          = core::effective_source_cap(options, n);
  CallShape const shape{geometry,
                        n,
                        model.num_blocks(),
                        options.variant == core::RewriteVariant::forwarding,
                        8u + 12u * std::uint64_t{n}};  // docs/compaction.md "Using it"

  // The plan of every pass as the model makes it: the first before the call, each next one
  // from the model's state after a pass (the observer); the passes that ran are a prefix.
  std::vector<model::DefragPassPlan> plans{model.plan_defrag_pass(type, n, cap, order)};
  model::DefragResult const result =
      model.defrag(type, options, [&](model::HeapModel const& m, model::DefragPassStats const&) {
        plans.push_back(m.plan_defrag_pass(type, n, cap, order));
      });

  DefragTraffic out;
  // Per moved object, the (from) of each of its moves in the call, in pass order: its hops.
  std::unordered_map<model::ObjectId, std::vector<core::SlotRef>> hops_of;
  for (std::size_t p = 0; p < result.passes.size(); ++p) {
    PassTraffic const t               = count_pass(shape, plans.at(p), hops_of);
    model::DefragPassStats const& ran = result.passes[p];
    if (t.sources != ran.sources || t.objects_moved != ran.objects_moved)
      throw std::logic_error(
          "defrag_traffic: pass " + std::to_string(p) + " planned " + std::to_string(t.sources) +
          " sources and " + std::to_string(t.objects_moved) + " moves, the model ran " +
          std::to_string(ran.sources) + " and " + std::to_string(ran.objects_moved));
    out.passes.push_back(t);
  }
  if (out.passes.empty()) return out;  // a call without a pass scans nothing
  count_rewrite(shape, model, hops_of, out);
  return out;
}

namespace {

/// Table 1's heap on the model: the objects, links and deletions of `heaplab_bench defrag`
/// (defrag_bench_types.hpp), allocated in the model's deterministic placement.
model::HeapModel table1_model(std::uint64_t count, DefragTrafficOptions const& o) {
  using Types               = DefragBenchTypes;
  std::uint32_t const a     = Types::type_id<DefragBenchA>;
  std::uint32_t const b     = Types::type_id<DefragBenchB>;
  std::uint64_t const total = defrag_bench_blocks(count, true);
  if (total > 0xFFFFFFFFull) throw std::runtime_error("defrag-traffic: too many objects");
  model::HeapModel m(soa::heap_config<Types>(static_cast<std::uint32_t>(total), o.n, o.k1));
  for (std::uint64_t i = 0; i < count; ++i)
    if (!m.allocate(a, defrag_bench_id(i, false)) || !m.allocate(b, defrag_bench_id(i, true)))
      throw std::logic_error("defrag-traffic: the model's heap is full");
  for (std::uint64_t i = 0; i < count; ++i) {
    m.set_ref(defrag_bench_id(i, false),
              0,
              defrag_bench_id(defrag_bench_a_target(i, o.seed, count), true));
    std::uint64_t const k = defrag_bench_b_target(i, o.seed, count);
    if (!defrag_bench_deleted(k, o.seed, o.fraction))
      m.set_ref(defrag_bench_id(i, true), 0, defrag_bench_id(k, false));
  }
  for (std::uint64_t i = 0; i < count; ++i)
    if (defrag_bench_deleted(i, o.seed, o.fraction)) m.free(defrag_bench_id(i, false));
  return m;
}

/// Host bytes per object of the model's Table 1 heap at its peak: 818,340 KB for the 4,096,000
/// objects of scale 1/16, one variant (build machine, 2026-12-04).
constexpr double kModelBytesPerObject = 205.0;

/// Refuses, with the figures, a run whose model would not fit into the host's memory (rather
/// than be killed when it runs out): one model per class pair for a single variant, two for
/// several (a copy per variant).
/// Bytes of host memory available to a new process: MemAvailable of /proc/meminfo (free memory
/// and what the kernel can reclaim), else the free pages; 0 when neither is known.
double available_memory() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kb = 0;
    bool found            = false;
    while (!found && std::fgets(line, sizeof line, f) != nullptr)
      found = std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
    std::fclose(f);
    if (found) return static_cast<double>(kb) * 1024.0;
  }
  long const pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

void require_memory(std::uint64_t count, std::size_t variants) {
  double const need =
      2.0 * static_cast<double>(count) * kModelBytesPerObject * (variants > 1 ? 2.0 : 1.0);
  double const have = available_memory();
  if (have == 0 || need <= have) return;  // unknown: try
  char text[256];
  std::snprintf(text,
                sizeof text,
                "defrag-traffic: this scale needs about %.1f GB of host memory for the model and "
                "%.1f GB are available; use --scale %.3g or less%s",
                need / 1e9,
                have / 1e9,
                static_cast<double>(count) * have / need / kDefragBenchObjects,
                variants > 1 ? " (or one variant per run)" : "");
  throw std::runtime_error(text);
}

double mb(std::uint64_t sectors, std::uint32_t sector_bytes) {
  return static_cast<double>(sectors) * sector_bytes / 1e6;
}

void print_row(char const* what, SectorCount const& c, std::uint64_t useful, std::uint32_t sector) {
  std::printf("  %-22s %10.1f %10.1f %10.1f %10.1f %12.1f\n",
              what,
              mb(c.read, sector),
              mb(c.written, sector),
              mb(c.filled, sector),
              mb(c.sectors(), sector),
              static_cast<double>(useful) / 1e6);
}

/// One variant's table: per pass (with --per-pass), by phase, and the times at each bandwidth.
void print_variant(DefragTrafficOptions const& o,
                   core::RewriteVariant v,
                   DefragTraffic const& t,
                   std::uint32_t sector) {
  std::uint64_t moved = 0, useful = 0;
  SectorCount copy, states;
  for (PassTraffic const& p : t.passes) {
    moved += p.objects_moved, useful += p.useful_bytes;
    copy += p.copy, states += p.scan_and_states;
  }
  std::printf("\n%s: %zu passes, %llu moves, %llu pointers scanned, %llu rewritten, %llu hops\n",
              core::to_string(v),
              t.passes.size(),
              static_cast<unsigned long long>(moved),
              static_cast<unsigned long long>(t.pointers_scanned),
              static_cast<unsigned long long>(t.pointers_rewritten),
              static_cast<unsigned long long>(t.hops));
  std::printf("  %-22s %10s %10s %10s %10s %12s\n",
              "phase (MB)",
              "read",
              "written",
              "fill",
              "sum",
              "sec. 4.4");
  if (o.per_pass)
    for (std::size_t i = 0; i < t.passes.size(); ++i) {
      PassTraffic const& p = t.passes[i];
      std::string const what =
          "pass " + std::to_string(i) + " copy (B " + std::to_string(p.sources) + ")";
      print_row(what.c_str(), p.copy, p.useful_bytes, sector);
    }
  print_row("copy, all passes", copy, useful, sector);
  print_row("scan and block states", states, 0, sector);
  print_row("rewrite", t.rewrite, t.rewrite_useful_bytes, sector);
  print_row("call", t.total(), useful + t.rewrite_useful_bytes, sector);
  for (double g : o.copy_gbps) {
    auto const ms = [&](SectorCount const& c) {
      return static_cast<double>(c.sectors()) * sector / (g * 1e9) * 1e3;
    };
    std::printf(
        "  at %.1f GB/s: copy %.3f ms, scan and states %.3f ms, rewrite %.3f ms, call %.3f ms "
        "(x %.4g for scale 1: %.3f ms)\n",
        g,
        ms(copy),
        ms(states),
        ms(t.rewrite),
        ms(t.total()),
        1.0 / o.scale,
        ms(t.total()) / o.scale);
  }
}

/// One variant's CSV rows: a row per pass, then the rewrite.
void write_csv_rows(std::FILE* csv,
                    core::RewriteVariant v,
                    DefragTraffic const& t,
                    std::uint32_t sector) {
  for (std::size_t i = 0; i < t.passes.size(); ++i) {
    PassTraffic const& p = t.passes[i];
    std::fprintf(csv,
                 "%s,%zu,%u,%u,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%u\n",
                 core::to_string(v),
                 i,
                 p.candidates,
                 p.sources,
                 static_cast<unsigned long long>(p.objects_moved),
                 static_cast<unsigned long long>(p.copy.read),
                 static_cast<unsigned long long>(p.copy.written),
                 static_cast<unsigned long long>(p.copy.filled),
                 static_cast<unsigned long long>(p.scan_and_states.read),
                 static_cast<unsigned long long>(p.scan_and_states.written),
                 static_cast<unsigned long long>(p.scan_and_states.filled),
                 static_cast<unsigned long long>(p.useful_bytes),
                 sector);
  }
  std::fprintf(csv,
               "%s,rewrite,,,,%llu,%llu,%llu,,,,%llu,%u\n",
               core::to_string(v),
               static_cast<unsigned long long>(t.rewrite.read),
               static_cast<unsigned long long>(t.rewrite.written),
               static_cast<unsigned long long>(t.rewrite.filled),
               static_cast<unsigned long long>(t.rewrite_useful_bytes),
               sector);
}

}  // namespace

int run_defrag_traffic(DefragTrafficOptions const& o) {
  if (!(o.scale > 0) || o.scale > 4)
    throw std::runtime_error("defrag-traffic: --scale must be in (0, 4]");
  for (double g : o.copy_gbps)
    if (!(g > 0)) throw std::runtime_error("defrag-traffic: --copy-gbps must be positive");
  std::vector<core::RewriteVariant> variants;
  for (std::string const& v : o.variants) variants.push_back(defrag_bench_variant(v));
  auto const count = static_cast<std::uint64_t>(std::llround(o.scale * kDefragBenchObjects));
  if (count == 0) throw std::runtime_error("defrag-traffic: --scale leaves no object");
  require_memory(count, variants.size());
  core::CandidateOrder const order = defrag_bench_order(o.order);
  std::FILE* csv                   = heaplab::program::open_csv(
      o.csv,
      "variant,pass,candidates,sources,objects_moved,copy_read,copy_written,copy_filled,"
                        "states_read,states_written,states_filled,useful_bytes,sector_bytes");

  std::printf(
      "CompactGpu Table 1 on the reference model (no GPU): 2 classes x %llu objects of 32 B (scale "
      "%.4g), %.0f%% of class A deleted, n=%u, k1=%u, seed %llu\n"
      "sectors each kernel must touch, each counted once (docs/compaction.md \"The sectors a call "
      "must touch\"):\na lower bound on DRAM traffic; \"fill\": sectors written in part and not "
      "read, which DRAM reads first\n%s\n",
      static_cast<unsigned long long>(count),
      o.scale,
      o.fraction * 100,
      o.n,
      o.k1,
      static_cast<unsigned long long>(o.seed),
      order == core::CandidateOrder::by_fill
          ? "candidates by fill, emptiest first (beyond the paper; heaplab_bench defrag --order "
            "fill on the GPU)"
          : "candidates by block id (CompactGpu sec. 3.2)");
  std::fflush(stdout);
  auto const began = std::chrono::steady_clock::now();
  auto const since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  };
  model::HeapModel base = table1_model(count, o);
  std::fprintf(stderr, "defrag-traffic: the model's heap is built (%.0f s)\n", since());
  TrafficGeometry const geometry =
      traffic_geometry<DefragBenchTypes>(DefragBenchTypes::type_id<DefragBenchA>);
  std::uint32_t const sector = geometry.sector_bytes;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    core::RewriteVariant const v = variants[i];
    // A copy for every variant but the last, which takes the heap itself (one model in memory
    // for a single variant).
    model::HeapModel m = i + 1 < variants.size() ? base : std::move(base);
    core::DefragOptions options;
    options.n       = o.n;
    options.k1      = o.k1;
    options.variant = v;
    options.order   = order;
    DefragTraffic const t =
        defrag_traffic(m, DefragBenchTypes::type_id<DefragBenchA>, options, geometry);
    std::fprintf(stderr, "defrag-traffic: %s counted (%.0f s)\n", core::to_string(v), since());
    print_variant(o, v, t, sector);
    if (csv) write_csv_rows(csv, v, t, sector);
    std::fflush(stdout);
  }
  if (csv) std::fclose(csv);
  return 0;
}

}  // namespace heaplab::bench
