// Compile-time description of heap types declared with the field DSL (heaplab/soa/field.hpp):
// the inheritance chain, the field list with inherited fields first, field shapes, and the
// compile-time form of the SOA layout rule of heaplab/soa/layout.hpp. Not public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "heaplab/core/host_device.hpp"
#include "heaplab/soa/detail/meta.hpp"
#include "heaplab/soa/layout.hpp"

namespace heaplab::soa::detail {

/// The only code that reads what HEAPLAB_SOA_FIELDS declares inside a user's class; every heap
/// type befriends it, so the declarations may sit under `private:`.
struct access {
  template <class T>
  using self = typename T::heaplab_self;
  template <class T>
  using base = typename T::heaplab_base;
  template <class T>
  using own_fields = typename T::heaplab_own_fields;
  template <class T>
  using abstract_marker = typename T::heaplab_abstract_marker;

  template <class T>
  static constexpr char const* type_name() {
    return T::heaplab_type_name;
  }
  template <class T>
  static constexpr char const* own_field_name(std::size_t i) {
    return T::heaplab_own_field_names[i];
  }
};

template <class T, class = void>
struct has_self : std::false_type {};
template <class T>
struct has_self<T, std::void_t<access::self<T>>> : std::true_type {};

/// True for classes that declare their own fields with HEAPLAB_SOA_FIELDS or
/// HEAPLAB_SOA_DERIVED_FIELDS (a subclass that declares nothing inherits its base's `self`).
template <class T, class = void>
struct is_heap_type : std::false_type {};
template <class T>
struct is_heap_type<T, std::enable_if_t<std::is_class_v<T> && has_self<T>::value>>
    : std::is_same<access::self<T>, T> {};
template <class T>
inline constexpr bool is_heap_type_v = is_heap_type<T>::value;

template <class T, class = void>
struct declares_abstract : std::false_type {};
template <class T>
struct declares_abstract<T, std::void_t<access::abstract_marker<T>>>
    : std::is_same<access::abstract_marker<T>, T> {};

/// Field list of a heap type, inherited fields first (DynaSOAr sec. 3.1).
template <class T>
struct chain {
  using base = access::base<T>;
  using all  = concat_t<typename chain<base>::all, access::own_fields<T>>;
  static constexpr std::size_t inherited = chain<base>::all::size;
  static constexpr std::size_t total     = all::size;
  static constexpr std::size_t depth     = chain<base>::depth + 1;
};
template <>
struct chain<void> {
  using all                              = type_list<>;
  static constexpr std::size_t inherited = 0;
  static constexpr std::size_t total     = 0;
  static constexpr std::size_t depth     = 0;
};

/// What one field stores: `elements` SOA arrays ("units") of `element`.
template <class F>
struct field_traits {
  using element                           = F;
  static constexpr std::uint32_t elements = 1;
};
template <class E, std::size_t K>
struct field_traits<E[K]> {
  using element                           = E;
  static constexpr std::uint32_t elements = static_cast<std::uint32_t>(K);
};

template <class F>
struct checked_field {
  using traits  = field_traits<F>;
  using element = typename traits::element;
  static_assert(!std::is_reference_v<F>, "a heap field cannot be a reference");
  static_assert(!std::is_array_v<element>,
                "heap array fields have one dimension: use E[K], not E[K1][K2]");
  static_assert(!std::is_const_v<element> && !std::is_volatile_v<element>,
                "heap fields cannot be const or volatile (the SOA element is written in place)");
  static_assert(
      std::is_trivially_copyable_v<element>,
      "heap fields must be trivially copyable: CompactGpu moves objects by copying bytes");
  static_assert(alignof(element) <= kCacheLineBytes,
                "heap field types must not need more than 128-byte alignment");
  HEAPLAB_HD_INLINE static constexpr FieldShape shape() {
    return FieldShape{static_cast<std::uint32_t>(sizeof(element)), traits::elements};
  }
};

/// The layout rule of layout.hpp evaluated over a compile-time field list: field sizes are
/// template constants, so a call with a runtime capacity unrolls to straight-line arithmetic.
template <class List>
struct field_list_layout;
template <class... Fs>
struct field_list_layout<type_list<Fs...>> {
  static constexpr std::size_t count = sizeof...(Fs);

  /// End offset of the first J fields at `capacity` (J == count: data segment bytes).
  template <std::size_t J>
  HEAPLAB_HD_INLINE static constexpr std::uint64_t end_of_first(std::uint32_t capacity) {
    return end_of_first_impl<J>(capacity, std::index_sequence_for<Fs...>{});
  }

  /// Offset of unit 0 of field J at `capacity`.
  template <std::size_t J>
  HEAPLAB_HD_INLINE static constexpr std::uint64_t begin(std::uint32_t capacity) {
    static_assert(J < count, "field index out of range");
    return soa_field_begin(end_of_first<J>(capacity), capacity, shape<J>());
  }

  template <std::size_t J>
  HEAPLAB_HD_INLINE static constexpr FieldShape shape() {
    return checked_field<at_t<J, type_list<Fs...>>>::shape();
  }

 private:
  template <std::size_t J, std::size_t... Is>
  HEAPLAB_HD_INLINE static constexpr std::uint64_t end_of_first_impl(std::uint32_t capacity,
                                                                     std::index_sequence<Is...>) {
    std::uint64_t end = 0;
    ((end = Is < J ? soa_field_end(soa_field_begin(end, capacity, checked_field<Fs>::shape()),
                                   capacity,
                                   checked_field<Fs>::shape())
                   : end),
     ...);
    return end;
  }
};

}  // namespace heaplab::soa::detail
