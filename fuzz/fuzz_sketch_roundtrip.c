/* Values -> sketch -> bytes -> sketch: same quantiles, same bytes on re-encode; and merge of two
 * decoded halves equals the sketch of the union; and tschunk_sketch_add_many of the same values gives
 * the same bytes as adding them one by one, and so does a tschunk_sketch_stage (0.56.0); weighted adds encode to
 * what decodes; every bin writer here (scalar, pdep, AVX-512) writes the same bytes, in both forms. Aborts on any
 * difference. */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "sketch/sketch.h"
#include "tschunk.h"

typedef struct {
    int32_t lo, hi;
    int any;
} span;

static void widen(void *ctx, int32_t index, double count)
{
    (void)count;
    span *s = ctx;
    if (!s->any || index < s->lo) s->lo = index;
    if (!s->any || index > s->hi) s->hi = index;
    s->any = 1;
}

/* Whether a store of the union had to collapse: then merging collapsed halves may legitimately differ. */
static int collapsed(const tschunk_sketch *s, uint32_t max_bins)
{
    for (int neg = 0; neg < 2; neg++) {
        span sp = {0, 0, 0};
        tschunk_sketch_bins(s, neg, widen, &sp);
        if (sp.any && (int64_t)sp.hi - sp.lo + 1 >= (int64_t)max_bins) return 1;
    }
    return 0;
}

static uint64_t bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* The pdep and AVX-512 writers, where the CPU has them, write the scalar one's bytes (0.31), in the form Java's
 * rule picks and in the sparse one. */
static void writers_agree(const tschunk_sketch *s)
{
    static unsigned char want[1 << 17], got[1 << 17];
    for (unsigned sparse = 0; sparse < 2; sparse++) {
        unsigned flags = TSCHUNK_SKETCH_EXACT_STATS | (sparse ? TSCHUNK_SKETCH_SPARSE : 0);
        size_t n = tsc_sketch_encode_isa(s, want, sizeof want, flags, TSC_PUT_SCALAR);
        for (int writer = TSC_PUT_AVX512; writer <= TSC_PUT_PDEP; writer++) {
            if (writer == TSC_PUT_AVX512 ? !tsc_sketch_simd_here() : !tsc_pext_here()) continue;
            size_t m = tsc_sketch_encode_isa(s, got, sizeof got, flags, writer);
            if (m != n || (!tschunk_is_error(n) && memcmp(want, got, n) != 0)) __builtin_trap();
        }
    }
}

/* Weighted adds (the input's doubles as value, weight pairs; 0.29.1): whatever they accept, the sketch encodes to
 * a stream that decodes, and so on for three trips (weights of 1e308 once overflowed a count, whose encoding our
 * decoder refused); its merge with what came back is refused with UNTRACKABLE or taken. The bytes need not stay
 * the same: a varfloat count keeps bits(count + 1) - bits(1), so a count below 2^-52 writes as 0 and is left out,
 * as in the reference libraries' encoding. */
