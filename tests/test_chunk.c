/* Chunk codec: round trips, API contracts, transactional append. */
#include <stdint.h>

#include "test_util.h"
#include "chunk/format.h"
#include "codec2/format.h"

/* These tests pin codec 1 (Gorilla); codec 2, the default, has its own suite (test_codec2.c). */
#define GORILLA TSCHUNK_CODEC_GORILLA
static const tschunk_encoder_options gorilla = {GORILLA, 0, 0, 0};

static const uint64_t special_bits[] = {
    0x0000000000000000, 0x8000000000000000, /* +0.0, -0.0 */
    0x7ff0000000000000, 0xfff0000000000000, /* +-Inf */
    0x7ff8000000000000, 0xfff8000000000000, /* quiet NaNs */
    0x7ff0000000000002,                     /* Prometheus stale marker */
    0x7ff0000000000001, 0x7ff4000000000000, /* signalling NaNs */
    0x7fffffffffffffff, 0xffffffffffffffff, /* NaN with every payload bit */
    0x0000000000000001, 0x000fffffffffffff, /* subnormals */
    0x8000000000000001, 0x0010000000000000, /* -min subnormal, min normal */
    0x7fefffffffffffff, 0xffefffffffffffff, /* +-max */
    0x3ff0000000000000, 0x3ff0000000000001, /* 1.0 and its neighbour */
    0x5555555555555555, 0xaaaaaaaaaaaaaaaa,
};

Test(chunk, special_values_round_trip_in_every_order)
{
    roundtrip_pairs(special_bits, sizeof special_bits / sizeof special_bits[0], GORILLA);
}

Test(chunk, double_api_keeps_nan_payloads)
{
    double v[3];
    uint64_t b[3] = {0x7ff0000000000002, 0xfff8000000000123, 0x8000000000000000};
    memcpy(v, b, sizeof v);
    int64_t ts[3] = {1, 2, 3}, out_ts[3];
    double out_v[3];
    unsigned char buf[TSCHUNK_BOUND(3)];
    size_t size = tschunk_encode(buf, sizeof buf, ts, v, 3, &gorilla);
    cr_assert(!tschunk_is_error(size));
    cr_assert_eq(tschunk_decode(buf, size, out_ts, out_v, 3), 3);
    cr_assert(memcmp(out_v, b, sizeof b) == 0);
}

Test(chunk, timestamp_edges_round_trip)
{
    const int64_t seqs[][6] = {
        {INT64_MIN, INT64_MIN, INT64_MIN + 1, INT64_MIN + 3, 0, INT64_MAX},
        {INT64_MIN, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX},
        {INT64_MAX - 5, INT64_MAX - 4, INT64_MAX - 2, INT64_MAX - 2, INT64_MAX - 1, INT64_MAX},
        {-5, -5, -5, -5, -5, -5},
        {0, 1, 1 << 20, (int64_t)1 << 40, (int64_t)1 << 40, ((int64_t)1 << 40) + 1},
        {-1000, 0, 15000, 30000, 77767, 92766},
        {0, 15, 15 + 32, 15 + 32 + 32 + 127, 300, 300 + 40000},
    };
    for (size_t q = 0; q < sizeof seqs / sizeof seqs[0]; q++) {
        wl_series s;
        wl_alloc(&s, 6, "ts-edges");
        for (size_t i = 0; i < 6; i++) {
            s.ts[i] = seqs[q][i];
            s.bits[i] = wl_bits((double)i);
        }
        for (size_t i = 1; i < 6; i++) cr_assert(s.ts[i] >= s.ts[i - 1], "bad test sequence %zu", q);
        roundtrip_series_codec(&s, 6, GORILLA);
        wl_free(&s);
    }
}

Test(chunk, every_dod_bucket_edge_round_trips)
{
    const int64_t edges[] = {0, 1, -1, 15, -16, 16, -17, 127, -128, 128, -129, 1023, -1024, 1024, -1025,
                             524287, -524288, 524288, -524289, INT32_MAX, INT32_MIN, (int64_t)1 << 50};
    size_t k = sizeof edges / sizeof edges[0];
    wl_series s;
    wl_alloc(&s, 3 * k + 2, "dod-edges");
    int64_t t = 0, delta = (int64_t)1 << 51;
    size_t n = 0;
    s.ts[n] = t; s.bits[n++] = 0;
    for (size_t i = 0; i < k; i++)
        for (int rep = 0; rep < 3; rep++) {
            delta += rep == 0 ? edges[i] : 0;
            t += delta;
            s.ts[n] = t;
            s.bits[n] = wl_bits((double)n);
            n++;
        }
    s.n = n;
    roundtrip_series_codec(&s, 1000, GORILLA);
    wl_free(&s);
}

Test(chunk, property_round_trip_million_samples, .timeout = 120)
{
    roundtrip_million(GORILLA, 1000);
}

Test(chunk, constant_streams_are_elided)
{
    wl_series s;
    wl_synthetic(&s, WL_CONST_REGULAR, 120, 1);
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 120, GORILLA, &chunk);
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    cr_assert_eq(info.flags, TSCHUNK_FLAG_TS_CONST | TSCHUNK_FLAG_VAL_CONST);
    cr_assert_eq(info.ts_bytes + info.value_bytes, 0);
    cr_assert_eq(info.count, 120);
    cr_assert_lt(size, 24);
    check_chunk(chunk, size, &s, 0, 120);
    free(chunk);
    wl_free(&s);
}

