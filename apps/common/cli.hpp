// Adds the options every app shares (HeapFlags, heap_flags.hpp; the memory profile,
// profile.hpp) to a CLI11 subcommand of heaplab_apps (main.cpp). Host only.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/allocators.hpp"
#include "common/heap_flags.hpp"

namespace heaplab::apps {

inline void add_heap_flags(CLI::App* cmd, HeapFlags& f, std::string& profile) {
  cmd->add_option("--profile",
                  profile,
                  "memory profile CSV: per iteration and type live objects, blocks, bytes, F and "
                  "the time per phase (docs/apps.md \"The memory profile\"; tools/plot-app)");
  cmd->add_option("--heap-blocks", f.heap_blocks, "heap blocks M (0: the app's default size)");
  cmd->add_option("--active-lookups",
                  f.active_lookups,
                  "r: active-block lookups before a new block is opened (DynaSOAr sec. 4.2; 0: "
                  "the heap's default)")
      ->check(CLI::Range(0u, 64u));
  cmd->add_flag_callback(
      "--no-coalesce-frees",
      [&f] { f.coalesce_frees = false; },
      "free objects one fetch_and each, as DynaSOAr Alg. 2 (ablation)");
  cmd->add_flag_callback(
      "--no-coalesce-requests",
      [&f] { f.coalesce_requests = false; },
      "every lane allocates on its own (DynaSOAr Fig. 12C 'NoCoal' ablation)");
  cmd->add_flag_callback(
      "--no-rotation",
      [&f] { f.rotate_bitmaps = false; },
      "bitmap searches start at bit 0 (DynaSOAr sec. 4.2; Fig. 12C 'NoShift' ablation)");
  cmd->add_flag_callback(
      "--no-block-hints",
      [&f] { f.block_hints = false; },
      "no block hints: every allocation round starts with DynaSOAr's lookups of active[T] "
      "(on by default: a warp's first round tries the block its warp slot last left not full, "
      "docs/core.md \"Block hints\")");
  cmd->add_option("--claim-wait-rounds",
                  f.claim_wait_rounds,
                  "rounds an allocation waits for a block another one opens (heaplab's claim "
                  "tickets, docs/core.md; 0: off, DynaSOAr Alg. 1 as published)")
      ->check(CLI::Range(0u, 1u << 16));
  cmd->add_option("--defrag-every",
                  f.defrag_every,
                  "m: defragment every dynamic type after every m-th iteration (CompactGpu sec. "
                  "3.7; 0: off)");
  cmd->add_option("--defrag-after",
                  f.defrag_after,
                  "k2: defragment a type once it has k2 * n/(n+1) candidates, k2 a count or a "
                  "percentage of the heap's blocks like 5% (CompactGpu sec. 3.7 'after massive "
                  "deallocations')");
  cmd->add_option("--defrag-n", f.defrag_n, "n, the defragmentation factor (1 <= n < N_T)")
      ->check(CLI::Range(1u, 1023u));
  cmd->add_option("--defrag-k1",
                  f.defrag_k1,
                  "k1: stop once at most k1 candidates remain (CompactGpu sec. 4.3 uses 16)");
  cmd->add_option("--rewrite",
                  f.rewrite,
                  "pointer rewriting: forwarding, recompute-global or recompute-shared "
                  "(CompactGpu sec. 3.3, 3.8)")
      ->check(CLI::IsMember({"forwarding", "recompute-global", "recompute-shared"}));
  cmd->add_option("--defrag-order",
                  f.defrag_order,
                  "every call's candidate order: block-id (CompactGpu sec. 3.2) or fill "
                  "(emptiest first, heaplab's; docs/compaction.md \"Candidate order\")")
      ->check(CLI::IsMember({"block-id", "fill"}));
}

/// The variants of a run: --allocators (the app also runs on these allocators, allocators.hpp),
/// --memory-mib (every variant in the same memory, memory_budget.hpp) and --only (one variant
/// alone). Call it after the command's --baseline (and wa-tor's --cuda-malloc), which --only
/// excludes; `baseline` is nullptr for an app without a baseline.
inline void add_variant_options(CLI::App* cmd,
                                HeapFlags& heap,
                                std::vector<std::string>& allocators,
                                bool* baseline) {
  std::string list;
  for (auto const& n : allocator_names()) list += (list.empty() ? "" : ", ") + n;
  auto* alloc = cmd->add_option("--allocators",
                                allocators,
                                "also run the app on these allocators in the same process, AOS "
                                "objects and a standalone do-all whose enumeration time is "
                                "reported apart (DynaSOAr Fig. 10; docs/apps.md \"Other "
                                "allocators\"): " +
                                    list)
                    ->delimiter(',');
  cmd->add_option("--memory-mib",
                  heap.memory_mib,
                  "N: every variant holds its objects in N MiB: the heap's blocks, each "
                  "allocator's pool, the baseline's object arrays; a variant that does not fit "
                  "prints `result ... fits=0` and the run exits 5 (DynaSOAr Fig. 11, "
                  "tools/figure11; docs/apps.md \"Same memory for every variant\")")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20))
      ->excludes("--heap-blocks");
  std::vector<std::string> names{"heap"};
  if (baseline != nullptr) names.emplace_back("baseline");
  for (auto const& n : allocator_names()) names.push_back(n);
  auto* only =
      cmd->add_option_function<std::string>(
             "--only",
             [&heap, &allocators, baseline](std::string const& v) {
               heap.run_heap = v == "heap";
               if (baseline != nullptr) *baseline = v == "baseline";
               allocators.clear();
               if (v != "heap" && v != "baseline") allocators.push_back(v);
             },
             "VARIANT: run this variant alone (tools/figure11's probes): heap" +
                 std::string(baseline != nullptr ? ", baseline" : "") + " or one of " + list)
          ->check(CLI::IsMember(names))
          ->excludes(alloc);
  for (char const* other : {"--baseline", "--cuda-malloc"})
    if (auto* o = cmd->get_option_no_throw(other)) only->excludes(o);
}

}  // namespace heaplab::apps
