/*
 * Seeded workload generators and dataset loaders shared by bench/ and tests/.
 * Header-only (static functions); needs POSIX popen for gzip'd datasets.
 */
#ifndef TSCHUNK_WORKLOADS_H
#define TSCHUNK_WORKLOADS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

typedef struct {
    int64_t *ts;
    uint64_t *bits; /* values as IEEE-754 bit patterns */
    size_t n;
    char name[96];
} wl_series;

static inline uint64_t wl_rng(uint64_t *state) /* splitmix64 */
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline double wl_uniform(uint64_t *state) { return (double)(wl_rng(state) >> 11) * 0x1.0p-53; }

static inline uint64_t wl_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

static inline double wl_double(uint64_t b)
{
    double v;
    memcpy(&v, &b, 8);
    return v;
}

static inline void wl_alloc(wl_series *s, size_t n, const char *name)
{
    s->ts = (int64_t *)malloc(n * sizeof(int64_t) + 1);
    s->bits = (uint64_t *)malloc(n * sizeof(uint64_t) + 1);
    s->n = n;
    snprintf(s->name, sizeof s->name, "%s", name);
    if (!s->ts || !s->bits) abort();
}

static inline void wl_free(wl_series *s)
{
    free(s->ts);
    free(s->bits);
    s->ts = NULL;
    s->bits = NULL;
    s->n = 0;
}

/* 15 s scrape interval with +-5 ms of uniform jitter, ms epoch timestamps. */
static inline int64_t wl_scrape_ts(uint64_t *rng, size_t i, int jitter_ms)
{
    int64_t jitter = jitter_ms ? (int64_t)(wl_rng(rng) % (uint64_t)(2 * jitter_ms + 1)) - jitter_ms : 0;
    return INT64_C(1700000000000) + (int64_t)i * 15000 + jitter;
}

enum {
    WL_CONST_REGULAR,
    WL_CONST_JITTER,
    WL_COUNTER,
    WL_GAUGE_2DP,
    WL_RANDOM,
    WL_SYNTHETIC_COUNT
};

static inline const char *wl_synthetic_name(int kind)
{
    static const char *const names[WL_SYNTHETIC_COUNT] = {
        "const-regular", "const-jitter", "counter", "gauge-2dp", "random",
    };
    return names[kind];
}

/* The synthetic workloads of ../shared/specs/prometheus-xor.md. */
static inline void wl_synthetic(wl_series *s, int kind, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    wl_alloc(s, n, wl_synthetic_name(kind));
    double level = 100.0, counter = 0;
    for (size_t i = 0; i < n; i++) {
        int jitter = kind == WL_CONST_REGULAR ? 0 : 5;
        s->ts[i] = wl_scrape_ts(&rng, i, jitter);
        double v;
        switch (kind) {
        case WL_CONST_REGULAR:
        case WL_CONST_JITTER: v = 1.0; break;
        case WL_COUNTER: counter += (double)(wl_rng(&rng) % 200); v = counter; break;
        case WL_GAUGE_2DP:
            level += (wl_uniform(&rng) - 0.5) * 2.0;
            v = round(level * 100.0) / 100.0;
            break;
        default: v = wl_uniform(&rng) * 1000.0; break;
        }
        s->bits[i] = wl_bits(v);
    }
}

/* ---- datasets (../shared/datasets, gzip'd CSV or raw float64) ------------ */

/* Seconds since the epoch for "YYYY-MM-DD HH:MM:SS", UTC; -1 if not a date. */
static inline int wl_parse_datetime(const char *s, int64_t *out)
{
    int y, mo, d, h, mi, se;
    if (sscanf(s, "%d-%d-%d %d:%d:%d", &y, &mo, &d, &h, &mi, &se) != 6) return -1;
    /* days from civil (Howard Hinnant's algorithm) */
    y -= mo <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    *out = days * 86400 + h * 3600 + mi * 60 + se;
    return 0;
}

static inline FILE *wl_open_gz(const char *path)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "gzip -dc '%s'", path);
    return popen(cmd, "r");
}

