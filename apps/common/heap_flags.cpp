#include "common/heap_flags.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace heaplab::apps {

namespace {

constexpr std::array<core::RewriteVariant, 3> kVariants{core::RewriteVariant::forwarding,
                                                        core::RewriteVariant::recompute_global,
                                                        core::RewriteVariant::recompute_shared};

/// A whole-string unsigned decimal > 0, or nullopt.
std::optional<std::uint64_t> positive_integer(std::string const& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  errno                      = 0;
  unsigned long long const v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v == 0) return std::nullopt;
  return v;
}

}  // namespace

core::RewriteVariant rewrite_variant(std::string const& name) {
  for (auto const v : kVariants)
    if (name == core::to_string(v)) return v;
  throw std::invalid_argument("--rewrite: unknown variant '" + name +
                              "' (forwarding, recompute-global or recompute-shared)");
}

core::CandidateOrder defrag_order(std::string const& name) {
  if (auto const o = core::candidate_order_from_string(name)) return *o;
  throw std::invalid_argument("--defrag-order: unknown order '" + name + "' (block-id or fill)");
}

std::optional<compact::DefragPolicy> defrag_policy(HeapFlags const& flags) {
  if (flags.defrag_every != 0 && !flags.defrag_after.empty())
    throw std::invalid_argument(
        "--defrag-every and --defrag-after name two policies; give at most one");
  if (flags.defrag_every != 0) return compact::DefragPolicy::every(flags.defrag_every);
  if (flags.defrag_after.empty()) return std::nullopt;
  std::string const& s = flags.defrag_after;
  if (s.back() == '%') {
    char* end                = nullptr;
    std::string const number = s.substr(0, s.size() - 1);
    double const percent     = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(percent > 0.0) ||
        percent > 100.0)
      throw std::invalid_argument("--defrag-after: '" + s +
                                  "' is not a percentage in (0, 100] of the heap's blocks");
    return compact::DefragPolicy::after_massive_deallocation_fraction(percent / 100.0);
  }
  auto const k2 = positive_integer(s);
  if (!k2)
    throw std::invalid_argument("--defrag-after: '" + s +
                                "' is neither a candidate count >= 1 nor a percentage like 5%");
  return compact::DefragPolicy::after_massive_deallocation(*k2);
}

void validate(HeapFlags const& flags) {
  (void)defrag_policy(flags);
  (void)rewrite_variant(flags.rewrite);
  (void)defrag_order(flags.defrag_order);
  if (flags.defrag_n < 1) throw std::invalid_argument("--defrag-n must be >= 1");
  if (flags.memory_mib != 0 && flags.heap_blocks != 0)
    throw std::invalid_argument("--heap-blocks and --memory-mib both size the heap: give one");
}

std::string describe(HeapFlags const& flags) {
  std::string s = flags.memory_mib == 0
                      ? std::string()
                      : "every variant in " + std::to_string(flags.memory_mib) + " MiB, ";
  s += "r " +
       (flags.active_lookups == 0 ? std::string("default") : std::to_string(flags.active_lookups));
  s += flags.coalesce_frees ? ", frees coalesced" : ", frees one by one";
  if (!flags.coalesce_requests) s += ", requests not coalesced (NoCoal)";
  if (!flags.rotate_bitmaps) s += ", no bitmap rotation (NoShift)";
  if (!flags.block_hints) s += ", no block hints";
  if (flags.claim_wait_rounds)
    s += *flags.claim_wait_rounds == 0
             ? ", claim tickets off"
             : ", claim wait rounds " + std::to_string(*flags.claim_wait_rounds);
  auto const policy = defrag_policy(flags);
  if (!policy) return s + ", no defragmentation";
  s += flags.defrag_every != 0 ? ", defrag every " + std::to_string(flags.defrag_every)
                               : ", defrag after " + flags.defrag_after + " candidates";
  s += " (n " + std::to_string(flags.defrag_n) + ", k1 " + std::to_string(flags.defrag_k1) + ", " +
       flags.rewrite + (flags.defrag_order == "fill" ? ", candidates by fill" : "") + ")";
  return s;
}

std::string planted_bug_note(char const* planted) {
  if (planted == nullptr || *planted == '\0') return {};
  return std::string(", PLANTED BUG ") + planted;
}

}  // namespace heaplab::apps
