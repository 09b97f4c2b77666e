/* Codec 2: round trips, group edges, exactness shortcuts, limits, the SIMD twins, hostile bytes. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#include "test_util.h"
#include "codec2/format.h"
#include "chunk/format.h"

#define TSC2 TSCHUNK_CODEC_TSC2

static const uint64_t specials[] = {
    0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
    0xfff8000000000000, 0x7ff0000000000002, 0x7ff0000000000001, 0x7fffffffffffffff, 0xffffffffffffffff,
    0x0000000000000001, 0x000fffffffffffff, 0x8000000000000001, 0x0010000000000000, 0x7fefffffffffffff,
    0xffefffffffffffff, 0x3ff0000000000000, 0x3ff0000000000001, 0x3fb999999999999a /* 0.1 */,
    0x3fd3333333333334 /* 0.1 + 0.2 */, 0x4059000000000000 /* 100 */, 0x4341c37937e08000 /* 1e16 */,
};

Test(codec2, special_values_round_trip_in_every_order)
{
    roundtrip_pairs(specials, sizeof specials / sizeof specials[0], TSC2);
}

/* Decimal groups with a few values that are not decimals: each must come back exactly (exceptions). */
Test(codec2, decimal_groups_keep_their_exceptions_exact)
{
    wl_series s;
    wl_alloc(&s, 4096, "decimal-exceptions");
    uint64_t rng = 17;
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 10;
        double v = (double)(int64_t)(wl_rng(&rng) % 200000 - 100000) / 100.0;
        switch (wl_rng(&rng) % 32) {
        case 0: v = v + 1e-9; break;             /* not a 2-digit decimal */
        case 1: v = -0.0; break;                  /* k = 0 would give +0.0 */
        case 2: s.bits[i] = 0x7ff0000000000002; continue;
        case 3: v = 1e300; break;                 /* beyond the scaled range */
        default: break;
        }
        s.bits[i] = wl_bits(v);
    }
    size_t bytes = roundtrip_series_codec(&s, 1024, TSC2);
    /* 2-digit decimals within +-1000 (18 bits), 1 in 8 an exception (72 bits): about 27 bits a sample. */
    cr_assert_lt(bytes * 8 / s.n, 30, "%zu bits per sample", bytes * 8 / s.n);
    wl_free(&s);
}

/*
 * 7-digit decimals with a few values no decimal reading takes (stored raw): up to one in 16 a group the
 * previous group's reading is reused, more and the group is searched again. Both kinds of group, and
 * groups that change from one to the other, come back exactly, at about the decimal cost.
 */
Test(codec2, decimal_groups_with_a_few_raw_values_round_trip)
{
    wl_series s;
    wl_alloc(&s, 16384, "decimal-raw");
    uint64_t rng = 23;
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 1000;
        size_t group = i / TSC2_GROUP, at = i % TSC2_GROUP;
        int raws = group % 3 == 0 ? 4 : group % 3 == 1 ? 8 : 9; /* 8 = the share's limit, 9 over it */
        double v = (double)(int64_t)(wl_rng(&rng) % 20000000) / 1e7;
        if (at % 13 == 5 && (int)(at / 13) < raws) v = wl_uniform(&rng) * 2; /* 52 random bits */
        s.bits[i] = wl_bits(v);
    }
    size_t bytes = roundtrip_series_codec(&s, 1024, TSC2);
    /* 25 bits a decimal, about 72 a raw value (7 in 128): about 28 bits a sample. */
    cr_assert_lt(bytes * 8 / s.n, 31, "%zu bits per sample", bytes * 8 / s.n);
    wl_free(&s);
}

/*
 * A series that turns from real doubles (SPLIT groups) to 2-digit decimals inside a chunk: reused SPLIT
 * groups do not look for a decimal reading, so the search every 8th group finds it, and at most 7 groups
 * stay SPLIT. The chunk decodes exactly and costs at most those 7 groups' raw bytes more than the two
 * parts encoded apart.
 */
Test(codec2, a_switch_from_doubles_to_decimals_is_found_within_eight_groups)
{
    wl_series s;
    wl_alloc(&s, 32 * TSC2_GROUP, "doubles-then-decimals");
    const size_t switch_at = 10 * TSC2_GROUP + 5; /* groups 10-15 are reused, 16 is searched */
    uint64_t rng = 31;
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 1000;
        double v = i < switch_at ? 40 + wl_uniform(&rng) : (double)(int64_t)(wl_rng(&rng) % 4000) / 100;
        s.bits[i] = wl_bits(v);
    }
    unsigned char *chunk;
    size_t whole = encode_range_codec(&s, 0, s.n, TSC2, &chunk);
    check_chunk(chunk, whole, &s, 0, s.n);
    free(chunk);
    size_t first = encode_range_codec(&s, 0, switch_at, TSC2, &chunk);
    free(chunk);
    size_t second = encode_range_codec(&s, switch_at, s.n - switch_at, TSC2, &chunk);
    free(chunk);
    cr_assert_leq(whole, first + second + 7 * TSC2_GROUP * 8, "%zu against %zu + %zu", whole, first, second);
    cr_assert_lt(whole, s.n * 8, "%zu bytes", whole); /* the decimals do get their form */
    wl_free(&s);
}

/* The whole series as one codec-2 chunk, checked to decode exactly, and its header and first group parsed. */
static size_t encode_and_parse_first_group(const wl_series *s, unsigned char **chunk, tsc_chunk_header *h,
                                           tsc_codec2_group *g)
{
    size_t size = encode_range_codec(s, 0, s->n, TSC2, chunk);
    check_chunk(*chunk, size, s, 0, s->n);
    cr_assert_eq(tsc_chunk_parse(*chunk, size, h, TSC_PARSE_HEADER), 0);
    size_t first = s->n < TSC2_GROUP ? s->n : TSC2_GROUP;
    cr_assert_eq(tsc_codec2_parse_group(*chunk + h->ts_offset, size - h->ts_offset, first, h->info.flags, g), 0);
    return size;
}

/*
 * Exception entries decode whatever their corrections' lengths (1 and 2 bytes, the last one at the
 * chunk's end) and kinds (RAW among them); a position out of order, repeated or past the group is
 * CORRUPT.
 */
Test(codec2, exception_positions_must_increase_within_the_group)
{
    enum { N = 40 };
    wl_series s;
    wl_alloc(&s, N, "exceptions");
    for (size_t i = 0; i < N; i++) {
        s.ts[i] = (int64_t)i * 1000;
        s.bits[i] = wl_bits((double)(int64_t)(i * 37 % 1000) / 100.0);
    }
    s.bits[5] += 3;           /* NEAR: a 1-byte correction */
    s.bits[11] -= 1000;       /* NEAR: 2 bytes */
    s.bits[20] = wl_bits(1e300); /* RAW */
    s.bits[33] += 4000;       /* NEAR: 2 bytes */
    s.bits[39] -= 2;          /* NEAR, the chunk's last bytes */
    unsigned char *chunk;
    tsc_chunk_header h;
    tsc_codec2_group g;
    size_t size = encode_and_parse_first_group(&s, &chunk, &h, &g);
    cr_assert_eq(g.exceptions, 5, "%zu exceptions", g.exceptions);
    size_t first = (size_t)(g.exception_at - chunk);
    cr_assert_eq(chunk[first], 5);
    cr_assert_eq(chunk[first + 2], 11); /* after the first entry's 1-byte correction */
    int64_t ts[N];
    double v[N];
    unsigned char positions[][2] = {{5, N}, {5, 5}, {5, 2}, {N + 3, 11}, {0x7f, 11}};
    for (size_t c = 0; c < sizeof positions / sizeof positions[0]; c++) {
        unsigned char *bad = malloc(size);
        memcpy(bad, chunk, size);
        bad[first] = positions[c][0];
        bad[first + 2] = positions[c][1];
        cr_assert_eq(tschunk_get_error_code(tschunk_decode(bad, size, ts, v, N)), TSCHUNK_ERROR_CORRUPT, "case %zu", c);
        free(bad);
    }
    free(chunk);
    wl_free(&s);
}

/* float32 readings widened to double (as ETT's are) round-trip through the FLOAT32 decimal form. */
Test(codec2, widened_float32_decimals_round_trip)
{
    wl_series s;
    wl_alloc(&s, 2048, "float32");
    uint64_t rng = 5;
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 3600;
        s.bits[i] = wl_bits((double)(float)((double)(int64_t)(wl_rng(&rng) % 50000) / 1000.0));
    }
    size_t bytes = roundtrip_series_codec(&s, 2048, TSC2);
    cr_assert_lt(bytes * 8 / s.n, 32);
    wl_free(&s);
}

Test(codec2, every_group_edge_and_timestamp_extreme_round_trips)
{
    const size_t sizes[] = {1, 2, 3, 127, 128, 129, 255, 256, 257, 1000};
    const int64_t starts[] = {INT64_MIN, -1, 0, INT64_MAX - 2000};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++)
        for (size_t z = 0; z < sizeof starts / sizeof starts[0]; z++) {
            wl_series s;
            wl_alloc(&s, sizes[q], "edges");
            uint64_t rng = q * 10 + z;
            int64_t t = starts[z];
            for (size_t i = 0; i < s.n; i++) {
                s.ts[i] = t;
                if (t <= INT64_MAX - 2) t += (int64_t)(wl_rng(&rng) % 3);
                s.bits[i] = i % 3 ? wl_bits((double)i / 4) : wl_rng(&rng);
            }
            roundtrip_series_codec(&s, sizes[q], TSC2);
            wl_free(&s);
        }
    /* The widest deltas: INT64_MIN to INT64_MAX in one step, and repeats. */
    wl_series s;
    wl_alloc(&s, 5, "extreme");
    const int64_t ts[5] = {INT64_MIN, INT64_MIN, INT64_MAX, INT64_MAX, INT64_MAX};
    for (size_t i = 0; i < 5; i++) {
        s.ts[i] = ts[i];
        s.bits[i] = wl_bits((double)i);
    }
    roundtrip_series_codec(&s, 5, TSC2);
    wl_free(&s);
}

Test(codec2, property_round_trip_million_samples, .timeout = 120)
{
    roundtrip_million(TSC2, 3000);
}

/* The issue's size target on the synthetic scrape workloads: at least 30% below codec 1. */
Test(codec2, smaller_than_gorilla_on_scrape_workloads)
{
    const int kinds[] = {WL_CONST_JITTER, WL_COUNTER, WL_GAUGE_2DP};
    for (size_t q = 0; q < 3; q++) {
        wl_series s;
        wl_synthetic(&s, kinds[q], 12000, 21);
        size_t gorilla = roundtrip_series_codec(&s, 1024, TSCHUNK_CODEC_GORILLA);
        size_t tsc2 = roundtrip_series_codec(&s, 1024, TSC2);
        cr_assert_lt(tsc2 * 10, gorilla * 7, "%s: tsc2 %zu bytes, gorilla %zu", s.name, tsc2, gorilla);
        wl_free(&s);
    }
}

static void expect_same(const tschunk_encoder *a, const tschunk_encoder *b, const unsigned char *buf,
                        const unsigned char *before, size_t cap)
{
    cr_assert(memcmp(a, b, sizeof *a) == 0, "encoder state changed");
    cr_assert(memcmp(buf, before, cap) == 0, "buffer bytes changed");
}

/* Since 0.35.0 a chunk's first sample takes the fast path, which moves only pending and prev_ts: the
 * count, the first sample's fields and every check that reads them must see it all the same. */
Test(codec2, a_first_sample_taken_by_the_fast_path_counts_everywhere)
{
    const int64_t firsts[] = {1700000000000, 0, -5, INT64_MIN, INT64_MAX};
    const uint64_t first_bits = 0x7ff8dead0000beefu; /* a NaN payload */
    unsigned char buf[TSCHUNK_BOUND(4)], snap[TSCHUNK_BOUND(4)];
    for (size_t k = 0; k < sizeof firsts / sizeof firsts[0]; k++) {
        for (int restarted = 0; restarted < 2; restarted++) {
            tschunk_encoder enc;
            tschunk_encoder_options o = {TSC2, 2, 0, 0};
            cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, &o), 0);
            if (restarted) {
                cr_assert_eq(tschunk_append_bits(&enc, 7, 7), 0);
                cr_assert(!tschunk_is_error(tschunk_encoder_finish(&enc)));
                cr_assert_eq(tschunk_encoder_restart(&enc, buf, sizeof buf), 0);
            }
            cr_assert_eq(tschunk_append_bits(&enc, firsts[k], first_bits), 0);
            cr_assert_eq(tschunk_encoder_count(&enc), 1);
            tschunk_sketch *sketch;
            tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 64, 0, {0, 0, 0}, 0};
            cr_assert_eq(tschunk_sketch_create(&sketch, &so), 0);
            cr_assert_eq(tschunk_get_error_code(tschunk_encoder_set_summary(&enc, sketch)), TSCHUNK_ERROR_STAGE);
            tschunk_sketch_free(sketch);
            if (firsts[k] != INT64_MIN)
                cr_assert_eq(tschunk_get_error_code(tschunk_append_bits(&enc, firsts[k] - 1, 0)),
                             TSCHUNK_ERROR_OUT_OF_ORDER, "first %" PRId64, firsts[k]);
            int64_t ts[3];
            double v[3];
            size_t size = tschunk_encoder_snapshot(&enc, snap, sizeof snap);
            cr_assert_eq(tschunk_decode(snap, size, ts, v, 3), 1);
            cr_assert(ts[0] == firsts[k] && wl_bits(v[0]) == first_bits);
            cr_assert_eq(tschunk_append_bits(&enc, firsts[k], first_bits), 0); /* equal time, same value */
            cr_assert_eq(tschunk_get_error_code(tschunk_append_bits(&enc, firsts[k], 1)), TSCHUNK_ERROR_CHUNK_FULL);
            size = tschunk_encoder_finish(&enc);
            cr_assert(!tschunk_is_error(size));
            tschunk_chunk_info info;
            cr_assert_eq(tschunk_chunk_info_get(buf, size, &info), 0);
            cr_assert_eq(info.flags & TSCHUNK_FLAG_VAL_CONST, TSCHUNK_FLAG_VAL_CONST, "first %" PRId64, firsts[k]);
            cr_assert_eq(tschunk_decode(buf, size, ts, v, 3), 2);
            for (int i = 0; i < 2; i++) cr_assert(ts[i] == firsts[k] && wl_bits(v[i]) == first_bits);
        }
    }
}

/* Refused appends (out of order, buffer full, max_bytes) change nothing; the chunk keeps every accepted sample. */
Test(codec2, refused_append_changes_nothing)
{
    wl_series s;
    wl_synthetic(&s, WL_RANDOM, 4000, 99);
    for (int limit_kind = 0; limit_kind < 2; limit_kind++) {
        const size_t cap = limit_kind ? TSCHUNK_BOUND(4000) : 1500;
        unsigned char *buf = malloc(cap), *before = malloc(cap);
        memset(buf, 0x3c, cap);
        tschunk_encoder enc, snap;
        tschunk_encoder_options o = {TSC2, 0, limit_kind ? 1700 : 0, 0};
        cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &o), 0);
        size_t i = 0;
        for (; i < s.n; i++) {
            memcpy(&snap, &enc, sizeof enc);
            memcpy(before, buf, cap);
            if (i > 0) {
                cr_assert_eq(tschunk_get_error_code(tschunk_append_bits(&enc, s.ts[i - 1] - 1, 0)),
                             TSCHUNK_ERROR_OUT_OF_ORDER);
                expect_same(&enc, &snap, buf, before, cap);
            }
            size_t r = tschunk_append_bits(&enc, s.ts[i], s.bits[i]);
            if (tschunk_is_error(r)) {
                cr_assert_eq(tschunk_get_error_code(r),
                             limit_kind ? TSCHUNK_ERROR_CHUNK_FULL : TSCHUNK_ERROR_DST_TOO_SMALL);
                expect_same(&enc, &snap, buf, before, cap);
                break;
            }
        }
        cr_assert_lt(i, s.n, "a limit should have been reached");
        cr_assert_gt(i, 20);
        size_t size = tschunk_encoder_finish(&enc);
        cr_assert_leq(size, limit_kind ? 1700 : cap);
        check_chunk(buf, size, &s, 0, i);
        free(buf);
        free(before);
    }
    wl_free(&s);
}

/*
 * The fast path moves only pending and prev_ts (lib/codec2/format.h, tsc_codec2_lag): while count, safe_left
 * and prev_bits lag behind the open group, the count, snapshots, max_samples and refusals (one sample or a
 * bulk call, refused before anything is brought up to date) must be what an encoder fed in bulk gives.
 */
