// The heap type list and its reflection (DynaSOAr sec. 2.1: the types are known at compile time;
// sec. 3.2 capacities; CompactGpu sec. 3.4 which pointer arrays may refer to a type).
//
//   using Types = heaplab::soa::HeapTypes<Particle, Body, Star>;   // type id = position
//   Types::type_id<Star>           // 2
//   Types::capacity<Body>          // DynaSOAr sec. 3.2: floor(64 * size(smallest) / size(Body))
//   Types::field_offset<Star, 3>(capacity)   // byte offset of field 3's SOA array (device too)
//   Types::block_bytes             // one block size for every type
//   constexpr auto table = Types::layout_table();   // trivially copyable, for kernels
//
// Host-only companions (HeapConfig, blocks for a byte budget) are in heaplab/soa/host_config.hpp.
//
// A base type must appear before the types that derive from it (HeapConfig's rule). Every type in
// the list must be complete where HeapTypes<...> is first used. All checks are static_asserts with
// a message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "heaplab/core/heap_config.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/soa/detail/field_traits.hpp"
#include "heaplab/soa/detail/meta.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/layout.hpp"

namespace heaplab::soa {

// Object pointer limits shared with the rest of heaplab (core/heap_config.hpp): at most 64 slots
// per block, 8-bit type ids with kNoType (0xFF) meaning "no type".
using core::kMaxCapacity;
using core::kMaxTypes;
using core::kNoType;

/// One type of the list, as seen by device code.
struct TypeLayout {
  std::uint32_t size_bytes  = 0;  // sum of all field sizes, inherited ones included
  std::uint32_t capacity    = 0;  // N_T (DynaSOAr sec. 3.2); 0 for abstract types
  std::uint32_t base        = kNoType;
  std::uint32_t is_abstract = 0;
  std::uint32_t first_field = 0;  // index of field 0 of this type in LayoutTable::fields
  std::uint32_t num_fields  = 0;  // inherited ones included
  std::uint32_t data_bytes  = 0;  // data segment at N_T; 0 for abstract types
};

/// One field of one type (fields of a type: inherited first, in declaration order).
struct FieldLayout {
  std::uint32_t declaring_type = 0;        // type id of the class that declares the field
  std::uint32_t own_index      = 0;        // index among the declaring class's own fields
  std::uint32_t element_bytes  = 0;        // sizeof(E)
  std::uint32_t elements       = 1;        // K for E[K], else 1
  std::uint32_t pointee        = kNoType;  // type id for a pointer to a heap type
  std::uint32_t pointer_field  = kNoType;  // index in HeapConfig TypeSpec::pointer_fields
  std::uint32_t offset         = 0;        // byte offset of unit 0 in a block of this type (at N_T)
  std::uint32_t stride         = 0;        // distance between units e and e + 1 (at N_T)

  HEAPLAB_HD_INLINE constexpr FieldShape shape() const { return {element_bytes, elements}; }
  HEAPLAB_HD_INLINE constexpr bool is_heap_pointer() const { return pointee != kNoType; }
};

/// An SOA array of heap pointers: unit `element` of field `field` of blocks of type `type`, at
/// byte offset `offset` of such a block (CompactGpu sec. 3.4 scans exactly these).
struct PointerArrayRef {
  std::uint32_t type    = 0;
  std::uint32_t field   = 0;
  std::uint32_t element = 0;
  std::uint32_t offset  = 0;
};

/// The whole layout of a heap type list as one trivially copyable value (pass it to kernels by
/// value or copy it to __constant__ memory). Built at compile time by HeapTypes::layout_table().
template <std::uint32_t NumTypes, std::uint32_t NumFields, std::uint32_t NumIncoming>
struct LayoutTable {
  std::uint32_t block_bytes = 0;
  TypeLayout types[NumTypes]{};
  FieldLayout fields[NumFields]{};
  /// incoming[incoming_begin[t] .. incoming_begin[t + 1]): every SOA array of a non-abstract type
  /// whose declared pointee is t or a supertype of t, i.e. that may hold a pointer to an object of
  /// type t (CompactGpu sec. 3.4). Empty for abstract t. Ordered by type id, then as
  /// HeapConfig::pointer_slots orders the slots of one type.
  std::uint32_t incoming_begin[NumTypes + 1]{};
  PointerArrayRef incoming[NumIncoming > 0 ? NumIncoming : 1]{};

  static constexpr std::uint32_t num_types = NumTypes;

