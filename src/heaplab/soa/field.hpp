// The field DSL: user classes whose fields read like normal C++ members while the data lives in
// SOA arrays inside heap blocks (DynaSOAr sec. 2.1 Listing 1, sec. 3.3, App. B; Ikra-Cpp proxies).
//
//   class Body {
//    public:
//     HEAPLAB_SOA_FIELDS(Body,
//         (float, pos_x_),
//         (float, pos_y_),
//         (float[2], vel_),          // fixed-size array: two SOA arrays, vel_[0] and vel_[1]
//         (Body*, merge_target_));   // pointer to a heap type (an encoded object pointer)
//     HEAPLAB_HD Body(float x, float y) : pos_x_(x), pos_y_(y) {}
//     HEAPLAB_HD void move(float dt) { pos_x_ += dt * vel_[0]; pos_y_ += dt * vel_[1]; }
//   };
//   class Star : public Body {       // single inheritance: Body's fields come first
//    public:
//     HEAPLAB_SOA_DERIVED_FIELDS(Star, Body, (float, luminosity_));
//   };
//
// A `Body*` is not a memory address but an encoded object pointer (core/object_pointer.hpp):
// block address | slot, capacity - 1 in bits 50..55, type id in bits 56..63. Every field member
// is a one-byte proxy Field<Owner, I, T> placed at byte offset J = (inherited fields + I) of the
// object, so `this` of a proxy equals object pointer + J. A proxy recovers the object pointer as
// `this - J` (DynaSOAr App. B Listing 2) and returns a reference into the block:
//
//   block address + offset of field J's SOA array for the object's capacity + slot * sizeof(E)
//
// The offset rule is layout.hpp's. Because fields are laid out inherited-first and the offset of
// field J depends only on fields 0..J-1 and the capacity, a Body-typed proxy finds the same bytes
// for a Star object as a Star-typed one (the capacity comes from the pointer, sec. 3.3 Fig. 6).
//
// Rules, checked by static_assert where the class is defined (docs/allocator.md lists them):
// no virtual functions, no data members other than those declared through the macros, single
// inheritance from the declared base, the first macro argument names the enclosing class,
// trivially copyable field types with alignment <= 128, one-dimensional arrays.
//
// Objects only exist inside a heap: never create one on the stack, never copy one (the copy
// constructor is deleted). Construct with `new (encoded_pointer) T(args...)` or
// `new (encoded_pointer) T`. Avoid `new (p) T()` for a class without a user-provided default
// constructor: value-initialization zero-fills sizeof(T) bytes at the encoded address, which is
// not memory. Assignment `*p = *q` copies every field value from object q to object p.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "heaplab/core/expects.hpp"
#include "heaplab/core/host_device.hpp"
#include "heaplab/core/object_pointer.hpp"
#include "heaplab/cuda/debug_expects.hpp"
#include "heaplab/soa/detail/field_traits.hpp"
#include "heaplab/soa/detail/preprocessor.hpp"
#include "heaplab/soa/layout.hpp"

