/*
 * Codec 2 probe (issue "Codec 2"): what would a block of values cost if it
 * were stored as decimals scaled to integers (ALP's idea: the smallest power
 * of ten that makes every value an exact integer, the others kept as
 * exceptions), bit-packed against the block's minimum (frame of reference)
 * or as bit-packed deltas, against the core codec's XOR stream for the same
 * block? Sizes only, counted exactly from the encodings' definitions; no
 * codec is built here. Reads ../shared/datasets (or DIR) like make bench.
 *
 *   codec2_probe [DIR] [--block N]     (N values per block, 1024 by default)
 */
#include "workloads.h" /* first: it sets _POSIX_C_SOURCE for popen */

#include "tschunk.h"

#define MAX_BLOCK 4096
#define MAX_EXPONENT 12
#define EXCEPTION_BITS (64 + 12) /* value bits and a 12-bit position */
#define HEADER_BITS (8 + 8 + 64)  /* exponent, width, frame of reference */

static unsigned width_of(uint64_t range) { return range ? 64u - (unsigned)__builtin_clzll(range) : 0; }

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* Bits of the block as decimals with exponent e: min of frame-of-reference and delta packing.
 * as_float: the values are float32s widened to double (as ETT's are), and k / 10^e must round to the
 * same float32. */
static double decimal_bits(const double *v, size_t n, int e, double pow10, int as_float)
{
    static int64_t k[MAX_BLOCK];
    size_t exceptions = 0, kept = 0;
    int64_t kmin = INT64_MAX, kmax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        double x = v[i] * pow10;
        int ok = isfinite(x) && fabs(x) < 0x1p52;
        int64_t q = ok ? (int64_t)llrint(x) : 0;
        double back = e ? (double)q / pow10 : (double)q;
        if (as_float) back = (double)(float)back;
        if (!ok || wl_bits(back) != wl_bits(v[i])) { exceptions++; continue; }
        k[kept++] = q;
        if (q < kmin) kmin = q;
        if (q > kmax) kmax = q;
    }
    if (!kept) return INFINITY;
    unsigned for_width = width_of((uint64_t)kmax - (uint64_t)kmin);
    uint64_t dmax = 0;
    for (size_t i = 1; i < kept; i++) {
        uint64_t d = zigzag(k[i] - k[i - 1]);
        if (d > dmax) dmax = d;
    }
    unsigned delta_width = width_of(dmax);
    unsigned width = for_width < delta_width ? for_width : delta_width;
    return HEADER_BITS + (double)kept * width + (double)exceptions * EXCEPTION_BITS;
}

/* The core codec's value stream for the block (timestamps regular: their stream is elided). */
static double xor_bits(const double *v, size_t n)
{
    static int64_t ts[MAX_BLOCK];
    static unsigned char buf[TSCHUNK_BOUND(MAX_BLOCK)];
    for (size_t i = 0; i < n; i++) ts[i] = (int64_t)i * 1000;
    tschunk_encoder_options gorilla = {TSCHUNK_CODEC_GORILLA, 0, 0, 0};
    size_t size = tschunk_encode(buf, sizeof buf, ts, v, n, &gorilla);
    tschunk_chunk_info info;
    if (tschunk_is_error(size) || tschunk_chunk_info_get(buf, size, &info)) abort();
    return 8.0 * (double)(8 + info.value_bytes);
}

/*
 * Bits Chimp128 (Liakos et al., VLDB 2022) spends on the block: each value XORed with the best of the
 * last 128 values (found through a table of their low 14 bits) when that leaves more than 13 trailing
 * zeros, else with the previous value, with Chimp's rounded leading-zero classes. Counted, not written.
 */
static double chimp128_bits(const double *v, size_t n)
{
    static const unsigned lead_round[65] = {0,  0,  0,  0,  0,  0,  0,  0,  8,  8,  8,  8,  12, 12, 12, 12, 16,
                                            16, 18, 18, 20, 20, 22, 22, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24,
                                            24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24,
                                            24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24};
    static size_t last_at[1 << 14]; /* position + 1 of the last value with these low bits */
    static uint64_t ring[128];
    memset(last_at, 0, sizeof last_at);
    double bits = 64;
    unsigned stored_lead = 65;
    ring[0] = wl_bits(v[0]);
    last_at[ring[0] & 16383] = 1;
    for (size_t i = 1; i < n; i++) {
        uint64_t x = wl_bits(v[i]), key = x & 16383, ref = ring[(i - 1) % 128], xr = x ^ ref;
        size_t at = last_at[key];
        if (at && i - (at - 1) <= 128) {
            uint64_t cand = x ^ ring[(at - 1) % 128];
            if (cand == 0 || (unsigned)__builtin_ctzll(cand) > 13) xr = cand;
        }
        if (xr == 0) {
            bits += 9;
            stored_lead = 65;
        } else {
            unsigned lead = lead_round[__builtin_clzll(xr)], trail = (unsigned)__builtin_ctzll(xr);
            if (trail > 13) {
                bits += 18 + (64 - lead - trail);
                stored_lead = 65;
            } else if (lead == stored_lead) {
                bits += 2 + (64 - lead);
            } else {
                bits += 5 + (64 - lead);
                stored_lead = lead;
            }
        }
        ring[i % 128] = x;
        last_at[key] = i + 1;
    }
    return bits;
}

