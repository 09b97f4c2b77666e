/* Helpers shared by the Criterion suites. */
#ifndef TSCHUNK_TEST_UTIL_H
#define TSCHUNK_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tschunk.h"
#include "common/common.h"
#include "../bench/workloads.h"

/* Directory of the repository (set by make test), for vectors and corpora. */
static inline const char *repo_dir(void)
{
    const char *d = getenv("TSCHUNK_REPO");
    return d && *d ? d : ".";
}

/* A fresh directory under /tmp for a suite's files (its .init), and its removal (its .fini). */
static inline void test_dir_make(char *dir, size_t cap, const char *tag)
{
    snprintf(dir, cap, "/tmp/tschunk-%s-XXXXXX", tag);
    cr_assert(mkdtemp(dir), "%s", dir);
}

static inline void test_dir_remove(const char *dir)
{
    char cmd[320];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A byte of the chunk changed so that its header still reads (tschunk_chunk_info_get, and so tschunk_validate, take
 * it: a chunk file's reader checks that much) and its samples do not: the last such byte from the end, set to 0xff or
 * cleared. */
static inline void damage_chunk_body(unsigned char *chunk, size_t size)
{
    for (size_t at = size; at-- > 0;)
        for (int value = 0xff; value >= 0; value -= 0xff) {
            unsigned char was = chunk[at];
            chunk[at] = (unsigned char)value;
            tschunk_chunk_info info;
            tschunk_iter it;
            size_t r = tschunk_chunk_info_get(chunk, size, &info);
            if (!tschunk_is_error(r) && tschunk_iter_init(&it, chunk, size) == 0) {
                int64_t ts;
                double x;
                while ((r = tschunk_iter_next(&it, &ts, &x)) == 1) continue;
                if (tschunk_is_error(r)) return;
            }
            chunk[at] = was;
        }
    cr_assert(0, "no byte of the chunk damages it");
}

/* A whole file in a fresh buffer (one byte more, so that an empty file still allocates). */
typedef struct {
    unsigned char *data;
    size_t size;
} test_file;

/* The statistics of a new cubic sketch of relative accuracy 0.01: the gamma and index offset that segment options
 * with summaries of that mapping name. */
static inline tschunk_sketch_stats test_cubic_stats(void)
{
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    tschunk_sketch_free(sk);
    return st;
}

/* A segment writer at path (default options) holding one chunk of two samples of series_id (1000: 1, 1010: 2). */
static inline tschunk_segment_writer *test_writer_with_one_chunk(const char *path, uint64_t series_id)
{
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, NULL), 0);
    int64_t ts[2] = {1000, 1010};
    double v[2] = {1, 2};
    uint8_t chunk[TSCHUNK_BOUND(2)];
    size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, series_id, chunk, size, NULL, 0), 0);
    return w;
}

static inline test_file test_read_file(const char *path)
{
    test_file f = {NULL, 0};
    FILE *in = fopen(path, "rb");
    cr_assert(in, "%s", path);
    fseek(in, 0, SEEK_END);
    f.size = (size_t)ftell(in);
    fseek(in, 0, SEEK_SET);
    f.data = malloc(f.size + 1);
    cr_assert_eq(fread(f.data, 1, f.size, in), f.size);
    fclose(in);
    return f;
}

/* size bytes into the file at path (replaced), every byte written and the file closed. */
static inline void test_write_file(const char *path, const void *bytes, size_t size)
{
    FILE *out = fopen(path, "wb");
    cr_assert(out, "%s", path);
    cr_assert_eq(fwrite(bytes, 1, size, out), size, "%s", path);
    cr_assert_eq(fclose(out), 0, "%s", path);
}

/* Encode s[start, start+n) as one chunk of `codec` (0: the default) into a fresh buffer; returns its size. */
static inline size_t encode_range_codec(const wl_series *s, size_t start, size_t n, uint32_t codec,
                                        unsigned char **out)
{
    size_t cap = TSCHUNK_BOUND(n);
    unsigned char *buf = malloc(cap);
    cr_assert(buf);
    tschunk_encoder enc;
    tschunk_encoder_options opts = {codec, 0, 0, 0};
    size_t r = tschunk_encoder_init(&enc, buf, cap, &opts);
    cr_assert(!tschunk_is_error(r), "init: %s", tschunk_error_name(r));
    for (size_t i = start; i < start + n; i++) {
        r = tschunk_append_bits(&enc, s->ts[i], s->bits[i]);
        cr_assert(!tschunk_is_error(r), "append %zu: %s", i, tschunk_error_name(r));
    }
    size_t size = tschunk_encoder_finish(&enc);
    cr_assert(!tschunk_is_error(size));
    *out = buf;
    return size;
}