Test(codec2, lagging_state_reads_as_up_to_date)
{
    enum { N = 700, MAX = 600 };
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, N, 17);
    size_t cap = TSCHUNK_BOUND(N);
    /* zeroed, as the encoder: whole buffers and structs are compared, bytes never written included */
    unsigned char *buf = calloc(1, cap), *bulk_buf = calloc(1, cap), *snap = calloc(1, cap),
                  *bulk_snap = calloc(1, cap), *before_buf = calloc(1, cap);
    tschunk_encoder_options o = {TSC2, MAX, 0, 0};
    tschunk_encoder enc, before;
    memset(&enc, 0, sizeof enc);
    cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &o), 0);
    const double *values = (const double *)(const void *)s.bits;
    size_t lagged = 0;
    for (size_t i = 0; i < N; i++) {
        size_t r = tschunk_append(&enc, s.ts[i], values[i]);
        if (i >= MAX) {
            cr_assert_eq(tschunk_get_error_code(r), TSCHUNK_ERROR_CHUNK_FULL, "sample %zu", i);
            break;
        }
        cr_assert_eq(r, 0, "sample %zu: %s", i, tschunk_error_name(r));
        cr_assert_eq(tschunk_encoder_count(&enc), i + 1);
        lagged += tsc_codec2_lag(&enc) > 0;
        if (i % 37 != 5) continue;
        /* A refused sample and a refused bulk call change nothing, not even the lag. */
        before = enc;
        memcpy(before_buf, buf, cap);
        cr_assert_eq(tschunk_get_error_code(tschunk_append(&enc, s.ts[i] - 1, 0.0)), TSCHUNK_ERROR_OUT_OF_ORDER);
        int64_t back[2] = {s.ts[i] - 1, s.ts[i]};
        double two[2] = {1.0, 2.0};
        size_t taken = 9;
        cr_assert_eq(tschunk_get_error_code(tschunk_append_many(&enc, back, two, 2, &taken)),
                     TSCHUNK_ERROR_OUT_OF_ORDER);
        cr_assert_eq(taken, 0);
        expect_same(&enc, &before, buf, before_buf, cap);
        /* The snapshot is the one of the same samples appended in bulk. */
        tschunk_encoder bulk;
        cr_assert_eq(tschunk_encoder_init(&bulk, bulk_buf, cap, &o), 0);
        cr_assert_eq(tschunk_append_many(&bulk, s.ts, values, i + 1, NULL), 0);
        size_t a = tschunk_encoder_snapshot(&enc, snap, cap), b = tschunk_encoder_snapshot(&bulk, bulk_snap, cap);
        cr_assert(!tschunk_is_error(a) && a == b && memcmp(snap, bulk_snap, a) == 0, "snapshot after %zu", i + 1);
        check_chunk(snap, a, &s, 0, i + 1);
        expect_same(&enc, &before, buf, before_buf, cap);
    }
    cr_assert_gt(lagged, MAX / 2, "the fast path should have run");
    cr_assert_eq(tschunk_encoder_count(&enc), MAX);
    size_t size = tschunk_encoder_finish(&enc);
    cr_assert(!tschunk_is_error(size));
    cr_assert_eq(tschunk_encoder_count(&enc), MAX);
    check_chunk(buf, size, &s, 0, MAX);
    free(buf), free(bulk_buf), free(snap), free(bulk_snap), free(before_buf);
    wl_free(&s);
}

/* max_bytes is never exceeded, and the bound that enforces it leaves little unused. */
Test(codec2, max_bytes_is_never_exceeded)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 6000, 5);
    size_t cap = TSCHUNK_BOUND(6000);
    unsigned char *buf = malloc(cap);
    for (uint32_t max_bytes = 20; max_bytes < 3000; max_bytes += 97) {
        tschunk_encoder enc;
        tschunk_encoder_options lim = {TSC2, 0, max_bytes, 0};
        cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &lim), 0);
        size_t i = 0;
        while (i < s.n && tschunk_append_bits(&enc, s.ts[i], s.bits[i]) == 0) i++;
        size_t size = tschunk_encoder_finish(&enc);
        cr_assert_leq(size, max_bytes);
        /* The bound is exact for the timestamps and the hint reading of the values: little is left unused. */
        if (max_bytes > 100) cr_assert_geq(size + 24, max_bytes, "%u: stopped at %zu bytes", max_bytes, size);
        check_chunk(buf, size, &s, 0, i);
    }
    free(buf);
    wl_free(&s);
}

Test(codec2, bound_holds_the_worst_case)
{
    size_t n = 2000;
    wl_series s;
    wl_alloc(&s, n, "worst");
    uint64_t rng = 1;
    int64_t t = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)((i & 1) ? (UINT64_C(1) << 61) / 1000 : 0);
        s.ts[i] = t;
        s.bits[i] = wl_rng(&rng);
    }
    for (size_t len = 1; len <= n; len = len * 3 + 1) {
        unsigned char *chunk;
        size_t size = encode_range_codec(&s, 0, len, TSC2, &chunk);
        cr_assert_leq(size, TSCHUNK_BOUND(len));
        check_chunk(chunk, size, &s, 0, len);
        free(chunk);
    }
    wl_free(&s);
}

Test(codec2, seek_batch_and_next_interleave)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 1000, 11);
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 1000, TSC2, &chunk);
    tschunk_iter it;
    cr_assert_eq(tschunk_iter_init(&it, chunk, size), 0);
    check_random_seeks(&it, &s);
    /* Odd-sized batch reads mixed with single steps, one array at a time too. */
    cr_assert_eq(tschunk_iter_seek(&it, s.ts[10]), 1);
    int64_t ts[300];
    double v[300];
    size_t pos = 10, got, piece = 1;
    for (;;) {
        int64_t *tp = piece % 3 == 1 ? NULL : ts;
        double *vp = piece % 3 == 2 ? NULL : v;
        got = tschunk_iter_read(&it, tp, vp, piece);
        cr_assert(!tschunk_is_error(got));
        if (!got) break;
        if (tp) cr_assert(memcmp(ts, s.ts + pos, got * 8) == 0, "ts at %zu", pos);
        if (vp) cr_assert(memcmp(v, s.bits + pos, got * 8) == 0, "values at %zu", pos);
        pos += got;
        int64_t one_ts;
        uint64_t one;
        if (tschunk_iter_next_bits(&it, &one_ts, &one) == 1) {
            cr_assert_eq(one_ts, s.ts[pos]);
            cr_assert_eq(one, s.bits[pos]);
            pos++;
        }
        piece = piece * 2 + 1 > 300 ? 7 : piece * 2 + 1;
    }
    cr_assert_eq(pos, 1000);
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    cr_assert_eq(info.codec, TSC2);
    cr_assert_eq(info.first_ts, s.ts[0]);
    cr_assert_eq(info.first_bits, s.bits[0]);
    cr_assert_eq(info.first_delta, (uint64_t)(s.ts[1] - s.ts[0]));
    cr_assert_eq(info.header_bytes + info.ts_bytes + info.value_bytes, size);
    free(chunk);
    wl_free(&s);
}

/* Packing of widths 1..64 (AVX-512 where the CPU has it for 1..57, AVX2 for 1..16) against the scalar twin, every
 * field count up to two groups: the same bytes, and not one byte written past them. */
Test(codec2, simd_pack_matches_scalar)
{
    uint64_t rng = 41, fields[2 * TSC2_GROUP];
    unsigned char simd[2 * TSC2_GROUP * 8 + 64], scalar[sizeof simd];
    unsigned ran[TSC_SIMD_AVX512 + 1] = {0};
    for (unsigned width = 1; width <= 64; width++)
        for (size_t n = 0; n <= 2 * TSC2_GROUP; n++) {
            uint64_t mask = width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
            for (size_t i = 0; i < n; i++) fields[i] = wl_rng(&rng) & mask;
            if (n && n % 5 == 0) fields[n - 1] = mask; /* all ones up to the last bit */
            memset(scalar, 0xa5, sizeof scalar);
            tsc_codec2_pack_scalar(scalar, fields, n, width);
            for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++) {
                memset(simd, 0xa5, sizeof simd);
                if (!tsc_codec2_pack_simd(isa, simd, fields, n, width)) continue; /* not on this CPU, or this width */
                ran[isa]++;
                cr_assert(memcmp(simd, scalar, sizeof simd) == 0, "isa %u width %u n %zu", isa, width, n);
                cr_assert_eq(simd[tsc_codec2_packed_bytes(n, width)], 0xa5, "isa %u width %u n %zu: wrote past", isa,
                             width, n);
            }
        }
#ifdef TSC_HAVE_AVX2 /* built with the kernels: on a CPU with AVX2 the AVX2 one must have run */
    cr_assert(ran[TSC_SIMD_AVX2] || !__builtin_cpu_supports("avx2"));
#endif
}

/* The SIMD range check and deltas against their scalar twins, and packing against a bit-at-a-time reference. */
Test(codec2, simd_range_matches_scalar_and_packing_round_trips)
{
    uint64_t rng = 123;
    int64_t v[300];
    for (int round_no = 0; round_no < 2000; round_no++) {
        size_t n = 1 + wl_rng(&rng) % 300;
        unsigned shift = (unsigned)(wl_rng(&rng) % 64);
        for (size_t i = 0; i < n; i++) v[i] = (int64_t)wl_rng(&rng) >> shift;
        int64_t smin, smax, vmin, vmax;
        tsc_codec2_range_i64_scalar(v, n, &smin, &smax);
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_range_i64_simd(isa, v, n, &vmin, &vmax)) {
                cr_assert_eq(vmin, smin, "isa %u", isa);
                cr_assert_eq(vmax, smax, "isa %u", isa);
            }
        tsc_codec2_range_i64(v, n, &vmin, &vmax);
        cr_assert(vmin == smin && vmax == smax);
        /* Timestamp deltas: v as timestamps (any order, so deltas wrap past 2^63 too). */
        uint64_t d1[300], d2[300], dmin1, dmax1, dmin2, dmax2;
        int64_t prev = (int64_t)wl_rng(&rng);
        tsc_codec2_deltas_scalar(v, n, prev, d1, &dmin1, &dmax1);
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(d1[i], (uint64_t)v[i] - (uint64_t)(i ? v[i - 1] : prev));
            cr_assert(d1[i] >= dmin1 && d1[i] <= dmax1);
        }
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_deltas_simd(isa, v, n, prev, d2, &dmin2, &dmax2)) {
                cr_assert(memcmp(d1, d2, n * sizeof d1[0]) == 0, "deltas differ, n %zu, isa %u", n, isa);
                cr_assert(dmin1 == dmin2 && dmax1 == dmax2, "delta range differs, n %zu, isa %u", n, isa);
            }
    }
    uint64_t fields[128], back[128];
    unsigned char packed[128 * 8 + 16];
    for (unsigned width = 0; width <= 64; width++)
        for (size_t n = 1; n <= 128; n += 1 + n / 3) {
            uint64_t mask = width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
            for (size_t i = 0; i < n; i++) fields[i] = wl_rng(&rng) & mask;
            size_t bytes = tsc_codec2_packed_bytes(n, width);
            memset(packed, 0xee, sizeof packed);
            tsc_codec2_pack(packed, fields, n, width);
            unsigned char twin[128 * 8 + 16];
            memset(twin, 0xee, sizeof twin);
            tsc_codec2_pack_scalar(twin, fields, n, width);
            cr_assert(memcmp(twin, packed, sizeof twin) == 0, "pack against its scalar twin: width %u n %zu", width, n);
            for (size_t bit = 0; bit < n * width; bit++) {
                unsigned got = (packed[bit / 8] >> (bit % 8)) & 1;
                unsigned want = (unsigned)(fields[bit / width] >> (bit % width)) & 1;
                cr_assert_eq(got, want, "width %u bit %zu", width, bit);
            }
            for (size_t bit = n * width; bit < bytes * 8; bit++) cr_assert_eq((packed[bit / 8] >> (bit % 8)) & 1, 0);
            cr_assert_eq(packed[bytes], 0xee, "packing wrote past its bytes");
            unsigned char *exact = malloc(bytes ? bytes : 1); /* ASan sees over-reads */
            memcpy(exact, packed, bytes);
            tsc_codec2_unpack(exact, bytes, back, n, width);
            cr_assert(memcmp(back, fields, n * 8) == 0, "width %u n %zu", width, n);
            /* The SIMD run against its scalar twin, on fields whose loads stay inside the padded buffer. */
            if (width >= 1 && width <= 57) {
                uint64_t simd[128], scalar[128];
                tsc_codec2_unpack_run_scalar(packed, sizeof packed, scalar, n, width);
                for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
                    if (tsc_codec2_unpack_run_simd(isa, packed, sizeof packed, simd, n, width))
                        cr_assert(memcmp(simd, scalar, n * 8) == 0, "unpack_run isa %u width %u n %zu", isa, width, n);
                cr_assert(memcmp(scalar, fields, n * 8) == 0);
            }
            free(exact);
        }
}

/* Truncations and bit flips of codec-2 chunks: an error or samples, never a crash (ASan in make asan). */
/* A whole chunk through the iterator, as tschunk_decode must give it: the count, or the first error met. */
static size_t iterate_all(const unsigned char *chunk, size_t size, int64_t *ts, double *v, size_t capacity)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, chunk, size), n = 0;
    if (r) return r;
    while ((r = tschunk_iter_read(&it, ts + n, v + n, capacity - n)) > 0 && !tschunk_is_error(r)) n += r;
    return tschunk_is_error(r) ? r : n;
}

/* tschunk_decode, which decodes codec-2 chunks group after group without an iterator, against the iterator. */
static void expect_batch_is_iterator(const unsigned char *chunk, size_t size, int kind, size_t where)
{
    static int64_t ts[1024], it_ts[1024]; /* a flipped count may say more than 300 */
    static double v[1024], it_v[1024];
    size_t got = tschunk_decode(chunk, size, ts, v, 1024), want = iterate_all(chunk, size, it_ts, it_v, 1024);
    if (got == TSC_ERROR(DST_TOO_SMALL)) { /* a constant chunk whose count grew: the iterator fills the arrays */
        cr_assert(want == 1024 || tschunk_is_error(want), "kind %d at %zu: %zu", kind, where, want);
        return;
    }
    cr_assert_eq(got, want, "kind %d at %zu: batch %s, iterator %s", kind, where, tschunk_error_name(got),
                 tschunk_error_name(want));
    if (!tschunk_is_error(got))
        cr_assert(memcmp(ts, it_ts, got * 8) == 0 && memcmp(v, it_v, got * 8) == 0, "kind %d at %zu", kind, where);
}

Test(codec2, truncations_and_bit_flips_are_safe, .timeout = 120)
{
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 300, 77);
        unsigned char *chunk;
        size_t size = encode_range_codec(&s, 0, 300, TSC2, &chunk);
        for (size_t len = 0; len < size; len++) {
            unsigned char *copy = malloc(len ? len : 1);
            memcpy(copy, chunk, len);
            cr_assert(tschunk_is_error(tschunk_validate(copy, len)), "kind %d: truncated at %zu passed", kind, len);
            /* The iterator parses groups as it reaches them: reading must end in an error, never cleanly. */
            int64_t cut_ts[300];
            double cut_v[300];
            size_t got = tschunk_decode(copy, len, cut_ts, cut_v, 300);
            cr_assert(tschunk_is_error(got), "kind %d: truncated at %zu decoded %zu samples cleanly", kind, len, got);
            expect_batch_is_iterator(copy, len, kind, len);
            free(copy);
        }
        unsigned char *copy = malloc(size + 1);
        int64_t ts[300];
        double v[300];
        memcpy(copy, chunk, size);
        copy[size] = 0; /* one byte past the last group */
        cr_assert(tschunk_is_error(tschunk_validate(copy, size + 1)));
        cr_assert_eq(tschunk_decode(copy, size + 1, ts, v, 300), TSC_ERROR(CORRUPT), "kind %d: trailing byte", kind);
        for (size_t bit = 0; bit < size * 8; bit++) {
            memcpy(copy, chunk, size);
            copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
            size_t r = tschunk_decode(copy, size, ts, v, 300);
            if (!tschunk_is_error(r))
                for (size_t i = 1; i < r; i++) cr_assert_geq(ts[i], ts[i - 1]);
            expect_batch_is_iterator(copy, size, kind, bit);
        }
        free(copy);
        free(chunk);
        wl_free(&s);
    }
}