Test(chunk, empty_and_single_sample_chunks)
{
    unsigned char buf[TSCHUNK_BOUND(1)];
    size_t size = tschunk_encode(buf, sizeof buf, NULL, NULL, 0, &gorilla);
    cr_assert_eq(size, 3);
    cr_assert(buf[0] == 0xc1 && buf[1] == 0x01 && buf[2] == 0x00);
    tschunk_iter it;
    cr_assert_eq(tschunk_iter_init(&it, buf, size), 0);
    cr_assert_eq(tschunk_iter_next(&it, NULL, NULL), 0);
    int64_t ts = INT64_MIN;
    double v = -0.0;
    size = tschunk_encode(buf, sizeof buf, &ts, &v, 1, &gorilla);
    cr_assert(!tschunk_is_error(size));
    int64_t out_ts;
    double out_v;
    cr_assert_eq(tschunk_decode(buf, size, &out_ts, &out_v, 1), 1);
    cr_assert_eq(out_ts, INT64_MIN);
    cr_assert(memcmp(&out_v, &v, 8) == 0);
}

/* Snapshot of everything an append may touch. */
typedef struct {
    tschunk_encoder enc;
    unsigned char *buf;
} snapshot;

static void expect_unchanged(const tschunk_encoder *enc, const unsigned char *buf, size_t cap,
                             const snapshot *before)
{
    cr_assert(memcmp(enc, &before->enc, sizeof *enc) == 0, "encoder state changed");
    cr_assert(memcmp(buf, before->buf, cap) == 0, "buffer bytes changed");
}

Test(chunk, refused_append_changes_nothing)
{
    wl_series s;
    wl_synthetic(&s, WL_RANDOM, 4000, 99);
    const size_t cap = 700;
    unsigned char *buf = malloc(cap);
    memset(buf, 0x3c, cap);
    snapshot snap = {.buf = malloc(cap)};
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &gorilla), 0);
    size_t i = 0, refused = 0;
    for (; i < s.n; i++) {
        /* An out-of-order sample is refused and leaves everything as it was. */
        if (i > 0) {
            memcpy(&snap.enc, &enc, sizeof enc);
            memcpy(snap.buf, buf, cap);
            cr_assert_eq(tschunk_get_error_code(tschunk_append_bits(&enc, s.ts[i - 1] - 1, 0)),
                         TSCHUNK_ERROR_OUT_OF_ORDER);
            expect_unchanged(&enc, buf, cap, &snap);
        }
        memcpy(&snap.enc, &enc, sizeof enc);
        memcpy(snap.buf, buf, cap);
        size_t r = tschunk_append_bits(&enc, s.ts[i], s.bits[i]);
        if (tschunk_is_error(r)) {
            cr_assert_eq(tschunk_get_error_code(r), TSCHUNK_ERROR_DST_TOO_SMALL, "%s", tschunk_error_name(r));
            expect_unchanged(&enc, buf, cap, &snap);
            refused++;
            break;
        }
    }
    cr_assert_eq(refused, 1, "the buffer should have filled up");
    cr_assert_gt(i, 20);
    /* Nothing lost: the chunk still holds exactly the accepted samples. */
    size_t size = tschunk_encoder_finish(&enc);
    cr_assert_leq(size, cap);
    check_chunk(buf, size, &s, 0, i);
    cr_assert_eq(tschunk_get_error_code(tschunk_append(&enc, 0, 0)), TSCHUNK_ERROR_STAGE);
    free(buf);
    free(snap.buf);
    wl_free(&s);
}

Test(chunk, max_samples_and_max_bytes_are_exact_limits)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 3000, 5);
    size_t cap = TSCHUNK_BOUND(3000);
    unsigned char *buf = malloc(cap);
    tschunk_encoder enc;
    tschunk_encoder_options o = {GORILLA, 100, 0, 0};
    cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &o), 0);
    for (size_t i = 0; i < 100; i++) cr_assert_eq(tschunk_append_bits(&enc, s.ts[i], s.bits[i]), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_append_bits(&enc, s.ts[100], s.bits[100])),
                 TSCHUNK_ERROR_CHUNK_FULL);
    cr_assert_eq(tschunk_encoder_count(&enc), 100);
    check_chunk(buf, tschunk_encoder_finish(&enc), &s, 0, 100);

    for (uint32_t max_bytes = 20; max_bytes < 900; max_bytes += 37) {
        tschunk_encoder_options lim = {GORILLA, 0, max_bytes, 0};
        cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &lim), 0);
        size_t i = 0;
        while (i < s.n && tschunk_append_bits(&enc, s.ts[i], s.bits[i]) == 0) i++;
        size_t size = tschunk_encoder_finish(&enc);
        cr_assert_leq(size, max_bytes, "chunk of %zu bytes over max_bytes %u", size, max_bytes);
        /* The refused sample really would not have fitted. */
        unsigned char *probe;
        size_t bigger = encode_range_codec(&s, 0, i + 1, GORILLA, &probe);
        cr_assert_gt(bigger, max_bytes, "sample %zu refused but a %zu-byte chunk fits %u", i, bigger,
                     max_bytes);
        free(probe);
        check_chunk(buf, size, &s, 0, i);
    }
    /* A max_bytes under the empty chunk (3 bytes; Prometheus' 2) no chunk can keep: refused (0.49.5: taken, and
     * the empty chunk finished over it). At the empty chunk's size, every sample is refused and it fits. */
    for (uint32_t codec = GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++) {
        for (uint32_t max_bytes = 1; max_bytes <= 3; max_bytes++) {
            tschunk_encoder_options lim = {codec, 0, max_bytes, 0};
            size_t r = tschunk_encoder_init(&enc, buf, cap, &lim);
            cr_assert_eq(r, max_bytes < 3 ? TSC_ERROR(BAD_PARAMETER) : 0, "codec %u max_bytes %u", codec, max_bytes);
            if (r) continue;
            cr_assert_eq(tschunk_get_error_code(tschunk_append(&enc, 1, 2.5)), TSCHUNK_ERROR_CHUNK_FULL);
            cr_assert_eq(tschunk_encoder_finish(&enc), 3);
        }
    }
    tschunk_prom_encoder prom;
    unsigned char pbuf[TSCHUNK_PROM_BOUND(1)];
    tschunk_encoder_options one = {0, 0, 1, 0}, two = {0, 0, 2, 0};
    cr_assert_eq(tschunk_prom_encoder_init(&prom, pbuf, sizeof pbuf, &one), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_prom_encoder_init(&prom, pbuf, sizeof pbuf, &two), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_append(&prom, 1, 2.5)), TSCHUNK_ERROR_CHUNK_FULL);
    cr_assert_eq(tschunk_prom_encoder_finish(&prom), 2);
    free(buf);
    wl_free(&s);
}

