/*
 * Format tuning by simulation: bits that candidate delta-of-delta bucket
 * tables and XOR window-reset thresholds would spend, on the jittered scrape
 * workloads and on every timestamped dataset. Produces the tables in README
 * ("Measurements: format choices"). Counts bits only; writes nothing.
 *
 *   tune [--datasets DIR]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads.h"

#ifndef TUNE_CHUNK
#define TUNE_CHUNK 1024
#endif

/* A bucket table: `0` for dod 0, then payload widths of the `10`, `110`,
 * `1110`, ... buckets, then an all-ones escape with 64 bits (Gorilla's 32-bit
 * escape is counted as 64 here too, since it cannot hold every int64 dod). */
typedef struct {
    const char *name;
    unsigned widths[4];
    unsigned count;
} dod_scheme;

static const dod_scheme schemes[] = {
    {"tschunk 5/8/11/20/64", {5, 8, 11, 20}, 4}, {"Gorilla 7/9/12/32+", {7, 9, 12}, 3},
    {"Prometheus 14/17/20/64", {14, 17, 20}, 3}, {"5/8/16/64", {5, 8, 16}, 3},
    {"6/10/16/64", {6, 10, 16}, 3},          {"5/11/16/64", {5, 11, 16}, 3},
    {"5/8/11/16/64", {5, 8, 11, 16}, 4},     {"5/8/12/20/64", {5, 8, 12, 20}, 4},
    {"4/8/11/20/64", {4, 8, 11, 20}, 4},     {"6/9/12/20/64", {6, 9, 12, 20}, 4},
};
#define NSCHEMES (sizeof schemes / sizeof schemes[0])

static unsigned dod_cost(const dod_scheme *s, int64_t dod)
{
    if (dod == 0) return 1;
    for (unsigned b = 0; b < s->count; b++) {
        int64_t half = (int64_t)1 << (s->widths[b] - 1);
        if (dod >= -half && dod < half) return b + 2 + s->widths[b];
    }
    return s->count + 1 + 64;
}

/* Timestamp stream bits per sample for chunks of `per_chunk`, cut where time goes back. */
static void ts_bits(const wl_series *s, size_t per_chunk, double *out)
{
    uint64_t bits[NSCHEMES] = {0};
    for (size_t start = 0; start < s->n;) {
        size_t n = 1;
        while (start + n < s->n && n < per_chunk && s->ts[start + n] >= s->ts[start + n - 1]) n++;
        for (size_t i = start + 2; i < start + n; i++) {
            uint64_t d1 = (uint64_t)s->ts[i] - (uint64_t)s->ts[i - 1];
            uint64_t d0 = (uint64_t)s->ts[i - 1] - (uint64_t)s->ts[i - 2];
            for (size_t k = 0; k < NSCHEMES; k++) bits[k] += dod_cost(&schemes[k], (int64_t)(d1 - d0));
        }
        start += n;
    }
    for (size_t k = 0; k < NSCHEMES; k++) out[k] = (double)bits[k] / (double)s->n;
}

/* XOR value bits per sample with a window reset threshold (0 = never reset).
 * A threshold above 100 means threshold - 100 with a "persistent" rule (reset
 * only when the previous XOR would also have fitted the narrower window),
 * measured and rejected: it loses on average. */
static double value_bits(const wl_series *s, size_t per_chunk, unsigned reset)
{
    int persistent = reset > 100;
    if (persistent) reset -= 100;
    uint64_t total = 0;
    for (size_t start = 0; start < s->n; start += per_chunk) {
        size_t end = start + per_chunk < s->n ? start + per_chunk : s->n;
        unsigned wl = 255, wt = 255, pl = 0, pt = 0;
        total += 64;
        for (size_t i = start + 1; i < end; i++) {
            uint64_t x = s->bits[i] ^ s->bits[i - 1];
            if (!x) { total += 1; continue; }
            unsigned lead = (unsigned)__builtin_clzll(x), trail = (unsigned)__builtin_ctzll(x);
            if (lead > 31) lead = 31;
            int fits = lead >= wl && trail >= wt;
            int wasteful = reset && fits && lead + trail >= wl + wt + reset && (!persistent || (pl >= lead && pt >= trail));
            pl = lead;
            pt = trail;
            if (fits && !wasteful) {
                total += 2 + 64 - wl - wt;
            } else {
                total += 13 + 64 - lead - trail;
                wl = lead;
                wt = trail;
            }
        }
    }
    return (double)total / (double)s->n;
}