/* The decimal kernels' SIMD versions against their scalar twins, bit for bit, specials and huge k included. */
Test(codec2, simd_decimal_kernels_match_scalar)
{
    uint64_t rng = 321, bits[131];
    int64_t k1[131], d1[131], k2[131], d2[131];
    uint64_t kk[131], out1[131], out2[131];
    int have_simd = 0;
    for (int round_no = 0; round_no < 3000; round_no++) {
        size_t n = 1 + wl_rng(&rng) % 131;
        unsigned e = (unsigned)(wl_rng(&rng) % 16);
        int as_float = (int)(wl_rng(&rng) & 1);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = wl_rng(&rng);
            double v = (double)(int64_t)(r % 2000001 - 1000000) / (double)(1 + r % 1000);
            switch (r >> 60) {
            case 0: bits[i] = r; break;
            case 1: bits[i] = specials[r % (sizeof specials / sizeof specials[0])]; break;
            case 2: bits[i] = wl_bits(v) + (r >> 58 & 3); break;
            default: bits[i] = wl_bits(as_float ? (double)(float)v : v); break;
            }
            /* The SIMD conversion's domain, |k| < 2^51 (decode_decimal checks it per group). */
            kk[i] = r >> 56 == 0 ? (uint64_t)((int64_t)(r & ((UINT64_C(1) << 52) - 1)) - (INT64_C(1) << 51) + 1)
                                 : (uint64_t)(int64_t)(r % 4000001 - 2000000) * (r >> 40 & 0xffff);
        }
        tsc_codec2_read_block_scalar(bits, n, e, as_float, k1, d1);
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_read_block_simd(isa, bits, n, e, as_float, k2, d2)) {
                have_simd = 1;
                cr_assert(memcmp(k1, k2, n * 8) == 0, "read_block k, round %d, isa %u", round_no, isa);
                cr_assert(memcmp(d1, d2, n * 8) == 0, "read_block diff, round %d, isa %u", round_no, isa);
            }
        for (size_t i = 0; i < n; i++) {
            int64_t k, diff;
            int reading = tsc_codec2_read(bits[i], e, as_float, &k, &diff);
            cr_assert_eq(reading == TSC2_EXACT, d1[i] == 0);
            if (d1[i] == 0) cr_assert_eq(tsc_codec2_decimal_bits(k1[i], e, as_float), bits[i]);
        }
        /* Offsets from a base, and steps of a running sum, that keep every k in the domain. */
        uint64_t base = (uint64_t)(int64_t)(wl_rng(&rng) % 2000001) - 1000000, fields[131];
        for (size_t i = 0; i < n; i++) fields[i] = kk[i] - base;
        tsc_codec2_decimals_to_bits_scalar(base, fields, n, e, as_float, out1);
        if (tsc_codec2_decimals_to_bits_simd(base, fields, n, e, as_float, out2))
            cr_assert(memcmp(out1, out2, n * 8) == 0, "decimals_to_bits, round %d", round_no);
        uint64_t step = (uint64_t)(int64_t)(wl_rng(&rng) % 2001) - 1000;
        for (size_t i = 0; i < n; i++) fields[i] = kk[i] - (i ? kk[i - 1] : base) - step;
        tsc_codec2_decimal_sums_to_bits_scalar(base, step, fields, n, e, as_float, out1);
        for (size_t i = 0; i < n; i++) cr_assert_eq(out1[i], tsc_codec2_decimal_bits((int64_t)kk[i], e, as_float));
    }
    cr_log_info("SIMD kernels %s on this CPU", have_simd ? "compared" : "absent: scalar only");
}

/*
 * The SIMD conversion divides by 10^e without a division (simd.c: div_pow10).
 * Against the scalar division over magnitudes of every bit length and every
 * exponent; a plain multiplication by 10^-e must differ somewhere in the same
 * inputs, or this test would not see a kernel that skipped the correction.
 */
Test(codec2, decimal_division_without_divide_matches_division)
{
    enum { N = 128 };
    uint64_t rng = 99, k[N], want[N], got[N];
    size_t multiply_differs = 0, compared = 0;
    for (int round_no = 0; round_no < 24000; round_no++) {
        unsigned e = (unsigned)(round_no % 16), length = 1 + (unsigned)(round_no / 16 % 51);
        for (size_t i = 0; i < N; i++) {
            uint64_t r = wl_rng(&rng);
            int64_t magnitude = (int64_t)(r >> (64 - length)); /* below 2^length <= 2^51 */
            k[i] = (uint64_t)(r & 1 ? -magnitude : magnitude);
            double product = (double)magnitude * (1.0 / tsc_codec2_pow10[e]);
            multiply_differs += wl_bits(product) != tsc_codec2_decimal_bits(magnitude, e, 0);
        }
        tsc_codec2_decimals_to_bits_scalar(0, k, N, e, 0, want);
        if (!tsc_codec2_decimals_to_bits_simd(0, k, N, e, 0, got)) continue;
        compared += N;
        for (size_t i = 0; i < N; i++)
            cr_assert_eq(got[i], want[i], "k %" PRId64 " e %u: %016" PRIx64 " != %016" PRIx64, (int64_t)k[i], e, got[i],
                         want[i]);
    }
    cr_assert_gt(multiply_differs, 1000, "the inputs never catch a plain multiplication (%zu)", multiply_differs);
    cr_log_info("%zu divisions compared, %zu where a plain multiplication is wrong", compared, multiply_differs);
}

/* A chunk with one delta or one value keeps it in its header (flags) and its groups drop that block. */
Test(codec2, constant_timestamps_and_values_move_to_the_header)
{
    wl_series s;
    wl_synthetic(&s, WL_CONST_REGULAR, 1000, 1);
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 1000, TSC2, &chunk);
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    cr_assert_eq(info.flags, TSCHUNK_FLAG_TS_CONST | TSCHUNK_FLAG_VAL_CONST | TSCHUNK_FLAG_VAL_SHORT);
    cr_assert_eq(info.first_bits, wl_bits(1.0));
    cr_assert_lt(size, 16, "%zu bytes", size); /* 1.0 is 3 bytes: 6 low zero bytes, then f0 3f */
    check_chunk(chunk, size, &s, 0, 1000);
    free(chunk);
    /* Only the timestamps regular; then only the values constant. */
    for (size_t i = 0; i < s.n; i++) s.bits[i] = wl_bits((double)(i % 17) / 4);
    size = encode_range_codec(&s, 0, 1000, TSC2, &chunk);
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    cr_assert_eq(info.flags, TSCHUNK_FLAG_TS_CONST);
    check_chunk(chunk, size, &s, 0, 1000);
    free(chunk);
    wl_free(&s);
    wl_synthetic(&s, WL_CONST_JITTER, 1000, 1);
    size = encode_range_codec(&s, 0, 1000, TSC2, &chunk);
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    cr_assert_eq(info.flags, TSCHUNK_FLAG_VAL_CONST | TSCHUNK_FLAG_VAL_SHORT);
    check_chunk(chunk, size, &s, 0, 1000);
    free(chunk);
    wl_free(&s);
}

/*
 * The constant flags move a chunk's first timestamp and step (or its value) into the header and drop the blocks
 * they make redundant, when that makes the chunk smaller. A snapshot is the chunk without the flags. A regular
 * chunk's timestamp block holds its first timestamp and step too, and a constant's value block its value, so on
 * these chunks the flags always pay, some by one byte only (first timestamp 0, step 1: a header of 2 bytes more
 * against a block of 3): short chunks from first timestamps and steps of every size, each flagged and smaller.
 */
Test(codec2, constant_flags_shrink_every_regular_chunk)
{
    const int64_t firsts[] = {0, 1, 200, 1700000000, INT64_C(1700000000000), INT64_C(-4611686018427387904)};
    const uint64_t steps[] = {1, 15, 1000, 15000, UINT64_C(1) << 33};
    for (size_t f = 0; f < sizeof firsts / sizeof firsts[0]; f++)
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++)
            for (uint32_t n = 2; n <= 140; n += n < 24 ? 1 : 13) {
                size_t cap = TSCHUNK_BOUND(n);
                unsigned char *buf = malloc(cap), *snap = malloc(cap);
                tschunk_encoder enc;
                tschunk_encoder_options o = {TSC2, 0, 0, 0};
                cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &o), 0);
                int64_t want_ts[140], ts[140];
                double want_v[140], v[140];
                for (uint32_t i = 0; i < n; i++) { /* regular steps; the values constant on every other n */
                    want_ts[i] = (int64_t)((uint64_t)firsts[f] + i * steps[k]);
                    want_v[i] = n % 2 ? (double)(i % 7) * 0.25 : 42.0;
                    cr_assert_eq(tschunk_append(&enc, want_ts[i], want_v[i]), 0);
                }
                size_t unflagged = tschunk_encoder_snapshot(&enc, snap, cap), size = tschunk_encoder_finish(&enc);
                cr_assert(!tschunk_is_error(unflagged) && !tschunk_is_error(size));
                tschunk_chunk_info info;
                cr_assert_eq(tschunk_chunk_info_get(buf, size, &info), 0);
                unsigned expected = TSCHUNK_FLAG_TS_CONST | (n % 2 ? 0u : TSCHUNK_FLAG_VAL_CONST);
                cr_assert(size < unflagged && (info.flags & expected) == expected,
                          "first %" PRId64 " step %" PRIu64 " n %u: flags %#x, %zu bytes against %zu without",
                          firsts[f], steps[k], n, info.flags, size, unflagged);
                cr_assert_eq(tschunk_decode(buf, size, ts, v, n), n);
                for (uint32_t i = 0; i < n; i++) cr_assert(ts[i] == want_ts[i] && v[i] == want_v[i]);
                free(buf);
                free(snap);
            }
}

Test(codec2, header_flags_are_checked)
{
    /* TS_CONST whose last timestamp would pass INT64_MAX: 3 samples from INT64_MAX - 1, delta 1. */
    unsigned char wrap[] = {0xc1, 0x32, 0x03, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01,
                            0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(wrap, sizeof wrap)), TSCHUNK_ERROR_CORRUPT);
    wrap[13] = 0x00; /* delta 0: fine, every sample at INT64_MAX - 1 */
    cr_assert_eq(tschunk_validate(wrap, sizeof wrap), 0);
    int64_t ts[3];
    double v[3];
    cr_assert_eq(tschunk_decode(wrap, sizeof wrap, ts, v, 3), 3);
    cr_assert(ts[0] == INT64_MAX - 1 && ts[2] == INT64_MAX - 1 && v[1] == 1.0);
    /* Flags on a one-sample chunk, and an unknown flag. */
    const unsigned char one[] = {0xc1, 0x22, 0x01, 0, 0, 0, 0, 0, 0, 0, 0};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(one, sizeof one)), TSCHUNK_ERROR_CORRUPT);
    /* Codec 2 knows all four flag bits (none on an empty chunk); codec 1 only the low two. */
    const unsigned char scaled_empty[] = {0xc1, 0x82, 0x00}, codec1_short[] = {0xc1, 0x41, 0x00};
    const unsigned char codec1_scaled[] = {0xc1, 0x81, 0x00};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(scaled_empty, sizeof scaled_empty)), TSCHUNK_ERROR_CORRUPT);
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(codec1_short, sizeof codec1_short)),
                 TSCHUNK_ERROR_RESERVED_BITS);
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(codec1_scaled, sizeof codec1_scaled)),
                 TSCHUNK_ERROR_RESERVED_BITS);
}

/*
 * A constant value is written short (VAL_SHORT) when the uvarint of its bits reversed takes under 8 bytes
 * (its low 15 bits zero): every such value round-trips, the header holds 1-7 bytes for it (8 otherwise), and
 * the short form is checked: a longer uvarint (8 bytes or more, or a trailing zero group), VAL_SHORT without
 * VAL_CONST and truncation are errors.
 */
Test(codec2, constant_values_are_written_short)
{
    const uint64_t values[] = {0, UINT64_C(0x3ff0000000000000), UINT64_C(0x8000000000000000), UINT64_C(0x7ff8000000000001),
                               UINT64_C(0x4059000000000000), UINT64_C(0x412e848000000000), UINT64_C(0x3fb999999999999a),
                               UINT64_C(0x0000000000008000), UINT64_C(0x0000000000004000), UINT64_C(0xfff0000000000000),
                               UINT64_C(0x7ff0000000000000), UINT64_C(0x0000000000000001)};
    uint64_t rng = 41;
    for (size_t v = 0; v < sizeof values / sizeof values[0] + 200; v++) {
        uint64_t bits = v < sizeof values / sizeof values[0] ? values[v] : wl_rng(&rng) << (wl_rng(&rng) % 64);
        unsigned significant = bits ? 64 - (unsigned)__builtin_ctzll(bits) : 0; /* bits 63 down to the last 1 */
        size_t varint = significant ? (significant + 6) / 7 : 1, value_bytes = varint < 8 ? varint : 8;
        int64_t ts[300];
        uint64_t vb[300];
        for (size_t i = 0; i < 300; i++) ts[i] = 1000 + 15 * (int64_t)i, vb[i] = bits;
        unsigned char chunk[8192]; /* the open group is kept raw, 16 bytes a sample */
        tschunk_encoder enc;
        tschunk_encoder_options o = {TSCHUNK_CODEC_TSC2, 0, 0, 0};
        cr_assert_eq(tschunk_encoder_init(&enc, chunk, sizeof chunk, &o), 0);
        cr_assert_eq(tschunk_append_many(&enc, ts, (const double *)(const void *)vb, 300, NULL), 0);
        size_t size = tschunk_encoder_finish(&enc);
        tschunk_chunk_info info;
        cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
        unsigned want_flags = TSCHUNK_FLAG_TS_CONST | TSCHUNK_FLAG_VAL_CONST | (varint < 8 ? TSCHUNK_FLAG_VAL_SHORT : 0);
        cr_assert_eq(info.flags, want_flags, "value %016" PRIx64, bits);
        cr_assert_eq(info.first_bits, bits);
        cr_assert_eq(size, 7 + value_bytes, "value %016" PRIx64 ": %zu bytes", bits, size); /* c1, flags, count (2),
                                                                                              ts0 (2), delta (1) */
        int64_t got_ts[300];
        uint64_t got[300];
        cr_assert_eq(tschunk_decode(chunk, size, got_ts, (double *)(void *)got, 300), 300);
        cr_assert(memcmp(got, vb, sizeof got) == 0 && memcmp(got_ts, ts, sizeof ts) == 0);
        if (varint >= 8) continue;
        for (size_t cut = 0; cut < size; cut++)
            cr_assert(tschunk_is_error(tschunk_validate(chunk, cut)), "cut at %zu", cut);
        unsigned char bad[32];
        memcpy(bad, chunk, size);
        bad[1] = 0x52; /* VAL_SHORT and TS_CONST without VAL_CONST */
        cr_assert_eq(tschunk_get_error_code(tschunk_validate(bad, size)), TSCHUNK_ERROR_CORRUPT);
        /* The same uvarint padded with continuation bytes and a zero group, up to 10 bytes: never valid. */
        for (size_t longer = varint + 1; longer <= 10; longer++) {
            memcpy(bad, chunk, 7);
            for (size_t b = 0; b < longer; b++) bad[7 + b] = (uint8_t)(b < varint ? chunk[7 + b] | 0x80 : 0x80);
            bad[7 + longer - 1] = 0;
            cr_assert(tschunk_is_error(tschunk_validate(bad, 7 + longer)), "value %016" PRIx64 " in %zu bytes", bits,
                      longer);
        }
    }
    /* A canonical uvarint of 8 bytes (a value the encoder writes in full) is refused in the short form. */
    const unsigned char eight[] = {0xc1, 0x72, 0x02, 0x00, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(eight, sizeof eight)), TSCHUNK_ERROR_CORRUPT);
    const unsigned char seven[] = {0xc1, 0x72, 0x02, 0x00, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    cr_assert_eq(tschunk_validate(seven, sizeof seven), 0);
}

/* Count the groups of each value form in a chunk (modes 0x00 RAW, 0x04 CONST, 0x10 SPLIT; kinds 1-3). */
static void count_forms(const unsigned char *chunk, size_t size, size_t forms[8])
{
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    size_t at = info.header_bytes;
    for (uint32_t done = 0; done < info.count;) {
        size_t n = info.count - done < 128 ? info.count - done : 128;
        tsc_codec2_group g;
        cr_assert_eq(tsc_codec2_parse_group(chunk + at, size - at, n, info.flags, &g), 0);
        unsigned kind = g.mode & 3;
        forms[kind == 0 ? (g.mode == TSC2_SPLIT ? 4 : g.mode == TSC2_RAW ? 5 : 6) : kind]++;
        at += g.size;
        done += (uint32_t)n;
    }
}

/*
 * A SPLIT group that reuses the form plans from the last SPLIT group's dictionary (lib/codec2/encoder.c,
 * plan_split_from). Groups of real doubles whose left parts (sign and exponent: 1023 + 4k) keep the set but
 * reverse its order, lose an entry, bring back a rare one, change to many new ones (a plan from scratch),
 * or tie: each group's bytes are those of the plan that sorts the group, each stays SPLIT, and the chunk
 * decodes exactly.
 */