static inline size_t encode_range(const wl_series *s, size_t start, size_t n, unsigned char **out)
{
    return encode_range_codec(s, start, n, 0, out);
}

/* Decode with the iterator and the batch reader; both must give s[start, start+n) exactly. */
static inline void check_chunk(const unsigned char *chunk, size_t size, const wl_series *s, size_t start,
                               size_t n)
{
    cr_assert_eq(tschunk_validate(chunk, size), 0);
    tschunk_iter it;
    cr_assert_eq(tschunk_iter_init(&it, chunk, size), 0);
    for (size_t i = 0; i < n; i++) {
        int64_t ts;
        uint64_t bits;
        size_t r = tschunk_iter_next_bits(&it, &ts, &bits);
        cr_assert_eq(r, 1, "%s: sample %zu: %s", s->name, start + i, tschunk_error_name(r));
        cr_assert_eq(ts, s->ts[start + i], "%s: ts %zu", s->name, start + i);
        cr_assert_eq(bits, s->bits[start + i], "%s: value %zu: %016llx != %016llx", s->name, start + i,
                     (unsigned long long)bits, (unsigned long long)s->bits[start + i]);
    }
    cr_assert_eq(tschunk_iter_next_bits(&it, NULL, NULL), 0);
    int64_t *ts = malloc((n + 1) * sizeof *ts);
    double *v = malloc((n + 1) * sizeof *v);
    cr_assert_eq(tschunk_decode(chunk, size, ts, v, n), n);
    cr_assert(memcmp(ts, s->ts + start, n * sizeof *ts) == 0, "%s: batch timestamps", s->name);
    cr_assert(memcmp(v, s->bits + start, n * sizeof *v) == 0, "%s: batch values", s->name);
    free(ts);
    free(v);
}

/* Round-trip a whole series in chunks of `per_chunk` of `codec`, cutting where time goes backwards. */
static inline size_t roundtrip_series_codec(const wl_series *s, size_t per_chunk, uint32_t codec)
{
    size_t bytes = 0;
    for (size_t start = 0; start < s->n;) {
        size_t n = 1;
        while (start + n < s->n && n < per_chunk && s->ts[start + n] >= s->ts[start + n - 1]) n++;
        unsigned char *chunk;
        size_t size = encode_range_codec(s, start, n, codec, &chunk);
        check_chunk(chunk, size, s, start, n);
        free(chunk);
        bytes += size;
        start += n;
    }
    return bytes;
}

static inline size_t roundtrip_series(const wl_series *s, size_t per_chunk)
{
    return roundtrip_series_codec(s, per_chunk, 0);
}

/* Every ordered pair of the k bit patterns, as a series; round trip through `codec` at two chunk sizes. */
static inline void roundtrip_pairs(const uint64_t *patterns, size_t k, uint32_t codec)
{
    wl_series s;
    wl_alloc(&s, k * k * 2, "special");
    size_t n = 0;
    for (size_t a = 0; a < k; a++)
        for (size_t b = 0; b < k; b++) {
            s.ts[n] = (int64_t)n * 1000;
            s.bits[n++] = patterns[a];
            s.ts[n] = (int64_t)n * 1000;
            s.bits[n++] = patterns[b];
        }
    roundtrip_series_codec(&s, 120, codec);
    roundtrip_series_codec(&s, TSCHUNK_MAX_SAMPLES, codec);
    wl_free(&s);
}

/*
 * >= 1,000,000 samples through `codec`: every synthetic shape at 120 and 1024
 * samples a chunk, then a mix of random bits, NaN payloads, stale markers,
 * repeats, integers and 1-decimal values with irregular timestamps. Fixed seeds.
 */
