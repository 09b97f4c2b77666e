/*
 * Writes the golden chunk vectors in tests/vectors/chunk/ (run once per format
 * version with `make vectors`; the tests then pin the bytes). Each file:
 *   # note
 *   ts,0x<16 hex value bits>      one line per sample
 *   chunk <hex>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tschunk.h"
#include "../bench/workloads.h"

static void emit(const char *dir, const char *name, const char *note, const int64_t *ts, const uint64_t *bits,
                 size_t n)
{
    size_t cap = TSCHUNK_BOUND(n);
    unsigned char *buf = malloc(cap);
    tschunk_encoder enc;
    tschunk_encoder_init(&enc, buf, cap, NULL);
    for (size_t i = 0; i < n; i++)
        if (tschunk_append_bits(&enc, ts[i], bits[i]) != 0) { fprintf(stderr, "%s: append failed\n", name); exit(1); }
    size_t size = tschunk_encoder_finish(&enc);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.txt", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fprintf(f, "# %s\n", note);
    for (size_t i = 0; i < n; i++) fprintf(f, "%lld,0x%016llx\n", (long long)ts[i], (unsigned long long)bits[i]);
    fprintf(f, "chunk ");
    for (size_t i = 0; i < size; i++) fprintf(f, "%02x", buf[i]);
    fprintf(f, "\n");
    fclose(f);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/vectors/chunk";
    emit(dir, "empty", "no samples: the 3-byte chunk", NULL, NULL, 0);
    int64_t t1[] = {-1700000000123};
    uint64_t b1[] = {0x7ff0000000000002};
    emit(dir, "single_stale_marker", "one sample, negative timestamp, Prometheus stale marker", t1, b1, 1);
    int64_t t4[] = {1700000000000, 1700000015000, 1700000030007, 1700000045007};
    uint64_t b4[] = {0x3ff8000000000000, 0x3ff8000000000000, 0x400a000000000000, 0x400c000000000000};
    emit(dir, "readme_example", "the worked example of README 'Chunk format v1'", t4, b4, 4);
    int64_t ts[64];
    uint64_t bits[64];
    /* Every dod bucket edge, escape included. */
    const int64_t dods[] = {0, 15, -16, 16, -17, 127, -128, 128, -129, 1023, -1024, 1024, -1025,
                            524287, -524288, 524288, -524289, (int64_t)1 << 40};
    int64_t delta = 15000, t = 0;
    size_t n = 0;
    ts[n] = t; bits[n++] = 0x4059000000000000;
    t += delta; ts[n] = t; bits[n++] = 0x4059000000000000;
    for (size_t i = 0; i < sizeof dods / sizeof dods[0]; i++) {
        delta += dods[i];
        t += delta;
        ts[n] = t;
        bits[n++] = 0x4059000000000000;
    }
    emit(dir, "dod_buckets", "every dod bucket edge and the 64-bit escape; values constant (VAL_CONST)", ts, bits, n);
    const uint64_t special[] = {0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
                                0x7ff8000000000000, 0x7ff0000000000002, 0x7ff4000000000001, 0xffffffffffffffff,
                                0x0000000000000001, 0x000fffffffffffff, 0x7fefffffffffffff, 0x3ff0000000000000,
                                0x3ff0000000000001, 0xbff0000000000000};
    n = sizeof special / sizeof special[0];
    for (size_t i = 0; i < n; i++) { ts[i] = 1000 * (int64_t)i; bits[i] = special[i]; }
    emit(dir, "special_values", "+-0, +-Inf, NaNs with payloads, stale marker, subnormals, max; regular time (TS_CONST)", ts, bits, n);
    for (size_t i = 0; i < 16; i++) { ts[i] = INT64_MAX - 15 + (int64_t)i / 2; bits[i] = 0x4000000000000000; }
    emit(dir, "constant_int64_max", "pairs of equal timestamps up to INT64_MAX (dod +1, -1, ...), constant value (VAL_CONST)", ts, bits, 16);
    wl_series g;
    wl_synthetic(&g, WL_GAUGE_2DP, 120, 2026);
    emit(dir, "gauge_2dp_120", "seeded 2-decimal gauge, 15 s +- 5 ms scrape, 120 samples", g.ts, g.bits, 120);
    wl_free(&g);
    wl_synthetic(&g, WL_COUNTER, 120, 2027);
    emit(dir, "counter_120", "seeded counter, 15 s +- 5 ms scrape, 120 samples", g.ts, g.bits, 120);
    wl_free(&g);
    /* Window reset: a wide window, then a narrow XOR that fits it. */
    const uint64_t wr[] = {0x4000000000000000, 0x7ff0000000000001, 0x4000000000000000, 0x4000000000000100,
                           0x4000000000000000, 0x4000000000000300};
    for (size_t i = 0; i < 6; i++) { ts[i] = (int64_t)i; bits[i] = wr[i]; }
    emit(dir, "window_reset", "a 64-bit-wide window, then small XORs that fit it but reopen a narrow window", ts, bits, 6);
    printf("vectors written to %s\n", dir);
    return 0;
}