namespace heaplab::soa {

/// `heaplab::soa::array<float, 3>` is `float[3]`: a fixed-size array field of 3 SOA arrays.
template <class E, std::size_t K>
using array = E[K];

namespace detail {

/// Where unit 0 of field J of a field list starts, and the distance between its units, for every
/// capacity 1..64: field_list_layout's arithmetic (the layout rule of layout.hpp), evaluated at
/// compile time. A field access reads one entry instead of redoing the layout of every field
/// before J for the capacity in the pointer: on an H200 that arithmetic was 3.5x the
/// instructions of the static SOA baseline's loop in nbody's force kernel and most of the
/// heap's 1.6x (issue 31; docs/results.md "Field offsets from a table").
struct field_offsets {
  std::uint32_t begin[64];
  std::uint32_t stride[64];
};

template <class Fields, std::size_t J>
constexpr field_offsets make_field_offsets() {
  using layout               = field_list_layout<Fields>;
  constexpr FieldShape shape = layout::template shape<J>();
  // Offsets only grow with the capacity, so the largest is at 64.
  static_assert(soa_field_end(layout::template begin<J>(64), 64, shape) <= UINT32_MAX,
                "a field of this type ends more than 4 GiB into its block");
  field_offsets t{};
  for (std::uint32_t capacity = 1; capacity <= 64; ++capacity) {
    t.begin[capacity - 1]  = static_cast<std::uint32_t>(layout::template begin<J>(capacity));
    t.stride[capacity - 1] = static_cast<std::uint32_t>(soa_unit_stride(capacity, shape));
  }
  return t;
}

/// The table for host code and, as a __constant__ variable, for device code: one definition, the
/// same entries. Constant memory because the threads of a warp read the same row (one type's
/// objects): the constant cache broadcasts it with less latency than a read-only global load
/// (nbody's force loop is bound by its dependent chain per pair; issue 31, docs/results.md).
template <class Fields, std::size_t J>
inline constexpr field_offsets kFieldOffsets = make_field_offsets<Fields, J>();
#if defined(__CUDACC__)
template <class Fields, std::size_t J>
__constant__ constexpr field_offsets kFieldOffsetsDevice = make_field_offsets<Fields, J>();
#endif

template <class Fields, std::size_t J>
HEAPLAB_HD_INLINE field_offsets const& field_offsets_of() {
#if defined(__CUDA_ARCH__)
  return kFieldOffsetsDevice<Fields, J>;
#else
  return kFieldOffsets<Fields, J>;
#endif
}

/// Address computation shared by the field proxies (DynaSOAr App. B Listing 2).
template <class Owner, std::size_t I>
struct field_locator {
  using owner_chain = chain<Owner>;
  using fields      = typename owner_chain::all;
  /// Global field index == byte offset of the proxy inside Owner.
  static constexpr std::size_t index = owner_chain::inherited + I;
  using field_type                   = at_t<index, fields>;
  using element                      = typename checked_field<field_type>::element;

  /// The encoded object pointer of the object that contains the proxy at `proxy`.
  HEAPLAB_HD_INLINE static std::uint64_t object_pointer(void const* proxy) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(proxy)) - index;
  }

  /// Address of unit `unit` (0 for scalar fields) of this field of the object.
  HEAPLAB_HD_INLINE static element* address(void const* proxy,
                                            [[maybe_unused]] std::uint32_t unit) {
    static_assert(!std::is_polymorphic_v<Owner>,
                  "heap types cannot have virtual functions: an object pointer is not an address, "
                  "there is no storage for a vtable pointer");
    static_assert(sizeof(Owner) == owner_chain::total,
                  "a heap type may only hold the fields declared by HEAPLAB_SOA_FIELDS / "
                  "HEAPLAB_SOA_DERIVED_FIELDS (one byte each); it has other data members, "
                  "another base class with data, or an undeclared heap base");
    std::uint64_t const object = object_pointer(proxy);
    HEAPLAB_DEBUG_EXPECTS(core::pointer_block_address(object) != 0,
                          "field access through a null object pointer");
    HEAPLAB_DEBUG_EXPECTS(core::pointer_slot(object) < core::pointer_capacity(object),
                          "field access through an object pointer whose slot is >= its capacity");
    std::uint32_t const row    = core::pointer_capacity(object) - 1u;  // 0..63
    constexpr FieldShape shape = checked_field<field_type>::shape();
    field_offsets const& table = field_offsets_of<fields, index>();
    // The offset in 32-bit arithmetic and one 64-bit add to the block address: every unit of the
    // field ends below 4 GiB into its block (make_field_offsets asserts it at capacity 64, the
    // largest), so no sum overflows. On the GPU a 64-bit add or shift is two instructions; in
    // nbody's force loop this is most of the address arithmetic (issue 31).
    std::uint32_t offset = table.begin[row] + core::pointer_slot(object) * shape.element_bytes;
    if constexpr (shape.elements > 1) offset += unit * table.stride[row];
    return reinterpret_cast<element*>(
        static_cast<std::uintptr_t>(core::pointer_block_address(object) + offset));
  }
};

}  // namespace detail

/// A scalar field (arithmetic, enum, trivially copyable struct): converts to T&, assigns,
/// compound-assigns, increments; `&field` is the address of the SOA element; for class types
/// `field->member` reaches the element's members. Owner is the declaring class, I the index of
/// the field among Owner's own fields. Declared only through HEAPLAB_SOA_FIELDS.
template <class Owner, std::size_t I, class T>
class Field {
  using locator = detail::field_locator<Owner, I>;

 public:
  using value_type = T;

