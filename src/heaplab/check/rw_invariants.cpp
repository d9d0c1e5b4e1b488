// The random-walk pool's invariant catalog (rw_invariants.hpp, docs/rw.md).
#include "heaplab/check/rw_invariants.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "heaplab/core/bitops.hpp"
#include "heaplab/core/expects.hpp"

namespace heaplab::check {
namespace {

bool used_bit(RwPoolSnapshot const& s, std::uint64_t p) {
  return ((s.used_words[p / s.word_bits] >> (p % s.word_bits)) & 1u) != 0;
}

std::uint64_t word_mask(RwPoolSnapshot const& s) {
  return s.word_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << s.word_bits) - 1;
}

bool well_shaped(RwPoolSnapshot const& s) {
  if (s.word_bits != 32 && s.word_bits != 64) return false;
  std::size_t const used = (std::size_t{s.num_pages} + s.word_bits - 1) / s.word_bits;
  return s.used_words.size() == used &&
         s.lock_words.size() == (used + s.word_bits - 1) / s.word_bits;
}

Violation at_page(std::string_view name, std::string message, std::uint64_t page) {
  Violation v{std::string(name), std::move(message)};
  v.bit = static_cast<std::int64_t>(page);
  return v;
}

void check_shape(RwPoolSnapshot const& s,
                 RwOwners const&,
                 RwHeldRuns const&,
                 std::vector<Violation>& out) {
  if (!well_shaped(s))
    out.push_back(Violation{"rw-pool-shape",
                            "T = " + std::to_string(s.num_pages) + ", word width " +
                                std::to_string(s.word_bits) + ": " +
                                std::to_string(s.used_words.size()) + " used words and " +
                                std::to_string(s.lock_words.size()) +
                                " lock words do not fit (expected ceil(T / w) and one lock bit "
                                "per used word)"});
}

void check_beyond(RwPoolSnapshot const& s,
                  RwOwners const& owners,
                  RwHeldRuns const&,
                  std::vector<Violation>& out) {
  std::uint64_t const bits = std::uint64_t{s.used_words.size()} * s.word_bits;
  for (std::uint64_t p = s.num_pages; p < bits; ++p)
    if (!used_bit(s, p))
      out.push_back(at_page("rw-no-page-beyond-pool",
                            "bit " + std::to_string(p) + " (>= T = " + std::to_string(s.num_pages) +
                                ") is clear: a page beyond the pool could be handed out",
                            p));
  for (std::size_t o = 0; o < owners.size(); ++o)
    for (std::uint32_t p : owners[o])
      if (p >= s.num_pages)
        out.push_back(at_page("rw-no-page-beyond-pool",
                              "owner " + std::to_string(o) + " holds page " + std::to_string(p) +
                                  " >= T = " + std::to_string(s.num_pages),
                              p));
}

void check_owned_once(RwPoolSnapshot const&,
                      RwOwners const& owners,
                      RwHeldRuns const&,
                      std::vector<Violation>& out) {
  std::map<std::uint32_t, std::size_t> first;
  for (std::size_t o = 0; o < owners.size(); ++o)
    for (std::uint32_t p : owners[o]) {
      auto const [it, fresh] = first.emplace(p, o);
      if (!fresh)
        out.push_back(at_page("rw-page-owned-once",
                              "page " + std::to_string(p) + " is held by owner " +
                                  std::to_string(it->second) + " and again by owner " +
                                  std::to_string(o),
                              p));
    }
}

void check_owned_used(RwPoolSnapshot const& s,
                      RwOwners const& owners,
                      RwHeldRuns const&,
                      std::vector<Violation>& out) {
  for (std::size_t o = 0; o < owners.size(); ++o)
    for (std::uint32_t p : owners[o])
      if (p < s.num_pages && !used_bit(s, p))
        out.push_back(at_page("rw-owned-page-used",
                              "owner " + std::to_string(o) + " holds page " + std::to_string(p) +
                                  " but its used bit is clear (it could be handed out again)",
                              p));
}

std::vector<bool> owned_pages(RwPoolSnapshot const& s, RwOwners const& owners) {
  std::vector<bool> owned(s.num_pages, false);
  for (auto const& pages : owners)
    for (std::uint32_t p : pages)
      if (p < s.num_pages) owned[p] = true;
  return owned;
}

void check_freed_free(RwPoolSnapshot const& s,
                      RwOwners const& owners,
                      RwHeldRuns const&,
                      std::vector<Violation>& out) {
  std::vector<bool> const owned = owned_pages(s, owners);
  for (std::uint32_t p = 0; p < s.num_pages; ++p)
    if (used_bit(s, p) && !owned[p])
      out.push_back(at_page("rw-freed-page-free",
                            "page " + std::to_string(p) +
                                " is marked used but nobody holds it (a free that did not clear "
                                "its bit, or a leaked claim)",
                            p));
}

void check_count(RwPoolSnapshot const& s,
                 RwOwners const& owners,
                 RwHeldRuns const&,
                 std::vector<Violation>& out) {
  std::vector<bool> const owned = owned_pages(s, owners);
  std::uint64_t used = 0, held = 0;
  for (std::uint32_t p = 0; p < s.num_pages; ++p) {
    used += used_bit(s, p) ? 1 : 0;
    held += owned[p] ? 1 : 0;
  }
  if (used != held)
    out.push_back(Violation{"rw-used-count-matches-owned",
                            std::to_string(used) + " pages are marked used but " +
                                std::to_string(held) + " distinct pages are held"});
}

void check_locks(RwPoolSnapshot const& s,
                 RwOwners const&,
                 RwHeldRuns const&,
                 std::vector<Violation>& out) {
  for (std::size_t w = 0; w < s.lock_words.size(); ++w)
    if ((s.lock_words[w] & word_mask(s)) != 0)
      for (std::uint64_t rest = s.lock_words[w] & word_mask(s); rest != 0; rest &= rest - 1) {
        std::uint64_t const bit = w * s.word_bits + core::find_first_set(rest);
        Violation v{"rw-lock-map-clear-at-quiescence",
                    "LockMap bit " + std::to_string(bit) + " is set at quiescence (used word " +
                        std::to_string(bit) + " stays locked)"};
        v.bit = static_cast<std::int64_t>(bit);
        out.push_back(v);
      }
}

void check_runs_inside(RwPoolSnapshot const& s,
                       RwOwners const&,
                       RwHeldRuns const& runs,
                       std::vector<Violation>& out) {
  for (RwHeldRun const& r : runs)
    if (r.count == 0 || std::uint64_t{r.first} + r.count > s.num_pages)
      out.push_back(at_page("rw-run-inside-pool",
                            "owner " + std::to_string(r.owner) + "'s run of " +
                                std::to_string(r.count) + " pages from page " +
                                std::to_string(r.first) +
                                " is empty or ends beyond T = " + std::to_string(s.num_pages),
                            r.first));
}

bool holds(RwOwners const& owners, std::uint32_t owner, std::uint32_t page) {
  if (owner >= owners.size()) return false;
  for (std::uint32_t p : owners[owner])
    if (p == page) return true;
  return false;
}

void check_run_pages(RwPoolSnapshot const& s,
                     RwOwners const& owners,
                     RwHeldRuns const& runs,
                     std::vector<Violation>& out) {
  std::map<std::uint32_t, std::size_t> run_of;  // page -> index of the first run naming it
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RwHeldRun const& r = runs[i];
    std::uint64_t const end =
        std::min<std::uint64_t>(std::uint64_t{r.first} + r.count, s.num_pages);
    for (std::uint64_t q = r.first; q < end; ++q) {
      auto const p           = static_cast<std::uint32_t>(q);
      std::string const what = "page " + std::to_string(p) + " of owner " +
                               std::to_string(r.owner) + "'s run from " + std::to_string(r.first);
      if (!used_bit(s, p))
        out.push_back(at_page("rw-run-pages-owned-by-run", what + " is not marked used", p));
      if (!holds(owners, r.owner, p))
        out.push_back(at_page("rw-run-pages-owned-by-run", what + " is not held by that owner", p));
      auto const [it, fresh] = run_of.emplace(p, i);
      if (!fresh)
        out.push_back(at_page(
            "rw-run-pages-owned-by-run",
            what + " also belongs to the run from " + std::to_string(runs[it->second].first),
            p));
    }
  }
}

}  // namespace