static void weighted_round_trip(const tschunk_sketch_options *o, const uint8_t *data, size_t size)
{
    static unsigned char buf[1 << 17];
    tschunk_sketch *s, *back;
    if (tschunk_sketch_create(&s, o)) __builtin_trap();
    for (size_t off = 2; off + 16 <= size; off += 16) {
        double value, weight;
        memcpy(&value, data + off, 8);
        memcpy(&weight, data + off + 8, 8);
        tschunk_sketch_add_weighted(s, value, fabs(weight));
    }
    writers_agree(s);
    for (int trip = 0; trip < 3; trip++) {
        size_t n = tschunk_sketch_encode(s, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
        if (tschunk_is_error(n) || tschunk_sketch_decode_new(&back, buf, n, o, NULL)) __builtin_trap();
        size_t merged = tschunk_sketch_merge(back, s);
        if (merged && tschunk_get_error_code(merged) != TSCHUNK_ERROR_UNTRACKABLE) __builtin_trap();
        tschunk_sketch_free(s);
        s = back;
    }
    tschunk_sketch_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    tschunk_sketch_options o = {(tschunk_mapping_kind)(data[0] % 5), 0.005 + (data[1] % 8) * 0.01,
                                (uint32_t)(16 + (data[1] >> 3) * 8), data[0] >> 7, {0, 0, 0}, 0};
    tschunk_sketch *all, *half[2], *back, *merged;
    if (tschunk_sketch_create(&all, &o) || tschunk_sketch_create(&half[0], &o) || tschunk_sketch_create(&half[1], &o))
        __builtin_trap();
    static double values[1 << 14];
    size_t count = 0, refused = 0;
    for (size_t off = 2; off + 8 <= size && count < sizeof values / sizeof *values; off += 8) {
        double v;
        memcpy(&v, data + off, 8);
        values[count++] = v;
        if (tschunk_is_error(tschunk_sketch_add(all, v))) { /* NaN, Inf, out of range: refused */
            refused++;
            continue;
        }
        tschunk_sketch_add(half[(off / 8) & 1], v);
    }
    static unsigned char buf[1 << 17], again[1 << 17], h0[1 << 17], h1[1 << 17];
    size_t n = tschunk_sketch_encode(all, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
    if (tschunk_is_error(n)) __builtin_trap();
    writers_agree(all);
    tschunk_sketch *batch;
    if (tschunk_sketch_create(&batch, &o) || tschunk_sketch_add_many(batch, values, count) != refused) __builtin_trap();
    size_t nb = tschunk_sketch_encode(batch, again, sizeof again, TSCHUNK_SKETCH_EXACT_STATS);
    if (nb != n || memcmp(buf, again, n) != 0) __builtin_trap();
    /* 0.56.0: one value a call through a stage, the same sketch, its refusals counted at the flushes */
    static tschunk_sketch_stage stage;
    tschunk_sketch_stage_init(&stage);
    tschunk_sketch_clear(batch);
    for (size_t i = 0; i < count; i++)
        if (tschunk_sketch_stage_add(&stage, batch, values[i])) __builtin_trap();
    if (tschunk_sketch_stage_flush(&stage, batch) || stage.refused != refused) __builtin_trap();
    nb = tschunk_sketch_encode(batch, again, sizeof again, TSCHUNK_SKETCH_EXACT_STATS);
    if (nb != n || memcmp(buf, again, n) != 0) __builtin_trap();
    /* 0.57.0: a bins-only sketch of the values, one at a time and in bulk (whose loops skip the statistics),
     * refuses what the exact one refused and is its plain form, with the exact-statistics flag too (it has none
     * to write), and its count */
    tschunk_sketch_options plain_o = o;
    plain_o.bins_only = 1;
    tschunk_sketch_free(batch);
    size_t np = tschunk_sketch_encode(all, h0, sizeof h0, 0);
    tschunk_sketch_stats exact_stats, plain_stats;
    tschunk_sketch_get_stats(all, &exact_stats);
    for (int bulk = 0; bulk < 2; bulk++) {
        if (tschunk_sketch_create(&batch, &plain_o)) __builtin_trap();
        size_t plain_refused = 0;
        if (bulk) plain_refused = tschunk_sketch_add_many(batch, values, count);
        else for (size_t i = 0; i < count; i++) plain_refused += tschunk_is_error(tschunk_sketch_add(batch, values[i]));
        nb = tschunk_sketch_encode(batch, again, sizeof again, TSCHUNK_SKETCH_EXACT_STATS);
        if (plain_refused != refused || tschunk_is_error(np) || nb != np || memcmp(h0, again, np) != 0)
            __builtin_trap();
        tschunk_sketch_get_stats(batch, &plain_stats);
        if (plain_stats.exact || bits(plain_stats.count) != bits(exact_stats.count)) __builtin_trap();
        tschunk_sketch_free(batch);
    }
    if (tschunk_sketch_decode_new(&back, buf, n, &o, NULL)) __builtin_trap();
    size_t m = tschunk_sketch_encode(back, again, sizeof again, TSCHUNK_SKETCH_EXACT_STATS);
    if (m != n || memcmp(buf, again, n) != 0) __builtin_trap();
    size_t n0 = tschunk_sketch_encode(half[0], h0, sizeof h0, TSCHUNK_SKETCH_EXACT_STATS);
    size_t n1 = tschunk_sketch_encode(half[1], h1, sizeof h1, TSCHUNK_SKETCH_EXACT_STATS);
    if (tschunk_sketch_decode_new(&merged, h0, n0, &o, NULL) || tschunk_sketch_decode_merge(merged, h1, n1, NULL))
        __builtin_trap();
    tschunk_sketch_stats sa, sm;
    tschunk_sketch_get_stats(all, &sa);
    tschunk_sketch_get_stats(merged, &sm);
    if (bits(sa.count) != bits(sm.count) || bits(sa.zero_count) != bits(sm.zero_count)) __builtin_trap();
    int comparable = !collapsed(all, o.max_bins);
    for (int i = 0; i <= 20; i++) {
        double x, y, z;
        size_t ra = tschunk_sketch_quantile(all, i / 20.0, &x), rb = tschunk_sketch_quantile(back, i / 20.0, &y);
        size_t rm = tschunk_sketch_quantile(merged, i / 20.0, &z);
        if (ra != rb || ra != rm) __builtin_trap();
        /* Integer counts: the same bins give the same answers. */
        if (!ra && bits(x) != bits(y)) __builtin_trap();
        if (!ra && comparable && bits(x) != bits(z)) __builtin_trap();
    }
    tschunk_sketch_free(all); tschunk_sketch_free(half[0]); tschunk_sketch_free(half[1]);
    tschunk_sketch_free(back); tschunk_sketch_free(merged);
    weighted_round_trip(&o, data, size);
    return 0;
}
