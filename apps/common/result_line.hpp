// One machine-readable line per variant of an app run, read by tools/figure10 (DynaSOAr Fig. 10,
// docs/apps.md "Other allocators"):
//
//   result app=nbody variant=cuda-malloc ms=358.245 enumeration_ms=3.099
//
// ms: the variant's iterations (defragmentation included, set-up and checks not);
// enumeration_ms: the part of ms spent enumerating objects apart from the do-alls' methods (the
// standalone do-all of any_heap.cuh), "-" where a variant does not measure it apart (the soa heap,
// whose enumeration is inside its do-all kernels, and the static baselines). Host only.
#pragma once

#include <cstdio>
#include <optional>

namespace heaplab::apps {

inline void print_result_line(char const* app,
                              char const* variant,
                              double ms,
                              std::optional<double> enumeration_ms) {
  if (enumeration_ms)
    std::printf("result app=%s variant=%s ms=%.3f enumeration_ms=%.3f\n",
                app,
                variant,
                ms,
                *enumeration_ms);
  else
    std::printf("result app=%s variant=%s ms=%.3f enumeration_ms=-\n", app, variant, ms);
}

/// `<app> heap / <variant>: R x (same run)`: the heap's time over another variant's.
inline void print_heap_ratio(char const* app, char const* variant, double heap_ms, double ms) {
  if (ms > 0) std::printf("%s heap / %s: %.2fx (same run)\n", app, variant, heap_ms / ms);
}

/// The heap variant's result line and, when the baseline ran, the baseline's and
/// `heap / baseline: R x (same run)`.
inline void report_heap_and_baseline(char const* app,
                                     double heap_ms,
                                     std::optional<double> baseline_ms) {
  print_result_line(app, "heap", heap_ms, std::nullopt);
  if (!baseline_ms) return;
  print_result_line(app, "baseline", *baseline_ms, std::nullopt);
  if (*baseline_ms > 0) std::printf("heap / baseline: %.2fx (same run)\n", heap_ms / *baseline_ms);
}

}  // namespace heaplab::apps