Test(codec2, a_reused_split_dictionary_follows_the_group)
{
    enum { GROUPS = 8, KINDS = 12 };
    static const unsigned counts[GROUPS][KINDS] = {
        {40, 30, 20, 15, 10, 6, 4, 3},               /* searched: the dictionary */
        {3, 4, 6, 10, 15, 20, 30, 40},               /* reversed: every code moves */
        {40, 30, 20, 15, 10, 6, 7},                  /* one entry gone: seven left */
        {40, 30, 20, 15, 10, 6, 4, 3},               /* and back, outside those seven */
        {20, 20, 20, 10, 10, 6, 4, 3, 10, 10, 10, 5}, /* a third outside: planned from scratch */
        {40, 30, 20, 15, 10, 6, 4, 3},               /* and again (13 outside) */
        {16, 16, 16, 16, 16, 16, 16, 16},            /* equal counts: the smaller left part first */
        {38, 30, 20, 15, 10, 6, 4, 3, 2},            /* two outside, rarer than every entry */
    };
    wl_series s;
    wl_alloc(&s, GROUPS * TSC2_GROUP, "split-dictionaries");
    uint64_t rng = 53;
    for (size_t g = 0; g < GROUPS; g++) {
        uint64_t *group = s.bits + g * TSC2_GROUP;
        size_t at = 0;
        for (unsigned k = 0; k < KINDS; k++)
            for (unsigned c = 0; c < counts[g][k]; c++)
                group[at++] = (uint64_t)(1023 + 4 * k) << 52 | (wl_rng(&rng) & ((UINT64_C(1) << 52) - 1));
        cr_assert_eq(at, TSC2_GROUP, "group %zu has %zu values", g, at);
        for (size_t i = TSC2_GROUP - 1; i > 0; i--) { /* shuffled */
            size_t j = wl_rng(&rng) % (i + 1);
            uint64_t t = group[i];
            group[i] = group[j], group[j] = t;
        }
    }
    for (size_t i = 0; i < s.n; i++) s.ts[i] = (int64_t)i * 1000;
    tschunk_split_dict dict = {{0}, 0};
    tsc_codec2_choice first = {{0, 0, 0}, 0, TSC2_TS_SEARCH, 0, 0, TSC2_FORMS, 0, 0, 0, &dict, 0, 0};
    uint8_t from_dict[TSC2_GROUP * 24 + 64], sorted[TSC2_GROUP * 24 + 64];
    tsc_codec2_encode_group(from_dict, s.ts, s.bits, TSC2_GROUP, 0, 0, TSC2_EFFORT_FULL, &first);
    cr_assert_eq(first.value_form, TSC2_FORM_SPLIT);
    for (size_t g = 1; g < GROUPS; g++) {
        size_t at = g * TSC2_GROUP;
        tsc_codec2_choice a = {{0, 0, 0}, TSC2_FORM_SPLIT, TSC2_TS_SEARCH, 0, first.split_left, TSC2_FORMS, 0, 0, 0,
                               &dict, 0, 0};
        tsc_codec2_choice b = a;
        b.split_dict = NULL;
        size_t got = tsc_codec2_encode_group(from_dict, s.ts + at, s.bits + at, TSC2_GROUP, s.ts[at - 1],
                                             s.bits[at - 1], TSC2_EFFORT_REUSE, &a);
        size_t want = tsc_codec2_encode_group(sorted, s.ts + at, s.bits + at, TSC2_GROUP, s.ts[at - 1],
                                              s.bits[at - 1], TSC2_EFFORT_REUSE, &b);
        cr_assert(got == want && !memcmp(from_dict, sorted, want), "group %zu: %zu bytes against %zu", g, got, want);
    }
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, s.n, TSC2, &chunk);
    check_chunk(chunk, size, &s, 0, s.n);
    size_t forms[8] = {0};
    count_forms(chunk, size, forms);
    cr_assert_eq(forms[4], GROUPS, "SPLIT groups: %zu of %d", forms[4], GROUPS);
    free(chunk);
    wl_free(&s);
}

/* Real doubles go to SPLIT groups, repeat-heavy decimals to MASKED groups; both round-trip. */
Test(codec2, split_and_masked_forms_are_chosen_and_round_trip)
{
    wl_series s;
    wl_alloc(&s, 2048, "forms");
    uint64_t rng = 99;
    for (size_t i = 0; i < 1024; i++) {
        s.ts[i] = (int64_t)i;
        s.bits[i] = wl_bits(wl_uniform(&rng) * 2 - 1); /* 53 random bits, a few exponents */
    }
    double level = 20;
    for (size_t i = 1024; i < 2048; i++) {
        s.ts[i] = (int64_t)i;
        if (wl_rng(&rng) % 3 == 0) level = (double)(int64_t)(wl_rng(&rng) % 40000) / 1000;
        s.bits[i] = wl_bits(level);
    }
    size_t forms[8] = {0};
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 1024, TSC2, &chunk);
    check_chunk(chunk, size, &s, 0, 1024);
    count_forms(chunk, size, forms);
    cr_assert_geq(forms[4], 6, "SPLIT groups: %zu of 8", forms[4]);
    cr_assert_lt(size * 8 / 1024, 60, "%zu bits a value", size * 8 / 1024);
    free(chunk);
    memset(forms, 0, sizeof forms);
    size = encode_range_codec(&s, 1024, 1024, TSC2, &chunk);
    check_chunk(chunk, size, &s, 1024, 1024);
    count_forms(chunk, size, forms);
    cr_assert_geq(forms[TSC2_MASKED], 6, "MASKED groups: %zu of 8", forms[TSC2_MASKED]);
    free(chunk);
    wl_free(&s);
}

/* The head chunk: a snapshot at any point decodes to exactly the samples appended so far (both codecs); one into a
 * buffer too small writes nothing. */
Test(codec2, snapshots_read_the_head_chunk_while_appending)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 700, 3);
    const uint32_t codecs[2] = {TSC2, TSCHUNK_CODEC_GORILLA};
    for (int c = 0; c < 2; c++) {
        size_t cap = TSCHUNK_BOUND(700);
        unsigned char *buf = malloc(cap), *head = malloc(cap);
        tschunk_encoder enc, before;
        tschunk_encoder_options o = {codecs[c], 0, 0, 0};
        cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &o), 0);
        for (size_t i = 0; i <= s.n; i++) {
            if (i % 37 == 0 || i == 128 || i == 129 || i == s.n) {
                memcpy(&before, &enc, sizeof enc);
                size_t size = tschunk_encoder_snapshot(&enc, head, TSCHUNK_BOUND(i));
                cr_assert(!tschunk_is_error(size), "codec %u at %zu: %s", codecs[c], i, tschunk_error_name(size));
                cr_assert(memcmp(&before, &enc, sizeof enc) == 0, "the snapshot changed the encoder");
                if (i) check_chunk(head, size, &s, 0, i);
                else cr_assert_eq(tschunk_validate(head, size), 0);
                /* a buffer one byte short is refused before a byte of it is written */
                memset(head, 0xa5, cap);
                size_t refused = tschunk_encoder_snapshot(&enc, head, size - 1);
                cr_assert_eq(tschunk_get_error_code(refused), TSCHUNK_ERROR_DST_TOO_SMALL, "codec %u at %zu: %s",
                             codecs[c], i, tschunk_error_name(refused));
                for (size_t j = 0; j < cap; j++)
                    cr_assert_eq(head[j], 0xa5, "codec %u at %zu: byte %zu written", codecs[c], i, j);
            }
            if (i < s.n) cr_assert_eq(tschunk_append_bits(&enc, s.ts[i], s.bits[i]), 0);
        }
        size_t size = tschunk_encoder_finish(&enc);
        check_chunk(buf, size, &s, 0, s.n);
        cr_assert_eq(tschunk_get_error_code(tschunk_encoder_snapshot(&enc, head, cap)), TSCHUNK_ERROR_STAGE);
        free(buf);
        free(head);
    }
    wl_free(&s);
}

/* A whole series in one codec-2 chunk, decoded back and checked, with its header info. */
static size_t encode_whole(const wl_series *s, unsigned char **chunk, tschunk_chunk_info *info)
{
    size_t size = encode_range_codec(s, 0, s->n, TSC2, chunk);
    check_chunk(*chunk, size, s, 0, s->n);
    cr_assert_eq(tschunk_chunk_info_get(*chunk, size, info), 0);
    return size;
}

/* Bits a timestamp (of_values 0) or a value of s encoded whole (and checked by encode_whole). */
static double encoded_bits(const wl_series *s, int of_values)
{
    unsigned char *chunk;
    tschunk_chunk_info info;
    encode_whole(s, &chunk, &info);
    free(chunk);
    return (double)(of_values ? info.value_bytes : info.ts_bytes) * 8 / (double)s->n;
}

/* Gaps in a regular series become patches: a few bytes each, not a wider field for every timestamp. */
Test(codec2, timestamp_gaps_are_patched)
{
    wl_series s;
    wl_alloc(&s, 1024, "gaps");
    uint64_t rng = 77;
    int64_t t = 1700000000000;
    for (size_t i = 0; i < s.n; i++) {
        t += 60000 + (i % 97 == 50 ? (int64_t)(wl_rng(&rng) % 100) * 3600000 : 0);
        s.ts[i] = t;
        s.bits[i] = wl_bits((double)(i % 7));
    }
    /* 8 groups x (lead, form, min delta: ~6 bytes) + 10 patches of ~6 bytes: under 1 bit a timestamp (29 unpatched). */
    double bits = encoded_bits(&s, 0);
    cr_assert_lt(bits, 1.0, "%.2f bits a timestamp", bits);
    wl_free(&s);
}

/*
 * A step or two far below the rest of a group (a retried scrape, a repeated timestamp) would make the smallest step
 * the fields' base and widen all of them to the scrape interval; the encoder takes the base from the second or third
 * lowest step instead, and the one or two below it wrap (fields of 2^64 - x, patched); a grid's offsets likewise.
 * Groups: jitter alone (a grid), a retry at the first field (the grid reused), jitter, a repeated timestamp in the
 * middle, a retry at the last field, two low steps, a retry, and three low steps (left as they were); all
 * round-trip.
 */
Test(codec2, steps_far_below_the_rest_wrap_instead_of_widening)
{
    wl_series s;
    wl_alloc(&s, 1024, "retries");
    uint64_t rng = 5;
    int64_t t = 1700000000000;
    static const size_t low_at[8][3] = {{0}, {1}, {0}, {64}, {127}, {2, 90}, {100}, {30, 90, 120}};
    static const int64_t low_step[8][3] = {{0}, {100}, {0}, {0}, {100}, {100, 250}, {100}, {100, 250, 0}};
    for (size_t i = 0; i < s.n; i++) {
        size_t group = i / 128, at = i % 128;
        s.ts[i] = t + (int64_t)i * 15000 + (int64_t)(wl_rng(&rng) % 11) - 5; /* a schedule, +-5 ms */
        for (size_t k = 0; k < 3; k++)
            if (low_at[group][k] && at == low_at[group][k]) s.ts[i] = s.ts[i - 1] + low_step[group][k];
        s.bits[i] = wl_bits((double)(i % 7));
    }
    /* 14 bits a field from the low steps' base; from the others' base 4 to 7, and a patch a low step (6.6; 6.9
     * with DELTA's raise alone, 11.9 without either). */
    double bits = encoded_bits(&s, 0);
    cr_assert_lt(bits, 6.75, "%.2f bits a timestamp", bits);
    wl_free(&s);
}

/*
 * A counter's reset is a step far below the others: the DELTA fields take their base from the second or third lowest
 * step, and the reset wraps below it (a patch of 64 - width high bits) instead of every field widening to the
 * counter's size. Resets at a group's first, middle and last step, two in a group, and three (left as they were);
 * all round-trip.
 */
Test(codec2, counter_resets_wrap_instead_of_widening)
{
    wl_series s;
    wl_alloc(&s, 1024, "resets");
    uint64_t rng = 9;
    static const size_t reset_at[8][3] = {{1}, {64}, {127}, {10, 100}, {50}, {0}, {5, 60, 120}, {90}};
    int64_t count = 1000000;
    for (size_t i = 0; i < s.n; i++) {
        size_t group = i / 128, at = i % 128;
        count += 50 + (int64_t)(wl_rng(&rng) % 101);
        for (size_t k = 0; k < 3; k++)
            if (reset_at[group][k] && at == reset_at[group][k]) count = (int64_t)(wl_rng(&rng) % 100);
        s.ts[i] = 1700000000000 + (int64_t)i * 15000;
        s.bits[i] = wl_bits((double)count);
    }
    /* 21 bits a field from the resets' base; from the others' about 7, and a patch of about 8 bytes a reset (8.8;
     * 9.2 with the second lowest step only, 13.7 without either). */
    double bits = encoded_bits(&s, 1);
    cr_assert_lt(bits, 9.0, "%.2f bits a value", bits);
    wl_free(&s);
}

/*
 * TS_SCALED: when the first group's steps share a divisor (seconds or minutes in milliseconds), every timestamp
 * block carries a scale and stores its fields divided by it. Timestamps of every kind of divisor round-trip
 * (powers of two, odd, huge, a divisor that later groups lose, jitter in whole seconds on a grid, equal
 * timestamps, the int64 ends); irregular minutes cost a few bits a timestamp; the flag is set exactly when the
 * first group's steps share a divisor, never under max_bytes nor with TS_CONST; truncation is an error.
 */
Test(codec2, scaled_timestamps_round_trip_and_shrink)
{
    const int64_t divisors[] = {2, 1000, 60000, 3, 7919, INT64_C(1) << 40, INT64_C(3) << 41};
    uint64_t rng = 43;
    int scaled_chunks = 0;
    wl_series s;
    wl_alloc(&s, 1000, "scaled");
    for (int round_no = 0; round_no < 700; round_no++) {
        int64_t d = divisors[round_no % 7];
        int shape = round_no / 7 % 5, lose_it = round_no % 3 == 0;
        uint64_t span = d >= INT64_C(1) << 40 ? 3 : 1000;
        int64_t t = shape == 4 ? INT64_MIN + d : (int64_t)(wl_rng(&rng) >> 12);
        for (size_t i = 0; i < s.n; i++) {
            int64_t step = shape == 0 ? d * (int64_t)(1 + wl_rng(&rng) % span)   /* irregular multiples */
                           : shape == 1 ? d * (int64_t)(wl_rng(&rng) % 3)         /* equal timestamps too */
                           : shape == 2 ? d * (int64_t)(wl_rng(&rng) % 50 == 0 ? 10 : 1) /* gaps */
                                        : d * (int64_t)(1 + wl_rng(&rng) % 2);
            if (shape == 3 && i) step = d * 60 * (int64_t)i + d * (int64_t)(wl_rng(&rng) % 5) - (t - s.ts[0]);
            if (shape == 3 && i == 0) step = 0;
            if (shape == 3 && step < 0) step = 0;                                  /* a grid, jittered in d */
            if (lose_it && i >= 300 && i % 7 == 0) step += 1;                      /* later groups: no divisor */
            if (shape == 4 && (uint64_t)t + (uint64_t)step > (uint64_t)INT64_MAX - (uint64_t)d) step = 0;
            t += step;
            s.ts[i] = t;
            s.bits[i] = wl_bits((double)(i % 13));
        }
        unsigned char *chunk;
        tschunk_chunk_info info;
        size_t size = encode_whole(&s, &chunk, &info);
        if (info.flags & TSCHUNK_FLAG_TS_SCALED) {
            cr_assert(!(info.flags & TSCHUNK_FLAG_TS_CONST) && tsc_codec2_scaled_chunk(s.ts, 128), "round %d", round_no);
            scaled_chunks++;
        }
        if (shape == 0 && d == 60000 && !lose_it) { /* 1..1000 minutes: 10 bits, not 36 */
            cr_assert(info.flags & TSCHUNK_FLAG_TS_SCALED, "round %d", round_no);
            cr_assert_lt((double)info.ts_bytes * 8 / (double)s.n, 11.0, "round %d: %zu bytes", round_no, info.ts_bytes);
        }
        if (round_no % 50 == 0)
            for (size_t cut = 0; cut < size; cut++) cr_assert(tschunk_is_error(tschunk_validate(chunk, cut)));
        free(chunk);
    }
    cr_assert_gt(scaled_chunks, 300, "%d of 700", scaled_chunks);
    /* A chunk whose first group shares a divisor but that no scale pays for drops its scale bytes at finish:
     * regular seconds with one gap, which a patch stores better than a scaled field. */
    for (size_t i = 0; i < s.n; i++) s.ts[i] = 1000 * (int64_t)i + (i >= 500 ? 61000 : 0);
    unsigned char *chunk;
    tschunk_chunk_info gap_info;
    encode_whole(&s, &chunk, &gap_info);
    cr_assert_eq(gap_info.flags & TSCHUNK_FLAG_TS_SCALED, 0);
    cr_assert_lt(gap_info.ts_bytes, 44, "%zu bytes", gap_info.ts_bytes); /* 38: 8 blocks and a patch, no scales */
    free(chunk);
    /* Under max_bytes, never scaled. */
    for (size_t i = 0; i < s.n; i++) s.ts[i] = (i ? s.ts[i - 1] : 0) + 60000 * (int64_t)(1 + i * i % 17);
    unsigned char buf[32768];
    tschunk_encoder enc;
    tschunk_encoder_options o = {TSC2, 0, sizeof buf - 64, 0};
    cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, &o), 0);
    cr_assert_eq(tschunk_append_many(&enc, s.ts, (const double *)(const void *)s.bits, s.n, NULL), 0);
    size_t size = tschunk_encoder_finish(&enc);
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(buf, size, &info), 0);
    cr_assert_eq(info.flags & TSCHUNK_FLAG_TS_SCALED, 0);
    check_chunk(buf, size, &s, 0, s.n);
    wl_free(&s);
    /* A scale of 0, and TS_SCALED with TS_CONST, are CORRUPT: 2 samples, lead 0, width 0, scale 0, min 1. */
    const unsigned char zero_scale[] = {0xc1, 0x82, 0x02, 0x00, 0x00, 0x00, 0x01, 0x0c};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(zero_scale, sizeof zero_scale)), TSCHUNK_ERROR_CORRUPT);
    const unsigned char one_scale[] = {0xc1, 0x82, 0x02, 0x00, 0x00, 0x01, 0x01, 0x0c};
    cr_assert_eq(tschunk_validate(one_scale, sizeof one_scale), 0);
    const unsigned char with_const[] = {0xc1, 0x92, 0x02, 0x00, 0x01, 0x0c};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(with_const, sizeof with_const)), TSCHUNK_ERROR_CORRUPT);
}