static inline void roundtrip_million(uint32_t codec, uint64_t seed)
{
    size_t total = 0;
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 120000, seed + (uint64_t)kind);
        roundtrip_series_codec(&s, 120, codec);
        roundtrip_series_codec(&s, 1024, codec);
        total += 2 * s.n;
        wl_free(&s);
    }
    uint64_t rng = seed;
    wl_series s;
    wl_alloc(&s, 200000, "random-mix");
    int64_t t = -1000000;
    for (size_t i = 0; i < s.n; i++) {
        uint64_t r = wl_rng(&rng);
        t += (int64_t)(r % 7 == 0 ? wl_rng(&rng) % 100000 : r % 3);
        s.ts[i] = t;
        switch (r % 6) {
        case 0: s.bits[i] = wl_rng(&rng); break;
        case 1: s.bits[i] = 0x7ff8000000000000 | (wl_rng(&rng) >> 13); break;
        case 2: s.bits[i] = 0x7ff0000000000002; break;
        case 3: s.bits[i] = i ? s.bits[i - 1] : 0; break;
        case 4: s.bits[i] = wl_bits((double)(int64_t)(wl_rng(&rng) % 100000)); break;
        default: s.bits[i] = wl_bits((double)(int64_t)(wl_uniform(&rng) * 1e4) / 10.0); break;
        }
    }
    roundtrip_series_codec(&s, 120, codec);
    roundtrip_series_codec(&s, 4096, codec);
    total += 2 * s.n;
    wl_free(&s);
    cr_assert_geq(total, 1000000);
}

/* Two iterators of type ITER over the same bytes, the second stepped one sample at a time by STEP_ONLY: after
 * `first` samples by NEXT_BITS (a seek to `seek_to` first when it is not INT64_MIN), the rest by READ in blocks
 * of 37; every answer must be the same (codec 1's and the Prometheus iterators' runs against their steps). */
#define ITERATORS_AGREE(ITER, INIT, STEP_ONLY, SEEK, NEXT_BITS, READ, buf, size, first, seek_to)                   \
    do {                                                                                                      \
        ITER runs, steps;                                                                                     \
        size_t ra = INIT(&runs, buf, size), rb = INIT(&steps, buf, size);                                     \
        cr_assert_eq(ra, rb);                                                                                 \
        if (ra) break;                                                                                        \
        STEP_ONLY(&steps);                                                                                    \
        if ((seek_to) != INT64_MIN) cr_assert_eq(SEEK(&runs, seek_to), SEEK(&steps, seek_to));                \
        int more = 1;                                                                                         \
        for (size_t k = 0; more && k < (first); k++) {                                                        \
            int64_t ta = 0, tb = 0;                                                                           \
            uint64_t ba = 0, bb = 0;                                                                          \
            ra = NEXT_BITS(&runs, &ta, &ba);                                                                  \
            rb = NEXT_BITS(&steps, &tb, &bb);                                                                 \
            cr_assert_eq(ra, rb, "sample %zu: %s / %s", k, tschunk_error_name(ra), tschunk_error_name(rb));   \
            more = ra == 1;                                                                                   \
            cr_assert(!more || (ta == tb && ba == bb), "sample %zu", k);                                      \
        }                                                                                                     \
        while (more) {                                                                                        \
            int64_t ta[37], tb[37];                                                                           \
            double va[37], vb[37];                                                                            \
            ra = READ(&runs, ta, va, 37);                                                                     \
            rb = READ(&steps, tb, vb, 37);                                                                    \
            cr_assert_eq(ra, rb, "read: %s / %s", tschunk_error_name(ra), tschunk_error_name(rb));            \
            more = ra != 0 && !tschunk_is_error(ra);                                                          \
            cr_assert(!more || (!memcmp(ta, tb, ra * sizeof *ta) && !memcmp(va, vb, ra * sizeof *va)));      \
        }                                                                                                     \
    } while (0)

/*
 * READ (tschunk_iter_read or tschunk_prom_iter_read) over a chunk of s's samples from the first, in pieces of 1 to
 * 300 samples, with the timestamp array or the value array left NULL in turn (the API lets either be NULL): what
 * comes out is s, to the end.
 */
#define READS_EACH_ARRAY_ALONE(ITER, INIT, READ, buf, size, s)                                                     \
    do {                                                                                                      \
        ITER it_;                                                                                             \
        cr_assert_eq(INIT(&it_, buf, size), 0);                                                               \
        int64_t ts_[300];                                                                                     \
        double v_[300];                                                                                       \
        size_t at_ = 0, piece_ = 0, got_;                                                                     \
        for (;; piece_++) {                                                                                   \
            int64_t *tp_ = piece_ % 3 == 1 ? NULL : ts_;                                                      \
            double *vp_ = piece_ % 3 == 2 ? NULL : v_;                                                        \
            got_ = READ(&it_, tp_, vp_, 1 + (piece_ * 97) % 300);                                             \
            cr_assert(!tschunk_is_error(got_), "piece %zu: %s", piece_, tschunk_error_name(got_));             \
            if (!got_) break;                                                                                 \
            cr_assert(!tp_ || !memcmp(ts_, (s)->ts + at_, got_ * sizeof *ts_), "timestamps at %zu", at_);     \
            cr_assert(!vp_ || !memcmp(v_, (s)->bits + at_, got_ * sizeof *v_), "values at %zu", at_);         \
            at_ += got_;                                                                                      \
        }                                                                                                     \
        cr_assert_eq(at_, (s)->n);                                                                            \
    } while (0)

