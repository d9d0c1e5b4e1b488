// Small text utilities of the file readers and the command line: "did you mean" suggestions, and
// text from files made safe to print on a terminal.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
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

/// The length (1 or 2 bytes) of a terminal control code at text[i], 0 when there is none there:
/// a C0 control other than newline and tab (ESC starts the sequences that retitle a terminal or
/// hide lines; a carriage return overwrites a line), DEL, or a C1 control (U+0080-U+009F, two
/// bytes in UTF-8).
inline std::size_t control_code_at(std::string_view text, std::size_t i) {
  auto const c = static_cast<unsigned char>(text[i]);
  if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return 1;
  if (c == 0xc2 && i + 1 < text.size()) {
    auto const d = static_cast<unsigned char>(text[i + 1]);
    if (d >= 0x80 && d <= 0x9f) return 2;
  }
  return 0;
}

/// `text` with every terminal control code (control_code_at) written out as \xHH or \u00HH, so
/// that text from a file (a description, a name, a message, a file name) cannot act on the
/// terminal it is printed on. Everything else, UTF-8 included, is kept.
inline std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t const n = control_code_at(text, i);
    if (n == 0) {
      out += text[i++];
      continue;
    }
    char buf[8];
    if (n == 1)
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
    else
      std::snprintf(buf, sizeof buf, "\\u00%02x", static_cast<unsigned char>(text[i + 1]));
    out += buf;
    i += n;
  }
  return out;
}

}  // namespace heaplab::schedule