  HEAPLAB_HD_INLINE constexpr FieldLayout const& field(std::uint32_t type,
                                                       std::uint32_t field_index) const {
    return fields[types[type].first_field + field_index];
  }

  /// Byte offset, within a block of type `type` (capacity N_type), of unit `element` of field
  /// `field_index`; add slot * element_bytes for one object's element.
  HEAPLAB_HD_INLINE constexpr std::uint64_t unit_offset(std::uint32_t type,
                                                        std::uint32_t field_index,
                                                        std::uint32_t element) const {
    FieldLayout const& f = field(type, field_index);
    return std::uint64_t{f.offset} + std::uint64_t{element} * f.stride;
  }

  /// The same for a block of any capacity: fields 0..field_index of `type` are the first fields of
  /// every subtype, so this is where a `type`-typed view of a subtype object finds them.
  HEAPLAB_HD_INLINE constexpr std::uint64_t unit_offset_at(std::uint32_t type,
                                                           std::uint32_t field_index,
                                                           std::uint32_t element,
                                                           std::uint32_t capacity) const {
    std::uint64_t end = 0;
    for (std::uint32_t f = 0; f < field_index; ++f) {
      FieldShape const s = field(type, f).shape();
      end                = soa_field_end(soa_field_begin(end, capacity, s), capacity, s);
    }
    FieldShape const s = field(type, field_index).shape();
    return soa_field_begin(end, capacity, s) +
           std::uint64_t{element} * soa_unit_stride(capacity, s);
  }

  /// Pointer slots of `type` in its fields before `field_index`, numbered as
  /// HeapConfig::pointer_slots numbers them (inherited fields first, array elements in order):
  /// the number of the field's first slot; with field_index = num_fields, all of them.
  HEAPLAB_HD_INLINE constexpr std::uint32_t pointer_slots_before(std::uint32_t type,
                                                                 std::uint32_t field_index) const {
    std::uint32_t n = 0;
    for (std::uint32_t f = 0; f < field_index; ++f)
      if (field(type, f).is_heap_pointer()) n += field(type, f).elements;
    return n;
  }

  HEAPLAB_HD_INLINE constexpr bool is_subtype(std::uint32_t t, std::uint32_t s) const {
    for (std::uint32_t cur = t; cur != kNoType; cur = types[cur].base)
      if (cur == s) return true;
    return false;
  }
};

namespace detail {

template <class T>
using pointee_class_t = std::remove_cv_t<std::remove_pointer_t<T>>;

/// Per-field facts that depend on the type list (which pointers are heap pointers).
template <class... Ts>
struct list_facts {
  template <class T>
  static constexpr std::size_t id = index_of<T, Ts...>();

  template <class F>
  static constexpr std::uint32_t pointee_id() {
    using E = typename field_traits<F>::element;
    if constexpr (std::is_pointer_v<E>) {
      using Q = pointee_class_t<E>;
      if constexpr (id<Q> < sizeof...(Ts)) return static_cast<std::uint32_t>(id<Q>);
    }
    return kNoType;
  }

  template <class F>
  static constexpr bool field_ok() {
    using E = typename field_traits<F>::element;
    static_assert(!is_heap_type_v<E>,
                  "a heap type cannot be a field of another heap type: use a pointer field");
    if constexpr (std::is_pointer_v<E>) {
      using Q = pointee_class_t<E>;
      if constexpr (std::is_class_v<Q>) {
        static_assert(id<Q> < sizeof...(Ts) || !is_heap_type_v<Q>,
                      "a pointer field points to a heap type that is missing from HeapTypes<...>");
      }
    }
    return true;
  }

  template <class T, std::size_t... Is>
  static constexpr bool own_fields_ok(std::index_sequence<Is...>) {
    return (true && ... && field_ok<at_t<Is, access::own_fields<T>>>());
  }

  /// Whether no listed type lies strictly between T and its declared base B.
  template <class T, class B>
  static constexpr bool base_is_direct() {
    return (true && ... &&
            !(!std::is_same_v<Ts, T> && !std::is_same_v<Ts, B> && std::is_base_of_v<B, Ts> &&
              std::is_base_of_v<Ts, T>));
  }