  Field() = default;  // leaves the element as it is (like default-initializing a float)
  HEAPLAB_HD_INLINE Field(T const& value) { get() = value; }  // NOLINT: implicit on purpose
  Field(Field const&) = delete;                               // objects live only in a heap

  HEAPLAB_HD_INLINE T& get() { return *locator::address(this, 0); }
  HEAPLAB_HD_INLINE T const& get() const { return *locator::address(this, 0); }
  HEAPLAB_HD_INLINE operator T&() { return get(); }  // NOLINT: implicit on purpose
  HEAPLAB_HD_INLINE operator T const&() const { return get(); }

  HEAPLAB_HD_INLINE Field& operator=(Field const& other) {
    get() = other.get();
    return *this;
  }
  HEAPLAB_HD_INLINE Field& operator=(T const& value) {
    get() = value;
    return *this;
  }

#define HEAPLAB_SOA_DETAIL_COMPOUND(op)                                 \
  template <class U>                                                    \
  HEAPLAB_HD_INLINE auto operator op(U const& value)                    \
      ->decltype(std::declval<T&>() op value, std::declval<Field&>()) { \
    get() op value;                                                     \
    return *this;                                                       \
  }
  HEAPLAB_SOA_DETAIL_COMPOUND(+=)
  HEAPLAB_SOA_DETAIL_COMPOUND(-=)
  HEAPLAB_SOA_DETAIL_COMPOUND(*=)
  HEAPLAB_SOA_DETAIL_COMPOUND(/=)
  HEAPLAB_SOA_DETAIL_COMPOUND(%=)
  HEAPLAB_SOA_DETAIL_COMPOUND(&=)
  HEAPLAB_SOA_DETAIL_COMPOUND(|=)
  HEAPLAB_SOA_DETAIL_COMPOUND(^=)
  HEAPLAB_SOA_DETAIL_COMPOUND(<<=)
  HEAPLAB_SOA_DETAIL_COMPOUND(>>=)
#undef HEAPLAB_SOA_DETAIL_COMPOUND

  template <class U = T, class = decltype(++std::declval<U&>())>
  HEAPLAB_HD_INLINE Field& operator++() {
    ++get();
    return *this;
  }
  template <class U = T, class = decltype(--std::declval<U&>())>
  HEAPLAB_HD_INLINE Field& operator--() {
    --get();
    return *this;
  }
  template <class U = T, class = decltype(std::declval<U&>()++)>
  HEAPLAB_HD_INLINE T operator++(int) {
    return get()++;
  }
  template <class U = T, class = decltype(std::declval<U&>()--)>
  HEAPLAB_HD_INLINE T operator--(int) {
    return get()--;
  }

  HEAPLAB_HD_INLINE T* operator&() { return &get(); }
  HEAPLAB_HD_INLINE T const* operator&() const { return &get(); }

  template <class U = T, class = std::enable_if_t<std::is_class_v<U>>>
  HEAPLAB_HD_INLINE U* operator->() {
    return &get();
  }
  template <class U = T, class = std::enable_if_t<std::is_class_v<U>>>
  HEAPLAB_HD_INLINE U const* operator->() const {
    return &get();
  }
};

/// A pointer field. For a pointer to a heap type the stored value is an encoded object pointer;
/// `field->x` follows it, `*field` dereferences it, `field = q` stores q. Pointers to other types
/// (e.g. a float* into a cudaMalloc buffer) are plain data that the heap never rewrites.
template <class Owner, std::size_t I, class P>
class Field<Owner, I, P*> {
  using locator = detail::field_locator<Owner, I>;

 public:
  using value_type = P*;

  Field() = default;
  HEAPLAB_HD_INLINE Field(P* value) { get() = value; }  // NOLINT: implicit on purpose
  Field(Field const&) = delete;

  HEAPLAB_HD_INLINE P*& get() { return *locator::address(this, 0); }
  HEAPLAB_HD_INLINE P* const& get() const { return *locator::address(this, 0); }
  HEAPLAB_HD_INLINE operator P*&() { return get(); }  // NOLINT: implicit on purpose
  HEAPLAB_HD_INLINE operator P* const&() const { return get(); }

  HEAPLAB_HD_INLINE Field& operator=(Field const& other) {
    get() = other.get();
    return *this;
  }
  HEAPLAB_HD_INLINE Field& operator=(P* value) {
    get() = value;
    return *this;
  }

