/* tschunk_append_inline (TSCHUNK_STATIC_LINKING_ONLY): the same results and bytes as tschunk_append. */
#define TSCHUNK_STATIC_LINKING_ONLY
#include <inttypes.h>

#include "test_util.h"

typedef struct {
    uint32_t codec, max_samples, max_bytes;
    size_t capacity; /* 0: TSCHUNK_BOUND(chunk) */
    int summary;
} inline_case;

/* The two encoders hold the same state but for where their buffers and summaries are. */
static void same_state(const tschunk_encoder *ea, const tschunk_encoder *eb, size_t i)
{
    tschunk_encoder moved = *eb;
    moved.dst = ea->dst;
    moved.ts_out.base = ea->ts_out.base;
    moved.val_out.base = ea->val_out.base;
    moved.summary = ea->summary;
    cr_assert(memcmp(&moved, ea, sizeof moved) == 0, "the encoders differ after sample %zu", i);
}

/*
 * Two encoders side by side, one appended through tschunk_append_inline and one through tschunk_append:
 * every result the same, and at every refusal (the chunk full, the buffer full) and at the end the two
 * finished chunks byte for byte the same, as their snapshots are along the way.
 */
static void compare_appends(const wl_series *s, inline_case c)
{
    enum { CHUNK = 1000 };
    size_t capacity = c.capacity ? c.capacity : TSCHUNK_BOUND(CHUNK);
    unsigned char *a = malloc(capacity), *b = malloc(capacity), *snap_a = malloc(capacity), *snap_b = malloc(capacity);
    cr_assert(a && b && snap_a && snap_b);
    tschunk_sketch *sketch_a = NULL, *sketch_b = NULL;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 2048, 0, {0, 0, 0}, 0};
    tschunk_encoder ea, eb;
    tschunk_encoder_options opts = {c.codec, c.max_samples ? c.max_samples : CHUNK, c.max_bytes, 0};
    cr_assert_eq(tschunk_encoder_init(&ea, a, capacity, &opts), 0);
    cr_assert_eq(tschunk_encoder_init(&eb, b, capacity, &opts), 0);
    if (c.summary) {
        cr_assert_eq(tschunk_sketch_create(&sketch_a, &so), 0);
        cr_assert_eq(tschunk_sketch_create(&sketch_b, &so), 0);
        cr_assert_eq(tschunk_encoder_set_summary(&ea, sketch_a), 0);
        cr_assert_eq(tschunk_encoder_set_summary(&eb, sketch_b), 0);
    }
    size_t chunks = 0, refused = 0;
    for (size_t i = 0; i < s->n; i++) {
        double v;
        memcpy(&v, &s->bits[i], sizeof v);
        size_t ra = tschunk_append_inline(&ea, s->ts[i], v), rb = tschunk_append(&eb, s->ts[i], v);
        cr_assert_eq(ra, rb, "sample %zu: inline %s, function %s", i, tschunk_error_name(ra), tschunk_error_name(rb));
        cr_assert_eq(tschunk_encoder_count(&ea), tschunk_encoder_count(&eb), "sample %zu", i);
        same_state(&ea, &eb, i);
        if (i % 97 == 0) {
            size_t sa = tschunk_encoder_snapshot(&ea, snap_a, capacity);
            size_t sb = tschunk_encoder_snapshot(&eb, snap_b, capacity);
            cr_assert_eq(sa, sb, "snapshot at %zu", i);
            cr_assert(tschunk_is_error(sa) || memcmp(snap_a, snap_b, sa) == 0, "snapshot bytes at %zu", i);
        }
        if (!tschunk_is_error(ra)) continue;
        refused++;
        tschunk_error_code code = tschunk_get_error_code(ra);
        if (code == TSCHUNK_ERROR_OUT_OF_ORDER) continue;
        cr_assert(code == TSCHUNK_ERROR_CHUNK_FULL || code == TSCHUNK_ERROR_DST_TOO_SMALL, "%s",
                  tschunk_error_name(ra));
        size_t fa = tschunk_encoder_finish(&ea), fb = tschunk_encoder_finish(&eb);
        cr_assert_eq(fa, fb);
        cr_assert(!tschunk_is_error(fa) && memcmp(a, b, fa) == 0, "chunk %zu differs", chunks);
        chunks++;
        cr_assert_eq(tschunk_encoder_restart(&ea, a, capacity), 0);
        cr_assert_eq(tschunk_encoder_restart(&eb, b, capacity), 0);
        i--; /* the refused sample opens the next chunk */
    }
    size_t fa = tschunk_encoder_finish(&ea), fb = tschunk_encoder_finish(&eb);
    cr_assert_eq(fa, fb);
    cr_assert(!tschunk_is_error(fa) && memcmp(a, b, fa) == 0, "the last chunk differs");
    cr_assert_gt(refused, 0, "the case refused nothing: it tests less than it says");
    if (c.summary) {
        tschunk_sketch_stats sa, sb;
        tschunk_sketch_get_stats(sketch_a, &sa);
        tschunk_sketch_get_stats(sketch_b, &sb);
        cr_assert(sa.count == sb.count && sa.count > 0, "summaries hold %g and %g values", sa.count, sb.count);
        tschunk_sketch_free(sketch_a);
        tschunk_sketch_free(sketch_b);
    }
    free(a);
    free(b);
    free(snap_a);
    free(snap_b);
}