  template <class T>
  static constexpr bool type_ok() {
    static_assert(std::is_class_v<T> && is_heap_type_v<T>,
                  "every type in HeapTypes<...> must declare its fields with HEAPLAB_SOA_FIELDS, "
                  "or HEAPLAB_SOA_DERIVED_FIELDS for a subclass (even one without own fields)");
    if constexpr (std::is_class_v<T> && is_heap_type_v<T>) {
      using B = access::base<T>;
      check_declaration<T, B, T const*>();
      if constexpr (!std::is_void_v<B>) {
        static_assert(id<B> < sizeof...(Ts),
                      "the base of a heap type must be in the same HeapTypes<...> list");
        static_assert(
            id<B> < id<T>,
            "a base type must appear in HeapTypes<...> before the types deriving from it");
        static_assert(base_is_direct<T, B>(),
                      "HEAPLAB_SOA_DERIVED_FIELDS names a base that is not the direct base class "
                      "(a listed type lies in between)");
      }
      own_fields_ok<T>(std::make_index_sequence<access::own_fields<T>::size>{});
    }
    return true;
  }
};

template <class... Fs>
constexpr std::uint32_t sum_field_sizes(type_list<Fs...>*) {
  return (0u + ... +
          (checked_field<Fs>::shape().element_bytes * checked_field<Fs>::shape().elements));
}

constexpr bool same_string(char const* a, char const* b) {
  for (; *a != '\0' && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}

}  // namespace detail

template <class... Ts>
class HeapTypes {
  using facts = detail::list_facts<Ts...>;
  using list  = detail::type_list<Ts...>;

  static_assert(sizeof...(Ts) >= 1, "HeapTypes<...> needs at least one type");
  static_assert(sizeof...(Ts) <= kMaxTypes,
                "at most 255 heap types: type ids are 8 bits and 0xFF means 'no type'");
  static_assert((true && ... && (detail::count_of<Ts, Ts...>() == 1)),
                "a type appears twice in HeapTypes<...>");
  static constexpr bool types_ok = (true && ... && facts::template type_ok<Ts>());
  static_assert(types_ok);
  static constexpr bool names_unique = [] {
    // A type without its own declaration would repeat its base's name: reported above already.
    if (!(true && ... && detail::is_heap_type_v<Ts>)) return true;
    char const* names[] = {detail::access::type_name<Ts>()...};
    for (std::size_t a = 0; a < sizeof...(Ts); ++a)
      for (std::size_t b = a + 1; b < sizeof...(Ts); ++b)
        if (detail::same_string(names[a], names[b])) return false;
    return true;
  }();
  static_assert(names_unique,
                "two heap types have the same name (HeapConfig and snapshots identify types by "
                "name): rename one of the classes");

 public:
  static constexpr std::uint32_t num_types = sizeof...(Ts);

  template <class T>
  static constexpr bool contains = detail::index_of<T, Ts...>() < sizeof...(Ts);

  /// Type id: the position of T in the list (DynaSOAr sec. 3.3: bits 56..63 of object pointers).
  template <class T>
  static constexpr std::uint32_t type_id = [] {
    static_assert(contains<T>, "type_id<T>: T is not in this HeapTypes<...> list");
    return static_cast<std::uint32_t>(detail::index_of<T, Ts...>());
  }();

  template <std::uint32_t Id>
  using type = detail::at_t<Id, list>;

  template <class T>
  static constexpr bool is_abstract = detail::declares_abstract<T>::value;

  /// Type id of T's base, or kNoType for a root type.
  template <class T>
  static constexpr std::uint32_t base_id = [] {
    using B = detail::access::base<T>;
    if constexpr (std::is_void_v<B>) {
      return kNoType;
    } else {
      return type_id<B>;
    }
  }();

  /// Number of fields of T, inherited ones included.
  template <class T>
  static constexpr std::uint32_t num_fields = static_cast<std::uint32_t>(detail::chain<T>::total);

  /// size(T) of DynaSOAr sec. 3.2: the sum of all field sizes (E[K] counts K * sizeof(E)).
  template <class T>
  static constexpr std::uint32_t size_bytes = [] {
    using L = typename detail::chain<T>::all;
    return detail::sum_field_sizes(static_cast<L*>(nullptr));
  }();

  /// Size of the smallest non-abstract type (a block of it holds 64 objects).
  static constexpr std::uint32_t smallest_size = [] {
    std::uint32_t s = 0;
    ((s = (!is_abstract<Ts> && (s == 0 || size_bytes<Ts> < s)) ? size_bytes<Ts> : s), ...);
    return s;
  }();
  static_assert(smallest_size > 0, "every type in HeapTypes<...> is abstract: nothing to allocate");