/* A restart after a TS_SCALED chunk starts scaled; a chunk of regular 1 ms steps after it (several groups, one at
 * a time) drops its unit scales at finish and then, TS_CONST, its timestamp blocks: the groups' sizes the
 * encoder kept (0.23.0) must follow both. */
Test(codec2, restart_after_scaled_chunk_drops_unit_scales_and_constant_blocks)
{
    enum { HALF = 600 };
    wl_series s;
    wl_alloc(&s, 2 * HALF, "restart");
    int64_t t = 1700000000000;
    for (size_t i = 0; i < s.n; i++) {
        t += i < HALF ? 60000 * (int64_t)(1 + i * i % 17) : 1; /* minutes with gaps, then regular milliseconds */
        s.ts[i] = t;
        s.bits[i] = wl_bits(20.0 + (double)(i % 13) * 0.25);
    }
    static unsigned char buf[2][TSCHUNK_BOUND(HALF)];
    tschunk_encoder enc;
    tschunk_encoder_options o = {TSC2, 0, 0, 0};
    cr_assert_eq(tschunk_encoder_init(&enc, buf[0], sizeof buf[0], &o), 0);
    cr_assert_eq(tschunk_append_many(&enc, s.ts, (const double *)(const void *)s.bits, HALF, NULL), 0);
    size_t first = tschunk_encoder_finish(&enc);
    cr_assert_eq(tschunk_encoder_restart(&enc, buf[1], sizeof buf[1]), 0);
    for (size_t i = HALF; i < s.n; i++) cr_assert_eq(tschunk_append_bits(&enc, s.ts[i], s.bits[i]), 0);
    size_t second = tschunk_encoder_finish(&enc);
    tschunk_chunk_info info[2];
    cr_assert_eq(tschunk_chunk_info_get(buf[0], first, &info[0]), 0);
    cr_assert_eq(tschunk_chunk_info_get(buf[1], second, &info[1]), 0);
    cr_assert(info[0].flags & TSCHUNK_FLAG_TS_SCALED);
    cr_assert(info[1].flags & TSCHUNK_FLAG_TS_CONST);
    check_chunk(buf[0], first, &s, 0, HALF);
    check_chunk(buf[1], second, &s, HALF, HALF);
    wl_free(&s);
}

/* float32 data printed to 16 digits and read back (as ETT's CSV is) sits a few ulps off float32: still decimals. */
Test(codec2, printed_float32_values_read_as_float32_decimals)
{
    wl_series s;
    wl_alloc(&s, 4096, "printed float32");
    uint64_t rng = 17;
    char text[40];
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 3600000;
        snprintf(text, sizeof text, "%.16g", (double)(float)((double)(int64_t)(wl_rng(&rng) % 40000) / 1000.0));
        s.bits[i] = wl_bits(strtod(text, NULL));
    }
    size_t bytes = roundtrip_series_codec(&s, 1024, TSC2);
    /* 16 bits of k and a 1-2 byte correction for the values that are not float32-exact; XOR spends ~40. */
    cr_assert_lt(bytes * 8 / s.n, 30, "%zu bits per sample", bytes * 8 / s.n);
    wl_free(&s);
}

/* restart: each chunk stands alone and decodes exactly; options, learning and an attached summary carry over. */
Test(codec2, restart_starts_the_next_chunk_of_a_series)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 6000, 99);
    uint64_t rng = 99; /* the last third real doubles: SPLIT groups, whose dictionary carries over too */
    for (size_t i = 4000; i < s.n; i++) s.bits[i] = wl_bits(wl_uniform(&rng) * 1000.0);
    enum { PER = 120 };
    unsigned char *chunk = malloc(TSCHUNK_BOUND(PER));
    tschunk_sketch *sketch;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 4096, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sketch, &so), 0);
    tschunk_encoder enc;
    memset(&enc, 0, sizeof enc);
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_restart(&enc, chunk, TSCHUNK_BOUND(PER))), TSCHUNK_ERROR_STAGE);
    tschunk_encoder_options opts = {TSC2, PER, 0, 0};
    cr_assert_eq(tschunk_encoder_init(&enc, chunk, TSCHUNK_BOUND(PER), &opts), 0);
    cr_assert_eq(tschunk_encoder_set_summary(&enc, sketch), 0);
    size_t restarted = 0, fresh = 0;
    for (size_t start = 0; start < s.n; start += PER) {
        if (start) {
            tschunk_encoder before = enc;
            cr_assert_eq(tschunk_get_error_code(tschunk_encoder_restart(&enc, chunk, 8)), TSCHUNK_ERROR_DST_TOO_SMALL);
            cr_assert(memcmp(&before, &enc, sizeof enc) == 0, "a refused restart changed the encoder");
            cr_assert_eq(tschunk_encoder_restart(&enc, chunk, TSCHUNK_BOUND(PER)), 0);
            const tschunk_codec2_state *was = &before.c2, *is = &enc.c2; /* what the series taught is kept */
            cr_assert(is->hint_usable == was->hint_usable && is->hint_exponent == was->hint_exponent &&
                      is->hint_float == was->hint_float && is->last_form == was->last_form &&
                      is->last_ts_form == was->last_ts_form && is->last_ts_width == was->last_ts_width &&
                      is->last_split_left == was->last_split_left && is->last_challenger == was->last_challenger &&
                      is->reuse_left == was->reuse_left && is->last_packing == was->last_packing &&
                      is->last_split.size == was->last_split.size &&
                      memcmp(is->last_split.left, was->last_split.left, sizeof is->last_split.left) == 0,
                      "chunk at %zu: the codec-2 learning changed at restart", start);
            cr_assert(is->pending == 0 && is->group_end == 0 && enc.count == 0);
        }
        for (size_t i = start; i < start + PER; i++) cr_assert_eq(tschunk_append_bits(&enc, s.ts[i], s.bits[i]), 0);
        /* max_samples came along */
        cr_assert_eq(tschunk_get_error_code(tschunk_append(&enc, s.ts[start + PER - 1], 1.0)), TSCHUNK_ERROR_CHUNK_FULL);
        size_t size = tschunk_encoder_finish(&enc);
        cr_assert(!tschunk_is_error(size));
        check_chunk(chunk, size, &s, start, PER);
        tschunk_chunk_info info;
        cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
        cr_assert_eq(info.codec, TSC2);
        tschunk_sketch_stats stats;
        tschunk_sketch_get_stats(sketch, &stats);
        cr_assert(stats.count == PER, "the summary holds %g values, not this chunk's %d", stats.count, PER);
        double lo = INFINITY, hi = -INFINITY; /* and they are this chunk's values, not the last chunk's kept */
        for (size_t i = start; i < start + PER; i++) {
            double v = wl_double(s.bits[i]);
            lo = v < lo ? v : lo, hi = v > hi ? v : hi;
        }
        cr_assert(stats.min == lo && stats.max == hi, "chunk at %zu: summary [%g, %g], values [%g, %g]", start,
                  stats.min, stats.max, lo, hi);
        restarted += size;
        unsigned char *alone;
        fresh += encode_range_codec(&s, start, PER, TSC2, &alone);
        free(alone);
    }
    /* Reused forms may cost a little against a fresh search, never much. */
    cr_assert_leq(restarted, fresh + fresh / 50, "restart %zu bytes, fresh encoders %zu", restarted, fresh);
    tschunk_sketch_free(sketch);
    free(chunk);
    wl_free(&s);
}

/* n random fields of `width` bits (n <= 128, width <= 30), packed into an exact-size heap copy: ASan sees
 * any read past the fields. */
static unsigned char *random_packed(uint64_t *rng, uint64_t *fields, size_t n, unsigned width, size_t *bytes)
{
    unsigned char packed[128 * 4 + 8];
    for (size_t i = 0; i < n; i++) fields[i] = wl_rng(rng) & ((UINT64_C(1) << width) - 1);
    *bytes = tsc_codec2_packed_bytes(n, width);
    tsc_codec2_pack(packed, fields, n, width);
    unsigned char *exact = malloc(*bytes ? *bytes : 1); /* width 0: no byte, and the kernels must read none */
    cr_assert_not_null(exact);
    memcpy(exact, packed, *bytes);
    return exact;
}

/*
 * The fused unpack + conversion of decimal blocks against their twins, on exact-size buffers: DELTA
 * (running sum) and frame of reference, every width the shuffle takes (0: no bytes), every group length.
 */
Test(codec2, simd_unpack_decimals_match_scalar)
{
    uint64_t rng = 13, fields[128], want[128], got[128];
    int compared = 0;
    for (int round_no = 0; round_no < 4000; round_no++) {
        unsigned width = (unsigned)(wl_rng(&rng) % 31), e = (unsigned)(wl_rng(&rng) % 16);
        size_t n = 1 + wl_rng(&rng) % 128;
        int as_float = (int)(wl_rng(&rng) & 1);
        size_t bytes;
        unsigned char *exact = random_packed(&rng, fields, n, width, &bytes);
        /* DELTA: |k| stays under 2^51 with |start| < 2^40 and steps within 2^31 of zero. */
        uint64_t start = (uint64_t)((int64_t)(wl_rng(&rng) % (UINT64_C(1) << 41)) - (INT64_C(1) << 40));
        uint64_t step = (uint64_t)(-(int64_t)(wl_rng(&rng) % (UINT64_C(1) << 31)));
        tsc_codec2_unpack_decimal_sums_scalar(exact, bytes, n, width, start, step, e, as_float, want);
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_unpack_decimal_sums_simd(isa, exact, bytes, n, width, start, step, e, as_float, got)) {
                compared++;
                cr_assert(memcmp(want, got, n * 8) == 0, "DELTA isa %u width %u n %zu round %d", isa, width, n,
                          round_no);
            }
        /* frame of reference: |base| < 2^50, fields under 2^30 */
        uint64_t base = (uint64_t)((int64_t)(wl_rng(&rng) % (UINT64_C(1) << 51)) - (INT64_C(1) << 50));
        tsc_codec2_unpack_decimals_scalar(exact, bytes, n, width, base, e, as_float, want);
        for (size_t i = 0; i < n; i++) /* the twin against the format's formula */
            cr_assert_eq(want[i], tsc_codec2_decimal_bits((int64_t)(base + fields[i]), e, as_float));
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_unpack_decimals_simd(isa, exact, bytes, n, width, base, e, as_float, got)) {
                compared++;
                cr_assert(memcmp(want, got, n * 8) == 0, "frame of reference isa %u width %u n %zu round %d", isa,
                          width, n, round_no);
            }
        free(exact);
    }
    cr_log_info("%d fused decimal blocks compared", compared);
}

/*
 * The fused kernel with patches added in place (0.20.0) against its twin, both packings, every width the
 * shuffle takes, every group length, patches anywhere (a third of the fields, high bits of up to 20
 * bits), on exact-size buffers. The twin is checked against the format's formula.
 */
Test(codec2, simd_patched_decimals_match_scalar)
{
    uint64_t rng = 29, fields[128], want[128], got[128];
    uint8_t at[128];
    tsc_codec2_patches patches;
    int compared = 0;
    for (int round_no = 0; round_no < 4000; round_no++) {
        unsigned width = (unsigned)(wl_rng(&rng) % 31), e = (unsigned)(wl_rng(&rng) % 16);
        size_t n = 1 + wl_rng(&rng) % 128;
        int as_float = (int)(wl_rng(&rng) & 1), delta = (int)(wl_rng(&rng) & 1);
        size_t bytes;
        unsigned char *exact = random_packed(&rng, fields, n, width, &bytes);
        unsigned high_bits = width < 22 ? 20 : 42 - width; /* adds under 2^42: 128 of them sum under 2^49 */
        patches.count = 0;
        for (size_t i = 0; i < n; i++)
            if (wl_rng(&rng) % 3 == 0) {
                at[patches.count] = (uint8_t)i;
                patches.add[patches.count++] = (wl_rng(&rng) % (UINT64_C(1) << high_bits)) << width;
            }
        patches.at = at;
        /* |k| under 2^51: DELTA |start| < 2^40 and steps within 2^20 of zero, FOR |base| < 2^50 */
        uint64_t start = delta ? (uint64_t)((int64_t)(wl_rng(&rng) % (UINT64_C(1) << 41)) - (INT64_C(1) << 40))
                               : (uint64_t)((int64_t)(wl_rng(&rng) % (UINT64_C(1) << 51)) - (INT64_C(1) << 50));
        uint64_t step = delta ? (uint64_t)(-(int64_t)(wl_rng(&rng) % (UINT64_C(1) << 20))) : 0;
        tsc_codec2_unpack_patched_decimals_scalar(exact, bytes, n, width, delta, start, step, e, as_float, &patches,
                                                  want);
        uint64_t k = start;
        for (size_t i = 0, p = 0; i < n; i++) { /* the twin against the format's formula */
            uint64_t high = p < patches.count && at[p] == i ? patches.add[p++] : 0;
            k = delta ? k + step + fields[i] + high : start + fields[i] + high;
            cr_assert_eq(want[i], tsc_codec2_decimal_bits((int64_t)k, e, as_float), "twin: round %d value %zu",
                         round_no, i);
        }
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_unpack_patched_decimals_simd(isa, exact, bytes, n, width, delta, start, step, e, as_float,
                                                        &patches, got)) {
                compared++;
                cr_assert(memcmp(want, got, n * 8) == 0, "isa %u delta %d width %u n %zu round %d", isa, delta,
                          width, n, round_no);
            }
        free(exact);
    }
    cr_log_info("%d patched decimal blocks compared", compared);
}

/*
 * MASKED groups of every length (the last group of chunks of 129..256 samples), repeats at random: each
 * decodes to its samples, through the eight-at-a-time table and the tail alike.
 */
Test(codec2, masked_groups_of_every_length_round_trip)
{
    uint64_t rng = 23;
    int masked_last = 0;
    for (size_t n = 129; n <= 256; n++) {
        wl_series s;
        wl_alloc(&s, n, "masked");
        double value = 12.34;
        for (size_t i = 0; i < n; i++) {
            if (wl_rng(&rng) & 1) value = (double)(int64_t)(wl_rng(&rng) % 5000) / 100.0;
            s.ts[i] = (int64_t)i * 1000;
            s.bits[i] = wl_bits(value);
        }
        unsigned char *chunk;
        tsc_chunk_header h;
        tsc_codec2_group g;
        size_t size = encode_and_parse_first_group(&s, &chunk, &h, &g);
        /* the second (last) group's value mode */
        size_t second = h.ts_offset + g.size;
        cr_assert_eq(tsc_codec2_parse_group(chunk + second, size - second, n - 128, h.info.flags, &g), 0);
        masked_last += (g.mode & 3) == TSC2_MASKED;
        free(chunk);
        wl_free(&s);
    }
    cr_assert_geq(masked_last, 100, "%d of 128 last groups MASKED", masked_last);
}


/*
 * The fused unpack + grid or running sum of timestamp blocks against its twin, on exact-size buffers:
 * every width the shuffle takes (0: no bytes), every length of a group, time going back in some blocks (also in the
 * last lanes, where the SIMD version masks the lanes past n) and not in others.
 */
Test(codec2, simd_unpack_timestamps_match_scalar)
{
    uint64_t rng = 31, fields[128], want[128], got[128];
    int compared = 0, went_back = 0;
    for (int round_no = 0; round_no < 6000; round_no++) {
        unsigned width = (unsigned)(wl_rng(&rng) % 31);
        size_t n = 1 + wl_rng(&rng) % 128;
        int grid = (int)(wl_rng(&rng) & 1);
        size_t bytes;
        unsigned char *exact = random_packed(&rng, fields, n, width, &bytes);
        /* A step below the fields' spread goes back now and then; near INT64_MAX a sum wraps, and with
         * steps of 2^53 and more a block can wrap more than once. */
        uint64_t spread = UINT64_C(1) << width;
        uint64_t add = round_no % 3 ? wl_rng(&rng) % (2 * spread) : (uint64_t)0 - wl_rng(&rng) % 4;
        if (round_no % 7 == 0) add = wl_rng(&rng) >> (1 + wl_rng(&rng) % 10);
        uint64_t start = round_no % 5 ? wl_rng(&rng) >> 2 : (uint64_t)INT64_MAX - wl_rng(&rng) % (64 * spread);
        uint64_t prev0 = start - wl_rng(&rng) % spread;
        int back_want = tsc_codec2_unpack_timestamps_scalar(exact, bytes, n, width, grid, prev0, start, add, want);
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++) {
            int back_got = -1;
            if (!tsc_codec2_unpack_timestamps_simd(isa, exact, bytes, n, width, grid, prev0, start, add, got,
                                                   &back_got))
                continue;
            compared++;
            went_back += back_want;
            cr_assert(memcmp(want, got, n * 8) == 0, "isa %u width %u n %zu grid %d round %d", isa, width, n, grid,
                      round_no);
            cr_assert_eq(back_got, back_want, "isa %u width %u n %zu grid %d round %d", isa, width, n, grid,
                         round_no);
        }
        free(exact);
    }
    cr_log_info("%d fused timestamp blocks compared, %d going back", compared, went_back);
    if (compared) cr_assert(went_back > compared / 10 && went_back < compared - compared / 10, "%d of %d", went_back, compared);
}