  HEAPLAB_HD_INLINE P* operator->() const { return get(); }
  template <class U = P, class = std::enable_if_t<!std::is_void_v<U>>>
  HEAPLAB_HD_INLINE U& operator*() const {
    return *get();
  }
  HEAPLAB_HD_INLINE P** operator&() { return &get(); }
  HEAPLAB_HD_INLINE P* const* operator&() const { return &get(); }
};

/// A fixed-size array field E[K] (DynaSOAr App. B: subscript operator). Element e of all objects
/// of a block forms its own SOA array, so `field[e]` of consecutive slots is contiguous.
/// There is no whole-array value: read and write elements.
template <class Owner, std::size_t I, class E, std::size_t K>
class Field<Owner, I, E[K]> {
  using locator = detail::field_locator<Owner, I>;

 public:
  using value_type = E[K];
  using element    = E;

  Field()             = default;
  Field(Field const&) = delete;

  HEAPLAB_HD_INLINE static constexpr std::size_t size() { return K; }

  HEAPLAB_HD_INLINE E& operator[](std::size_t e) {
    check_index(e);
    return *locator::address(this, static_cast<std::uint32_t>(e));
  }
  HEAPLAB_HD_INLINE E const& operator[](std::size_t e) const {
    check_index(e);
    return *locator::address(this, static_cast<std::uint32_t>(e));
  }

  /// Element-wise copy from another object's array field of the same shape.
  HEAPLAB_HD_INLINE Field& operator=(Field const& other) {
    for (std::size_t e = 0; e < K; ++e) (*this)[e] = other[e];
    return *this;
  }

  /// The units are not contiguous: taking the address of the whole field is an error.
  void operator&() const = delete;

 private:
  HEAPLAB_HD_INLINE static void check_index([[maybe_unused]] std::size_t e) {
    HEAPLAB_DEBUG_EXPECTS(e < K, "array field index out of range");
  }
};

}  // namespace heaplab::soa

// ---------------------------------------------------------------- declaration macros

/// Declares the fields of a heap class that has no heap base class. Each entry is (type, name);
/// a type may contain commas (`(std::array<char, 4>, tag_)`, at most 8 parts per entry). Place it
/// under the access specifier the fields should have. At most 64 entries.
#define HEAPLAB_SOA_FIELDS(Self, ...) HEAPLAB_SOA_DETAIL_DECLARE(Self, void, __VA_ARGS__)

/// Declares the own fields of a heap class derived from heap class Base (single inheritance; the
/// class must also derive from Base in C++). May have no entries: HEAPLAB_SOA_DERIVED_FIELDS(T, B).
#define HEAPLAB_SOA_DERIVED_FIELDS(Self, Base, ...) \
  HEAPLAB_SOA_DETAIL_DECLARE(Self, Base, __VA_ARGS__)

/// Marks a heap class abstract: it is never allocated, has no blocks and no capacity (CompactGpu
/// Fig. 2); pointers to it may refer to objects of its subclasses. Not inherited.
#define HEAPLAB_SOA_ABSTRACT(Self) using heaplab_abstract_marker = Self

// The entries are walked three times (HEAPLAB_PP_FOR_EACH, see detail/preprocessor.hpp): for the
// type list (a template pack: `void, T0, T1, ...` minus the leading void), for the names, and for
// the members. A member's index I is the expression `0 + 1 + ... + 1` the walk passes along.
#define HEAPLAB_SOA_DETAIL_DECLARE(Self, Base, ...)                                   \
  friend struct ::heaplab::soa::detail::access;                                       \
  using heaplab_self       = Self;                                                    \
  using heaplab_base       = Base;                                                    \
  using heaplab_own_fields = ::heaplab::soa::detail::tail_t<void HEAPLAB_PP_FOR_EACH( \
      HEAPLAB_SOA_DETAIL_FIELD_TYPE, ~, __VA_ARGS__)>;                                \
  static constexpr char const* heaplab_type_name         = #Self;                     \
  static constexpr char const* heaplab_own_field_names[] = {                          \
      HEAPLAB_PP_FOR_EACH(HEAPLAB_SOA_DETAIL_FIELD_NAME, ~, __VA_ARGS__) nullptr};    \
  void heaplab_check_declaration() const {                                            \
    ::heaplab::soa::detail::check_declaration<Self, Base, decltype(this)>();          \
  }                                                                                   \
  HEAPLAB_PP_FOR_EACH(HEAPLAB_SOA_DETAIL_FIELD_MEMBER, Self, __VA_ARGS__)             \
  static_assert(HEAPLAB_PP_AT_MOST_64(__VA_ARGS__),                                   \
                "HEAPLAB_SOA_FIELDS: at most 64 fields per class declaration")

