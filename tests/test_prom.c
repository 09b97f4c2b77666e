/* Prometheus XOR chunks: golden vectors from Prometheus itself, round trips, hostile bytes. */
#include "test_util.h"
#include "prom/decoder.h"

typedef struct {
    wl_series s;
    unsigned char *chunk, *alt;
    size_t size, alt_size;
} prom_vector;

static const char *after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? p + strlen(key) : NULL;
}

static unsigned char *parse_hex(const char *p, size_t *size)
{
    size_t len = strcspn(p, "\"") / 2;
    unsigned char *out = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        sscanf(p + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
    *size = len;
    return out;
}

static void load_prom_vector(const char *name, prom_vector *v)
{
    char path[700];
    snprintf(path, sizeof path, "%s/tests/vectors/prometheus-xor/%s.json", repo_dir(), name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    memset(v, 0, sizeof *v);
    int samples = atoi(after(text, "\"num_samples\":"));
    wl_alloc(&v->s, (size_t)samples + 1, name);
    const char *p = after(text, "\"timestamps\":");
    p = strchr(p, '[') + 1;
    for (int i = 0; i < samples; i++) {
        char *end;
        v->s.ts[i] = strtoll(p, &end, 10);
        p = end + 1;
    }
    p = after(text, "\"values_bits\":");
    for (int i = 0; i < samples; i++) {
        p = strchr(p, '"') + 1;
        v->s.bits[i] = strtoull(p, NULL, 16);
        p = strchr(p, '"') + 1;
    }
    v->s.n = (size_t)samples;
    v->chunk = parse_hex(after(text, "\"chunk_hex\": \""), &v->size);
    const char *alt = after(text, "\"alt_chunk_hex_pre_v3\": \"");
    if (alt) v->alt = parse_hex(alt, &v->alt_size);
}

static void free_prom_vector(prom_vector *v)
{
    free(v->chunk);
    free(v->alt);
    wl_free(&v->s);
}

static const char *const prom_names[] = {
    "single_sample", "two_samples", "three_samples", "identical_values_regular", "nan_values",
    "stale_marker", "inf_values", "negative_zero", "dod_bucket_14bit_edges", "irregular_intervals",
    "counter_120", "gauge_random_walk_120", "xor_leading_zero_clamp",
};
#define NPROM (sizeof prom_names / sizeof prom_names[0])

static size_t prom_encode_series(const wl_series *s, size_t start, size_t n, unsigned char **out)
{
    size_t cap = TSCHUNK_PROM_BOUND(n);
    unsigned char *buf = malloc(cap);
    tschunk_prom_encoder enc;
    cr_assert_eq(tschunk_prom_encoder_init(&enc, buf, cap, NULL), 0);
    for (size_t i = start; i < start + n; i++) {
        size_t r = tschunk_prom_append_bits(&enc, s->ts[i], s->bits[i]);
        cr_assert_eq(r, 0, "%s: append %zu: %s", s->name, i, tschunk_error_name(r));
        /* The buffer holds a complete chunk after every append. */
        cr_assert_eq(tschunk_prom_count(buf, tschunk_prom_encoder_size(&enc)), i - start + 1);
    }
    *out = buf;
    return tschunk_prom_encoder_finish(&enc);
}

static void check_prom_decode(const unsigned char *chunk, size_t size, const wl_series *s, size_t start, size_t n)
{
    tschunk_prom_iter it;
    cr_assert_eq(tschunk_prom_iter_init(&it, chunk, size), 0, "%s", s->name);
    for (size_t i = 0; i < n; i++) {
        int64_t ts;
        uint64_t bits;
        size_t r = tschunk_prom_iter_next_bits(&it, &ts, &bits);
        cr_assert_eq(r, 1, "%s: sample %zu: %s", s->name, i, tschunk_error_name(r));
        cr_assert_eq(ts, s->ts[start + i], "%s: ts %zu", s->name, i);
        cr_assert_eq(bits, s->bits[start + i], "%s: value %zu", s->name, i);
    }
    cr_assert_eq(tschunk_prom_iter_next_bits(&it, NULL, NULL), 0, "%s: end of data without error", s->name);
    int64_t *ts = malloc((n + 1) * 8);
    double *v = malloc((n + 1) * 8);
    cr_assert_eq(tschunk_prom_decode(chunk, size, ts, v, n), n, "%s: batch", s->name);
    cr_assert(memcmp(ts, s->ts + start, n * 8) == 0, "%s: batch timestamps", s->name);
    cr_assert(memcmp(v, s->bits + start, n * 8) == 0, "%s: batch values", s->name);
    free(ts);
    free(v);
}

Test(prom, encoder_writes_prometheus_bytes)
{
    for (size_t i = 0; i < NPROM; i++) {
        prom_vector v;
        load_prom_vector(prom_names[i], &v);
        unsigned char *chunk;
        size_t size = prom_encode_series(&v.s, 0, v.s.n, &chunk);
        cr_assert_eq(size, v.size, "%s: %zu bytes, Prometheus wrote %zu", prom_names[i], size, v.size);
        cr_assert(memcmp(chunk, v.chunk, size) == 0, "%s: bytes differ from Prometheus'", prom_names[i]);
        free(chunk);
        free_prom_vector(&v);
    }
}

Test(prom, decoder_reads_prometheus_bytes_v3_and_v2)
{
    size_t alts = 0;
    for (size_t i = 0; i < NPROM; i++) {
        prom_vector v;
        load_prom_vector(prom_names[i], &v);
        check_prom_decode(v.chunk, v.size, &v.s, 0, v.s.n);
        if (v.alt) {
            check_prom_decode(v.alt, v.alt_size, &v.s, 0, v.s.n);
            alts++;
        }
        free_prom_vector(&v);
    }
    cr_assert_eq(alts, 2, "single_sample and irregular_intervals carry a Prometheus 2.x form");
}

Test(prom, seek_follows_chunk_order)
{
    prom_vector v;
    load_prom_vector("irregular_intervals", &v);
    tschunk_prom_iter it;
    cr_assert_eq(tschunk_prom_iter_init(&it, v.chunk, v.size), 0);
    for (size_t target = 0; target < v.s.n; target += 3) {
        cr_assert_eq(tschunk_prom_iter_seek(&it, v.s.ts[target]), 1);
        int64_t ts;
        cr_assert_eq(tschunk_prom_iter_next(&it, &ts, NULL), 1);
        cr_assert_eq(ts, v.s.ts[target]);
    }
    cr_assert_eq(tschunk_prom_iter_seek(&it, v.s.ts[v.s.n - 1] + 1), 0);
    free_prom_vector(&v);
}

Test(prom, round_trip_workloads_and_backwards_time)
{
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 120 * 160, 300 + (uint64_t)kind);
        for (size_t start = 0; start < s.n; start += 120) {
            unsigned char *chunk;
            size_t size = prom_encode_series(&s, start, 120, &chunk);
            check_prom_decode(chunk, size, &s, start, 120);
            free(chunk);
        }
        wl_free(&s);
    }
    /* Prometheus' format stores time going backwards (its head refuses it, not the chunk). */
    wl_series s;
    wl_alloc(&s, 8, "backwards");
    const int64_t t[8] = {1000, 500, INT64_MIN, INT64_MAX, 0, 0, -7, 1 << 30};
    for (int i = 0; i < 8; i++) { s.ts[i] = t[i]; s.bits[i] = (uint64_t)i * 0x0123456789abcdefULL; }
    unsigned char *chunk;
    size_t size = prom_encode_series(&s, 0, 8, &chunk);
    check_prom_decode(chunk, size, &s, 0, 8);
    free(chunk);
    wl_free(&s);
}