Test(chunk, small_buffers_rebalance_streams)
{
    /* Timestamps that need the escape bucket make the ts stream outgrow its first share. */
    wl_series s;
    wl_alloc(&s, 3000, "escape-heavy");
    uint64_t rng = 3;
    int64_t t = 0;
    for (size_t i = 0; i < s.n; i++) {
        t += (int64_t)(wl_rng(&rng) >> 20);
        s.ts[i] = t;
        s.bits[i] = 0x4000000000000000;
    }
    for (size_t cap = TSCHUNK_BOUND(1); cap < 4000; cap = cap * 5 / 4) {
        unsigned char *buf = malloc(cap);
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, buf, cap, &gorilla), 0);
        size_t i = 0;
        while (i < s.n && tschunk_append_bits(&enc, s.ts[i], s.bits[i]) == 0) i++;
        size_t size = tschunk_encoder_finish(&enc);
        cr_assert_leq(size, cap);
        /* Working room is the only slack: a chunk within 80 bytes of the buffer is not refused. */
        cr_assert_geq(size + 80 + 10, cap - 0, "cap %zu: stopped at %zu bytes", cap, size);
        check_chunk(buf, size, &s, 0, i);
        free(buf);
    }
    wl_free(&s);
}

Test(chunk, seek_and_batch_read)
{
    wl_series s;
    wl_synthetic(&s, WL_COUNTER, 1000, 11);
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 1000, GORILLA, &chunk);
    tschunk_iter it;
    cr_assert_eq(tschunk_iter_init(&it, chunk, size), 0);
    check_random_seeks(&it, &s);
    /* Batch reads in odd-sized pieces after a seek. */
    cr_assert_eq(tschunk_iter_seek(&it, s.ts[10]), 1);
    int64_t ts[37];
    double v[37];
    size_t pos = 10, got;
    while ((got = tschunk_iter_read(&it, ts, v, 37)) > 0) {
        cr_assert(!tschunk_is_error(got));
        cr_assert(memcmp(ts, s.ts + pos, got * 8) == 0);
        cr_assert(memcmp(v, s.bits + pos, got * 8) == 0);
        pos += got;
    }
    cr_assert_eq(pos, 1000);
    free(chunk);
    wl_free(&s);
}

/* Batch reads with one array NULL, both codecs (codec 1 decodes those through a block buffer). */
Test(chunk, batch_read_one_array_at_a_time)
{
    const int kinds[] = {WL_GAUGE_2DP, WL_COUNTER, WL_CONST_JITTER};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        wl_series s;
        wl_synthetic(&s, kinds[k], 1500, 17);
        for (uint32_t codec = TSCHUNK_CODEC_GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++) {
            unsigned char *chunk;
            size_t size = encode_range_codec(&s, 0, s.n, codec, &chunk);
            READS_EACH_ARRAY_ALONE(tschunk_iter, tschunk_iter_init, tschunk_iter_read, chunk, size, &s);
            free(chunk);
        }
        wl_free(&s);
    }
}

Test(chunk, errors_have_names_and_bad_parameters_are_refused)
{
    for (int c = 0; c < TSCHUNK_ERROR_MAX_CODE; c++) {
        cr_assert_neq(strcmp(tschunk_error_string((tschunk_error_code)c), "unknown error"), 0);
        for (int other = 0; other < c; other++) /* a name says which error it is */
            cr_assert_neq(strcmp(tschunk_error_string((tschunk_error_code)c),
                                 tschunk_error_string((tschunk_error_code)other)), 0, "codes %d and %d", c, other);
        size_t r = (size_t)0 - (size_t)c;
        cr_assert_eq(tschunk_is_error(r), c != 0);
        cr_assert_eq((int)tschunk_get_error_code(r), c);
    }
    cr_assert_str_eq(tschunk_error_string(TSCHUNK_ERROR_MAX_CODE), "unknown error");
    cr_assert(!tschunk_is_error((size_t)0 - (size_t)TSCHUNK_ERROR_MAX_CODE)); /* past the codes: a size */
    cr_assert(!tschunk_is_error(12345));
    tschunk_encoder enc;
    unsigned char buf[256];
    tschunk_encoder_options bad = {7, 0, 0, 0};
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_init(&enc, buf, sizeof buf, &bad)),
                 TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_init(&enc, buf, 10, NULL)), TSCHUNK_ERROR_DST_TOO_SMALL);
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_init(NULL, buf, 256, NULL)), TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_bound(TSCHUNK_MAX_SAMPLES + 1), 0);
    cr_assert_eq(tschunk_bound(120), TSCHUNK_BOUND(120));
    cr_assert_eq(tschunk_version_number(), TSCHUNK_VERSION_NUMBER);
    cr_assert_str_eq(tschunk_version_string(), TSCHUNK_VERSION_STRING);
    /* The string must name the same version as the number (0.6.0 and 0.7.0 shipped saying "0.5.0"). */
    char expected[32];
    unsigned number = tschunk_version_number();
    snprintf(expected, sizeof expected, "%u.%u.%u", number / 10000, number / 100 % 100, number % 100);
    cr_assert_str_eq(tschunk_version_string(), expected);
}