/* An ITERATORS_AGREE check over s's chunk at every truncation (read to the end) and with each bit flipped in turn
 * (after bit % 211 samples one by one, a seek first at every third bit). */
typedef void (*iterators_agree_fn)(const unsigned char *buf, size_t size, size_t first, int64_t seek_to);

static inline void agree_on_every_damage(const unsigned char *chunk, size_t size, const wl_series *s,
                                         iterators_agree_fn agree)
{
    unsigned char *copy = malloc(size);
    for (size_t len = 0; len <= size; len++) {
        memcpy(copy, chunk, len);
        agree(copy, len, s->n + 1, INT64_MIN);
    }
    for (size_t bit = 0; bit < size * 8; bit++) {
        memcpy(copy, chunk, size);
        copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        agree(copy, size, bit % 211, bit % 3 ? INT64_MIN : s->ts[(bit / 3) % s->n]);
    }
    free(copy);
}

/* 300 seeks to random timestamps of s (exact hits and in-between), each checked against a linear search; then one past the end. */
static inline void check_random_seeks(tschunk_iter *it, const wl_series *s)
{
    uint64_t rng = 5;
    for (int q = 0; q < 300; q++) {
        size_t target = (size_t)(wl_rng(&rng) % s->n);
        int64_t t = s->ts[target] - (q & 1);
        size_t want = 0;
        while (want < s->n && s->ts[want] < t) want++;
        cr_assert_eq(tschunk_iter_seek(it, t), 1);
        int64_t ts;
        uint64_t bits;
        cr_assert_eq(tschunk_iter_next_bits(it, &ts, &bits), 1);
        cr_assert_eq(ts, s->ts[want]);
        cr_assert_eq(bits, s->bits[want]);
        if (q % 3 == 0) { /* back to the sample just returned, the one before the iterator's position */
            cr_assert_eq(tschunk_iter_seek(it, ts), 1);
            cr_assert_eq(tschunk_iter_next_bits(it, &ts, &bits), 1);
            cr_assert(ts == s->ts[want] && bits == s->bits[want], "seek %d: back to the sample returned", q);
        }
    }
    cr_assert_eq(tschunk_iter_seek(it, s->ts[s->n - 1] + 1), 0);
}

/* Decodes one chunk with every loop choice; all must give the same result, and the checked loop's is returned. */
typedef size_t (*decode_with_fn)(const void *, size_t, int64_t *, double *, size_t, int);

static inline size_t decode_all_loops(decode_with_fn decode_with, const unsigned char *chunk, size_t size, size_t cap,
                                      int64_t *ts, uint64_t *bits, const char *what)
{
    static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    size_t first = 0;
    for (int l = 0; l < 4; l++) {
        int64_t *t = malloc((cap + 1) * 8);
        uint64_t *b = malloc((cap + 1) * 8);
        size_t r = decode_with(chunk, size, t, (double *)(void *)b, cap, loops[l]);
        if (l == 0) {
            first = r;
            if (!tschunk_is_error(r)) {
                memcpy(ts, t, r * 8);
                memcpy(bits, b, r * 8);
            }
        } else {
            cr_assert_eq(r, first, "%s: loops %d return %zu, checked %zu", what, loops[l], r, first);
            if (!tschunk_is_error(r)) {
                cr_assert(memcmp(t, ts, r * 8) == 0, "%s: loops %d timestamps differ", what, loops[l]);
                cr_assert(memcmp(b, bits, r * 8) == 0, "%s: loops %d values differ", what, loops[l]);
            }
        }
        free(t);
        free(b);
    }
    return first;
}


/* decode_all_loops on every truncation of a chunk and on a bit flip at every bit from first_bit on. */
static inline void all_loops_on_damage(decode_with_fn decode_with, const unsigned char *chunk, size_t size, size_t n,
                                       size_t first_bit, int64_t *ts, uint64_t *bits)
{
    unsigned char *copy = malloc(size);
    cr_assert(copy);
    for (size_t len = 0; len < size; len++) {
        memcpy(copy, chunk, len);
        decode_all_loops(decode_with, copy, len, n, ts, bits, "truncated");
    }
    for (size_t bit = first_bit; bit < size * 8; bit++) {
        memcpy(copy, chunk, size);
        copy[bit / 8] ^= (unsigned char)(0x80u >> (bit % 8));
        decode_all_loops(decode_with, copy, size, n, ts, bits, "bit flip");
    }
    free(copy);
}

