// Names of enum values, written once: one table per enum serves both directions (a value's name
// for output and files, a name's value for parsing), so the two can never disagree. Host code.
//
//   inline constexpr core::EnumName<Color> kColorNames[] = {{Color::red, "red"}, ...};
//   core::name_of(kColorNames, Color::red) == "red";  core::value_of(kColorNames, "red") == red
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace heaplab::core {

template <class E>
struct EnumName {
  E value;
  char const* name;
};

/// The name of `value` in the table ("?" for a value the table lacks).
template <class E, std::size_t N>
constexpr char const* name_of(EnumName<E> const (&names)[N], E value) {
  for (EnumName<E> const& n : names)
    if (n.value == value) return n.name;
  return "?";
}

/// The value named `name`, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> value_of(EnumName<E> const (&names)[N], std::string_view name) {
  for (EnumName<E> const& n : names)
    if (name == n.name) return n.value;
  return std::nullopt;
}

/// "a, b or c": the names of the table, for error messages.
template <class E, std::size_t N>
std::string names_of(EnumName<E> const (&names)[N]) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i)
    out += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i].name);
  return out;
}

}  // namespace heaplab::core