/* The README's status line names the header's version (0.30.0 and 0.31.0's first commits still said 0.29.3). */
Test(chunk, readme_status_names_this_version)
{
    char path[512], want[64];
    snprintf(path, sizeof path, "%s/README.md", repo_dir());
    test_file readme = test_read_file(path);
    readme.data[readme.size] = 0; /* test_read_file leaves a byte past the end */
    snprintf(want, sizeof want, "\nStatus: version %s. ", TSCHUNK_VERSION_STRING);
    cr_assert(strstr((const char *)readme.data, want), "README.md has no line starting \"%s\"", want + 1);
    free(readme.data);
}

Test(chunk, bound_holds_the_worst_case)
{
    /* Alternating escapes and 64-bit XORs: the most bits a sample can take. */
    size_t n = 2000;
    wl_series s;
    wl_alloc(&s, n, "worst");
    uint64_t rng = 1;
    int64_t t = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)((i & 1) ? (UINT64_C(1) << 61) / 1000 : 1);
        s.ts[i] = t;
        s.bits[i] = (i & 1) ? 0x8000000000000001 : 0xffffffffffffffff ^ (wl_rng(&rng) & 1);
    }
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, n, GORILLA, &chunk);
    cr_assert_leq(size, TSCHUNK_BOUND(n));
    check_chunk(chunk, size, &s, 0, n);
    free(chunk);
    wl_free(&s);
}

/*
 * Codec 1's batch loops (unchecked while both streams have room, scalar and
 * BMI2 twin) against its checked loop: chunks of every size up to 300 samples
 * from every workload (constant streams included), then every truncation and
 * a bit flip at every position of some of them.
 */
static size_t encode_gorilla(const wl_series *s, size_t n, unsigned char **out)
{
    return encode_range_codec(s, 0, n, GORILLA, out);
}

Test(chunk, unchecked_loops_match_the_checked_loop, .timeout = 60)
{
    all_loops_over_workloads(tsc_chunk_decode_with, encode_gorilla, 700, 118, 25, 0);
}

/* Codec 1 three times in four (the chunks decode_chunks pairs), codec 2 otherwise. */
static size_t encode_either(const wl_series *s, size_t n, uint64_t pick, unsigned char **out)
{
    return encode_range_codec(s, 0, n, pick % 4 ? GORILLA : TSCHUNK_CODEC_TSC2, out);
}

static size_t chunk_count(const void *chunk, size_t size)
{
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(chunk, size, &info);
    return tschunk_is_error(r) ? r : info.count;
}

static size_t gorilla_encode_all(const wl_series *s, unsigned char **out)
{
    return encode_range_codec(s, 0, s->n, GORILLA, out);
}

/*
 * tschunk_decode_chunks over lists of 8 to 40 codec-1 chunks (the AVX-512 lanes, 16 and 8 side by side,
 * where the CPU has them) with 64-bit dods, 64-bit windows and constant streams: exactly the series'
 * samples, and with bit flips an error exactly when a chunk alone has one.
 */
Test(chunk, decode_chunks_in_lanes_matches_the_samples, .timeout = 60)
{
    decode_chunks_in_lanes_match(tsc_chunk_decode_chunks_with, tschunk_decode, chunk_count, gorilla_encode_all, 0, 98);
}

Test(chunk, decode_chunks_in_lanes_at_every_window_offset, .timeout = 60)
{
    decode_chunks_at_every_window_offset(tsc_chunk_decode_chunks_with, gorilla_encode_all);
}

Test(chunk, decode_chunks_into_crowded_outputs)
{
    decode_chunks_into_crowded_outputs(tsc_chunk_decode_chunks_with, gorilla_encode_all, 78);
}

/*
 * A codec-1 chunk whose samples all decode in the lanes but whose last byte has padding bits set (found by
 * fuzz_chunk_decode): 16 copies in one list must fail as the chunk alone does, with every loop choice (the
 * lanes' end of a chunk checks its streams' ends too).
 */
Test(chunk, decode_chunks_checks_padding_after_the_lanes)
{
    static const unsigned char chunk[] = {0xc1, 0x11, 0x2c, 0x07, 0x00, 0x00, 0x00, 0x5b, 0x00, 0x00,
                                          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04};
    const void *chunks[16];
    size_t sizes[16];
    for (int i = 0; i < 16; i++) {
        chunks[i] = chunk;
        sizes[i] = sizeof chunk;
    }
    int64_t ts[16 * 44];
    double values[16 * 44];
    size_t alone = tschunk_decode(chunk, sizeof chunk, ts, values, 44);
    cr_assert_eq(alone, TSC_ERROR(RESERVED_BITS), "%s", tschunk_error_name(alone));
    static const int loops[3] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO};
    for (int l = 0; l < 3; l++) {
        size_t r = tsc_chunk_decode_chunks_with(chunks, sizes, 16, ts, values, 16 * 44, loops[l]);
        cr_assert_eq(r, alone, "loops %d: %s", l, tschunk_error_name(r));
    }
}