/* Encodes s[0, n) as one chunk into a fresh buffer. @return its size. */
typedef size_t (*encode_first_fn)(const wl_series *s, size_t n, unsigned char **out);

/*
 * A decoder's loops against each other on chunks of every workload and of
 * every size up to 300 samples (each must decode to its samples), and on
 * every truncation and bit flip (from first_bit on) of the chunks of
 * damage_a and damage_b samples.
 */
static inline void all_loops_over_workloads(decode_with_fn decode_with, encode_first_fn encode, uint64_t seed,
                                            size_t damage_a, size_t damage_b, size_t first_bit)
{
    int64_t ts[301];
    uint64_t bits[301];
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 300, seed + (uint64_t)kind);
        for (size_t n = 1; n <= 300; n += n < 40 ? 1 : 13) {
            unsigned char *chunk;
            size_t size = encode(&s, n, &chunk);
            cr_assert_eq(decode_all_loops(decode_with, chunk, size, n, ts, bits, s.name), n);
            cr_assert(memcmp(ts, s.ts, n * 8) == 0 && memcmp(bits, s.bits, n * 8) == 0, "%s: %zu samples", s.name, n);
            if (n == damage_a || n == damage_b) all_loops_on_damage(decode_with, chunk, size, n, first_bit, ts, bits);
            free(chunk);
        }
        wl_free(&s);
    }
}

typedef size_t (*decode_chunks_with_fn)(const void *const *, const size_t *, size_t, int64_t *, double *, size_t, int);
typedef size_t (*decode_one_fn)(const void *, size_t, int64_t *, double *, size_t);
typedef size_t (*count_fn)(const void *, size_t);
/* Encodes s[0, n) as one chunk (pick: a random number to choose options by) into a fresh buffer. */
typedef size_t (*encode_pick_fn)(const wl_series *s, size_t n, uint64_t pick, unsigned char **out);

/* Chunks decoded one by one into consecutive places: what a decode_chunks must give. @return total or an error. */
static inline size_t decode_one_by_one(decode_one_fn decode, count_fn count, const void *const *chunks,
                                       const size_t *sizes, size_t n, int64_t *ts, uint64_t *bits, size_t cap)
{
    size_t at = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = count(chunks[i], sizes[i]);
        if (tschunk_is_error(c)) return c;
        if (c > cap - at) return TSC_ERROR(DST_TOO_SMALL);
        size_t r = decode(chunks[i], sizes[i], ts + at, (double *)(void *)(bits + at), cap - at);
        if (tschunk_is_error(r)) err = r;
        at += c;
    }
    return err ? err : at;
}

/*
 * A decode_chunks gives the samples of decoding each chunk alone, with every
 * loop choice, on 400 lists of up to 20 chunks (so 8 and 16 side by side) of every workload and of mixed
 * lengths (0 to 300 samples), a third of them with damaged chunks (a bit
 * flip from byte damage_from on, or a cut), and an error exactly when one of
 * the chunks has one.
 */