static inline void wl_push(wl_series *s, size_t *cap, int64_t ts, uint64_t bits)
{
    if (s->n == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        s->ts = (int64_t *)realloc(s->ts, *cap * sizeof(int64_t));
        s->bits = (uint64_t *)realloc(s->bits, *cap * sizeof(uint64_t));
        if (!s->ts || !s->bits) abort();
    }
    s->ts[s->n] = ts;
    s->bits[s->n] = bits;
    s->n++;
}

/*
 * Load one dataset file as up to `max_series` series. Value-only files get
 * timestamps 0, 1000, 2000, ... (ms, regular); NAB/ETT date-times become UTC
 * seconds; brew keeps its ms. Empty values ("" or nothing) are skipped.
 * @return the number of series loaded (0 on failure).
 */
static inline size_t wl_load_dataset(const char *path, wl_series *out, size_t max_series)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char stem[96];
    snprintf(stem, sizeof stem, "%s", base);
    char *dot = strchr(stem, '.');
    if (dot) *dot = 0;
    FILE *f = wl_open_gz(path);
    if (!f) return 0;
    size_t caps[16] = {0};
    size_t nseries = 0;
    if (strstr(path, ".bin.gz")) {
        memset(&out[0], 0, sizeof out[0]);
        snprintf(out[0].name, sizeof out[0].name, "%s", stem);
        unsigned char b[8];
        int64_t i = 0;
        while (fread(b, 1, 8, f) == 8) {
            uint64_t v = 0;
            for (int k = 0; k < 8; k++) v |= (uint64_t)b[k] << (8 * k);
            wl_push(&out[0], &caps[0], i++ * 1000, v);
        }
        pclose(f);
        return out[0].n ? 1 : 0;
    }
    char line[4096];
    int64_t row = 0;
    int header_seen = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *fields[16];
        size_t nf = 0;
        for (char *p = line; nf < 16;) {
            fields[nf++] = p;
            char *c = strchr(p, ',');
            if (!c) break;
            *c = 0;
            p = c + 1;
        }
        if (!header_seen) {
            header_seen = 1;
            char *end;
            strtod(fields[nf > 1 ? 1 : 0], &end);
            int is_header = *end != 0 && strcmp(fields[nf > 1 ? 1 : 0], "\"\"") != 0;
            nseries = nf == 1 ? 1 : nf - 1;
            if (nseries > max_series) nseries = max_series;
            for (size_t k = 0; k < nseries; k++) {
                memset(&out[k], 0, sizeof out[k]);
                if (nf > 2 && is_header)
                    snprintf(out[k].name, sizeof out[k].name, "%.40s:%.40s", stem, fields[k + 1]);
                else
                    snprintf(out[k].name, sizeof out[k].name, "%s", stem);
            }
            if (is_header) continue;
        }
        int64_t ts = row * 1000;
        if (nf > 1) {
            if (wl_parse_datetime(fields[0], &ts) != 0) ts = strtoll(fields[0], NULL, 10);
        }
        for (size_t k = 0; k < nseries; k++) {
            const char *v = fields[nf == 1 ? 0 : k + 1];
            if (k + 1 >= nf && nf > 1) break;
            if (!*v || strcmp(v, "\"\"") == 0) continue;
            wl_push(&out[k], &caps[k], ts, wl_bits(strtod(v, NULL)));
        }
        row++;
    }
    pclose(f);
    return nseries;
}

/* Paths of every dataset file under dir/<sub>/, sorted; returns the count. */
static inline size_t wl_list_datasets(const char *dir, char paths[][512], size_t max)
{
    size_t n = 0;
    DIR *top = opendir(dir);
    if (!top) return 0;
    struct dirent *sub;
    while ((sub = readdir(top)) && n < max) {
        if (sub->d_name[0] == '.') continue;
        char subdir[512];
        snprintf(subdir, sizeof subdir, "%.250s/%.250s", dir, sub->d_name);
        DIR *d = opendir(subdir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d)) && n < max) {
            if (!strstr(e->d_name, ".gz")) continue;
            snprintf(paths[n++], 512, "%.200s/%.200s", subdir, e->d_name);
        }
        closedir(d);
    }
    closedir(top);
    qsort(paths, n, 512, (int (*)(const void *, const void *))strcmp);
    return n;
}

#endif