/*
 * A codec-1 chunk whose second sample's value field opens a window of lead + width > 64 (no encoder writes
 * it: 1.0 then 1.3 is a 51-bit window at lead 13, rewritten to lead 31), the third opening a valid one
 * (-1.3: the sign differs): the lanes start a chunk past its first two samples, reading that field
 * themselves, and must report CORRUPT for a list of 16 as decoding the chunk alone does.
 */
Test(chunk, decode_chunks_checks_the_first_value_field)
{
    enum { N = 120 };
    int64_t ts[16 * N];
    double values[16 * N];
    for (int i = 0; i < N; i++) {
        ts[i] = 1700000000000 + 15000 * (int64_t)i;
        values[i] = i == 0 ? 1.0 : i == 1 ? 1.3 : i == 2 ? -1.3 : 100.0 + 0.25 * i;
    }
    tschunk_encoder_options opts = {TSCHUNK_CODEC_GORILLA, 0, 0, 0};
    unsigned char chunk[TSCHUNK_BOUND(N)];
    size_t size = tschunk_encode(chunk, sizeof chunk, ts, values, N, &opts);
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(chunk, size, &info), 0);
    size_t first_field = info.header_bytes + info.ts_bytes;
    cr_assert_eq(chunk[first_field] >> 1, 0x60 | 13, "`11`, lead 13: %02x", chunk[first_field]);
    chunk[first_field] |= 0x3e; /* lead 31 */
    const void *chunks[16];
    size_t sizes[16];
    for (int i = 0; i < 16; i++) {
        chunks[i] = chunk;
        sizes[i] = size;
    }
    size_t alone = tschunk_decode(chunk, size, ts, values, N);
    cr_assert_eq(alone, TSC_ERROR(CORRUPT), "%s", tschunk_error_name(alone));
    static const int loops[3] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO};
    for (int l = 0; l < 3; l++) {
        size_t r = tsc_chunk_decode_chunks_with(chunks, sizes, 16, ts, values, 16 * N, loops[l]);
        cr_assert_eq(r, alone, "loops %d: %s", l, tschunk_error_name(r));
    }
}

/*
 * Time going back inside the lanes: 16 codec-1 chunks whose step (100 +- 3) is 16 shorter at sample 41
 * alone; one chunk's first delta (header byte 12) rewritten from 100 to 5 takes 95 off every step, below 0
 * there only: the first chunk of a pair, then the second (the pair loop checks each one's output after it).
 * Every loop choice must refuse the list, as decoding that chunk alone does.
 */
Test(chunk, decode_chunks_in_lanes_refuses_time_going_back)
{
    enum { CHUNKS = 16, N = 120 };
    unsigned char *chunk[CHUNKS];
    size_t size[CHUNKS];
    static int64_t ts[CHUNKS * N];
    static double values[CHUNKS * N];
    uint64_t rng = 17;
    for (size_t c = 0; c < CHUNKS; c++) {
        wl_series s = {malloc(N * 8), malloc(N * 8), N, "steps"};
        for (size_t i = 0; i < N; i++) {
            int64_t jitter = i < 2 ? 0 : (int64_t)(wl_rng(&rng) % 7) - 3; /* a timestamp stream of 32 bytes or more */
            s.ts[i] = i == 0 ? 0 : s.ts[i - 1] + (i == 41 ? 84 : 100) + jitter;
            s.bits[i] = wl_rng(&rng);
        }
        size[c] = encode_range_codec(&s, 0, N, GORILLA, &chunk[c]);
        cr_assert_eq(chunk[c][12], 100, "the first delta's byte");
        free(s.ts);
        free(s.bits);
    }
    static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    for (size_t damaged = 4; damaged <= 5; damaged++) { /* the first and the second chunk of a pair */
        chunk[damaged][12] = 5;
        cr_assert_eq(tschunk_get_error_code(tschunk_decode(chunk[damaged], size[damaged], ts, values, N)),
                     TSCHUNK_ERROR_CORRUPT);
        for (int l = 0; l < 4; l++)
            cr_assert_eq(tschunk_get_error_code(tsc_chunk_decode_chunks_with((const void *const *)chunk, size, CHUNKS,
                                                                             ts, values, CHUNKS * N, loops[l])),
                         TSCHUNK_ERROR_CORRUPT, "chunk %zu, loops %d", damaged, l);
        chunk[damaged][12] = 100;
    }
    for (size_t c = 0; c < CHUNKS; c++) free(chunk[c]);
}

/*
 * tschunk_decode_chunks (codec-1 chunks two side by side) gives the samples
 * of decoding each chunk alone, with every loop choice, on lists mixing both
 * codecs, every workload (constant streams included) and lengths 0 to 300,
 * damaged chunks included; capacity is checked before anything is written.
 */