static inline void decode_chunks_match_one_by_one(decode_chunks_with_fn decode_chunks, decode_one_fn decode,
                                                  count_fn count, encode_pick_fn encode, size_t damage_from,
                                                  uint64_t seed)
{
    enum { MAX_CHUNKS = 20, MAX_SAMPLES = MAX_CHUNKS * 300 };
    static int64_t want_ts[MAX_SAMPLES], got_ts[MAX_SAMPLES];
    static uint64_t want_bits[MAX_SAMPLES], got_bits[MAX_SAMPLES];
    static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    uint64_t rng = seed;
    wl_series s[WL_SYNTHETIC_COUNT];
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) wl_synthetic(&s[kind], kind, 300, seed + (uint64_t)kind);
    for (int round = 0; round < 400; round++) {
        size_t n = wl_rng(&rng) % (MAX_CHUNKS + 1), sizes[MAX_CHUNKS];
        unsigned char *chunks[MAX_CHUNKS];
        for (size_t i = 0; i < n; i++) {
            const wl_series *src = &s[wl_rng(&rng) % WL_SYNTHETIC_COUNT];
            size_t len = wl_rng(&rng) % 4 ? 120 : wl_rng(&rng) % 301;
            sizes[i] = encode(src, len, wl_rng(&rng), &chunks[i]);
            if (round % 3 == 2 && wl_rng(&rng) % 4 == 0) {
                if (wl_rng(&rng) % 2 && sizes[i] > damage_from)
                    chunks[i][damage_from + wl_rng(&rng) % (sizes[i] - damage_from)] ^= (unsigned char)(1u << (wl_rng(&rng) % 8));
                else
                    sizes[i] = wl_rng(&rng) % (sizes[i] + 1);
            }
        }
        const void *const *ptrs = (const void *const *)chunks;
        size_t want = decode_one_by_one(decode, count, ptrs, sizes, n, want_ts, want_bits, MAX_SAMPLES);
        for (int l = 0; l < 4; l++) {
            size_t got = decode_chunks(ptrs, sizes, n, got_ts, (double *)(void *)got_bits, MAX_SAMPLES, loops[l]);
            cr_assert_eq(tschunk_is_error(got), tschunk_is_error(want), "round %d loops %d: %s vs %s", round, loops[l],
                         tschunk_error_name(got), tschunk_error_name(want));
            if (tschunk_is_error(want)) continue;
            cr_assert_eq(got, want, "round %d loops %d", round, loops[l]);
            cr_assert(memcmp(got_ts, want_ts, want * 8) == 0, "round %d loops %d: timestamps", round, loops[l]);
            cr_assert(memcmp(got_bits, want_bits, want * 8) == 0, "round %d loops %d: values", round, loops[l]);
        }
        for (size_t i = 0; i < n; i++) free(chunks[i]);
    }
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) wl_free(&s[kind]);
}


/*
 * A series for the AVX-512 lanes' edges: steps that leave the 20-bit dod for the 64-bit escape (gaps of
 * hours, and back to the step), values of every XOR field kind (repeats, reused windows, new windows up to
 * 64 bits: random bits, NaN payloads, -0.0, infinities, stale markers). constant: 1 regular timestamps, 2
 * one value (codec 1 elides such a stream).
 */
static inline void lane_edges_series(wl_series *s, size_t n, uint64_t seed, int constant)
{
    static const uint64_t special[] = {0x7ff0000000000001, 0x7ff8000000000000, 0x8000000000000000,
                                       0x7ff0000000000000, 0xfff0000000000000, 0x7ff0000000000002};
    uint64_t rng = seed;
    s->n = n;
    snprintf(s->name, sizeof s->name, "lane edges");
    s->ts = malloc(n * sizeof *s->ts);
    s->bits = malloc(n * sizeof *s->bits);
    int64_t t = (int64_t)(wl_rng(&rng) % 1000000);
    uint64_t v = 0x4059000000000000;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = wl_rng(&rng);
        if (constant == 1) t += 15000;
        else t += r % 29 == 0 ? (int64_t)(r >> 40) : 15000 + (int64_t)(r % 7) - 3; /* gaps of up to 4.6 hours */
        switch (constant == 2 ? 0 : r % 8 / 2 + (r % 41 == 0)) {
        case 0: break;                                /* repeat */
        case 1: v ^= (r >> 20) & 0xff0; break;        /* within a window */
        case 2: v = wl_rng(&rng); break;              /* 64 meaningful bits */
        case 3: v ^= (uint64_t)1 << (r >> 58); break; /* one bit anywhere */
        default: v = special[(r >> 32) % (sizeof special / sizeof special[0])];
        }
        s->ts[i] = t;
        s->bits[i] = v;
    }
}

typedef size_t (*encode_all_fn)(const wl_series *s, unsigned char **out);

/*
 * A decode_chunks over lists of 8 to 40 chunks (the AVX-512 lanes where the CPU has them: 16 and 8 side by
 * side, a lane taking the next chunk when its own ends, idle lanes while others finish) of lane_edges_series
 * (one chunk in eight with a constant stream, one in five of 1 to 300 samples),
 * each copied to exactly its bytes so that a read past them is ASan's to see: exactly the series' samples;
 * then with bit flips (from byte damage_from on) in a third of the chunks, with every loop choice, an error
 * exactly when decoding the chunks one by one meets one, else the same samples.
 */