  /// N_T = min(64, floor(64 * size(T_smallest) / size(T))) (DynaSOAr sec. 3.2); 0 if abstract.
  template <class T>
  static constexpr std::uint32_t capacity = [] {
    if (is_abstract<T>) return std::uint32_t{0};
    std::uint32_t const n = kMaxCapacity * smallest_size / size_bytes<T>;
    return n < kMaxCapacity ? n : kMaxCapacity;
  }();
  static_assert((true && ... && (is_abstract<Ts> || capacity<Ts> >= 1)),
                "a non-abstract type is more than 64x larger than the smallest type: DynaSOAr "
                "sec. 3.2 cannot give it a block capacity >= 1");

  /// Byte offset, in a block of capacity `cap`, of the SOA array of unit 0 of field J of T
  /// (J counts inherited fields first). Valid for any subtype's capacity.
  template <class T, std::size_t J>
  HEAPLAB_HD_INLINE static constexpr std::uint64_t field_offset(std::uint32_t cap) {
    return detail::field_list_layout<typename detail::chain<T>::all>::template begin<J>(cap);
  }

  /// Data segment bytes of a block of T (at N_T); 0 for abstract types.
  template <class T>
  static constexpr std::uint64_t data_segment_bytes =
      is_abstract<T>
          ? 0
          : detail::field_list_layout<typename detail::chain<T>::all>::template end_of_first<
                detail::chain<T>::total>(capacity<T>);

  /// Bytes of every block: max over non-abstract T of max(data segment, N_T forwarding pointers),
  /// rounded up to 128 (docs/allocator.md "Block layout").
  static constexpr std::uint32_t block_bytes = [] {
    std::uint64_t b = 0;
    ((b = (!is_abstract<Ts> && block_bytes_for(data_segment_bytes<Ts>, capacity<Ts>) > b)
              ? block_bytes_for(data_segment_bytes<Ts>, capacity<Ts>)
              : b),
     ...);
    return static_cast<std::uint32_t>(b);
  }();

  static constexpr std::uint32_t total_fields = (0u + ... + num_fields<Ts>);

 private:
  static char const* own_field_name(std::uint32_t t, std::uint32_t i) {
    using fn               = char const* (*)(std::size_t);
    constexpr fn by_type[] = {&detail::access::own_field_name<Ts>...};
    return by_type[t](i);
  }

  /// Writes the fields of T (inherited first) into out[0 .. num_fields<T>), without offsets.
  template <class T>
  static constexpr void describe_fields(FieldLayout* out) {
    using B = detail::access::base<T>;
    if constexpr (!std::is_void_v<B>) describe_fields<B>(out);
    describe_own_fields<T>(out + detail::chain<T>::inherited,
                           std::make_index_sequence<detail::access::own_fields<T>::size>{});
  }

  template <class T, std::size_t... Is>
  static constexpr void describe_own_fields(FieldLayout* out, std::index_sequence<Is...>) {
    std::uint32_t pointer_index = 0;
    [[maybe_unused]] auto one   = [&](auto* tag, std::uint32_t own_index) {
      using F = std::remove_pointer_t<decltype(tag)>;
      FieldLayout f{};
      f.declaring_type = type_id<T>;
      f.own_index      = own_index;
      f.element_bytes  = detail::checked_field<F>::shape().element_bytes;
      f.elements       = detail::checked_field<F>::shape().elements;
      f.pointee        = facts::template pointee_id<F>();
      if (f.pointee != kNoType) f.pointer_field = pointer_index++;
      return f;
    };
    ((out[Is] = one(static_cast<detail::at_t<Is, detail::access::own_fields<T>>*>(nullptr),
                    static_cast<std::uint32_t>(Is))),
     ...);
  }