static void print_ts_row(const char *name, const double *b)
{
    printf("| %s |", name);
    for (size_t k = 0; k < NSCHEMES; k++) printf(" %.2f |", b[k]);
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *dir = "../shared/datasets";
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--datasets")) dir = argv[++i];

    printf("Timestamp bits per sample (chunks of 120), by dod bucket table (payload widths):\n\n| workload |");
    for (size_t k = 0; k < NSCHEMES; k++) printf(" %s |", schemes[k].name);
    printf("\n|---|");
    for (size_t k = 0; k < NSCHEMES; k++) printf("---:|");
    printf("\n");
    double sum[NSCHEMES] = {0}, b[NSCHEMES];
    size_t rows = 0;
    int jitters[] = {1, 5, 50};
    for (size_t j = 0; j < 3; j++) {
        wl_series s;
        wl_alloc(&s, 120000, "jitter");
        uint64_t rng = 9;
        for (size_t i = 0; i < s.n; i++) {
            s.ts[i] = wl_scrape_ts(&rng, i, jitters[j]);
            s.bits[i] = 0;
        }
        ts_bits(&s, 120, b);
        char name[64];
        snprintf(name, sizeof name, "15 s scrape +-%d ms", jitters[j]);
        print_ts_row(name, b);
        for (size_t k = 0; k < NSCHEMES; k++) sum[k] += b[k];
        rows++;
        wl_free(&s);
    }
    static char paths[64][512];
    size_t nfiles = wl_list_datasets(dir, paths, 64);
    for (size_t f = 0; f < nfiles; f++) {
        if (!strstr(paths[f], "/nab/") && !strstr(paths[f], "/brew/") && !strstr(paths[f], "/ett/")) continue;
        wl_series s[8];
        size_t k = wl_load_dataset(paths[f], s, 8);
        if (k == 0) continue;
        ts_bits(&s[0], 120, b); /* ETT's columns share one timestamp column */
        print_ts_row(s[0].name, b);
        for (size_t q = 0; q < NSCHEMES; q++) sum[q] += b[q];
        rows++;
        for (size_t q = 0; q < k; q++) wl_free(&s[q]);
    }
    for (size_t q = 0; q < NSCHEMES; q++) sum[q] /= (double)rows;
    print_ts_row("**mean**", sum);

    printf("\nValue bits per sample (chunks of 1024) by window-reset threshold (0 = never):\n\n");
    static const unsigned resets[] = {0, 10, 12, 14, 16, 18, 22, 112, 116};
    const size_t nresets = sizeof resets / sizeof resets[0];
    printf("| dataset |");
    for (size_t r = 0; r < nresets; r++) printf(" %u |", resets[r]);
    printf("\n|---|");
    for (size_t r = 0; r < nresets; r++) printf("---:|");
    printf("\n");
    double vsum[16] = {0};
    size_t vrows = 0;
    for (size_t f = 0; f < nfiles; f++) {
        wl_series s[8];
        size_t k = wl_load_dataset(paths[f], s, 8);
        for (size_t q = 0; q < k; q++) {
            printf("| %s |", s[q].name);
            for (size_t r = 0; r < nresets; r++) {
                double v = value_bits(&s[q], TUNE_CHUNK, resets[r]);
                vsum[r] += v;
                printf(" %.2f |", v);
            }
            printf("\n");
            vrows++;
            wl_free(&s[q]);
        }
    }
    printf("| **mean over %zu series** |", vrows);
    for (size_t r = 0; r < nresets; r++) printf(" %.2f |", vsum[r] / (double)(vrows ? vrows : 1));
    printf("\n");
    return 0;
}
