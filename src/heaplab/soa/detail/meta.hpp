// Small type-list utilities for the field DSL and the heap type reflection. Not public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace heaplab::soa::detail {

template <class... Ts>
struct type_list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class A, class B>
struct concat;
template <class... As, class... Bs>
struct concat<type_list<As...>, type_list<Bs...>> {
  using type = type_list<As..., Bs...>;
};
template <class A, class B>
using concat_t = typename concat<A, B>::type;

/// type_list of the types after the first: the field macros build a class's field types as the
/// pack `void, T0, T1, ...` (each entry adds `, T`), which needs no separator handling.
template <class First, class... Ts>
struct tail {
  using type = type_list<Ts...>;
};
template <class... Ts>
using tail_t = typename tail<Ts...>::type;

/// The I-th type of a type_list.
template <std::size_t I, class List>
struct at;
template <std::size_t I, class T, class... Ts>
struct at<I, type_list<T, Ts...>> : at<I - 1, type_list<Ts...>> {};
template <class T, class... Ts>
struct at<0, type_list<T, Ts...>> {
  using type = T;
};
template <std::size_t I, class List>
using at_t = typename at<I, List>::type;

/// Index of the first T in Ts..., or sizeof...(Ts) when absent.
template <class T, class... Ts>
constexpr std::size_t index_of() {
  constexpr bool same[] = {std::is_same_v<T, Ts>..., false};
  for (std::size_t i = 0; i < sizeof...(Ts); ++i)
    if (same[i]) return i;
  return sizeof...(Ts);
}

/// Number of occurrences of T in Ts...
template <class T, class... Ts>
constexpr std::size_t count_of() {
  return (std::size_t{0} + ... + (std::is_same_v<T, Ts> ? 1u : 0u));
}

template <class...>
inline constexpr bool always_false = false;

}  // namespace heaplab::soa::detail