static inline void decode_chunks_in_lanes_match(decode_chunks_with_fn decode_chunks, decode_one_fn decode,
                                                count_fn count, encode_all_fn encode, size_t damage_from,
                                                uint64_t seed)
{
    enum { CHUNKS = 40 };
    uint64_t rng = seed;
    for (int round = 0; round < 60; round++) {
        unsigned char *chunk[CHUNKS];
        size_t size[CHUNKS], total = 0;
        wl_series s[CHUNKS];
        for (size_t c = 0; c < CHUNKS; c++) {
            uint64_t r = wl_rng(&rng);
            lane_edges_series(&s[c], r % 5 ? 120 : 1 + (r >> 8) % 300, r, r % 8 == 1 ? (int)(r >> 20) % 2 + 1 : 0);
            size[c] = encode(&s[c], &chunk[c]);
            chunk[c] = realloc(chunk[c], size[c]);
            total += s[c].n;
        }
        static const size_t lists[] = {8, 16, 17, 24, 40};
        int64_t *ts = malloc(total * 8), *want_ts = malloc(total * 8);
        uint64_t *bits = malloc(total * 8), *want_bits = malloc(total * 8);
        for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
            size_t n = 0;
            for (size_t c = 0; c < lists[k]; c++) {
                memcpy(want_ts + n, s[c].ts, s[c].n * 8);
                memcpy(want_bits + n, s[c].bits, s[c].n * 8);
                n += s[c].n;
            }
            static const int lane_loops[2] = {TSC_LOOPS_AUTO, TSC_LOOPS_AVX2}; /* AVX-512 lanes, AVX2 lanes */
            for (int l = 0; l < 2; l++) {
                int loops = lane_loops[l];
                size_t r = decode_chunks((const void *const *)chunk, size, lists[k], ts, (double *)(void *)bits, n,
                                         loops);
                cr_assert_eq(r, n, "round %d, %zu chunks, loops %d: %s", round, lists[k], loops,
                             tschunk_error_name(r));
                cr_assert(memcmp(ts, want_ts, n * 8) == 0, "round %d, %zu chunks, loops %d: timestamps", round,
                          lists[k], loops);
                cr_assert(memcmp(bits, want_bits, n * 8) == 0, "round %d, %zu chunks, loops %d: values", round,
                          lists[k], loops);
            }
        }
        for (size_t c = 0; c < CHUNKS; c++) {
            if (wl_rng(&rng) % 3 || size[c] <= damage_from) continue;
            size_t at = damage_from + wl_rng(&rng) % (size[c] - damage_from);
            chunk[c][at] ^= (unsigned char)(1u << (wl_rng(&rng) % 8));
        }
        size_t want = decode_one_by_one(decode, count, (const void *const *)chunk, size, CHUNKS, want_ts, want_bits,
                                        total);
        for (int l = 0; l < 4; l++) {
            static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
            size_t got = decode_chunks((const void *const *)chunk, size, CHUNKS, ts, (double *)(void *)bits, total,
                                       loops[l]);
            cr_assert_eq(tschunk_is_error(got), tschunk_is_error(want), "round %d loops %d", round, l);
            if (tschunk_is_error(want)) continue;
            cr_assert(got == want && memcmp(ts, want_ts, want * 8) == 0 && memcmp(bits, want_bits, want * 8) == 0,
                      "round %d loops %d: damaged chunks' samples", round, l);
        }
        for (size_t c = 0; c < CHUNKS; c++) {
            free(chunk[c]);
            free(s[c].ts);
            free(s[c].bits);
        }
        free(ts);
        free(want_ts);
        free(bits);
        free(want_bits);
    }
}

/*
 * A long field at every offset of the lanes' windows: 16 copies of a chunk of repeats (a few bits each, one
 * step of one more millisecond in half of them, to reach odd offsets too), then, after `repeats` of them, a
 * sample with a 20-bit dod and a new 64-bit window (the longest field the kernels read), then random values
 * (so that Prometheus chunks have the byte a sample that sends them to the lanes).
 * A kernel that keeps a window a bit too long reads that field's last bits past it. Exactly the samples,
 * with the AVX-512 lanes and with the AVX2 ones.
 */
