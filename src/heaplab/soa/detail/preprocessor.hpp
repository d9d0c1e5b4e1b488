// Preprocessor machinery behind the field DSL (heaplab/soa/field.hpp). Not part of the public API.
//
// The numbered macros below are mechanical: HEAPLAB_PP_FOR_EACH_<n> applies a macro to n entries,
// passing each entry's index; HEAPLAB_PP_ALL_BUT_LAST_<n> / HEAPLAB_PP_LAST_<n> split one
// parenthesized field entry "(type..., name)" so that a type containing commas
// (e.g. std::pair<int, int>) needs no extra parentheses. Limits: 64 entries per list (more give
// HEAPLAB_PP_COUNT_FITS == 0, which the field macros turn into a static_assert), 8
// comma-separated parts per entry.
#pragma once

// clang-format off

#define HEAPLAB_PP_CAT(a, b) HEAPLAB_PP_CAT_I(a, b)
#define HEAPLAB_PP_CAT_I(a, b) a##b
#define HEAPLAB_PP_STR(...) HEAPLAB_PP_STR_I(__VA_ARGS__)
#define HEAPLAB_PP_STR_I(...) #__VA_ARGS__
#define HEAPLAB_PP_APPLY(m, args) m args

// HEAPLAB_PP_IS_PAREN(x): 1 when x is a parenthesized group, 0 otherwise (empty included).
#define HEAPLAB_PP_IS_PAREN(x) HEAPLAB_PP_IS_PAREN_CHECK(HEAPLAB_PP_IS_PAREN_PROBE x)
#define HEAPLAB_PP_IS_PAREN_PROBE(...) ~, 1,
#define HEAPLAB_PP_IS_PAREN_CHECK(...) HEAPLAB_PP_IS_PAREN_CHECK_N(__VA_ARGS__, 0, ~)
#define HEAPLAB_PP_IS_PAREN_CHECK_N(a, n, ...) n

// HEAPLAB_PP_COUNT(...): number of arguments, 1..64; 65..80 give TOO_MANY.
#define HEAPLAB_PP_COUNT(...) HEAPLAB_PP_COUNT_I(__VA_ARGS__, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, TOO_MANY, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, ~)
#define HEAPLAB_PP_COUNT_I(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, _65, _66, _67, _68, _69, _70, _71, _72, _73, _74, _75, _76, _77, _78, _79, _80, n, ...) n

// HEAPLAB_PP_FOR_EACH(m, data, entries...): m(data, 0, e0) m(data, 1, e1) ...
#define HEAPLAB_PP_FOR_EACH(m, d, ...) \
  HEAPLAB_PP_CAT(HEAPLAB_PP_FOR_EACH_, HEAPLAB_PP_COUNT(__VA_ARGS__))(m, d, 0, __VA_ARGS__)
// HEAPLAB_PP_FOR_EACH_COMMA: the same, results separated by commas.
#define HEAPLAB_PP_FOR_EACH_COMMA(m, d, ...) \
  HEAPLAB_PP_CAT(HEAPLAB_PP_FOR_EACH_COMMA_, HEAPLAB_PP_COUNT(__VA_ARGS__))(m, d, 0, __VA_ARGS__)
// More than 64 entries: nothing is generated; HEAPLAB_PP_COUNT_FITS says so (0).
#define HEAPLAB_PP_FOR_EACH_TOO_MANY(m, d, i, ...)
#define HEAPLAB_PP_FOR_EACH_COMMA_TOO_MANY(m, d, i, ...)
// HEAPLAB_PP_COUNT_FITS(...): 1 when there are at most 64 arguments, 0 when there are more.
#define HEAPLAB_PP_COUNT_FITS(...) \
  HEAPLAB_PP_COUNT_FITS_CHECK(HEAPLAB_PP_CAT(HEAPLAB_PP_COUNT_FITS_PROBE_, HEAPLAB_PP_COUNT(__VA_ARGS__)))