Test(prom, transactional_limits)
{
    wl_series s;
    wl_synthetic(&s, WL_RANDOM, 2000, 8);
    unsigned char buf[600] = {0}; /* zeroed, as the encoder: compared whole, bytes never written included */
    tschunk_prom_encoder enc;
    memset(&enc, 0, sizeof enc);
    cr_assert_eq(tschunk_prom_encoder_init(&enc, buf, sizeof buf, NULL), 0);
    size_t i = 0;
    for (;; i++) {
        unsigned char before[sizeof buf];
        tschunk_prom_encoder enc_before = enc;
        memcpy(before, buf, sizeof buf);
        size_t r = tschunk_prom_append_bits(&enc, s.ts[i], s.bits[i]);
        if (r) {
            cr_assert_eq(tschunk_get_error_code(r), TSCHUNK_ERROR_DST_TOO_SMALL);
            cr_assert(memcmp(before, buf, sizeof buf) == 0, "refused append changed bytes");
            cr_assert(memcmp(&enc_before, &enc, sizeof enc) == 0, "refused append changed state");
            break;
        }
    }
    check_prom_decode(buf, tschunk_prom_encoder_finish(&enc), &s, 0, i);
    tschunk_encoder_options lim = {0, 10, 0, 0};
    cr_assert_eq(tschunk_prom_encoder_init(&enc, buf, sizeof buf, &lim), 0);
    for (i = 0; i < 10; i++) cr_assert_eq(tschunk_prom_append_bits(&enc, s.ts[i], s.bits[i]), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_append_bits(&enc, s.ts[i], s.bits[i])), TSCHUNK_ERROR_CHUNK_FULL);
    wl_free(&s);
}

