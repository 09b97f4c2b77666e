/* The part of Criterion's API that tschunk's tests use, for builds that cannot link Debian's libcriterion
 * (other CPUs: scripts/check-cross.sh; MemorySanitizer: scripts/msan.sh). A failed assertion ends the test's
 * process; tests/portable/runner.c runs each test in a child process of its own, as Criterion does. */
#ifndef TSCHUNK_PORTABLE_CRITERION_H
#define TSCHUNK_PORTABLE_CRITERION_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A test's or a suite's options, as Criterion spells them (.init, .fini, .timeout). */
struct pt_options {
    int unused_; /* lets the options be empty: {.unused_ = 0, } */
    void (*init)(void);
    void (*fini)(void);
    double timeout;
    const char *description;
    int disabled, signal, exit_code;
};

void pt_register(const char *suite, const char *name, void (*fn)(void), const struct pt_options *o);
void pt_register_suite(const char *suite, const struct pt_options *o);
_Noreturn void pt_fail(const char *file, int line, const char *expr, const char *fmt, ...);
void pt_log(const char *fmt, ...);

#define Test(suite, name, ...)                                                                                   \
    static void pt_test_##suite##_##name(void);                                                                 \
    static void __attribute__((constructor)) pt_register_##suite##_##name(void)                                 \
    {                                                                                                           \
        static const struct pt_options options = {.unused_ = 0, __VA_ARGS__};                                  \
        pt_register(#suite, #name, pt_test_##suite##_##name, &options);                                        \
    }                                                                                                           \
    static void pt_test_##suite##_##name(void)

#define TestSuite(suite, ...)                                                                                    \
    static void __attribute__((constructor)) pt_register_suite_##suite(void)                                    \
    {                                                                                                           \
        static const struct pt_options options = {.unused_ = 0, __VA_ARGS__};                                  \
        pt_register_suite(#suite, &options);                                                                    \
    }

/* Every assertion takes an optional printf-style message after its operands: the wrappers append "" so that
 * the message is never empty of arguments. */
#define PT_CHECK(cond, expr, ...) do { if (!(cond)) pt_fail(__FILE__, __LINE__, expr, __VA_ARGS__); } while (0)
#define PT_TRUE(c, ...) PT_CHECK(c, #c, __VA_ARGS__)
#define PT_FALSE(c, ...) PT_CHECK(!(c), "!(" #c ")", __VA_ARGS__)
#define PT_OP(a, op, b, ...) PT_CHECK((a) op (b), #a " " #op " " #b, __VA_ARGS__)
#define PT_EQ(a, b, ...) PT_OP(a, ==, b, __VA_ARGS__)
#define PT_NEQ(a, b, ...) PT_OP(a, !=, b, __VA_ARGS__)
#define PT_GT(a, b, ...) PT_OP(a, >, b, __VA_ARGS__)
#define PT_LT(a, b, ...) PT_OP(a, <, b, __VA_ARGS__)
#define PT_GEQ(a, b, ...) PT_OP(a, >=, b, __VA_ARGS__)
#define PT_LEQ(a, b, ...) PT_OP(a, <=, b, __VA_ARGS__)
#define PT_STR_EQ(a, b, ...) PT_CHECK(strcmp((a), (b)) == 0, #a " equals the string " #b, __VA_ARGS__)
#define PT_ARR_EQ(a, b, n, ...) PT_CHECK(memcmp((a), (b), (n)) == 0, #a " equals the bytes " #b, __VA_ARGS__)
#define PT_FLOAT_EQ(a, b, eps, ...) \
    PT_CHECK(fabs((double)(a) - (double)(b)) <= (eps), #a " within " #eps " of " #b, __VA_ARGS__)
#define PT_NULL(p, ...) PT_CHECK((p) == NULL, #p " == NULL", __VA_ARGS__)
#define PT_NOT_NULL(p, ...) PT_CHECK((p) != NULL, #p " != NULL", __VA_ARGS__)

#define cr_assert(...) PT_TRUE(__VA_ARGS__, "")
#define cr_assert_not(...) PT_FALSE(__VA_ARGS__, "")
#define cr_assert_eq(...) PT_EQ(__VA_ARGS__, "")
#define cr_assert_neq(...) PT_NEQ(__VA_ARGS__, "")
#define cr_assert_gt(...) PT_GT(__VA_ARGS__, "")
#define cr_assert_lt(...) PT_LT(__VA_ARGS__, "")
#define cr_assert_geq(...) PT_GEQ(__VA_ARGS__, "")
#define cr_assert_leq(...) PT_LEQ(__VA_ARGS__, "")
#define cr_assert_str_eq(...) PT_STR_EQ(__VA_ARGS__, "")
#define cr_assert_arr_eq(...) PT_ARR_EQ(__VA_ARGS__, "")
#define cr_assert_float_eq(...) PT_FLOAT_EQ(__VA_ARGS__, "")
#define cr_assert_null(...) PT_NULL(__VA_ARGS__, "")
#define cr_assert_not_null(...) PT_NOT_NULL(__VA_ARGS__, "")
#define cr_log_info(...) pt_log(__VA_ARGS__)
#define cr_log_warn(...) pt_log(__VA_ARGS__)

#endif