#define HEAPLAB_PP_COUNT_FITS_PROBE_TOO_MANY ~, 0,
#define HEAPLAB_PP_COUNT_FITS_CHECK(...) HEAPLAB_PP_IS_PAREN_CHECK_N(__VA_ARGS__, 1, ~)
#define HEAPLAB_PP_FOR_EACH_1(m, d, i, x) m(d, i, x)
#define HEAPLAB_PP_FOR_EACH_COMMA_1(m, d, i, x) m(d, i, x)
#define HEAPLAB_PP_FOR_EACH_2(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_1(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_2(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_1(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_3(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_2(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_3(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_2(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_4(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_3(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_4(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_3(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_5(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_4(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_5(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_4(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_6(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_5(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_6(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_5(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_7(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_6(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_7(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_6(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_8(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_7(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_8(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_7(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_9(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_8(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_9(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_8(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_10(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_9(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_10(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_9(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_11(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_10(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_11(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_10(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_12(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_11(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_12(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_11(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_13(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_12(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_13(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_12(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_14(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_13(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_14(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_13(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_15(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_14(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_15(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_14(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_16(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_15(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_16(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_15(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_17(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_16(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_17(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_16(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_18(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_17(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_18(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_17(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_19(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_18(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_19(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_18(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_20(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_19(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_20(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_19(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_21(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_20(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_21(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_20(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_22(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_21(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_22(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_21(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_23(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_22(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_23(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_22(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_24(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_23(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_24(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_23(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_25(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_24(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_25(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_24(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_26(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_25(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_26(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_25(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_27(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_26(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_27(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_26(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_28(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_27(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_28(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_27(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_29(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_28(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_29(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_28(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_30(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_29(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_30(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_29(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_31(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_30(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_31(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_30(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_32(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_31(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_32(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_31(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_33(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_32(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_33(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_32(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_34(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_33(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_34(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_33(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_35(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_34(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_35(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_34(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_36(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_35(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_36(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_35(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_37(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_36(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_37(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_36(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_38(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_37(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_38(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_37(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_39(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_38(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_39(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_38(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_40(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_39(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_40(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_39(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_41(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_40(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_41(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_40(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_42(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_41(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_42(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_41(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_43(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_42(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_43(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_42(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_44(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_43(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_44(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_43(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_45(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_44(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_45(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_44(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_46(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_45(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_46(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_45(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_47(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_46(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_47(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_46(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_48(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_47(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_48(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_47(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_49(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_48(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_49(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_48(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_50(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_49(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_50(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_49(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_51(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_50(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_51(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_50(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_52(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_51(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_52(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_51(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_53(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_52(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_53(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_52(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_54(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_53(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_54(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_53(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_55(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_54(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_55(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_54(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_56(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_55(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_56(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_55(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_57(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_56(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_57(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_56(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_58(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_57(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_58(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_57(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_59(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_58(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_59(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_58(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_60(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_59(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_60(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_59(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_61(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_60(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_61(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_60(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_62(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_61(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_62(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_61(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_63(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_62(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_63(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_62(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_64(m, d, i, x, ...) \
  m(d, i, x) HEAPLAB_PP_FOR_EACH_63(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)
#define HEAPLAB_PP_FOR_EACH_COMMA_64(m, d, i, x, ...) \
  m(d, i, x), HEAPLAB_PP_FOR_EACH_COMMA_63(m, d, HEAPLAB_PP_INC(i), __VA_ARGS__)

#define HEAPLAB_PP_INC(i) HEAPLAB_PP_CAT(HEAPLAB_PP_INC_, i)
#define HEAPLAB_PP_INC_0 1
#define HEAPLAB_PP_INC_1 2
#define HEAPLAB_PP_INC_2 3
#define HEAPLAB_PP_INC_3 4
#define HEAPLAB_PP_INC_4 5
#define HEAPLAB_PP_INC_5 6
#define HEAPLAB_PP_INC_6 7
#define HEAPLAB_PP_INC_7 8
#define HEAPLAB_PP_INC_8 9
#define HEAPLAB_PP_INC_9 10
#define HEAPLAB_PP_INC_10 11
#define HEAPLAB_PP_INC_11 12
#define HEAPLAB_PP_INC_12 13
#define HEAPLAB_PP_INC_13 14
#define HEAPLAB_PP_INC_14 15
#define HEAPLAB_PP_INC_15 16
#define HEAPLAB_PP_INC_16 17
#define HEAPLAB_PP_INC_17 18
#define HEAPLAB_PP_INC_18 19
#define HEAPLAB_PP_INC_19 20
#define HEAPLAB_PP_INC_20 21
#define HEAPLAB_PP_INC_21 22
#define HEAPLAB_PP_INC_22 23
#define HEAPLAB_PP_INC_23 24
#define HEAPLAB_PP_INC_24 25
#define HEAPLAB_PP_INC_25 26
#define HEAPLAB_PP_INC_26 27
#define HEAPLAB_PP_INC_27 28
#define HEAPLAB_PP_INC_28 29
#define HEAPLAB_PP_INC_29 30
#define HEAPLAB_PP_INC_30 31
#define HEAPLAB_PP_INC_31 32
#define HEAPLAB_PP_INC_32 33
#define HEAPLAB_PP_INC_33 34
#define HEAPLAB_PP_INC_34 35
#define HEAPLAB_PP_INC_35 36
#define HEAPLAB_PP_INC_36 37
#define HEAPLAB_PP_INC_37 38
#define HEAPLAB_PP_INC_38 39
#define HEAPLAB_PP_INC_39 40
#define HEAPLAB_PP_INC_40 41
#define HEAPLAB_PP_INC_41 42
#define HEAPLAB_PP_INC_42 43
#define HEAPLAB_PP_INC_43 44
#define HEAPLAB_PP_INC_44 45
#define HEAPLAB_PP_INC_45 46
#define HEAPLAB_PP_INC_46 47
#define HEAPLAB_PP_INC_47 48
#define HEAPLAB_PP_INC_48 49
#define HEAPLAB_PP_INC_49 50
#define HEAPLAB_PP_INC_50 51
#define HEAPLAB_PP_INC_51 52
#define HEAPLAB_PP_INC_52 53
#define HEAPLAB_PP_INC_53 54
#define HEAPLAB_PP_INC_54 55
#define HEAPLAB_PP_INC_55 56
#define HEAPLAB_PP_INC_56 57
#define HEAPLAB_PP_INC_57 58
#define HEAPLAB_PP_INC_58 59
#define HEAPLAB_PP_INC_59 60
#define HEAPLAB_PP_INC_60 61
#define HEAPLAB_PP_INC_61 62
#define HEAPLAB_PP_INC_62 63
#define HEAPLAB_PP_INC_63 64

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