Test(chunk, decode_chunks_matches_one_by_one, .timeout = 60)
{
    decode_chunks_match_one_by_one(tsc_chunk_decode_chunks_with, tschunk_decode, chunk_count, encode_either, 0, 91);
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 300, 5);
    unsigned char *c[2];
    size_t sz[2] = {encode_range_codec(&s, 0, 120, GORILLA, &c[0]), encode_range_codec(&s, 120, 100, GORILLA, &c[1])};
    static int64_t ts[300];
    static double v[300];
    ts[0] = 12345;
    cr_assert_eq(tschunk_get_error_code(tschunk_decode_chunks((const void *const *)c, sz, 2, ts, v, 219)),
                 TSCHUNK_ERROR_DST_TOO_SMALL);
    cr_assert_eq(ts[0], 12345, "a refused call wrote samples");
    cr_assert_eq(tschunk_decode_chunks((const void *const *)c, sz, 2, ts, v, 220), 220);
    cr_assert(memcmp(ts, s.ts, 220 * 8) == 0 && memcmp(v, s.bits, 220 * 8) == 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_decode_chunks((const void *const *)c, sz, 2, NULL, v, 220)),
                 TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_decode_chunks(NULL, NULL, 0, NULL, NULL, 0), 0);
    free(c[0]);
    free(c[1]);
    wl_free(&s);
}

/*
 * Codec 1's unchecked loops start only once a window exists (before one, a reused window is damage they do not
 * check). A chunk whose first 12 values are equal, with each of the value stream's first 16 bits flipped (a `0`
 * field turned into a reused window before any window): one chunk with every loop choice, and two copies in
 * one tschunk_decode_chunks call (the pair loop), refuse it or read it as the checked loop does.
 */
Test(chunk, unchecked_loops_wait_for_the_first_window)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 120, 17);
    for (size_t i = 1; i < 12; i++) s.bits[i] = s.bits[0];
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 120, GORILLA, &chunk), refused = 0;
    tsc_chunk_header h;
    cr_assert_eq(tsc_chunk_parse(chunk, size, &h, TSC_PARSE_ALL), 0);
    static int64_t ts[240], got_ts[240];
    static uint64_t bits[240], got_bits[240];
    static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    for (unsigned bit = 0; bit < 16; bit++) {
        chunk[h.value_offset + bit / 8] ^= (unsigned char)(0x80u >> (bit % 8));
        size_t want = decode_all_loops(tsc_chunk_decode_with, chunk, size, 120, ts, bits, "flipped");
        refused += tschunk_is_error(want);
        const void *pair[2] = {chunk, chunk};
        size_t sizes[2] = {size, size};
        for (int l = 0; l < 4; l++) {
            size_t got =
                tsc_chunk_decode_chunks_with(pair, sizes, 2, got_ts, (double *)(void *)got_bits, 240, loops[l]);
            cr_assert_eq(tschunk_is_error(got), tschunk_is_error(want), "bit %u loops %d", bit, loops[l]);
            if (tschunk_is_error(want)) continue;
            cr_assert(memcmp(got_ts, ts, 120 * 8) == 0 && memcmp(got_bits, bits, 120 * 8) == 0, "bit %u", bit);
            cr_assert(memcmp(got_ts + 120, ts, 120 * 8) == 0 && memcmp(got_bits + 120, bits, 120 * 8) == 0);
        }
        chunk[h.value_offset + bit / 8] ^= (unsigned char)(0x80u >> (bit % 8));
    }
    cr_assert_geq(refused, 10, "the flips of the leading `0` fields must be refused (%zu were)", refused);
    free(chunk);
    wl_free(&s);
}

/*
 * The unchecked loops may read past the timestamp stream into the value stream that follows it (its room runs
 * to the chunk's end); a run that overran it is taken again by the checked loop. A chunk whose timestamp
 * stream lost its last 1 to 12 bytes (its length field shortened to match, the value stream intact): every
 * loop, and two copies through tschunk_decode_chunks, report what the checked loop reports.
 */
Test(chunk, timestamp_stream_cut_short_reads_alike)
{
    static int64_t ts[240], got_ts[240];
    static uint64_t bits[240], got_bits[240];
    static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    for (uint64_t seed = 1; seed <= 8; seed++) {
        wl_series s;
        wl_synthetic(&s, seed % 2 ? WL_GAUGE_2DP : WL_COUNTER, 120, seed);
        unsigned char *chunk;
        size_t size = encode_range_codec(&s, 0, 120, GORILLA, &chunk);
        tsc_chunk_header h;
        cr_assert_eq(tsc_chunk_parse(chunk, size, &h, TSC_PARSE_ALL), 0);
        size_t tbytes = h.info.ts_bytes;
        cr_assert(tbytes > 30 && tbytes < 128 && chunk[h.ts_offset - 1] == tbytes, "a one-byte length field");
        for (size_t cut = 1; cut <= 12; cut++) {
            unsigned char *damaged = malloc(size);
            memcpy(damaged, chunk, h.ts_offset + tbytes - cut);
            damaged[h.ts_offset - 1] = (unsigned char)(tbytes - cut);
            memcpy(damaged + h.ts_offset + tbytes - cut, chunk + h.value_offset, size - h.value_offset);
            size_t dsize = size - cut;
            size_t want = decode_all_loops(tsc_chunk_decode_with, damaged, dsize, 120, ts, bits, "cut");
            cr_assert(tschunk_is_error(want), "seed %llu cut %zu: a short stream must be refused",
                      (unsigned long long)seed, cut);
            const void *pair[2] = {damaged, damaged};
            size_t sizes[2] = {dsize, dsize};
            for (int l = 0; l < 4; l++) {
                size_t got = tsc_chunk_decode_chunks_with(pair, sizes, 2, got_ts, (double *)(void *)got_bits, 240,
                                                          loops[l]);
                cr_assert_eq(got, want, "seed %llu cut %zu loops %d: %s, checked %s", (unsigned long long)seed, cut,
                             loops[l], tschunk_error_name(got), tschunk_error_name(want));
            }
            free(damaged);
        }
        free(chunk);
        wl_free(&s);
    }
}