/* The real codec 2 (lib/codec2) on the block: bits of its value blocks (timestamps regular). */
static double tsc2_bits(const double *v, size_t n)
{
    static int64_t ts[MAX_BLOCK];
    static unsigned char buf[TSCHUNK_BOUND(MAX_BLOCK)];
    for (size_t i = 0; i < n; i++) ts[i] = (int64_t)i * 1000;
    tschunk_encoder_options o = {TSCHUNK_CODEC_TSC2, 0, 0, 0};
    size_t size = tschunk_encode(buf, sizeof buf, ts, v, n, &o);
    tschunk_chunk_info info;
    if (tschunk_is_error(size) || tschunk_chunk_info_get(buf, size, &info)) abort();
    return 8.0 * (double)info.value_bytes;
}

typedef struct {
    double decimal, xor, chimp, best, tsc2;
    size_t values, blocks, decimal_blocks;
} totals;

static void probe_series(const wl_series *s, size_t block, totals *t)
{
    static double v[MAX_BLOCK];
    static const double pow10[MAX_EXPONENT + 1] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
    size_t usable = s->n / 1024 * 1024; /* as the published figures were measured */
    for (size_t at = 0; at + block <= usable; at += block) {
        for (size_t i = 0; i < block; i++) v[i] = wl_double(s->bits[at + i]);
        double dec = INFINITY;
        int widened = 1; /* every value a float32 widened to double */
        for (size_t i = 0; i < block && widened; i++) widened = wl_bits((double)(float)v[i]) == wl_bits(v[i]);
        for (int e = 0; e <= MAX_EXPONENT; e++) {
            double bits = decimal_bits(v, block, e, pow10[e], 0);
            if (widened) {
                double fbits = decimal_bits(v, block, e, pow10[e], 1);
                if (fbits < bits) bits = fbits;
            }
            if (bits < dec) dec = bits;
        }
        double core = xor_bits(v, block), chimp = chimp128_bits(v, block);
        double x = chimp < core ? chimp : core; /* the XOR fallback: the better of the core stream and Chimp128 */
        t->decimal += isfinite(dec) ? dec : x;
        t->xor += core;
        t->chimp += chimp;
        t->best += dec < x ? dec : x;
        t->decimal_blocks += dec < x;
        t->tsc2 += tsc2_bits(v, block);
        t->blocks++;
        t->values += block;
    }
}

int main(int argc, char **argv)
{
    const char *dir = "../shared/datasets";
    size_t block = 1024;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--block") && i + 1 < argc) block = (size_t)atoi(argv[++i]);
        else dir = argv[i];
    }
    if (block < 8 || block > MAX_BLOCK) return 2;
    static char paths[64][512];
    size_t nfiles = wl_list_datasets(dir, paths, 64);
    if (!nfiles) {
        printf("codec2_probe: no datasets under %s (the shared datasets are absent): nothing measured\n", dir);
        return 0;
    }
    printf("Blocks of %zu values; bits per value (value stream only):\n\n", block);
    printf("| dataset | values | core XOR | Chimp128 | decimal + FOR/delta | best per block | decimal blocks | tsc2 |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    double sum_xor = 0, sum_chimp = 0, sum_best = 0, sum_tsc2 = 0;
    size_t counted = 0;
    for (size_t f = 0; f < nfiles; f++) {
        static wl_series series[16];
        size_t ns = wl_load_dataset(paths[f], series, 16);
        totals t = {0, 0, 0, 0, 0, 0, 0, 0};
        for (size_t k = 0; k < ns; k++) {
            probe_series(&series[k], block, &t);
            wl_free(&series[k]);
        }
        if (!t.values) continue;
        const char *base = strrchr(paths[f], '/');
        printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %zu/%zu | %.2f |\n", base ? base + 1 : paths[f], t.values,
               t.xor / (double)t.values, t.chimp / (double)t.values, t.decimal / (double)t.values,
               t.best / (double)t.values, t.decimal_blocks, t.blocks, t.tsc2 / (double)t.values);
        sum_tsc2 += t.tsc2 / (double)t.values;
        sum_xor += t.xor / (double)t.values;
        sum_chimp += t.chimp / (double)t.values;
        sum_best += t.best / (double)t.values;
        counted++;
    }
    printf("\nMean over %zu datasets: core XOR %.2f, Chimp128 %.2f, best per block of decimal, core XOR and "
           "Chimp128 %.2f, codec 2 (tsc2, as built) %.2f bits per value.\n", counted, sum_xor / (double)counted,
           sum_chimp / (double)counted, sum_best / (double)counted, sum_tsc2 / (double)counted);
    return 0;
}
