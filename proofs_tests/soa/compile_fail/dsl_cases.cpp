// Declarations the field DSL must reject at compile time. compile_fail.cmake compiles each case
// twice: as written (the control, which must compile cleanly) and with HEAPLAB_BREAK defined
// (which must fail with the message registered in proofs_tests/soa/CMakeLists.txt). A control
// that fails, or a broken case that compiles or fails for another reason, fails the test.
#include <cstdint>
#include <string>

#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"

#ifdef HEAPLAB_BREAK
#define BROKEN(bad, good) bad
#else
#define BROKEN(bad, good) good
#endif

namespace cf {

#if HEAPLAB_CASE == 1  // a data member that is not a field proxy
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
  BROKEN(int extra_;, )
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 2  // a virtual function (there is no storage for a vtable pointer)
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
  BROKEN(virtual, ) void f() {}
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 3  // the macro names another class
class Other {
 public:
  HEAPLAB_SOA_FIELDS(Other, (int, o_));
};
class A {
 public:
  HEAPLAB_SOA_FIELDS(BROKEN(Other, A), (int, a_));
};

#elif HEAPLAB_CASE == 4  // a subclass declared with the root macro (base fields not counted)
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class B : public A {
 public:
  BROKEN(HEAPLAB_SOA_FIELDS(B, (int, b_)), HEAPLAB_SOA_DERIVED_FIELDS(B, A, (int, b_)));
};

#elif HEAPLAB_CASE == 5  // a listed subclass that declares nothing
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class B : public A {
 public:
  BROKEN(, HEAPLAB_SOA_DERIVED_FIELDS(B, A));
};
static_assert(heaplab::soa::HeapTypes<A, B>::num_types == 2);

#elif HEAPLAB_CASE == 6  // base listed after its subclass
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class B : public A {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(B, A, (int, b_));
};
static_assert(BROKEN((heaplab::soa::HeapTypes<B, A>::num_types),
                     (heaplab::soa::HeapTypes<A, B>::num_types)) == 2);

#elif HEAPLAB_CASE == 7  // base missing from the list
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class B : public A {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(B, A, (int, b_));
};
static_assert(BROKEN((heaplab::soa::HeapTypes<B>::num_types),
                     (heaplab::soa::HeapTypes<A, B>::num_types - 1)) == 1);

#elif HEAPLAB_CASE == 8  // a pointer field to a heap type missing from the list
class C;
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (C*, c_));
};
class C {
 public:
  HEAPLAB_SOA_FIELDS(C, (int, x_));
};
static_assert(BROKEN((heaplab::soa::HeapTypes<A>::num_types),
                     (heaplab::soa::HeapTypes<A, C>::num_types - 1)) == 1);

#elif HEAPLAB_CASE == 9  // `auto` deduces the proxy type, whose copy constructor is deleted
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (float, a_));
  float twice() {
    BROKEN(auto, float) v = a_;
    return v * 2;
  }
};

#elif HEAPLAB_CASE == 10  // a type more than 64x the smallest (capacity would be 0)
class Small {
 public:
  HEAPLAB_SOA_FIELDS(Small, (char, c_));
};
class Big {
 public:
  HEAPLAB_SOA_FIELDS(Big, (char[BROKEN(65, 64)], bytes_));
};
static_assert(heaplab::soa::HeapTypes<Small, Big>::num_types == 2);

#elif HEAPLAB_CASE == 11  // a field type that cannot be moved by copying bytes
struct Value {
  int v;
  BROKEN(Value(Value const& o) : v(o.v){}, )
  BROKEN(Value() = default;, )
};
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (Value, v_));
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 12  // more than 64 fields in one declaration
#ifdef HEAPLAB_BREAK
#define CF_EXTRA , (int, extra_)
#else
#define CF_EXTRA
#endif
#define CF_E8(p)                                                                             \
  (int, p##0), (int, p##1), (int, p##2), (int, p##3), (int, p##4), (int, p##5), (int, p##6), \
      (int, p##7)
class A {
 public:
  HEAPLAB_SOA_FIELDS(
      A, CF_E8(a), CF_E8(b), CF_E8(c), CF_E8(d), CF_E8(e), CF_E8(f), CF_E8(g), CF_E8(h) CF_EXTRA);
};
static_assert(heaplab::soa::HeapTypes<A>::num_fields<A> == 64);

#elif HEAPLAB_CASE == 13  // an entry without parentheses
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_), BROKEN(int b_, (int, b_)));
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 14  // the same type twice in the list
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
static_assert(BROKEN((heaplab::soa::HeapTypes<A, A>::num_types),
                     (heaplab::soa::HeapTypes<A>::num_types + 1)) == 2);

#elif HEAPLAB_CASE == 15  // the address of a whole array field (its units are not contiguous)
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (float[3], v_));
  float* first() { return BROKEN(reinterpret_cast<float*>(&v_), &v_[0]); }
};

#elif HEAPLAB_CASE == 16  // nothing can be allocated
class A {
 public:
  BROKEN(HEAPLAB_SOA_ABSTRACT(A);, )
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 17  // a two-dimensional array field
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int BROKEN([2][3], [6]), a_));
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 18  // a field proxy added by hand besides the macro's
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
#ifdef HEAPLAB_BREAK
  ::heaplab::soa::Field<A, 1, int> sneaky_;
#endif
};
static_assert(heaplab::soa::HeapTypes<A>::num_types == 1);

#elif HEAPLAB_CASE == 19  // HEAPLAB_SOA_DERIVED_FIELDS names a class that is not a base
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class Unrelated {
 public:
  HEAPLAB_SOA_FIELDS(Unrelated, (int, u_));
};
class B : public A {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(B, BROKEN(Unrelated, A), (int, b_));
};

#elif HEAPLAB_CASE == 20  // the declared base skips a listed class in between
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class M : public A {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(M, A);
};
class B : public M {
 public:
  HEAPLAB_SOA_DERIVED_FIELDS(B, BROKEN(A, M), (int, b_));
};
static_assert(heaplab::soa::HeapTypes<A, M, B>::num_types == 3);

#elif HEAPLAB_CASE == 21  // a heap type stored by value inside another
class A {
 public:
  HEAPLAB_SOA_FIELDS(A, (int, a_));
};
class B {
 public:
  HEAPLAB_SOA_FIELDS(B, (BROKEN(A, A*), inner_));
};
static_assert(heaplab::soa::HeapTypes<A, B>::num_types == 2);

#else
#error "unknown HEAPLAB_CASE"
#endif

}  // namespace cf

int main() { return 0; }