/* max_bytes is exact on the append's fast path too: the encoder stops at the last sample whose chunk fits,
 * with the bytes of an unlimited encoder; after finish every append is refused and changes nothing. */
Test(prom, max_bytes_is_exact_and_finish_is_final, .timeout = 60)
{
    enum { N = 400 };
    size_t cap = TSCHUNK_PROM_BOUND(N);
    /* zeroed, as the encoder: compared whole, bytes never written included */
    unsigned char *free_buf = calloc(1, cap), *lim_buf = calloc(1, cap), *before = calloc(1, cap);
    size_t size_after[N];
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, N, 11 + (uint64_t)kind);
        tschunk_prom_encoder enc;
        memset(&enc, 0, sizeof enc);
        cr_assert_eq(tschunk_prom_encoder_init(&enc, free_buf, cap, NULL), 0);
        for (size_t i = 0; i < N; i++) {
            cr_assert_eq(tschunk_prom_append_bits(&enc, s.ts[i], s.bits[i]), 0);
            size_after[i] = tschunk_prom_encoder_size(&enc);
        }
        cr_assert_eq(tschunk_prom_encoder_finish(&enc), size_after[N - 1]);
        tschunk_prom_encoder finished = enc;
        memcpy(before, free_buf, cap);
        cr_assert_eq(tschunk_get_error_code(tschunk_prom_append_bits(&enc, 2 * s.ts[N - 1] - s.ts[N - 2], s.bits[N - 1])),
                     TSCHUNK_ERROR_STAGE, "%s: append after finish", s.name);
        cr_assert(memcmp(&finished, &enc, sizeof enc) == 0 && memcmp(before, free_buf, cap) == 0);
        for (size_t limit = 11; limit <= size_after[N - 1] + 16; limit += 3) {
            tschunk_encoder_options o = {0, 0, (uint32_t)limit, 0};
            cr_assert_eq(tschunk_prom_encoder_init(&enc, lim_buf, cap, &o), 0);
            size_t taken = 0;
            while (taken < N && !tschunk_prom_append_bits(&enc, s.ts[taken], s.bits[taken])) taken++;
            size_t fits = 0;
            while (fits < N && size_after[fits] <= limit) fits++;
            cr_assert_eq(taken, fits, "%s, max_bytes %zu: %zu samples taken, %zu fit", s.name, limit, taken, fits);
            size_t size = tschunk_prom_encoder_finish(&enc);
            cr_assert_eq(size, taken ? size_after[taken - 1] : 2);
            /* The stream is the unlimited one's up to its last, partial byte; bytes 0-1 hold the count. */
            cr_assert_eq(tschunk_prom_count(lim_buf, size), taken);
            if (taken) cr_assert(memcmp(lim_buf + 2, free_buf + 2, size - 3) == 0, "%s, max_bytes %zu", s.name, limit);
            tschunk_prom_encoder after = enc;
            memcpy(before, lim_buf, cap);
            size_t r = tschunk_prom_append_bits(&enc, s.ts[0], s.bits[0]);
            cr_assert_eq(tschunk_get_error_code(r), TSCHUNK_ERROR_STAGE);
            cr_assert(memcmp(&after, &enc, sizeof enc) == 0 && memcmp(before, lim_buf, cap) == 0);
        }
        wl_free(&s);
    }
    free(free_buf);
    free(lim_buf);
    free(before);
}