/* The repeat count that picks MASKED, against its scalar twin, on runs of every length. */
/*
 * A value's smallest exponent, SIMD against scalar: decimals of every exponent as doubles and float32s
 * (printed to 16 digits too: NEAR readings), values a few ulps off, integers near 2^51, magnitudes where
 * the search stops, random doubles, zeros, subnormals, infinities and NaNs.
 */
Test(codec2, simd_smallest_exponent_matches_scalar)
{
    uint64_t rng = 12;
    int simd_ran = 0, found[17] = {0};
    for (int i = 0; i < 400000; i++) {
        uint64_t r = wl_rng(&rng);
        unsigned e = (unsigned)(r >> 8) % 16;
        double k = (double)(int64_t)(wl_rng(&rng) >> (13 + (r >> 20) % 40)) * ((r >> 30) & 1 ? -1 : 1);
        double v = k / tsc_codec2_pow10[e];
        uint64_t bits = wl_bits(v);
        switch (r % 8) {
        case 0: bits = wl_rng(&rng); break;                                     /* anything, NaNs too */
        case 1: bits = wl_bits((double)(float)v); break;                        /* a float32 decimal */
        case 2: bits = (r >> 9) & 1 ? 0 : UINT64_C(1) << 63; break;              /* +0 and -0 */
        case 3: bits += (wl_rng(&rng) % 41) - 20; break;                        /* a few ulps off */
        case 4: bits = wl_bits(ldexp(1.0, 51) - (double)(r >> 40) * ((r >> 7) & 1 ? 1 : -1) / 7); break;
        case 5: bits = specials[(r >> 12) % (sizeof specials / sizeof specials[0])]; break;
        default: break;
        }
        if (r % 8 == 1 && (r >> 40) & 1) { /* float32 printed to 16 digits and read back */
            char text[40];
            snprintf(text, sizeof text, "%.16g", wl_double(bits));
            bits = wl_bits(strtod(text, NULL));
        }
        for (int as_float = 0; as_float < 2; as_float++) {
            int expect = tsc_codec2_smallest_exponent_scalar(bits, as_float), got;
            found[expect + 1]++;
            if (!tsc_codec2_smallest_exponent_simd(bits, as_float, &got)) continue;
            simd_ran = 1;
            cr_assert_eq(got, expect, "%016" PRIx64 " as_float %d: simd %d, scalar %d", bits, as_float, got, expect);
        }
    }
    for (int e = 0; e <= 16; e++) cr_assert_gt(found[e], 0, "no value with exponent %d", e - 1); /* -1 too */
#ifdef TSC_HAVE_AVX2 /* built with the kernels: on a CPU with AVX2 and FMA they must have run */
    cr_assert(simd_ran || !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"));
#else
    (void)simd_ran;
#endif
}

/* Time going back, SIMD against scalar: sorted runs of every length with one step back (or none) anywhere,
 * the first sample against prev included, and equal timestamps (not going back). */
Test(codec2, simd_goes_back_matches_scalar)
{
    uint64_t rng = 19;
    int64_t ts[131];
    int backs = 0;
    for (int round_no = 0; round_no < 20000; round_no++) {
        size_t n = wl_rng(&rng) % 132;
        int64_t prev = (int64_t)(wl_rng(&rng) % 1000) - 500, t = prev + (int64_t)(wl_rng(&rng) % 3) - 1;
        for (size_t i = 0; i < n; i++) ts[i] = t += (int64_t)(wl_rng(&rng) % 3);
        int expect = n && ts[0] < prev;
        if (n && wl_rng(&rng) % 2) { /* one step back somewhere */
            size_t at = wl_rng(&rng) % n;
            ts[at] = (at ? ts[at - 1] : prev) - 1 - (int64_t)(wl_rng(&rng) % 2);
            expect = 1;
        }
        for (size_t i = 1; i < n; i++) expect |= ts[i] < ts[i - 1];
        backs += expect;
        cr_assert_eq(tsc_codec2_goes_back_scalar(ts, n, prev), expect, "round %d", round_no);
        int got;
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_goes_back_simd(isa, ts, n, prev, &got))
                cr_assert_eq(got, expect, "round %d, isa %u", round_no, isa);
    }
    cr_assert(backs > 5000 && backs < 15000, "%d", backs);
}

static int compare_u16(const void *a, const void *b)
{
    uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
    return (x > y) - (x < y);
}

/* A SPLIT group's top 16 bits, sorted: the counting sort and the AVX-512 network (where the CPU has it)
 * against qsort, over every group length, with few or many distinct tops, one or several high bytes
 * (signs and exponents), and 0xffff tops (the network's padding). */
Test(codec2, simd_sorted_tops_match_scalar)
{
    uint64_t rng = 31, bits[TSC2_GROUP];
    uint16_t expect[TSC2_GROUP], scalar[TSC2_GROUP + 1], simd[TSC2_GROUP + 1];
    for (int round_no = 0; round_no < 20000; round_no++) {
        size_t n = (size_t)round_no % (TSC2_GROUP + 1);
        unsigned spread = 1 + (unsigned)(wl_rng(&rng) % 16); /* bits of variety in the tops */
        uint64_t base = wl_rng(&rng);
        for (size_t i = 0; i < n; i++) {
            uint64_t top = round_no % 7 == 0 ? 0xffffu : (base >> 48) ^ (wl_rng(&rng) & ((1u << spread) - 1));
            bits[i] = top << 48 | (wl_rng(&rng) >> 16);
            expect[i] = (uint16_t)top;
        }
        qsort(expect, n, sizeof expect[0], compare_u16);
        scalar[n] = simd[n] = 0x1234; /* nothing written past n */
        tsc_codec2_sorted_tops_scalar(bits, n, scalar);
        cr_assert_arr_eq(scalar, expect, n * sizeof expect[0], "round %d", round_no);
        cr_assert_eq(scalar[n], 0x1234);
        if (!tsc_avx512_here()) continue;
#ifdef TSC_HAVE_AVX2
        tsc_codec2_sorted_tops_avx512(bits, n, simd);
        cr_assert_arr_eq(simd, expect, n * sizeof expect[0], "round %d", round_no);
        cr_assert_eq(simd[n], 0x1234);
#endif
    }
}

/* SPLIT's codes, rights and exceptions: the SWAR lookup and the AVX2 and AVX-512 compares against a plain scan
 * of the dictionary, for every left width, dictionary size and group length, with misses at any share. */
Test(codec2, simd_split_codes_match_scalar)
{
    uint64_t rng = 37, bits[TSC2_GROUP], dict[TSC2_SPLIT_DICT];
    uint64_t codes[3][TSC2_GROUP], rights[3][TSC2_GROUP];
    uint8_t at[3][TSC2_GROUP + 8];
    size_t total_misses = 0;
    for (int round_no = 0; round_no < 20000; round_no++) {
        size_t n = (size_t)round_no % (TSC2_GROUP + 1);
        unsigned left = 4 + 2 * (unsigned)(wl_rng(&rng) % 7), right_bits = 64 - left;
        unsigned dict_size = 1 + (unsigned)(wl_rng(&rng) % TSC2_SPLIT_DICT), miss_in_16 = wl_rng(&rng) % 17;
        for (unsigned d = 0; d < dict_size; d++) /* distinct entries (their low 3 bits), as plan_split's runs are */
            dict[d] = ((wl_rng(&rng) >> (64 - left)) & ~(uint64_t)(TSC2_SPLIT_DICT - 1)) | d;
        for (size_t i = 0; i < n; i++) { /* misses at random, some all ones (0xffff at 16 bits) */
            uint64_t part = wl_rng(&rng) % 16 < miss_in_16 ? wl_rng(&rng) >> (64 - left)
                                                         : dict[wl_rng(&rng) % dict_size];
            if (wl_rng(&rng) % 32 == 0) part = (UINT64_C(1) << left) - 1;
            bits[i] = part << right_bits | (wl_rng(&rng) >> left);
        }
        size_t misses = 0;
        for (int kernel = 0; kernel < 3; kernel++) { /* the twin, then the AVX2 and AVX-512 kernels */
            size_t got = kernel == 0 ? tsc_codec2_split_codes_scalar(bits, n, right_bits, dict, dict_size, codes[0],
                                                                     rights[0], at[0])
                                     : tsc_codec2_split_codes_simd(kernel == 1 ? TSC_SIMD_AVX2 : TSC_SIMD_AVX512,
                                                                   bits, n, right_bits, dict, dict_size,
                                                                   codes[kernel], rights[kernel], at[kernel]);
            if (got == SIZE_MAX) continue; /* no such kernel here */
            size_t x = 0;
            for (size_t i = 0; i < n; i++) {
                unsigned code = dict_size;
                for (unsigned d = dict_size; d-- > 0;) code = dict[d] == bits[i] >> right_bits ? d : code;
                cr_assert_eq(codes[kernel][i], code == dict_size ? 0 : code, "round %d kernel %d", round_no, kernel);
                cr_assert_eq(rights[kernel][i], bits[i] & ((UINT64_C(1) << right_bits) - 1));
                if (code < dict_size) continue;
                cr_assert(x < got && at[kernel][x] == i, "round %d kernel %d", round_no, kernel);
                x++;
            }
            cr_assert_eq(got, x, "round %d kernel %d", round_no, kernel);
            misses = x;
        }
        total_misses += misses;
    }
    cr_assert(total_misses > 100000, "%zu", total_misses);
}

/* A group whose steps are all one (the appender's regular case) writes its timestamp block without
 * computing the deltas: the same bytes as the general path, for every step size, lead and group length. */
Test(codec2, regular_timestamp_blocks_match_the_general_path)
{
    uint64_t rng = 29;
    int64_t ts[TSC2_GROUP];
    uint64_t bits[TSC2_GROUP];
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t n = 2 + wl_rng(&rng) % (TSC2_GROUP - 1);
        uint64_t step = round_no % 3 ? wl_rng(&rng) % 100000 : wl_rng(&rng) >> (wl_rng(&rng) % 64);
        int64_t prev = (int64_t)(wl_rng(&rng) >> 2);
        int64_t first = (int64_t)((uint64_t)prev + (wl_rng(&rng) % 3 ? step : wl_rng(&rng) % 7)); /* mod 2^64 */
        for (size_t i = 0; i < n; i++) {
            ts[i] = (int64_t)((uint64_t)first + i * step);
            bits[i] = wl_bits((double)(wl_rng(&rng) % 1000) / 10);
        }
        uint8_t general[TSC2_GROUP * 24 + 64], regular[TSC2_GROUP * 24 + 64];
        int scaled = round_no % 2; /* a TS_SCALED chunk's blocks: the regular one writes scale 1 */
        tsc_codec2_choice a = {{0, 0, 0}, 0, TSC2_TS_SEARCH, 0, 0, TSC2_FORMS, 0, 0, scaled, NULL, 0, 0};
        tsc_codec2_choice b = {{0, 0, 0}, 0, TSC2_TS_SEARCH, 0, 0, TSC2_FORMS, 1, step, scaled, NULL, 0, 0};
        size_t ga = tsc_codec2_encode_group(general, ts, bits, n, prev, 0, TSC2_EFFORT_FULL, &a);
        size_t gb = tsc_codec2_encode_group(regular, ts, bits, n, prev, 0, TSC2_EFFORT_FULL, &b);
        cr_assert_eq(ga, gb, "round %d: %zu against %zu bytes", round_no, gb, ga);
        cr_assert(!memcmp(general, regular, ga), "round %d", round_no);
        cr_assert(a.ts_form == b.ts_form && a.ts_width == b.ts_width, "round %d", round_no);
    }
}

Test(codec2, simd_repeats_match_scalar)
{
    uint64_t rng = 8, bits[131];
    for (int round_no = 0; round_no < 3000; round_no++) {
        size_t n = wl_rng(&rng) % 132, expect = 0;
        uint64_t prev = wl_rng(&rng) % 3, p = prev;
        for (size_t i = 0; i < n; i++) {
            bits[i] = wl_rng(&rng) % (1 + round_no % 4);
            expect += bits[i] == p;
            p = bits[i];
        }
        cr_assert_eq(tsc_codec2_repeats_scalar(bits, n, prev), expect, "round %d", round_no);
        size_t got;
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++)
            if (tsc_codec2_repeats_simd(isa, bits, n, prev, &got))
                cr_assert_eq(got, expect, "round %d, isa %u", round_no, isa);
    }
}

/* MASKED's repeat mask and kept values: the scalar twin against a plain reading, the AVX2 and AVX-512 kernels
 * (where the CPU has them) against the twin, every length up to a group; nothing written past the kept values. */
Test(codec2, simd_repeat_mask_matches_scalar)
{
    uint64_t rng = 12, bits[TSC2_GROUP];
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t n = wl_rng(&rng) % (TSC2_GROUP + 1), expect_kept = 0;
        uint64_t prev = wl_rng(&rng) % 3, p = prev, expect_mask[TSC2_GROUP / 64] = {0};
        for (size_t i = 0; i < n; i++) {
            bits[i] = wl_rng(&rng) % (1 + round_no % 5);
            if (bits[i] == p) expect_mask[i / 64] |= UINT64_C(1) << (i % 64);
            else expect_kept++;
            p = bits[i];
        }
        uint64_t mask[2][TSC2_GROUP / 64], kept[2][TSC2_GROUP + 1];
        memset(kept, 0xa5, sizeof kept);
        size_t nkept = tsc_codec2_repeat_mask_scalar(bits, n, prev, mask[0], kept[0]);
        cr_assert_eq(nkept, expect_kept, "round %d", round_no);
        cr_assert(memcmp(mask[0], expect_mask, sizeof expect_mask) == 0, "round %d", round_no);
        for (size_t i = 0, k = 0; i < n; i++)
            if (!(expect_mask[i / 64] >> (i % 64) & 1)) cr_assert_eq(kept[0][k++], bits[i], "round %d", round_no);
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++) {
            memset(kept[1], 0xa5, sizeof kept[1]);
            size_t got = tsc_codec2_repeat_mask_simd(isa, bits, n, prev, mask[1], kept[1]);
            if (got == SIZE_MAX) continue; /* no such kernel here */
            cr_assert_eq(got, nkept, "round %d isa %u", round_no, isa);
            cr_assert(memcmp(mask[1], mask[0], sizeof mask[0]) == 0, "round %d isa %u", round_no, isa);
            cr_assert(memcmp(kept[1], kept[0], nkept * sizeof kept[0][0]) == 0, "round %d isa %u", round_no, isa);
            cr_assert_eq(kept[1][nkept], UINT64_C(0xa5a5a5a5a5a5a5a5), "round %d isa %u: written past", round_no, isa);
        }
    }
}

/* SPLIT reuse's left-part counts: the scalar twin against a plain reading, the AVX-512 kernel (where the CPU
 * has it) against the twin, every length up to a group, left parts from 4 to 16 bits, unused candidates. */
Test(codec2, simd_left_part_counts_matches_scalar)
{
    uint64_t rng = 14, bits[TSC2_GROUP], candidates[TSC2_SPLIT_DICT];
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t n = wl_rng(&rng) % (TSC2_GROUP + 1);
        unsigned right_bits = 64 - 4 - (unsigned)(wl_rng(&rng) % 13), used = (unsigned)(wl_rng(&rng) % 9);
        for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) candidates[d] = d < used ? wl_rng(&rng) % 12 : UINT64_MAX;
        for (size_t i = 0; i < n; i++) { /* left parts 0..11 (some in no candidate) or all ones, any right bits */
            uint64_t part = wl_rng(&rng) % 13, ones = (UINT64_C(1) << (64 - right_bits)) - 1;
            bits[i] = (part == 12 ? ones : part) << right_bits | (wl_rng(&rng) & ((UINT64_C(1) << right_bits) - 1));
        }
        size_t counts[2][TSC2_SPLIT_DICT], expect[TSC2_SPLIT_DICT] = {0};
        uint64_t outside[2][TSC2_GROUP / 64], expect_outside[TSC2_GROUP / 64] = {0};
        for (size_t i = 0; i < n; i++) {
            int hit = 0;
            for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) {
                int equal = bits[i] >> right_bits == candidates[d];
                expect[d] += (size_t)equal;
                hit |= equal;
            }
            if (!hit) expect_outside[i / 64] |= UINT64_C(1) << (i % 64);
        }
        tsc_codec2_left_part_counts_scalar(bits, n, right_bits, candidates, counts[0], outside[0]);
        cr_assert(memcmp(counts[0], expect, sizeof expect) == 0, "round %d", round_no);
        cr_assert(memcmp(outside[0], expect_outside, sizeof expect_outside) == 0, "round %d", round_no);
        if (!tsc_codec2_left_part_counts_simd(TSC_SIMD_AVX512, bits, n, right_bits, candidates, counts[1], outside[1]))
            continue; /* no AVX-512 here */
        cr_assert(memcmp(counts[1], expect, sizeof expect) == 0, "round %d", round_no);
        cr_assert(memcmp(outside[1], expect_outside, sizeof expect_outside) == 0, "round %d", round_no);
    }
}

