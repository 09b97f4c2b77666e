/*
 * Preloaded (LD_PRELOAD) into one CLI run by test_cli's out-of-memory tests, so that they can make the
 * CLI's N-th allocation fail and every one after it: the CLI must then fail with a message, or finish
 * with its normal output, never crash, hang or leave a half-written file.
 *
 *   TSCHUNK_OOM_AFTER=N     the first N allocations (malloc, calloc, realloc) after start-up succeed
 *   TSCHUNK_OOM_REPORT=PATH at exit, "made refused largest" (allocations asked for, of them refused, and the
 *                           largest size granted) written there
 *
 * Allocations go on to the next definition (glibc's, or ASan's in a sanitizer build, which then needs
 * ASAN_OPTIONS=verify_asan_link_order=0). Built without sanitizers: its calls run before theirs.
 * Single-threaded, as the CLI is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *p, size_t size);
void free(void *p);

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);

/* dlsym may allocate before the next definitions are known: those few come from here and are never freed. */
static _Alignas(16) unsigned char early[4096];
static size_t early_used;

static long budget = -1; /* -1: no limit (and until the constructor has read it) */
static unsigned long made, refused;
static size_t largest; /* bytes: the largest allocation granted (a memory bound that does not grow with the input) */
static int resolving;

static void *early_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > sizeof early - early_used) return NULL;
    void *p = early + early_used;
    early_used += size;
    return p;
}

static void *symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
    resolving = 1;
    void *m = symbol("malloc"), *c = symbol("calloc"), *r = symbol("realloc"), *f = symbol("free");
    memcpy(&next_malloc, &m, sizeof m); /* a data pointer to a function pointer, as POSIX allows */
    memcpy(&next_calloc, &c, sizeof c);
    memcpy(&next_realloc, &r, sizeof r);
    memcpy(&next_free, &f, sizeof f);
    resolving = 0;
}

/* The limit, read once the environment is there; the count starts here (a sanitizer's runtime and the C
 * library allocate before, a varying number of times). */
__attribute__((constructor)) static void read_budget(void)
{
    const char *after = getenv("TSCHUNK_OOM_AFTER");
    budget = after ? strtol(after, NULL, 10) : -1;
    made = 0;
}

/* Whether this allocation of size bytes may go ahead. */
static int granted(size_t size)
{
    made++;
    if (budget < 0 || made <= (unsigned long)budget) {
        if (size > largest) largest = size;
        return 1;
    }
    refused++;
    errno = ENOMEM;
    return 0;
}

void *malloc(size_t size)
{
    if (resolving) return early_alloc(size);
    if (!next_malloc) resolve();
    return granted(size) ? next_malloc(size) : NULL;
}

void *calloc(size_t count, size_t size)
{
    if (resolving) return count && size > sizeof early / count ? NULL : early_alloc(count * size);
    if (!next_calloc) resolve();
    return granted(count && size > SIZE_MAX / count ? SIZE_MAX : count * size) ? next_calloc(count, size) : NULL;
}

void *realloc(void *p, size_t size)
{
    if (!next_realloc) resolve();
    return granted(size) ? next_realloc(p, size) : NULL;
}

void free(void *p)
{
    if ((unsigned char *)p >= early && (unsigned char *)p < early + sizeof early) return;
    if (!next_free) resolve();
    next_free(p);
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("TSCHUNK_OOM_REPORT");
    if (!path) return;
    unsigned long run_made = made, run_refused = refused;
    size_t run_largest = largest;
    budget = -1; /* fopen's own allocations */
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%lu %lu %zu\n", run_made, run_refused, run_largest);
    fclose(f);
}