Test(prom, hostile_bytes_error_or_samples)
{
    prom_vector v;
    load_prom_vector("gauge_random_walk_120", &v);
    for (size_t len = 0; len < v.size; len++) {
        unsigned char *copy = malloc(len ? len : 1);
        memcpy(copy, v.chunk, len);
        int64_t ts[200];
        double vals[200];
        size_t r = tschunk_prom_decode(copy, len, ts, vals, 200);
        /* The last byte holds padding and bits of the last sample only. */
        if (len + 1 < v.size) cr_assert(tschunk_is_error(r), "truncated at %zu decoded", len);
        free(copy);
    }
    unsigned char *copy = malloc(v.size);
    for (size_t bit = 0; bit < v.size * 8; bit++) {
        memcpy(copy, v.chunk, v.size);
        copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        int64_t ts[70000];
        static double vals[70000];
        size_t r = tschunk_prom_decode(copy, v.size, ts, vals, 70000);
        cr_assert(tschunk_is_error(r) || r <= 65535);
    }
    free(copy);
    /* A count that the bytes cannot hold is refused before any work. */
    const unsigned char big[] = {0xff, 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0};
    tschunk_prom_iter it;
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_iter_init(&it, big, sizeof big)), TSCHUNK_ERROR_TRUNCATED);
    free_prom_vector(&v);
}

Test(prom, transcode_both_ways_bit_exact)
{
    for (size_t i = 0; i < NPROM; i++) {
        prom_vector v;
        load_prom_vector(prom_names[i], &v);
        size_t ncap = TSCHUNK_BOUND(v.s.n), pcap = TSCHUNK_PROM_BOUND(v.s.n);
        unsigned char *native = malloc(ncap), *back = malloc(pcap);
        size_t nsize = tschunk_prom_to_native(v.chunk, v.size, native, ncap);
        cr_assert(!tschunk_is_error(nsize), "%s: %s", prom_names[i], tschunk_error_name(nsize));
        check_chunk(native, nsize, &v.s, 0, v.s.n);
        size_t psize = tschunk_native_to_prom(native, nsize, back, pcap);
        cr_assert_eq(psize, v.size, "%s", prom_names[i]);
        cr_assert(memcmp(back, v.chunk, psize) == 0, "%s: round trip changed the Prometheus bytes", prom_names[i]);
        free(native);
        free(back);
        free_prom_vector(&v);
    }
    /* Chunks of several transcoding batches (256 samples), both codecs' kinds of data. */
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 1000, 61 + (uint64_t)kind);
        size_t pcap = TSCHUNK_PROM_BOUND(s.n), ncap = TSCHUNK_BOUND(s.n);
        unsigned char *prom = malloc(pcap), *native = malloc(ncap), *back = malloc(pcap);
        size_t psize = tschunk_prom_encode(prom, pcap, s.ts, (const double *)(const void *)s.bits, s.n, NULL);
        size_t nsize = tschunk_prom_to_native(prom, psize, native, ncap);
        cr_assert(!tschunk_is_error(nsize), "%s: %s", s.name, tschunk_error_name(nsize));
        check_chunk(native, nsize, &s, 0, s.n);
        cr_assert_eq(tschunk_native_to_prom(native, nsize, back, pcap), psize, "%s", s.name);
        cr_assert(memcmp(back, prom, psize) == 0, "%s: round trip changed the Prometheus bytes", s.name);
        free(prom);
        free(native);
        free(back);
        wl_free(&s);
    }
    /* Time going backwards cannot become a native chunk: said, not hidden. */
    int64_t ts[3] = {10, 5, 20};
    double vals[3] = {1, 2, 3};
    unsigned char prom[TSCHUNK_PROM_BOUND(3)], native[TSCHUNK_BOUND(3)];
    size_t psize = tschunk_prom_encode(prom, sizeof prom, ts, vals, 3, NULL);
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_to_native(prom, psize, native, sizeof native)),
                 TSCHUNK_ERROR_OUT_OF_ORDER);
}

