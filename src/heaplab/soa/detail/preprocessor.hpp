// Preprocessor machinery behind the field DSL (heaplab/soa/field.hpp). Not part of the public API.
//
// Only what C++ cannot do without macros lives here: walking the entries of a field declaration
// (each one becomes a named member), stringizing a name, and splitting one parenthesized entry
// "(type..., name)" so that a type containing commas (e.g. std::array<char, 4>) needs no extra
// parentheses. Everything else (the type list, layout, checks) is templates and constexpr in
// field.hpp, meta.hpp and field_traits.hpp.
//
// HEAPLAB_PP_FOR_EACH is one recursive macro that HEAPLAB_PP_EVAL rescans a fixed number of times
// (enough for 86 entries), not a numbered family. It passes each entry its index as the
// expression `0 + 1 + ... + 1`, which the compiler evaluates. Limits: 64 entries per list (more:
// nothing is generated and HEAPLAB_PP_AT_MOST_64 is 0, which the field macros turn into a
// static_assert), 8 comma-separated parts per entry.
#pragma once

// clang-format off

#define HEAPLAB_PP_CAT(a, b) HEAPLAB_PP_CAT_I(a, b)
#define HEAPLAB_PP_CAT_I(a, b) a##b
#define HEAPLAB_PP_STR(...) HEAPLAB_PP_STR_I(__VA_ARGS__)
#define HEAPLAB_PP_STR_I(...) #__VA_ARGS__
#define HEAPLAB_PP_APPLY(m, args) m args
#define HEAPLAB_PP_EMPTY()

// HEAPLAB_PP_IS_PAREN(x): 1 when x is a parenthesized group, 0 otherwise (empty included).
#define HEAPLAB_PP_IS_PAREN(x) HEAPLAB_PP_IS_PAREN_CHECK(HEAPLAB_PP_IS_PAREN_PROBE x)
#define HEAPLAB_PP_IS_PAREN_PROBE(...) ~, 1,
#define HEAPLAB_PP_IS_PAREN_CHECK(...) HEAPLAB_PP_IS_PAREN_CHECK_N(__VA_ARGS__, 0, ~)
#define HEAPLAB_PP_IS_PAREN_CHECK_N(a, n, ...) n

// HEAPLAB_PP_MARK: a marker argument (the end of a list, padding). HEAPLAB_PP_IS_MARK(x) is 1 for
// the marker and 0 for anything a user writes as an entry: a parenthesized group, nothing, or
// tokens such as `int x_` (a malformed entry).
#define HEAPLAB_PP_MARK(...) ~, 1,
#define HEAPLAB_PP_IS_MARK(x) HEAPLAB_PP_IS_PAREN_CHECK(x ())

// HEAPLAB_PP_AT_MOST_64(...): 1 when there are at most 64 arguments, 0 when there are more (any
// number): the 65th of the arguments followed by 65 markers is a marker exactly when n <= 64.
#define HEAPLAB_PP_AT_MOST_64(...) HEAPLAB_PP_IS_MARK(HEAPLAB_PP_ARG_65(__VA_ARGS__, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK, HEAPLAB_PP_MARK) ())
#define HEAPLAB_PP_ARG_65(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, x, ...) x

