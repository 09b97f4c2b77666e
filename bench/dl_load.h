/*
 * The A/B programs' loading of the library builds they compare (bench/ab_libs.c,
 * bench/ab_series.c): dlopen and dlsym, and an exit naming the program and
 * the loader's message when either fails.
 */
#ifndef TSCHUNK_BENCH_DL_LOAD_H
#define TSCHUNK_BENCH_DL_LOAD_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *bench_open_library(const char *program, const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "%s: %s\n", program, dlerror());
        exit(2);
    }
    return handle;
}

static void *bench_symbol(const char *program, void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    if (!p) {
        fprintf(stderr, "%s: %s\n", program, dlerror());
        exit(2);
    }
    return p;
}

#endif