/*
 * The batch decoder's unchecked loops (scalar and BMI2 twin, with the chunk's
 * tail copied ahead of zeros) against the checked loop: chunks of every size
 * up to 300 samples from every workload, then every truncation and a bit flip
 * at every position of some of them.
 */
static size_t encode_prom_first(const wl_series *s, size_t n, unsigned char **out)
{
    return prom_encode_series(s, 0, n, out);
}

Test(prom, unchecked_loops_match_the_checked_loop, .timeout = 60)
{
    /* Flips from bit 16 on: the count bytes would only ask for more samples than the arrays hold. */
    all_loops_over_workloads(tsc_prom_decode_with, encode_prom_first, 900, 120, 23, 16);
    int64_t ts[301];
    uint64_t bits[301];
    for (size_t k = 0; k < NPROM; k++) {
        prom_vector v;
        load_prom_vector(prom_names[k], &v);
        size_t r = decode_all_loops(tsc_prom_decode_with, v.chunk, v.size, v.s.n, ts, bits, prom_names[k]);
        cr_assert_eq(r, v.s.n, "%s", prom_names[k]);
        cr_assert(memcmp(ts, v.s.ts, r * 8) == 0 && memcmp(bits, v.s.bits, r * 8) == 0, "%s", prom_names[k]);
        free_prom_vector(&v);
    }
}

static size_t encode_prom_pick(const wl_series *s, size_t n, uint64_t pick, unsigned char **out)
{
    (void)pick;
    return prom_encode_series(s, 0, n, out);
}

/*
 * tschunk_prom_decode_chunks (two chunks side by side) gives the samples of
 * decoding each chunk alone, with every loop choice, on lists of chunks of
 * every workload and of mixed lengths (0 to 300 samples), and an error
 * exactly when one of the chunks has one.
 */
Test(prom, decode_chunks_matches_one_by_one, .timeout = 60)
{
    /* Damage from byte 2 on: the count bytes would only ask for more samples than the arrays hold. */
    decode_chunks_match_one_by_one(tsc_prom_decode_chunks_with, tschunk_prom_decode, tschunk_prom_count,
                                   encode_prom_pick, 2, 77);
    wl_series s[WL_SYNTHETIC_COUNT];
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) wl_synthetic(&s[kind], kind, 300, 40 + (uint64_t)kind);
    static int64_t got_ts[300];
    static uint64_t got_bits[300];
    /* Capacity is checked before anything is written; NULL arrays and chunk lists are refused. */
    unsigned char *c[2];
    size_t sz[2] = {prom_encode_series(&s[0], 0, 120, &c[0]), prom_encode_series(&s[3], 0, 100, &c[1])};
    got_ts[0] = 12345;
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_decode_chunks((const void *const *)c, sz, 2, got_ts,
                                                                   (double *)(void *)got_bits, 219)),
                 TSCHUNK_ERROR_DST_TOO_SMALL);
    cr_assert_eq(got_ts[0], 12345, "a refused call wrote samples");
    cr_assert_eq(tschunk_prom_decode_chunks((const void *const *)c, sz, 2, got_ts, (double *)(void *)got_bits, 220), 220);
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_decode_chunks((const void *const *)c, sz, 2, NULL, NULL, 220)),
                 TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_get_error_code(tschunk_prom_decode_chunks(NULL, sz, 2, got_ts, NULL, 220)),
                 TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_prom_decode_chunks(NULL, NULL, 0, NULL, NULL, 0), 0);
    free(c[0]);
    free(c[1]);
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) wl_free(&s[kind]);
}

/* tschunk_prom_append_many, in slices of 1 to 37 samples, takes the samples and bytes of one-by-one appends
 * and refuses the same sample with the same error (limits, a small buffer, time going back, after finish). */
static size_t prom_encode_all(const wl_series *s, unsigned char **out) { return prom_encode_series(s, 0, s->n, out); }