/* A PATCHED list's split: the scalar twin against a plain reading, the AVX-512 kernel (where the CPU has it)
 * against the twin, every length up to a group and widths 0 to 64; nothing written past the patches. */
Test(codec2, simd_split_patches_matches_scalar)
{
    uint64_t rng = 13;
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t m = wl_rng(&rng) % (TSC2_GROUP + 1);
        unsigned width = (unsigned)(wl_rng(&rng) % 65);
        uint64_t low_mask = width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
        uint64_t fields[3][TSC2_GROUP + 1], high[2][TSC2_GROUP + 1];
        uint8_t at[2][TSC2_GROUP + 1];
        size_t expect = 0;
        for (size_t i = 0; i < m; i++) { /* one field in (1 + round_no % 9) wide, at any width above */
            uint64_t wide = wl_rng(&rng) % (1 + round_no % 9) == 0;
            fields[0][i] = wide ? wl_rng(&rng) >> (wl_rng(&rng) % 64) : wl_rng(&rng) & low_mask;
            expect += fields[0][i] > low_mask;
        }
        memcpy(fields[1], fields[0], m * sizeof fields[0][0]);
        memcpy(fields[2], fields[0], m * sizeof fields[0][0]);
        memset(high, 0xa5, sizeof high);
        memset(at, 0xa5, sizeof at);
        size_t patches = tsc_codec2_split_patches_scalar(fields[1], m, width, at[0], high[0]);
        cr_assert_eq(patches, expect, "round %d", round_no);
        for (size_t i = 0, x = 0; i < m; i++) {
            cr_assert_eq(fields[1][i], fields[0][i] & low_mask, "round %d", round_no);
            if (fields[0][i] <= low_mask) continue;
            cr_assert_eq(at[0][x], i, "round %d", round_no);
            cr_assert_eq(high[0][x++], fields[0][i] >> width, "round %d", round_no);
        }
        size_t got = tsc_codec2_split_patches_simd(TSC_SIMD_AVX512, fields[2], m, width, at[1], high[1]);
        if (got == SIZE_MAX) continue; /* no AVX-512 here */
        cr_assert_eq(got, patches, "round %d", round_no);
        cr_assert(memcmp(fields[2], fields[1], m * sizeof fields[0][0]) == 0, "round %d", round_no);
        cr_assert(memcmp(at[1], at[0], patches) == 0, "round %d", round_no);
        cr_assert(memcmp(high[1], high[0], patches * sizeof high[0][0]) == 0, "round %d", round_no);
        cr_assert_eq(at[1][patches], 0xa5, "round %d: written past", round_no);
        cr_assert_eq(high[1][patches], UINT64_C(0xa5a5a5a5a5a5a5a5), "round %d: written past", round_no);
    }
}

/* A decimal reading's exceptions: the scalar twin against a plain walk (the entries' bytes as the encoder
 * writes them), the AVX2 and AVX-512 kernels (where the CPU has them) against the twin, every
 * length up to a group, diffs exact, NEAR at both ends of their one- and two-byte corrections, and FAR;
 * nothing written past the exceptions. */
Test(codec2, simd_exceptions_matches_scalar)
{
    static const int64_t edges[] = {1, -1, 63, 64, -64, -65, TSC2_NEAR_ULPS - 1, -(TSC2_NEAR_ULPS - 1),
                                    TSC2_NEAR_ULPS, -TSC2_NEAR_ULPS, INT64_MAX, INT64_MIN};
    uint64_t rng = 17;
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t n = wl_rng(&rng) % (TSC2_GROUP + 1);
        int64_t diffs[TSC2_GROUP + 1], correction[2][TSC2_GROUP + 1];
        uint8_t at[2][TSC2_GROUP + 1];
        size_t expect = 0, expect_bytes = 0, expect_first = SIZE_MAX;
        for (size_t i = 0; i < n; i++) { /* one slot in (1 + round_no % 5) an exception */
            uint64_t r = wl_rng(&rng);
            diffs[i] = r % (1 + round_no % 5) ? 0
                       : r % 3 == 0           ? edges[(r >> 8) % (sizeof edges / sizeof edges[0])]
                                              : (int64_t)(r & 16 ? 0 - (wl_rng(&rng) >> (r >> 58))
                                                                 : wl_rng(&rng) >> (r >> 58));
            int near = diffs[i] > -TSC2_NEAR_ULPS && diffs[i] < TSC2_NEAR_ULPS;
            if (near && expect_first == SIZE_MAX) expect_first = i;
            if (diffs[i] == 0) continue;
            expect++;
            expect_bytes += near ? 1 + tsc_uvarint_len(tsc_zigzag(diffs[i])) : 9; /* the entry as it is written */
        }
        memset(correction, 0xa5, sizeof correction);
        memset(at, 0xa5, sizeof at);
        size_t bytes = 5, first = 0;
        size_t count = tsc_codec2_exceptions_scalar(diffs, n, correction[0], at[0], &bytes, &first);
        cr_assert_eq(count, expect, "round %d", round_no);
        cr_assert_eq(bytes, 5 + expect_bytes, "round %d", round_no);
        cr_assert_eq(first, expect_first, "round %d", round_no);
        cr_assert_eq(at[0][count], 0xa5, "round %d: written past", round_no);
        cr_assert_eq(correction[0][count], (int64_t)UINT64_C(0xa5a5a5a5a5a5a5a5), "round %d: written past", round_no);
        for (size_t i = 0, x = 0; i < n; i++) {
            if (diffs[i] == 0) continue;
            int far = !(diffs[i] > -TSC2_NEAR_ULPS && diffs[i] < TSC2_NEAR_ULPS);
            cr_assert_eq(at[0][x], i | (far ? TSC2_EXCEPTION_RAW : 0), "round %d", round_no);
            cr_assert_eq(correction[0][x++], diffs[i], "round %d", round_no);
        }
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++) {
            size_t got_bytes = 5, got_first = 0;
            memset(correction[1], 0xa5, sizeof correction[1]);
            memset(at[1], 0xa5, sizeof at[1]);
            size_t got = tsc_codec2_exceptions_simd(isa, diffs, n, correction[1], at[1], &got_bytes, &got_first);
            if (got == SIZE_MAX) continue; /* no such kernel here */
            cr_assert_eq(got, count, "round %d isa %u", round_no, isa);
            cr_assert_eq(got_bytes, bytes, "round %d isa %u", round_no, isa);
            cr_assert_eq(got_first, first, "round %d isa %u", round_no, isa);
            cr_assert(memcmp(correction[1], correction[0], count * sizeof correction[0][0]) == 0, "round %d", round_no);
            cr_assert(memcmp(at[1], at[0], count) == 0, "round %d isa %u", round_no, isa);
            cr_assert_eq(at[1][count], 0xa5, "round %d isa %u: written past", round_no, isa);
            cr_assert_eq(correction[1][count], (int64_t)UINT64_C(0xa5a5a5a5a5a5a5a5), "round %d: past", round_no);
        }
    }
}

/* The open group's raw samples split into times and values, SIMD against the scalar twin, every length up
 * to a group: the same words, and nothing written past n. */
Test(codec2, simd_deinterleave_matches_scalar)
{
    uint64_t rng = 16;
    uint8_t raw[16 * 128 + 64];
    int64_t ts[2][136];
    uint64_t bits[2][136];
    for (size_t n = 0; n <= 128; n++) {
        for (size_t i = 0; i < sizeof raw; i++) raw[i] = (uint8_t)wl_rng(&rng);
        memset(ts, 0xa5, sizeof ts);
        memset(bits, 0x5a, sizeof bits);
        tsc_codec2_deinterleave_scalar(raw, n, ts[0], bits[0]);
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq((uint64_t)ts[0][i], tsc_load64_le(raw + 16 * i));
            cr_assert_eq(bits[0][i], tsc_load64_le(raw + 16 * i + 8));
        }
        if (tsc_codec2_deinterleave_simd(TSC_SIMD_AVX512, raw, n, ts[1], bits[1])) {
            cr_assert(!memcmp(ts[0], ts[1], sizeof ts[0]), "times differ, n %zu", n);
            cr_assert(!memcmp(bits[0], bits[1], sizeof bits[0]), "values differ, n %zu", n);
        }
    }
}

/* A MASKED group's expansion: the scalar twin against a plain walk (a repeat takes the value before it), the
 * AVX2 and AVX-512 kernels (where the CPU has them) against the twin; every length up to a group, repeats from
 * none to all, the kept values at the end of their array (a read past them is an ASan error), nothing written
 * past n. */
Test(codec2, simd_expand_masked_matches_scalar)
{
    uint64_t rng = 17;
    for (int round_no = 0; round_no < 3000; round_no++) {
        size_t n = 1 + wl_rng(&rng) % TSC2_GROUP;
        unsigned repeat_in = (unsigned)(round_no % 6); /* 0: none; k: one in k */
        uint8_t mask[TSC2_GROUP / 8] = {0};
        uint64_t expect[TSC2_GROUP], values[1 + TSC2_GROUP], prev = wl_rng(&rng);
        size_t kept_count = 0;
        for (size_t i = 0; i < n; i++) {
            int repeat = repeat_in == 1 || (repeat_in > 1 && wl_rng(&rng) % repeat_in == 0);
            if (repeat) mask[i / 8] |= (uint8_t)(1u << (i % 8));
            else values[kept_count++] = wl_rng(&rng);
            expect[i] = repeat ? (i ? expect[i - 1] : prev) : values[kept_count - 1];
        }
        uint64_t *kept = malloc((kept_count + 1) * sizeof *kept); /* exactly kept[-1 .. kept_count - 1] */
        cr_assert_not_null(kept);
        kept[0] = prev;
        memcpy(kept + 1, values, kept_count * sizeof *kept);
        uint64_t bits[2][TSC2_GROUP + 1];
        memset(bits, 0xa5, sizeof bits);
        tsc_codec2_expand_masked_scalar(mask, kept + 1, kept_count, n, bits[0]);
        cr_assert(!memcmp(bits[0], expect, n * sizeof expect[0]), "round %d, n %zu", round_no, n);
        for (unsigned isa = TSC_SIMD_AVX2; isa <= TSC_SIMD_AVX512; isa++) {
            memset(bits[1], 0xa5, sizeof bits[1]);
            if (!tsc_codec2_expand_masked_simd(isa, mask, kept + 1, kept_count, n, bits[1])) continue;
            cr_assert(!memcmp(bits[1], bits[0], n * sizeof bits[0][0]), "isa %u, round %d, n %zu", isa, round_no, n);
            cr_assert_eq(bits[1][n], UINT64_C(0xa5a5a5a5a5a5a5a5), "isa %u, round %d: written past n", isa, round_no);
        }
        free(kept);
    }
}

/* The TS_CONST and VAL_CONST checks, SIMD against the scalar twins and a plain reading of their definition:
 * every length, every first compared sample (0 uses prev), steps that all match but one anywhere. */
Test(codec2, simd_constant_checks_match_scalar)
{
    uint64_t rng = 23;
    int64_t ts[131];
    uint64_t bits[131];
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t n = wl_rng(&rng) % 131, from = wl_rng(&rng) % 4;
        uint64_t step = wl_rng(&rng) % 3 ? 15000 : wl_rng(&rng), first_bits = wl_rng(&rng);
        int64_t prev = (int64_t)wl_rng(&rng);
        for (size_t i = 0; i < n; i++) {
            ts[i] = (int64_t)((uint64_t)(i ? ts[i - 1] : prev) + step);
            bits[i] = first_bits;
        }
        if (n && round_no % 3) { /* one odd step or value, or none */
            size_t at = wl_rng(&rng) % n;
            ts[at] = (int64_t)((uint64_t)ts[at] + (round_no % 2 ? 1 : wl_rng(&rng))); /* wrapping, as steps do */
            bits[at] ^= UINT64_C(1) << (wl_rng(&rng) % 64);
        }
        uint64_t want_delta = 0, want_value = 0;
        for (size_t i = from; i < n; i++) want_delta |= ((uint64_t)ts[i] - (uint64_t)(i ? ts[i - 1] : prev)) ^ step;
        for (size_t i = 0; i < n; i++) want_value |= bits[i] ^ first_bits;
        cr_assert_eq(tsc_codec2_odd_deltas_scalar(ts, n, prev, from, step), want_delta, "round %d", round_no);
        cr_assert_eq(tsc_codec2_odd_values_scalar(bits, n, first_bits), want_value, "round %d", round_no);
        uint64_t got;
        if (tsc_codec2_odd_deltas_simd(TSC_SIMD_AVX512, ts, n, prev, from, step, &got))
            cr_assert_eq(got, want_delta, "round %d: deltas, n %zu, from %zu", round_no, n, from);
        if (tsc_codec2_odd_values_simd(TSC_SIMD_AVX512, bits, n, first_bits, &got))
            cr_assert_eq(got, want_value, "round %d: values, n %zu", round_no, n);
    }
}

/* The constant-step fill of TS_CONST chunks against its scalar twin, wrapping steps included. */
Test(codec2, simd_steps_match_scalar)
{
    uint64_t rng = 5, a[131], b[131];
    for (int round_no = 0; round_no < 2000; round_no++) {
        size_t n = wl_rng(&rng) % 132;
        uint64_t start = wl_rng(&rng), step = round_no % 3 ? wl_rng(&rng) % 100000 : wl_rng(&rng);
        tsc_codec2_steps_scalar(start, step, n, a);
        for (size_t i = 0; i < n; i++) cr_assert_eq(a[i], start + i * step);
        if (tsc_codec2_steps_simd(start, step, n, b)) cr_assert(memcmp(a, b, n * 8) == 0, "round %d", round_no);
    }
}

Test(codec2, simd_running_sums_match_scalar)
{
    uint64_t rng = 4242, in[200], a[200], b[200];
    for (int round_no = 0; round_no < 4000; round_no++) {
        size_t n = wl_rng(&rng) % 200;
        unsigned shift = (unsigned)(wl_rng(&rng) % 64);
        for (size_t i = 0; i < n; i++) in[i] = wl_rng(&rng) >> shift;
        uint64_t start = wl_rng(&rng) >> (wl_rng(&rng) % 64), add = wl_rng(&rng) >> (wl_rng(&rng) % 64);
        uint64_t prev0 = round_no & 1 ? start : start - (wl_rng(&rng) & 0xff);
        int back_a = tsc_codec2_running_sum_scalar(start, add, in, n, a), expect = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t before = i ? a[i - 1] : start;
            cr_assert_eq(a[i], before + add + in[i]);
            expect |= (int64_t)a[i] < (int64_t)before;
        }
        cr_assert_eq(back_a, expect, "running sum: backwards flag");
        int back_b;
        if (tsc_codec2_running_sum_simd(start, add, in, n, b, &back_b)) {
            cr_assert(memcmp(a, b, n * 8) == 0, "running sum differs, n %zu", n);
            cr_assert_eq(back_a, back_b, "running sum flag differs, n %zu", n);
        }
        back_a = tsc_codec2_grid_scalar(prev0, start, add, in, n, a);
        expect = 0;
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(a[i], start + (uint64_t)(i + 1) * add + in[i]);
            expect |= (int64_t)a[i] < (int64_t)(i ? a[i - 1] : prev0);
        }
        cr_assert_eq(back_a, expect, "grid: backwards flag");
        if (tsc_codec2_grid_simd(prev0, start, add, in, n, b, &back_b)) {
            cr_assert(memcmp(a, b, n * 8) == 0, "grid differs, n %zu", n);
            cr_assert_eq(back_a, back_b, "grid flag differs, n %zu", n);
        }
    }
}

/* validate makes exactly info_get's checks: a codec-2 chunk whose first group is damaged fails both
 * (found by fuzz_chunk_decode: validate used to walk the lengths only). */
Test(codec2, validate_agrees_with_info_on_a_damaged_first_group)
{
    unsigned char chunk[68] = {0xc1, 0x12, 0x12};
    memset(chunk + 3, 0x0e, sizeof chunk - 3);
    chunk[11] = 0x55;
    const unsigned char tail[] = {0x12, 0x12, 0x12, 0x12, 0x12, 0x11, 0x5b, 0x00};
    memcpy(chunk + sizeof chunk - sizeof tail, tail, sizeof tail);
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(chunk, sizeof chunk, &info);
    cr_assert(tschunk_is_error(r), "the fuzzer's chunk should be refused");
    cr_assert_eq(tschunk_validate(chunk, sizeof chunk), r);
}