#define HEAPLAB_SOA_DETAIL_FIELD_TYPE(d, i, entry) \
  HEAPLAB_PP_CAT(HEAPLAB_SOA_DETAIL_FIELD_TYPE_, HEAPLAB_PP_IS_PAREN(entry))(entry)
#define HEAPLAB_SOA_DETAIL_FIELD_TYPE_1(entry) , HEAPLAB_PP_APPLY(HEAPLAB_PP_ALL_BUT_LAST, entry)
#define HEAPLAB_SOA_DETAIL_FIELD_TYPE_0(entry)

#define HEAPLAB_SOA_DETAIL_FIELD_NAME(d, i, entry) \
  HEAPLAB_PP_CAT(HEAPLAB_SOA_DETAIL_FIELD_NAME_, HEAPLAB_PP_IS_PAREN(entry))(entry)
#define HEAPLAB_SOA_DETAIL_FIELD_NAME_1(entry) \
  HEAPLAB_PP_STR(HEAPLAB_PP_APPLY(HEAPLAB_PP_LAST, entry)),
#define HEAPLAB_SOA_DETAIL_FIELD_NAME_0(entry)

#define HEAPLAB_SOA_DETAIL_FIELD_MEMBER(Self, i, entry) \
  HEAPLAB_PP_CAT(HEAPLAB_SOA_DETAIL_FIELD_MEMBER_, HEAPLAB_PP_IS_PAREN(entry))(Self, i, entry)
#define HEAPLAB_SOA_DETAIL_FIELD_MEMBER_1(Self, i, entry)                          \
  ::heaplab::soa::Field<Self, i, HEAPLAB_PP_APPLY(HEAPLAB_PP_ALL_BUT_LAST, entry)> \
      HEAPLAB_PP_APPLY(HEAPLAB_PP_LAST, entry);
#define HEAPLAB_SOA_DETAIL_FIELD_MEMBER_0(Self, i, entry) \
  static_assert(sizeof(HEAPLAB_PP_STR(entry)) == 1,       \
                "HEAPLAB_SOA_FIELDS: write each field as (type, name), e.g. (float, mass_)");

namespace heaplab::soa::detail {

/// Checks run where a heap class is defined (from a member function body, where the class is
/// complete). `This` is decltype(this) inside the class, i.e. `Class const*`.
template <class Self, class Base, class This>
constexpr void check_declaration() {
  static_assert(std::is_same_v<std::remove_cv_t<std::remove_pointer_t<This>>, Self>,
                "HEAPLAB_SOA_FIELDS / HEAPLAB_SOA_DERIVED_FIELDS: the first argument must name "
                "the class being declared");
  if constexpr (!std::is_void_v<Base>) {
    static_assert(std::is_base_of_v<Base, Self> && !std::is_same_v<Base, Self>,
                  "HEAPLAB_SOA_DERIVED_FIELDS(T, Base, ...): T must derive from Base");
    static_assert(is_heap_type_v<Base>,
                  "HEAPLAB_SOA_DERIVED_FIELDS(T, Base, ...): Base must declare its fields with "
                  "HEAPLAB_SOA_FIELDS or HEAPLAB_SOA_DERIVED_FIELDS");
  }
  static_assert(!std::is_polymorphic_v<Self>,
                "heap types cannot have virtual functions: an object pointer is not an address, "
                "there is no storage for a vtable pointer");
  static_assert(chain<Self>::total >= 1, "a heap type needs at least one field (own or inherited)");
  static_assert(sizeof(Self) == chain<Self>::total,
                "a heap type may only hold the fields declared by HEAPLAB_SOA_FIELDS / "
                "HEAPLAB_SOA_DERIVED_FIELDS (one byte each); it has other data members, another "
                "base class with data, or derives from a heap type without "
                "HEAPLAB_SOA_DERIVED_FIELDS");
  static_assert(alignof(Self) == 1, "a heap type must not contain over-aligned members");
}

}  // namespace heaplab::soa::detail