/*
 * tschunk_prom_decode_chunks over lists of 8 to 40 chunks (the AVX-512 lanes, 16 and 8 side by side, where the
 * CPU has them) on series with 64-bit dods and 64-bit windows: exactly the series' samples, and the same
 * as each chunk decoded alone; with bit flips, an error exactly when a chunk alone has one.
 */
Test(prom, decode_chunks_in_lanes_matches_the_samples, .timeout = 60)
{
    decode_chunks_in_lanes_match(tsc_prom_decode_chunks_with, tschunk_prom_decode, tschunk_prom_count,
                                 prom_encode_all, 2, 99);
}

Test(prom, decode_chunks_in_lanes_at_every_window_offset, .timeout = 60)
{
    decode_chunks_at_every_window_offset(tsc_prom_decode_chunks_with, prom_encode_all);
}

Test(prom, decode_chunks_into_crowded_outputs)
{
    decode_chunks_into_crowded_outputs(tsc_prom_decode_chunks_with, prom_encode_all, 77);
}

/* One by one through the baseline build (which init picks only on a CPU without BMI): the same bytes and refusals. */
static void check_baseline_build(const wl_series *s, size_t n, size_t capacity, const tschunk_encoder_options *limits,
                                 const unsigned char *chunk, size_t size, size_t taken, size_t err)
{
    unsigned char *base = malloc(capacity);
    tschunk_prom_encoder e;
    cr_assert_eq(tschunk_prom_encoder_init(&e, base, capacity, limits), 0);
    cr_assert_eq(e.isa, tsc_bmi_here(), "init picks the BMI build exactly where the CPU has it");
    e.isa = 0;
    size_t done = 0, r = 0;
    while (done < n && !(r = tschunk_prom_append_bits(&e, s->ts[done], s->bits[done]))) done++;
    cr_assert(done == taken && r == err, "%s: the baseline build took %zu against %zu", s->name, done, taken);
    cr_assert(tschunk_prom_encoder_size(&e) == size && memcmp(base, chunk, size) == 0, "%s: the baseline build's bytes",
              s->name);
    free(base);
}

Test(prom, append_many_matches_one_by_one, .timeout = 60)
{
    enum { N = 3000 };
    const tschunk_encoder_options limits[] = {{0, 0, 0, 0}, {0, 50, 0, 0}, {0, 0, 300, 0}, {0, 0, 2000, 0}};
    const size_t capacities[] = {TSCHUNK_PROM_BOUND(N), 700};
    unsigned char *one = malloc(TSCHUNK_PROM_BOUND(N)), *many = malloc(TSCHUNK_PROM_BOUND(N));
    for (int kind = 0; kind <= WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind < WL_SYNTHETIC_COUNT ? kind : WL_COUNTER, N, 31 + (uint64_t)kind);
        if (kind == WL_SYNTHETIC_COUNT) /* Prometheus takes time going back (a wrapped delta) */
            for (size_t i = 100; i < N; i += 97) s.ts[i] = s.ts[i - 1] - 1000 * (int64_t)i;
        for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++)
            for (size_t c = 0; c < 2; c++) {
                tschunk_prom_encoder a, b;
                cr_assert_eq(tschunk_prom_encoder_init(&a, one, capacities[c], &limits[l]), 0);
                cr_assert_eq(tschunk_prom_encoder_init(&b, many, capacities[c], &limits[l]), 0);
                if (l % 2) b.isa = 0; /* bulk runs through both builds */
                size_t taken_a = 0, err_a = 0;
                while (taken_a < N && !(err_a = tschunk_prom_append_bits(&a, s.ts[taken_a], s.bits[taken_a])))
                    taken_a++;
                check_baseline_build(&s, N, capacities[c], &limits[l], one, tschunk_prom_encoder_size(&a), taken_a,
                                     err_a);
                size_t taken_b = 0, err_b = 0;
                uint64_t seed = 5 + l;
                while (taken_b < N && !err_b) {
                    size_t slice = 1 + (size_t)((seed = seed * 6364136223846793005u + 1) >> 33) % 37, got;
                    if (slice > N - taken_b) slice = N - taken_b;
                    err_b = tschunk_prom_append_many(&b, s.ts + taken_b,
                                                     (const double *)(const void *)(s.bits + taken_b), slice, &got);
                    cr_assert(err_b ? got < slice : got == slice);
                    taken_b += got;
                }
                cr_assert_eq(taken_b, taken_a, "%s limits %zu cap %zu: %zu against %zu", s.name, l, c, taken_b, taken_a);
                cr_assert_eq(err_b, err_a);
                cr_assert_eq(tschunk_prom_encoder_size(&b), tschunk_prom_encoder_size(&a));
                cr_assert(memcmp(one, many, tschunk_prom_encoder_size(&a)) == 0, "%s limits %zu: bytes", s.name, l);
                tschunk_prom_encoder before = b;
                size_t got;
                if (err_b) {
                    cr_assert_eq(tschunk_prom_append_many(&b, s.ts + taken_b,
                                                          (const double *)(const void *)(s.bits + taken_b), N - taken_b,
                                                          &got), err_b);
                    cr_assert(got == 0 && memcmp(&before, &b, sizeof b) == 0);
                }
                cr_assert_eq(tschunk_prom_encoder_finish(&b), tschunk_prom_encoder_size(&a));
                before = b;
                size_t r = tschunk_prom_append_many(&b, s.ts, (const double *)(const void *)s.bits, N, &got);
                cr_assert(tschunk_get_error_code(r) == TSCHUNK_ERROR_STAGE && got == 0);
                cr_assert(memcmp(&before, &b, sizeof b) == 0);
            }
        wl_free(&s);
    }
    free(one);
    free(many);
}