// HEAPLAB_PP_FOR_EACH(m, data, entries...): m(data, 0, e0) m(data, 0 + 1, e1) ... for at most 64
// entries; nothing for more. Each step leaves its successor deferred (HEAPLAB_PP_FOR_EACH_AGAIN
// not yet followed by its parentheses), so the next rescan by HEAPLAB_PP_EVAL takes one step;
// the step that meets the end marker generates nothing more.
#define HEAPLAB_PP_FOR_EACH(m, d, ...) \
  HEAPLAB_PP_CAT(HEAPLAB_PP_FOR_EACH_IF_, HEAPLAB_PP_AT_MOST_64(__VA_ARGS__))(m, d, __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_IF_0(m, d, ...)
#define HEAPLAB_PP_FOR_EACH_IF_1(m, d, ...) \
  HEAPLAB_PP_EVAL(HEAPLAB_PP_FOR_EACH_STEP(m, d, 0, __VA_ARGS__, HEAPLAB_PP_MARK, ~))
#define HEAPLAB_PP_FOR_EACH_STEP(m, d, i, x, ...) \
  HEAPLAB_PP_CAT(HEAPLAB_PP_FOR_EACH_STEP_, HEAPLAB_PP_IS_MARK(x))(m, d, i, x, __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_STEP_1(...)
#define HEAPLAB_PP_FOR_EACH_STEP_0(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_AGAIN HEAPLAB_PP_EMPTY() ()(m, d, i + 1, __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_AGAIN() HEAPLAB_PP_FOR_EACH_STEP

// HEAPLAB_PP_EVAL(x): rescans x enough times for 86 steps of HEAPLAB_PP_FOR_EACH (measured with
// GCC, Clang and nvcc; 3 levels of 4 give 22, 4 levels of 3 give 41); 64 entries and the end
// marker take 65. 64-field declarations: compile_fail case 12 (g++), soa_test_types.hpp's Wide
// (g++ and nvcc).
#define HEAPLAB_PP_EVAL(...) HEAPLAB_PP_EVAL_3(HEAPLAB_PP_EVAL_3(HEAPLAB_PP_EVAL_3(HEAPLAB_PP_EVAL_3(__VA_ARGS__))))
#define HEAPLAB_PP_EVAL_3(...) HEAPLAB_PP_EVAL_2(HEAPLAB_PP_EVAL_2(HEAPLAB_PP_EVAL_2(HEAPLAB_PP_EVAL_2(__VA_ARGS__))))
#define HEAPLAB_PP_EVAL_2(...) HEAPLAB_PP_EVAL_1(HEAPLAB_PP_EVAL_1(HEAPLAB_PP_EVAL_1(HEAPLAB_PP_EVAL_1(__VA_ARGS__))))
#define HEAPLAB_PP_EVAL_1(...) __VA_ARGS__

// Splitting one entry (type..., name).
#define HEAPLAB_PP_COUNT_PARTS(...) HEAPLAB_PP_COUNT_PARTS_I(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, ~)
#define HEAPLAB_PP_COUNT_PARTS_I(_1, _2, _3, _4, _5, _6, _7, _8, n, ...) n
#define HEAPLAB_PP_ALL_BUT_LAST(...) \
  HEAPLAB_PP_CAT(HEAPLAB_PP_ALL_BUT_LAST_, HEAPLAB_PP_COUNT_PARTS(__VA_ARGS__))(__VA_ARGS__)
#define HEAPLAB_PP_LAST(...) \
  HEAPLAB_PP_CAT(HEAPLAB_PP_LAST_, HEAPLAB_PP_COUNT_PARTS(__VA_ARGS__))(__VA_ARGS__)
// An entry without a name: an undeclared identifier that says what is wrong.
#define HEAPLAB_PP_ALL_BUT_LAST_1(a) heaplab_soa_field_entry_must_be_written_as_type_comma_name
#define HEAPLAB_PP_LAST_1(a) heaplab_soa_field_entry_must_be_written_as_type_comma_name
#define HEAPLAB_PP_ALL_BUT_LAST_2(a0, a1) a0
#define HEAPLAB_PP_LAST_2(a0, a1) a1
#define HEAPLAB_PP_ALL_BUT_LAST_3(a0, a1, a2) a0, a1
#define HEAPLAB_PP_LAST_3(a0, a1, a2) a2
#define HEAPLAB_PP_ALL_BUT_LAST_4(a0, a1, a2, a3) a0, a1, a2
#define HEAPLAB_PP_LAST_4(a0, a1, a2, a3) a3
#define HEAPLAB_PP_ALL_BUT_LAST_5(a0, a1, a2, a3, a4) a0, a1, a2, a3
#define HEAPLAB_PP_LAST_5(a0, a1, a2, a3, a4) a4
#define HEAPLAB_PP_ALL_BUT_LAST_6(a0, a1, a2, a3, a4, a5) a0, a1, a2, a3, a4
#define HEAPLAB_PP_LAST_6(a0, a1, a2, a3, a4, a5) a5
#define HEAPLAB_PP_ALL_BUT_LAST_7(a0, a1, a2, a3, a4, a5, a6) a0, a1, a2, a3, a4, a5
#define HEAPLAB_PP_LAST_7(a0, a1, a2, a3, a4, a5, a6) a6
#define HEAPLAB_PP_ALL_BUT_LAST_8(a0, a1, a2, a3, a4, a5, a6, a7) a0, a1, a2, a3, a4, a5, a6
#define HEAPLAB_PP_LAST_8(a0, a1, a2, a3, a4, a5, a6, a7) a7
// clang-format on
