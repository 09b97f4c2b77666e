/*
 * Runs the tests registered through tests/portable/criterion/criterion.h: each in a child process of its own
 * (a failed assertion or a crash ends that test only, as under Criterion), up to --jobs at a time, each test's
 * output printed in one piece when it ends.
 *
 *   run_tests [--jobs N] [--filter GLOB] [--skip GLOB]... [--timeout SECONDS]
 *
 * GLOBs match "suite/name". --timeout bounds every test (emulated hosts run many times slower than the
 * .timeout options were written for, so those are not used). Exit 0 only when every test run passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "criterion/criterion.h"

#define MAX_TESTS 2000
#define MAX_SUITES 100
#define MAX_SKIPS 32
#define MAX_JOBS 16

typedef struct {
    const char *suite, *name;
    void (*fn)(void);
    const struct pt_options *options;
} test_case;

typedef struct {
    pid_t pid;
    size_t test;
    FILE *output;
    struct timespec start;
} running_test;

static test_case tests[MAX_TESTS];
static size_t test_count;
static struct {
    const char *suite;
    const struct pt_options *options;
} suites[MAX_SUITES];
static size_t suite_count;

void pt_register(const char *suite, const char *name, void (*fn)(void), const struct pt_options *o)
{
    if (test_count == MAX_TESTS) {
        fprintf(stderr, "runner: more than %d tests: raise MAX_TESTS\n", MAX_TESTS);
        exit(2);
    }
    tests[test_count++] = (test_case){suite, name, fn, o};
}

void pt_register_suite(const char *suite, const struct pt_options *o)
{
    if (suite_count == MAX_SUITES) {
        fprintf(stderr, "runner: more than %d suites: raise MAX_SUITES\n", MAX_SUITES);
        exit(2);
    }
    suites[suite_count].suite = suite;
    suites[suite_count++].options = o;
}

_Noreturn void pt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s:%d: assertion failed: %s: ", file, line, expr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(NULL);
    _exit(1);
}

void pt_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("  [info] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const struct pt_options *suite_options(const char *suite)
{
    for (size_t i = 0; i < suite_count; i++)
        if (!strcmp(suites[i].suite, suite)) return suites[i].options;
    return NULL;
}

/* The child: the test's own .init/.fini, else its suite's, around the test. */
static void run_in_child(const test_case *t, FILE *output, unsigned timeout)
{
    dup2(fileno(output), STDOUT_FILENO);
    dup2(fileno(output), STDERR_FILENO);
    if (timeout) alarm(timeout);
    const struct pt_options *suite = suite_options(t->suite);
    void (*init)(void) = t->options->init ? t->options->init : suite ? suite->init : NULL;
    void (*fini)(void) = t->options->fini ? t->options->fini : suite ? suite->fini : NULL;
    if (init) init();
    t->fn();
    if (fini) fini();
    fflush(NULL);
    _exit(0);
}

static int wanted(const test_case *t, const char *filter, const char *const *skips, size_t skip_count)
{
    char full[512];
    snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
    if (filter && fnmatch(filter, full, 0)) return 0;
    for (size_t i = 0; i < skip_count; i++)
        if (!fnmatch(skips[i], full, 0)) return 0;
    return 1;
}

/* Waits for one child, prints its result and output; returns 1 when it passed. */
static int reap(running_test *running, size_t *count)
{
    int status = 0;
    size_t k = *count;
    while (k == *count) {
        pid_t pid = wait(&status);
        if (pid < 0) {
            perror("runner: wait");
            exit(2);
        }
        for (k = 0; k < *count && running[k].pid != pid; k++) continue;
    }
    running_test r = running[k];
    running[k] = running[--*count];
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - r.start.tv_sec) + (double)(end.tv_nsec - r.start.tv_nsec) / 1e9;
    int passed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const test_case *t = &tests[r.test];
    printf("%s %s/%s (%.1f s)", passed ? "PASS" : "FAIL", t->suite, t->name, seconds);
    if (WIFSIGNALED(status)) printf(" (signal %d%s)", WTERMSIG(status), WTERMSIG(status) == 14 ? ": timeout" : "");
    putchar('\n');
    rewind(r.output);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, r.output)) > 0) fwrite(buf, 1, got, stdout);
    fclose(r.output);
    fflush(stdout);
    return passed;
}

int main(int argc, char **argv)
{
    const char *filter = NULL, *skips[MAX_SKIPS];
    size_t skip_count = 0, jobs = 1;
    unsigned timeout = 0;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (value && (!strcmp(argv[i], "--jobs") || !strcmp(argv[i], "-j"))) jobs = strtoul(value, NULL, 10);
        else if (value && !strcmp(argv[i], "--filter")) filter = value;
        else if (value && !strcmp(argv[i], "--skip") && skip_count < MAX_SKIPS) skips[skip_count++] = value;
        else if (value && !strcmp(argv[i], "--timeout")) timeout = (unsigned)strtoul(value, NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--jobs N] [--filter GLOB] [--skip GLOB]... [--timeout SECONDS]\n", argv[0]);
            return 2;
        }
    }
    if (jobs < 1 || jobs > MAX_JOBS) jobs = 1;
    running_test running[MAX_JOBS];
    size_t count = 0, passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < test_count; i++) {
        if (!wanted(&tests[i], filter, skips, skip_count)) {
            skipped++;
            continue;
        }
        while (count == jobs) reap(running, &count) ? passed++ : failed++;
        FILE *output = tmpfile();
        if (!output) {
            perror("runner: tmpfile");
            return 2;
        }
        fflush(NULL);
        running_test r = {fork(), i, output, {0, 0}};
        if (r.pid < 0) {
            perror("runner: fork");
            return 2;
        }
        if (r.pid == 0) run_in_child(&tests[i], output, timeout);
        clock_gettime(CLOCK_MONOTONIC, &r.start);
        running[count++] = r;
    }
    while (count) reap(running, &count) ? passed++ : failed++;
    printf("Synthesis: %zu passed, %zu failed, %zu not selected\n", passed, failed, skipped);
    return failed || !passed ? 1 : 0;
}