  /// Builds the table; `Capacity` is the size of its incoming[] array (1 while counting).
  template <std::uint32_t IncomingCapacity>
  static constexpr LayoutTable<num_types, total_fields, IncomingCapacity> build() {
    LayoutTable<num_types, total_fields, IncomingCapacity> table{};
    table.block_bytes   = block_bytes;
    std::uint32_t first = 0;
    std::uint32_t t     = 0;
    (
        [&] {
          TypeLayout& ty = table.types[t];
          ty.size_bytes  = size_bytes<Ts>;
          ty.capacity    = capacity<Ts>;
          ty.base        = base_id<Ts>;
          ty.is_abstract = is_abstract<Ts> ? 1u : 0u;
          ty.first_field = first;
          ty.num_fields  = num_fields<Ts>;
          ty.data_bytes  = static_cast<std::uint32_t>(data_segment_bytes<Ts>);
          describe_fields<Ts>(table.fields + first);
          std::uint64_t end = 0;
          for (std::uint32_t j = 0; j < ty.num_fields; ++j) {
            FieldLayout& f = table.fields[first + j];
            if (ty.capacity == 0) continue;  // abstract: no blocks, no offsets
            std::uint64_t const begin = soa_field_begin(end, ty.capacity, f.shape());
            f.offset                  = static_cast<std::uint32_t>(begin);
            f.stride = static_cast<std::uint32_t>(soa_unit_stride(ty.capacity, f.shape()));
            end      = soa_field_end(begin, ty.capacity, f.shape());
          }
          first += ty.num_fields;
          ++t;
        }(),
        ...);
    // CompactGpu sec. 3.4: the pointer arrays that may refer to an object of type `target`.
    std::uint32_t n = 0;
    for (std::uint32_t target = 0; target < num_types; ++target) {
      table.incoming_begin[target] = n;
      if (table.types[target].is_abstract) continue;
      for (std::uint32_t u = 0; u < num_types; ++u) {
        TypeLayout const& holder = table.types[u];
        if (holder.is_abstract) continue;
        for (std::uint32_t j = 0; j < holder.num_fields; ++j) {
          FieldLayout const& f = table.field(u, j);
          if (!f.is_heap_pointer() || !table.is_subtype(target, f.pointee)) continue;
          for (std::uint32_t e = 0; e < f.elements; ++e, ++n) {
            if constexpr (IncomingCapacity > 0) {  // (nvcc: no "unsigned < 0" comparison)
              if (n < IncomingCapacity)
                table.incoming[n] = PointerArrayRef{u, j, e, f.offset + e * f.stride};
            }
          }
        }
      }
    }
    table.incoming_begin[num_types] = n;
    return table;
  }

 public:
  static constexpr std::uint32_t total_incoming = [] {
    auto const table = build<1>();
    return table.incoming_begin[num_types];
  }();

  using Table = LayoutTable<num_types, total_fields, total_incoming>;

  /// The layout as one trivially copyable value. Evaluate it on the host (`constexpr auto t =
  /// Types::layout_table();`) and hand it to kernels by value or through __constant__ memory.
  static constexpr Table layout_table() { return build<total_incoming>(); }

  // ---------------------------------------------------------------- host-side names and config

  static constexpr char const* type_name(std::uint32_t t) {
    constexpr char const* names[] = {detail::access::type_name<Ts>()...};
    return names[t];
  }

  /// Name of field `j` (inherited first) of type `t`, as written in the declaring class.
  static char const* field_name(std::uint32_t t, std::uint32_t j) {
    constexpr Table table = build<total_incoming>();
    FieldLayout const& f  = table.field(t, j);
    return own_field_name(f.declaring_type, f.own_index);
  }
};

namespace detail {
template <class M>
struct method_class;
template <class C, class R, class... A>
struct method_class<R (C::*)(A...)> {
  using type = C;
};
template <class C, class R, class... A>
struct method_class<R (C::*)(A...) const> {
  using type = C;
};
template <class C, class R, class... A>
struct method_class<R (C::*)(A...) noexcept> {
  using type = C;
};
template <class C, class R, class... A>
struct method_class<R (C::*)(A...) const noexcept> {
  using type = C;
};
}  // namespace detail

/// The type a kept enumeration of T (Heap::Enumeration) runs `Method` over: the method's class
/// when it is T or derives from T (e.g. &Male::propose on an enumeration of Agent), else T (a
/// method T inherits). Any other class is an error.
template <class T, auto Method>
using do_all_target_t =
    std::conditional_t<std::is_base_of_v<typename detail::method_class<decltype(Method)>::type, T>,
                       T,
                       typename detail::method_class<decltype(Method)>::type>;

template <class T, auto Method>
inline constexpr bool is_do_all_target_v = std::is_base_of_v<T, do_all_target_t<T, Method>>;

/// Bytes of every block of a heap of `Types` (a HeapTypes<...>).
template <class Types>
HEAPLAB_HD_INLINE constexpr std::uint32_t block_bytes() {
  return Types::block_bytes;
}

}  // namespace heaplab::soa