/* A series whose time goes back once, two thirds in: both ways must stop there with OUT_OF_ORDER. */
static void backwards_once(wl_series *s)
{
    size_t at = s->n * 2 / 3;
    s->ts[at] = s->ts[at - 1] - 1;
}

/* Per-sample appends until the first refusal. @return the samples taken; *err the refusal (0: none). */
static size_t append_one_by_one(tschunk_encoder *enc, const wl_series *s, size_t *err)
{
    size_t i = 0;
    *err = 0;
    for (; i < s->n && !*err; i++) *err = tschunk_append_bits(enc, s->ts[i], s->bits[i]);
    return *err ? i - 1 : i;
}

/* tschunk_append_many in slices of 1 to 37 or 400 samples (seed 0: all at once), until the first refusal. */
static size_t append_in_slices(tschunk_encoder *enc, const wl_series *s, uint64_t seed, size_t *err)
{
    int whole = seed == 0; /* seed 0: the whole series in one call */
    size_t done = 0;
    *err = 0;
    while (done < s->n && !*err) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        /* Mostly short slices; one in four up to 400 samples, so whole codec-2 groups go in at once too. */
        size_t slice = whole ? s->n : 1 + (size_t)(seed >> 33) % ((seed >> 20) % 4 ? 37 : 400), taken;
        if (slice > s->n - done) slice = s->n - done;
        *err = tschunk_append_many(enc, s->ts + done, (const double *)(const void *)(s->bits + done), slice, &taken);
        cr_assert(*err ? taken < slice : taken == slice);
        done += taken;
    }
    return done;
}

/* append_many takes exactly the samples, bytes and refusal of one-by-one appends (both codecs, every limit,
 * summaries, time going back, codec 1's baseline and BMI builds), and a refused call changes nothing. */
Test(chunk, append_many_matches_one_by_one, .timeout = 60)
{
    enum { N = 3000 };
    const tschunk_encoder_options limits[] = {
        {0, 0, 0, 0}, {0, 50, 0, 0}, {0, 0, 300, 0}, {0, 0, 2000, 0}, {0, 1000, 0, 0},
    };
    const size_t capacities[] = {TSCHUNK_BOUND(N), 700};
    size_t cap = TSCHUNK_BOUND(N);
    unsigned char *one = malloc(cap), *many = malloc(cap), *summary_one = malloc(1 << 16), *summary_many = malloc(1 << 16);
    tschunk_sketch *sketch_one, *sketch_many;
    cr_assert_eq(tschunk_sketch_create(&sketch_one, NULL), 0);
    cr_assert_eq(tschunk_sketch_create(&sketch_many, NULL), 0);
    for (int kind = 0; kind <= WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind < WL_SYNTHETIC_COUNT ? kind : WL_GAUGE_2DP, N, 21 + (uint64_t)kind);
        if (kind == WL_SYNTHETIC_COUNT) backwards_once(&s);
        for (uint32_t codec = TSCHUNK_CODEC_GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++)
            for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++)
                for (size_t c = 0; c < 2; c++)
                    for (int with_summary = 0; with_summary < 2; with_summary++) {
                        tschunk_encoder_options o = limits[l];
                        o.codec = codec;
                        tschunk_encoder a, b;
                        cr_assert_eq(tschunk_encoder_init(&a, one, capacities[c], &o), 0);
                        cr_assert_eq(tschunk_encoder_init(&b, many, capacities[c], &o), 0);
                        /* init picks codec 1's BMI build exactly where the CPU has it (codec 2 has none) */
                        cr_assert_eq(a.isa, codec == TSCHUNK_CODEC_GORILLA ? tsc_bmi_here() : 0);
                        if (codec == TSCHUNK_CODEC_GORILLA) {
                            if (c == 1) a.isa = 0;    /* one by one through the baseline build */
                            if (l % 2) b.isa = 0;     /* and in bulk */
                        }
                        if (with_summary) {
                            cr_assert_eq(tschunk_encoder_set_summary(&a, sketch_one), 0);
                            cr_assert_eq(tschunk_encoder_set_summary(&b, sketch_many), 0);
                        }
                        size_t err_a, err_b;
                        size_t taken_a = append_one_by_one(&a, &s, &err_a);
                        size_t taken_b = append_in_slices(&b, &s, with_summary ? 0 : 77 + l, &err_b);
                        cr_assert_eq(taken_b, taken_a, "%s codec %u limits %zu cap %zu: %zu samples, %zu one by one",
                                     s.name, codec, l, c, taken_b, taken_a);
                        cr_assert_eq(err_b, err_a, "%s: %s against %s", s.name, tschunk_error_name(err_b),
                                     tschunk_error_name(err_a));
                        if (err_b) { /* refused again, with nothing changed */
                            tschunk_encoder before = b;
                            size_t again;
                            cr_assert_eq(tschunk_append_many(&b, s.ts + taken_b,
                                                             (const double *)(const void *)(s.bits + taken_b),
                                                             s.n - taken_b, &again), err_b);
                            cr_assert_eq(again, 0);
                            cr_assert(memcmp(&before, &b, sizeof b) == 0, "%s: a refused call changed the state", s.name);
                        }
                        /* The state a later append builds on (private fields, same meaning either way; codec 2's
                         * count, safe_left and prev_bits may lag behind its open group: brought up to date). */
                        if (codec == TSCHUNK_CODEC_TSC2) tsc_codec2_sync(&a), tsc_codec2_sync(&b);
                        cr_assert(a.prev_ts == b.prev_ts && a.prev_bits == b.prev_bits && a.count == b.count &&
                                  a.safe_left == b.safe_left, "%s codec %u limits %zu: state", s.name, codec, l);
                        size_t size_a = tschunk_encoder_finish(&a), size_b = tschunk_encoder_finish(&b);
                        cr_assert_eq(size_b, size_a);
                        cr_assert(memcmp(one, many, size_a) == 0, "%s codec %u limits %zu: bytes differ", s.name, codec, l);
                        if (with_summary) {
                            size_t sa = tschunk_encoder_write_summary(&a, summary_one, 1 << 16);
                            size_t sb = tschunk_encoder_write_summary(&b, summary_many, 1 << 16);
                            cr_assert(sa == sb && !tschunk_is_error(sa) && memcmp(summary_one, summary_many, sa) == 0);
                        }
                    }
        wl_free(&s);
    }
    size_t none;
    tschunk_encoder e;
    /* A run of repeats whose next step wraps past INT64_MAX: the same step modulo 2^64, but time going back. */
    const int64_t wrap_ts[] = {INT64_MAX - 35, INT64_MAX - 25, INT64_MAX - 15, INT64_MAX - 5, INT64_MIN + 4};
    const double same[] = {1, 1, 1, 1, 1};
    cr_assert_eq(tschunk_encoder_init(&e, one, cap, &gorilla), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_append_many(&e, wrap_ts, same, 5, &none)), TSCHUNK_ERROR_OUT_OF_ORDER);
    cr_assert_eq(none, 4);
    cr_assert_eq(tschunk_encoder_init(&e, one, cap, NULL), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_append_many(&e, NULL, NULL, 3, &none)), TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(none, 0);
    cr_assert_eq(tschunk_append_many(&e, NULL, NULL, 0, &none), 0);
    tschunk_sketch_free(sketch_one);
    tschunk_sketch_free(sketch_many);
    free(one);
    free(many);
    free(summary_one);
    free(summary_many);
}