std::vector<RwInvariant> const& rw_catalog() {
  static std::vector<RwInvariant> const k{
      {"rw-pool-shape",
       "RW sec. 4.1",
       "T bits in ceil(T / w) words; one LockMap bit per word",
       &check_shape},
      {"rw-no-page-beyond-pool",
       "RW sec. 3.1",
       "bits >= T are set; nobody holds a page >= T",
       &check_beyond},
      {"rw-page-owned-once",
       "RW sec. 3.1",
       "each page is held by at most one owner",
       &check_owned_once},
      {"rw-owned-page-used", "RW Alg. 1", "a held page's used bit is set", &check_owned_used},
      {"rw-freed-page-free",
       "RW sec. 3.1 FREEPAGE",
       "a page nobody holds has its used bit clear",
       &check_freed_free},
      {"rw-used-count-matches-owned",
       "RW sec. 3.1",
       "used pages = distinct held pages",
       &check_count},
      {"rw-lock-map-clear-at-quiescence",
       "RW sec. 4.1-4.2",
       "no LockMap bit is set at quiescence",
       &check_locks},
      {"rw-run-inside-pool",
       "RW sec. 4.3",
       "a run handed out by RW_malloc is not empty and ends at or before T",
       &check_runs_inside},
      {"rw-run-pages-owned-by-run",
       "RW Alg. 3",
       "every page of a run is used and held by the run's owner; no page is in two runs",
       &check_run_pages},
  };
  return k;
}

std::vector<Violation> rw_check_all(RwPoolSnapshot const& snapshot, RwOwners const& owners) {
  return rw_check_all(snapshot, owners, RwHeldRuns{});
}

std::vector<Violation> rw_check_all(RwPoolSnapshot const& snapshot,
                                    RwOwners const& owners,
                                    RwHeldRuns const& runs) {
  std::vector<Violation> out;
  check_shape(snapshot, owners, runs, out);
  if (!out.empty()) return out;
  for (auto const& inv : rw_catalog()) inv.check(snapshot, owners, runs, out);
  return out;
}

std::vector<Violation> rw_check_one(std::string_view name,
                                    RwPoolSnapshot const& snapshot,
                                    RwOwners const& owners,
                                    RwHeldRuns const& runs) {
  for (auto const& inv : rw_catalog())
    if (inv.name == name) {
      std::vector<Violation> out;
      check_shape(snapshot, owners, runs, out);
      if (out.empty()) inv.check(snapshot, owners, runs, out);
      return out;
    }
  HEAPLAB_EXPECTS(false, "rw_check_one: unknown invariant '" + std::string(name) + "'");
  return {};
}

}  // namespace heaplab::check