/* The Prometheus iterator's batch reads with one array NULL (decoded through a block buffer then). */
Test(prom, batch_read_one_array_at_a_time)
{
    const int kinds[] = {WL_GAUGE_2DP, WL_COUNTER, WL_CONST_JITTER};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        wl_series s;
        wl_synthetic(&s, kinds[k], 1500, 17);
        size_t cap = tschunk_prom_bound(s.n);
        unsigned char *chunk = malloc(cap);
        size_t size = tschunk_prom_encode(chunk, cap, s.ts, (const double *)(const void *)s.bits, s.n, NULL);
        cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
        READS_EACH_ARRAY_ALONE(tschunk_prom_iter, tschunk_prom_iter_init, tschunk_prom_iter_read, chunk, size, &s);
        free(chunk);
        wl_free(&s);
    }
}

/* ITERATORS_AGREE (test_util.h) for the Prometheus iterator. */
static void prom_iterators_agree(const unsigned char *buf, size_t size, size_t first, int64_t seek_to)
{
    ITERATORS_AGREE(tschunk_prom_iter, tschunk_prom_iter_init, tsc_prom_iter_step_only, tschunk_prom_iter_seek,
                    tschunk_prom_iter_next_bits, tschunk_prom_iter_read, buf, size, first, seek_to);
}

/*
 * The Prometheus iterator decodes runs of samples into its buffer with the
 * batch loop (0.42.0), and steps one at a time after a run that fails: for
 * every truncation and every bit flip of 300-sample chunks of every workload
 * (and of one whose time jumps back and forth) it must answer as stepping
 * does (the same samples, the same error at the same sample), read one by
 * one, in blocks, and after a seek.
 */
Test(prom, iterator_runs_answer_as_steps, .timeout = 120)
{
    enum { N = 300 };
    uint64_t rng = 4242;
    for (int kind = 0; kind <= WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        if (kind < WL_SYNTHETIC_COUNT) {
            wl_synthetic(&s, kind, N, 37);
        } else {
            wl_alloc(&s, N, "backwards");
            for (size_t i = 0; i < N; i++) {
                s.ts[i] = (int64_t)(wl_rng(&rng) % 100000) - 50000;
                s.bits[i] = wl_rng(&rng) % 4 && i ? s.bits[i - 1] ^ (wl_rng(&rng) & 0xff0) : wl_rng(&rng);
            }
        }
        unsigned char *chunk;
        size_t size = prom_encode_series(&s, 0, N, &chunk);
        agree_on_every_damage(chunk, size, &s, prom_iterators_agree);
        free(chunk);
        wl_free(&s);
    }
}