static inline void decode_chunks_at_every_window_offset(decode_chunks_with_fn decode_chunks, encode_all_fn encode)
{
    enum { N = 300, CHUNKS = 16 };
    static int64_t ts[N * CHUNKS];
    static uint64_t bits[N * CHUNKS];
    for (size_t repeats = 0; repeats < 200; repeats++) {
        for (int odd = 0; odd < 2; odd++) {
            wl_series s = {malloc(N * sizeof(int64_t)), malloc(N * sizeof(uint64_t)), N, "window offsets"};
            int64_t t = 1000, step = 15000;
            for (size_t i = 0; i < N; i++) {
                if (i == 3 && odd) step++;
                t += i == repeats + 3 ? 100000 : step;
                s.ts[i] = t;
                uint64_t random = i * UINT64_C(0x9e3779b97f4a7c15);
                s.bits[i] = i < repeats + 3    ? UINT64_C(0x4059000000000000)
                            : i == repeats + 3 ? UINT64_C(0xc059000000000001)
                                               : random ^ random >> 29;
            }
            unsigned char *chunk;
            size_t size = encode(&s, &chunk);
            const void *list[CHUNKS];
            size_t sizes[CHUNKS];
            for (size_t c = 0; c < CHUNKS; c++) {
                list[c] = chunk;
                sizes[c] = size;
            }
            static const int lane_loops[2] = {TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
            for (int l = 0; l < 2; l++) {
                size_t r = decode_chunks(list, sizes, CHUNKS, ts, (double *)(void *)bits, N * CHUNKS, lane_loops[l]);
                cr_assert_eq(r, N * CHUNKS, "%zu repeats, odd %d, loops %d: %s", repeats, odd, lane_loops[l],
                             tschunk_error_name(r));
                for (size_t c = 0; c < CHUNKS; c++) {
                    cr_assert(memcmp(ts + c * N, s.ts, N * 8) == 0, "%zu repeats, odd %d, loops %d: timestamps",
                              repeats, odd, lane_loops[l]);
                    cr_assert(memcmp(bits + c * N, s.bits, N * 8) == 0, "%zu repeats, odd %d, loops %d: values",
                              repeats, odd, lane_loops[l]);
                }
            }
            free(chunk);
            wl_free(&s);
        }
    }
}

/*
 * Lists of 512-sample chunks (lane_edges_series: 64-bit dods and windows) decoded into arrays that start
 * at a page, so that every lane's two outputs are 4 KiB apart and the kernels stage their rows (a stop
 * before a 64-bit dod and the call's end flush part of a stage): exactly the series' samples.
 */
static inline void decode_chunks_into_crowded_outputs(decode_chunks_with_fn decode_chunks, encode_all_fn encode,
                                                      uint64_t seed)
{
    enum { N = 512, CHUNKS = 24 };
    int64_t *ts = aligned_alloc(4096, N * CHUNKS * 8), *want_ts = malloc(N * CHUNKS * 8);
    uint64_t *bits = aligned_alloc(4096, N * CHUNKS * 8), *want_bits = malloc(N * CHUNKS * 8);
    unsigned char *chunk[CHUNKS];
    size_t size[CHUNKS];
    for (size_t c = 0; c < CHUNKS; c++) {
        wl_series s;
        lane_edges_series(&s, N, seed + c, 0);
        size[c] = encode(&s, &chunk[c]);
        memcpy(want_ts + c * N, s.ts, N * 8);
        memcpy(want_bits + c * N, s.bits, N * 8);
        wl_free(&s);
    }
    static const size_t lists[] = {8, 16, 24};
    static const int lane_loops[2] = {TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        for (int l = 0; l < 2; l++) {
            size_t r = decode_chunks((const void *const *)chunk, size, lists[k], ts, (double *)(void *)bits,
                                     N * CHUNKS, lane_loops[l]);
            cr_assert_eq(r, lists[k] * N, "%zu chunks, loops %d: %s", lists[k], lane_loops[l], tschunk_error_name(r));
            cr_assert(memcmp(ts, want_ts, r * 8) == 0, "%zu chunks, loops %d: timestamps", lists[k], lane_loops[l]);
            cr_assert(memcmp(bits, want_bits, r * 8) == 0, "%zu chunks, loops %d: values", lists[k], lane_loops[l]);
        }
    for (size_t c = 0; c < CHUNKS; c++) free(chunk[c]);
    free(ts);
    free(want_ts);
    free(bits);
    free(want_bits);
}

/* A scrape with jitter, equal timestamps, time going back (one sample in 64), NaN payloads and random bits: what
 * the appends' fast paths must hand on (the inline append) or refuse (the stage). */
static inline void test_awkward_series(wl_series *s, size_t n, uint64_t seed)
{
    wl_alloc(s, n, "awkward");
    uint64_t rng = seed;
    int64_t t = 1700000000000;
    for (size_t i = 0; i < n; i++) {
        unsigned pick = (unsigned)(wl_rng(&rng) % 64);
        t += pick == 0 ? -5000 : pick == 1 ? 0 : 15000 + (int64_t)(wl_rng(&rng) % 11) - 5;
        s->ts[i] = t;
        double v = (double)(int64_t)(wl_rng(&rng) % 100000) / 100.0;
        s->bits[i] = pick == 2 ? 0x7ff8000000000001 : pick == 3 ? wl_rng(&rng) : wl_bits(v);
    }
}

#endif