/*
 * tsc_chunk_count (a list's capacity check, which reads a header only up to its sample count) against the
 * full header parse: on chunks of both codecs (0, 1, 2 and 150 samples, constant and changing streams), with
 * each of the first 12 bytes set to 24 values and every truncation, an error from the count is the parse's
 * error, and a count is the parse's count whenever the parse succeeds.
 */
Test(chunk, sample_count_agrees_with_the_header_parse)
{
    const int kinds[] = {WL_CONST_REGULAR, WL_GAUGE_2DP, WL_RANDOM};
    const size_t lengths[] = {0, 1, 2, 150};
    uint64_t rng = 77;
    size_t compared = 0, refused = 0;
    for (size_t k = 0; k < 3; k++)
        for (size_t l = 0; l < 4; l++)
            for (unsigned codec = GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++) {
                wl_series s;
                wl_synthetic(&s, kinds[k], lengths[l] ? lengths[l] : 1, 5);
                unsigned char *chunk;
                size_t size = encode_range_codec(&s, 0, lengths[l], codec, &chunk);
                for (size_t at = 0; at < 12 + 1; at++)
                    for (int v = 0; v < 24; v++) {
                        size_t cut = at == 12 ? (size_t)v * size / 24 : size; /* the last round: truncations */
                        unsigned char *bad = malloc(size ? size : 1);
                        memcpy(bad, chunk, size);
                        if (at < 12 && at < size)
                            bad[at] = (unsigned char)(v < 8 ? chunk[at] ^ (1u << v) : wl_rng(&rng));
                        tsc_chunk_header h;
                        size_t count = tsc_chunk_count(bad, cut);
                        size_t parsed = tsc_chunk_parse(bad, cut, &h, TSC_PARSE_HEADER);
                        if (tsc_is_error(count)) {
                            cr_assert_eq(count, parsed, "kind %zu length %zu codec %u byte %zu value %d", k, l, codec,
                                         at, v);
                            refused++;
                        } else if (!tsc_is_error(parsed)) {
                            cr_assert_eq(count, h.info.count);
                            compared++;
                        }
                        free(bad);
                    }
                free(chunk);
                wl_free(&s);
            }
    cr_assert(compared > 100 && refused > 100, "%zu compared, %zu refused", compared, refused);
}

/* ITERATORS_AGREE (test_util.h) for codec 1's iterator. */
static void iterators_agree(const unsigned char *buf, size_t size, size_t first, int64_t seek_to)
{
    ITERATORS_AGREE(tschunk_iter, tschunk_iter_init, tsc_chunk_iter_step_only, tschunk_iter_seek,
                    tschunk_iter_next_bits, tschunk_iter_read, buf, size, first, seek_to);
}

/*
 * Codec 1's iterator decodes runs of samples into its buffer with the batch
 * loop (0.41.9), and steps one at a time after a run that fails: for every
 * truncation and every bit flip of 300-sample chunks of every workload it
 * must answer as stepping does (the same samples, the same error at the same
 * sample), read one by one, in blocks, and after a seek.
 */
Test(chunk, iterator_runs_answer_as_steps, .timeout = 120)
{
    enum { N = 300 };
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, N, 31);
        unsigned char *chunk;
        size_t size = encode_range_codec(&s, 0, N, GORILLA, &chunk);
        agree_on_every_damage(chunk, size, &s, iterators_agree);
        free(chunk);
        wl_free(&s);
    }
}