Test(inline_append, same_results_and_bytes_as_tschunk_append)
{
    wl_series s;
    test_awkward_series(&s, 20000, 5);
    const inline_case cases[] = {
        {0, 0, 0, 0, 0},                                     /* codec 2, 1,000-sample chunks */
        {TSCHUNK_CODEC_TSC2, 300, 0, 0, 1},                  /* max_samples inside a group, a summary */
        {TSCHUNK_CODEC_TSC2, 0, 700, 0, 0},                  /* max_bytes: every append checked */
        {TSCHUNK_CODEC_TSC2, 0, 0, TSCHUNK_BOUND(200), 0},   /* the buffer fills first */
        {TSCHUNK_CODEC_GORILLA, 0, 0, 0, 1},                 /* codec 1: always the library */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) compare_appends(&s, cases[k]);
    wl_free(&s);
}

/* A refused inline append changes nothing, neither the encoder nor its buffer; a finished encoder refuses. */
Test(inline_append, refused_appends_change_nothing)
{
    enum { N = 500 };
    size_t capacity = TSCHUNK_BOUND(N);
    unsigned char *buf = malloc(capacity), *copy = malloc(capacity);
    cr_assert(buf && copy);
    memset(buf, 0xA5, capacity);
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, buf, capacity, NULL), 0);
    for (int64_t i = 0; i < N / 2; i++) {
        cr_assert_eq(tschunk_append_inline(&enc, 1000 * i, (double)i / 4), 0);
        tschunk_encoder before = enc;
        memcpy(copy, buf, capacity);
        size_t r = tschunk_append_inline(&enc, 1000 * i - 1, 1.0);
        cr_assert_eq(tschunk_get_error_code(r), TSCHUNK_ERROR_OUT_OF_ORDER, "at %" PRId64, i);
        cr_assert(memcmp(&before, &enc, sizeof enc) == 0, "the encoder changed at %" PRId64, i);
        cr_assert(memcmp(copy, buf, capacity) == 0, "the buffer changed at %" PRId64, i);
    }
    size_t size = tschunk_encoder_finish(&enc);
    cr_assert(!tschunk_is_error(size));
    cr_assert_eq(tschunk_get_error_code(tschunk_append_inline(&enc, 1000 * N, 1.0)), TSCHUNK_ERROR_STAGE);
    free(buf);
    free(copy);
}

/* The inline next and the exported one over the same bytes, side by side: every answer the same and the
 * iterators' state the same after each call (their buffers, written alike, left out); a seek now and then (to
 * one of the chunk's timestamps, `times`, or just before it) and a block read, interleaved alike. */