/* Every group of a whole chunk parsed: how many are decimal (DECIMAL or MASKED), PATCHED, and DELTA. */
static void count_patched(const unsigned char *chunk, size_t size, size_t *decimal, size_t *patched, size_t *delta)
{
    tsc_chunk_header h;
    cr_assert_eq(tsc_chunk_parse(chunk, size, &h, TSC_PARSE_HEADER), 0);
    *decimal = *patched = *delta = 0;
    size_t at = h.ts_offset;
    for (uint32_t done = 0; done < h.info.count;) {
        size_t n = h.info.count - done < TSC2_GROUP ? h.info.count - done : TSC2_GROUP;
        tsc_codec2_group g;
        cr_assert_eq(tsc_codec2_parse_group(chunk + at, size - at, n, h.info.flags, &g), 0);
        int is_decimal = (g.mode & 3) == TSC2_DECIMAL || (g.mode & 3) == TSC2_MASKED;
        *decimal += is_decimal;
        *patched += is_decimal && g.dec_patches > 0;
        *delta += is_decimal && (g.mode & TSC2_DECIMAL_DELTA);
        at += g.size;
        done += (uint32_t)n;
    }
}

/*
 * Spiky decimals (0.20.0): a few values far above the rest become patches, not a wider field for every value,
 * in both packings (FOR: spikes on a flat level, DELTA: jumps of a slowly moving level) and under a repeat
 * mask, with negative and 2-digit decimals; the chunks round-trip bit for bit and cost what the narrow fields
 * and the patches do.
 */
Test(codec2, spiky_decimals_are_patched)
{
    enum { N = 1024 };
    wl_series s;
    wl_alloc(&s, N, "spikes");
    uint64_t rng = 2026;
    for (int kind = 0; kind < 3; kind++) {
        int64_t level = -3000;
        for (size_t i = 0; i < N; i++) {
            s.ts[i] = 1700000000 + (int64_t)i * 60;
            int64_t k;
            if (kind == 0) /* FOR: 6-bit noise on a flat level, a spike of ~17 bits every ~40 values */
                k = level + (int64_t)(wl_rng(&rng) % 64) + (i % 41 == 7 ? 100000 + (int64_t)(wl_rng(&rng) % 9999) : 0);
            else /* DELTA: steps of -3..3, a jump of the level every ~50 values (kind 2: every third value repeats) */
                k = level += (int64_t)(wl_rng(&rng) % 7) - 3 + (i % 53 == 20 ? 70000 : 0);
            s.bits[i] = kind == 2 && i % 3 == 1 ? s.bits[i - 1] : wl_bits((double)k / 100.0);
        }
        unsigned char *chunk;
        size_t size = encode_range_codec(&s, 0, N, TSC2, &chunk), decimal, patched, delta;
        check_chunk(chunk, size, &s, 0, N);
        count_patched(chunk, size, &decimal, &patched, &delta);
        cr_assert_eq(decimal, N / TSC2_GROUP, "kind %d: %zu decimal groups", kind, decimal);
        cr_assert_geq(patched, decimal - 1, "kind %d: %zu of %zu groups patched", kind, patched, decimal);
        cr_assert_eq(delta, kind ? decimal : 0, "kind %d: %zu DELTA groups", kind, delta);
        /* FOR: 6 bits a value + 3-byte patches every 41 values; DELTA: 3 bits + the jumps' patches (unpatched,
         * both would take 17 bits a value). */
        double bits_per_value = (double)(size * 8) / N;
        cr_assert_lt(bits_per_value, kind == 0 ? 7.5 : kind == 1 ? 5.0 : 5.5, "kind %d: %.2f bits a value", kind,
                     bits_per_value);
        free(chunk);
    }
    wl_free(&s);
}

/* A chunk of `count` samples (< 128), timestamps 0, 1, ... in the header (TS_CONST), then one value block as given. */
static size_t patched_chunk_of(unsigned char *out, unsigned count, const unsigned char *block, size_t block_bytes)
{
    const unsigned char header[] = {0xC1, (unsigned char)(TSCHUNK_FLAG_TS_CONST << 4 | 2), (unsigned char)count, 0, 1};
    memcpy(out, header, sizeof header);
    memcpy(out + sizeof header, block, block_bytes);
    return sizeof header + block_bytes;
}

static size_t patched_chunk(unsigned char *out, const unsigned char *block, size_t block_bytes)
{
    return patched_chunk_of(out, 4, block, block_bytes);
}

/*
 * The PATCHED decimal form byte for byte, as README's format section gives it: form code 65 + width, the
 * packed low bits, then u8 patch count, u8 high width, the patches' u8 field indexes and their high bits
 * packed at that width, then the exceptions. Decoded values from hand-written blocks (FOR, DELTA, a patch
 * that takes k past 2^51, which the SIMD conversion cannot take, and a field whose bits span 9 bytes); every
 * malformed patch list is refused.
 */
Test(codec2, patched_decimal_blocks_decode_as_specified)
{
    unsigned char chunk[64];
    int64_t ts[4];
    double v[4];
    /* FOR, e = 0, base 3, width 2: k - 3 = 0, 1000000 (low 00, high 250000: 18 bits), 2, 3. */
    const unsigned char for_block[] = {TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 1, 18, 1, 0x90, 0xD0, 0x03, 0};
    size_t size = patched_chunk(chunk, for_block, sizeof for_block);
    cr_assert_eq(tschunk_decode(chunk, size, ts, v, 4), 4);
    const double expect_for[] = {3, 1000003, 5, 6};
    for (int i = 0; i < 4; i++) cr_assert_eq(v[i], expect_for[i], "FOR %d: %.17g", i, v[i]);
    /* DELTA, e = 1, base -7 (0.7 below 0), min step 1, width 1: fields 0, 1 | 6 << 1 = 13, 1. */
    const unsigned char delta_block[] = {TSC2_DECIMAL | TSC2_DECIMAL_DELTA | 1 << 4, 13, 2, TSC2_TS_PATCHED + 1,
                                         0x06, 1, 3, 1, 0x06, 0};
    size = patched_chunk(chunk, delta_block, sizeof delta_block);
    cr_assert_eq(tschunk_decode(chunk, size, ts, v, 4), 4);
    const double expect_delta[] = {-0.7, -0.6, 0.8, 1.0};
    for (int i = 0; i < 4; i++) cr_assert_eq(v[i], expect_delta[i], "DELTA %d: %.17g", i, v[i]);
    /* FOR at width 0, base 2^51 - 2, field 2 patched to 5: k = 2^51 + 3 (converted one by one). */
    unsigned char far_block[32] = {TSC2_DECIMAL};
    size_t n = 1 + tsc_put_uvarint(far_block + 1, tsc_zigzag((INT64_C(1) << 51) - 2));
    far_block[n++] = TSC2_TS_PATCHED;
    far_block[n++] = 1, far_block[n++] = 3, far_block[n++] = 2, far_block[n++] = 5, far_block[n++] = 0;
    size = patched_chunk(chunk, far_block, n);
    cr_assert_eq(tschunk_decode(chunk, size, ts, v, 4), 4);
    cr_assert_eq(v[2], (double)((INT64_C(1) << 51) + 3), "%.17g", v[2]);
    cr_assert_eq(v[3], (double)((INT64_C(1) << 51) - 2), "%.17g", v[3]);
    /* DELTA the same way, over 9 samples (8 fields, so the SIMD conversion would take them): min step 0,
     * field 4 patched to 5: k = 2^51 - 2 five times, then 2^51 + 3. */
    int64_t ts9[9];
    double v9[9];
    far_block[0] = TSC2_DECIMAL | TSC2_DECIMAL_DELTA;
    n = 1 + tsc_put_uvarint(far_block + 1, tsc_zigzag((INT64_C(1) << 51) - 2));
    far_block[n++] = 0;
    far_block[n++] = TSC2_TS_PATCHED;
    far_block[n++] = 1, far_block[n++] = 3, far_block[n++] = 4, far_block[n++] = 5, far_block[n++] = 0;
    size = patched_chunk_of(chunk, 9, far_block, n);
    cr_assert_eq(tschunk_decode(chunk, size, ts9, v9, 9), 9);
    for (int i = 0; i < 9; i++)
        cr_assert_eq(v9[i], (double)((INT64_C(1) << 51) + (i < 5 ? -2 : 3)), "%d: %.17g", i, v9[i]);
    /* Fields that wrap (0.29.0's encoder writes a counter's reset so): DELTA over 9 samples, min step 0, field 4
     * patched to 2^64 - 5 (high width 64), a step of -5. From base 1000 the k stay small (the SIMD conversion
     * takes them): 1000 five times, then 995; from base 2 - 2^51 they pass -2^51 (converted one by one). */
    const int64_t wrap_bases[] = {1000, 2 - (INT64_C(1) << 51)};
    for (size_t b = 0; b < 2; b++) {
        n = 0;
        far_block[n++] = TSC2_DECIMAL | TSC2_DECIMAL_DELTA;
        n += tsc_put_uvarint(far_block + n, tsc_zigzag(wrap_bases[b]));
        far_block[n++] = 0, far_block[n++] = TSC2_TS_PATCHED, far_block[n++] = 1, far_block[n++] = 64;
        far_block[n++] = 4;
        tsc_store64_le(far_block + n, UINT64_MAX - 4);
        n += 8;
        far_block[n++] = 0;
        size = patched_chunk_of(chunk, 9, far_block, n);
        cr_assert_eq(tschunk_decode(chunk, size, ts9, v9, 9), 9);
        for (int i = 0; i < 9; i++)
            cr_assert_eq(v9[i], (double)(wrap_bases[b] - (i < 5 ? 0 : 5)), "base %zu, %d: %.17g", b, i, v9[i]);
    }
    /* FOR at width 62, field 1 all ones from bit 62 on (its bits span 9 bytes), patched with high 0. */
    unsigned char wide_block[48] = {TSC2_DECIMAL, 0, TSC2_TS_PATCHED + 62};
    for (unsigned bit = 62; bit < 124; bit++) wide_block[3 + bit / 8] |= (unsigned char)(1u << (bit % 8));
    n = 3 + 31;
    wide_block[n++] = 1, wide_block[n++] = 1, wide_block[n++] = 1, wide_block[n++] = 0, wide_block[n++] = 0;
    size = patched_chunk(chunk, wide_block, n);
    cr_assert_eq(tschunk_decode(chunk, size, ts, v, 4), 4);
    cr_assert_eq(v[1], (double)((INT64_C(1) << 62) - 1), "%.17g", v[1]);
    cr_assert_eq(v[0] + v[2] + v[3], 0);
    /* Malformed: no patch, more patches than fields, a high width of 0 or past 64 bits, an index repeated or
     * past the fields, a patched width over 62, and the high bits cut short. */
    const struct {
        unsigned char block[16];
        size_t bytes;
        size_t error;
    } bad[] = {
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 0, 18, 0}, 7, TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 5, 1, 0, 1, 2, 3, 3, 0x1f, 0}, 13, TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 1, 0, 1, 0}, 8, TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 1, 63, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 16,
         TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 2, 1, 1, 1, 0x03, 0}, 10, TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 1, 1, 4, 0x01, 0}, 9, TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 63, 0xE0, 1, 1, 1, 0x01, 0}, 9, TSCHUNK_ERROR_CORRUPT},
        {{TSC2_DECIMAL, 6, TSC2_TS_PATCHED + 2, 0xE0, 1, 18, 1, 0x90}, 8, TSCHUNK_ERROR_TRUNCATED},
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        size = patched_chunk(chunk, bad[c].block, bad[c].bytes);
        size_t r = tschunk_decode(chunk, size, ts, v, 4);
        cr_assert_eq(tschunk_get_error_code(r), bad[c].error, "case %zu: %s", c, tschunk_error_name(r));
    }
}

/*
 * Reused groups trade DECIMAL and MASKED as their repeats come and go (0.25.0: both planned in the reused
 * reading, no search): in one chunk, groups of 2-digit decimals without repeats alternate with groups where
 * every other value repeats the one before; after the first group's search, every group is written in the
 * form that suits it, and the chunk decodes exactly.
 */
Test(codec2, reused_groups_trade_decimal_and_masked_as_repeats_come_and_go)
{
    wl_series s;
    wl_alloc(&s, 8 * TSC2_GROUP, "repeats-come-and-go");
    uint64_t rng = 41;
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 15000;
        int repeats = (i / TSC2_GROUP) % 2 == 1 && i % 2 == 1;
        s.bits[i] = repeats ? s.bits[i - 1] : wl_bits((double)(int64_t)(wl_rng(&rng) % 200000 - 100000) / 100);
    }
    unsigned char *chunk;
    tsc_chunk_header h;
    tsc_codec2_group g;
    size_t size = encode_and_parse_first_group(&s, &chunk, &h, &g);
    size_t at = h.ts_offset;
    for (size_t group = 0; group < 8; group++) {
        cr_assert_eq(tsc_codec2_parse_group(chunk + at, size - at, TSC2_GROUP, h.info.flags, &g), 0);
        unsigned want = group % 2 ? TSC2_MASKED : TSC2_DECIMAL;
        cr_assert_eq(g.mode & 3, want, "group %zu: mode %#x", group, g.mode);
        at += g.size;
    }
    cr_assert_eq(at, size);
    free(chunk);
    wl_free(&s);
}

/*
 * A reused group whose reading leaves more than one value in 16 raw is searched again, though its plan would
 * still be under 4 bytes a value: here the second group's 2-digit reading leaves 10 of its 3-digit values raw
 * (9 bytes each), and the search reads them all with 3 digits. The chunk costs no more than the two groups
 * encoded apart (each searched), plus a few bytes.
 */
Test(codec2, a_reused_reading_that_leaves_many_raw_values_is_searched_again)
{
    wl_series s;
    wl_alloc(&s, 2 * TSC2_GROUP, "raw-share");
    uint64_t rng = 43;
    for (size_t i = 0; i < s.n; i++) {
        s.ts[i] = (int64_t)i * 1000;
        int64_t k = (int64_t)(wl_rng(&rng) % 100000);
        int three_digits = i >= TSC2_GROUP && i % 12 == 0; /* 10 or 11 of the second group */
        s.bits[i] = wl_bits(three_digits ? (double)(10 * k + 7) / 1000 : (double)k / 100);
    }
    unsigned char *chunk;
    size_t whole = encode_range_codec(&s, 0, s.n, TSC2, &chunk);
    check_chunk(chunk, whole, &s, 0, s.n);
    free(chunk);
    size_t first = encode_range_codec(&s, 0, TSC2_GROUP, TSC2, &chunk);
    free(chunk);
    size_t second = encode_range_codec(&s, TSC2_GROUP, TSC2_GROUP, TSC2, &chunk);
    free(chunk);
    cr_assert_leq(whole, first + second + 16, "%zu against %zu + %zu", whole, first, second);
    wl_free(&s);
}

/*
 * Found by fuzzing merges that cut chunks again (0.44): after a chunk whose deltas leave a PATCHED timestamp form
 * (one gap of 10^18 among steps of 15 s or so), a restarted chunk reusing that form, whose second step wraps around
 * int64 (INT64_MIN + 15, the same, INT64_MAX - 500), took a base raised past 2^63: the field below it was then
 * small, not wrapped, so the block said PATCHED with no patch, which the decoder refuses (CORRUPT).
 */
Test(codec2, restart_with_time_wrapping_past_a_raised_base)
{
    static uint8_t buf[TSCHUNK_BOUND(16)];
    const int64_t first[5] = {0, INT64_C(1000000000000000000), INT64_C(1000000000015856113),
                              INT64_C(1000000000024086760), INT64_C(1000000000024101760)};
    const int64_t again[3] = {INT64_MIN + 15, INT64_MIN + 15, INT64_MAX - 500};
    const double values[5] = {0, 0, 0, 0, 0};
    tschunk_encoder_options o = {TSCHUNK_CODEC_TSC2, 16, 0, 0};
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, &o), 0);
    cr_assert_eq(tschunk_append_many(&enc, first, values, 5, NULL), 0);
    cr_assert(!tschunk_is_error(tschunk_encoder_finish(&enc)));
    cr_assert_eq(tschunk_encoder_restart(&enc, buf, sizeof buf), 0);
    cr_assert_eq(tschunk_append_many(&enc, again, values, 3, NULL), 0);
    size_t size = tschunk_encoder_finish(&enc);
    cr_assert(!tschunk_is_error(size));
    int64_t ts[3];
    double v[3];
    size_t n = tschunk_decode(buf, size, ts, v, 3);
    cr_assert_eq(n, 3, "%s", tschunk_is_error(n) ? tschunk_error_name(n) : "");
    cr_assert(!memcmp(ts, again, sizeof ts));
}
