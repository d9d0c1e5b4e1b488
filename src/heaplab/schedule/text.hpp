// Small text utilities of the file readers and the command line: "did you mean" suggestions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace heaplab::schedule {

/// Levenshtein distance (insertions, deletions, substitutions).
inline std::size_t edit_distance(std::string const& a, std::string const& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0]           = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t const up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag   = up;
    }
  }
  return row[b.size()];
}

/// The candidate closest to `word` within `max_distance` edits (ties: the first), or "".
inline std::string closest(std::string const& word,
                           std::vector<std::string> const& candidates,
                           std::size_t max_distance) {
  std::string best;
  std::size_t best_distance = max_distance + 1;
  for (auto const& c : candidates) {
    std::size_t const d = edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

}  // namespace heaplab::schedule