#define COMPARE_ITERATORS(ITER, INIT, NEXT_INLINE, NEXT, SEEK, READ, STATE_END)                                  \
    do {                                                                                                      \
        ITER a, b;                                                                                            \
        size_t ra = INIT(&a, buf, size), rb = INIT(&b, buf, size);                                            \
        cr_assert_eq(ra, rb);                                                                                 \
        if (ra) break;                                                                                        \
        for (size_t k = 0; k < 2 * 300; k++) {                                                                \
            int64_t ta = 0, tb = 0;                                                                           \
            double va = 0, vb = 0;                                                                            \
            if (k % 89 == 88) { /* a seek, both ways */                                                       \
                int64_t to = times[(k * 7919u) % 300] - (int64_t)(k & 1);                                     \
                cr_assert_eq(SEEK(&a, to), SEEK(&b, to));                                                     \
                int64_t xa[5], xb[5];                                                                         \
                double ya[5], yb[5];                                                                          \
                if ((k / 89) & 1) { /* every other seek: the next call takes the sample found */              \
                    ra = READ(&a, xa, ya, 5), rb = READ(&b, xb, yb, 5);                                       \
                    cr_assert_eq(ra, rb);                                                                     \
                    cr_assert(tschunk_is_error(ra) || (!memcmp(xa, xb, ra * 8) && !memcmp(ya, yb, ra * 8)));  \
                }                                                                                             \
            }                                                                                                 \
            ra = NEXT_INLINE(&a, (k & 1) ? &ta : NULL, (k & 2) ? &va : NULL);                                \
            rb = NEXT(&b, (k & 1) ? &tb : NULL, (k & 2) ? &vb : NULL);                                        \
            cr_assert_eq(ra, rb, "call %zu: %s / %s", k, tschunk_error_name(ra), tschunk_error_name(rb));     \
            cr_assert(ta == tb && !memcmp(&va, &vb, 8), "call %zu", k);                                       \
            cr_assert(!memcmp(&a, &b, STATE_END), "call %zu: the iterators' state", k);                       \
            if (ra != 1) break;                                                                               \
        }                                                                                                     \
    } while (0)

static void compare_native_iterators(const unsigned char *buf, size_t size, const int64_t *times)
{
    COMPARE_ITERATORS(tschunk_iter, tschunk_iter_init, tschunk_iter_next_inline, tschunk_iter_next, tschunk_iter_seek,
                      tschunk_iter_read, offsetof(tschunk_iter, group_ts));
}

static void compare_prom_iterators(const unsigned char *buf, size_t size, const int64_t *times)
{
    COMPARE_ITERATORS(tschunk_prom_iter, tschunk_prom_iter_init, tschunk_prom_iter_next_inline, tschunk_prom_iter_next,
                      tschunk_prom_iter_seek, tschunk_prom_iter_read, offsetof(tschunk_prom_iter, run_ts));
}

/*
 * tschunk_iter_next_inline and tschunk_prom_iter_next_inline (0.42.1) answer
 * as tschunk_iter_next and tschunk_prom_iter_next, and leave their iterators
 * in the same state: codecs 1 and 2 and Prometheus chunks of every workload
 * (300 samples: codec 2's groups, codec 1's runs and Prometheus runs end
 * inside), whole, at every truncation and with every bit flipped.
 */
Test(inline_iterators, same_answers_as_the_calls, .timeout = 120)
{
    enum { N = 300 };
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, N, 53);
        for (int form = 0; form < 3; form++) {
            unsigned char *chunk;
            size_t size;
            if (form < 2) {
                size = encode_range_codec(&s, 0, N, form ? TSCHUNK_CODEC_TSC2 : TSCHUNK_CODEC_GORILLA, &chunk);
            } else {
                double *v = malloc(N * sizeof *v);
                memcpy(v, s.bits, N * sizeof *v);
                chunk = malloc(TSCHUNK_PROM_BOUND(N));
                size = tschunk_prom_encode(chunk, TSCHUNK_PROM_BOUND(N), s.ts, v, N, NULL);
                cr_assert(!tschunk_is_error(size));
                free(v);
            }
            unsigned char *buf = malloc(size);
            for (size_t cut = 0; cut <= size + size * 8; cut++) {
                size_t len = cut <= size ? cut : size;
                memcpy(buf, chunk, len);
                if (cut > size) buf[(cut - size - 1) / 8] ^= (unsigned char)(1u << ((cut - size - 1) % 8));
                if (form < 2) compare_native_iterators(buf, len, s.ts);
                else compare_prom_iterators(buf, len, s.ts);
            }
            free(buf);
            free(chunk);
        }
        wl_free(&s);
    }
}
