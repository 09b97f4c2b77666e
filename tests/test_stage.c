/*
 * Staged appends (tschunk_stage): a series pushed through a stage gives the same chunks, byte for byte, as
 * the same series appended one sample a call, chunks cut at the same refusals.
 */
#include "test_util.h"

/* Chunks one after another in one buffer: their bytes and where each ends. */
typedef struct {
    unsigned char *bytes;
    size_t size, chunks, ends[4096];
} chunk_run;

static void keep_chunk(chunk_run *run, const unsigned char *chunk, size_t size)
{
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    cr_assert_lt(run->chunks, sizeof run->ends / sizeof run->ends[0]);
    memcpy(run->bytes + run->size, chunk, size);
    run->size += size;
    run->ends[run->chunks++] = run->size;
}

static void same_runs(const chunk_run *a, const chunk_run *b, const char *what)
{
    cr_assert_eq(a->chunks, b->chunks, "%s: %zu chunks against %zu", what, a->chunks, b->chunks);
    for (size_t i = 0; i < a->chunks; i++) cr_assert_eq(a->ends[i], b->ends[i], "%s: chunk %zu", what, i);
    cr_assert(!memcmp(a->bytes, b->bytes, a->size), "%s: different bytes", what);
}

static int cut_here(size_t err)
{
    tschunk_error_code code = tschunk_get_error_code(err);
    return code == TSCHUNK_ERROR_CHUNK_FULL || code == TSCHUNK_ERROR_DST_TOO_SMALL;
}

/* The reference: one tschunk_append a sample, a sample before the last one taken dropped, a refused one
 * retried in the next chunk. */
static void native_one_by_one(const wl_series *s, const tschunk_encoder_options *opts, size_t capacity,
                              chunk_run *run, size_t *dropped)
{
    unsigned char *buf = malloc(capacity);
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, buf, capacity, opts), 0);
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < s->n; i++) {
        double v = wl_double(s->bits[i]);
        if (s->ts[i] < last) {
            ++*dropped;
            continue;
        }
        size_t err = tschunk_append(&enc, s->ts[i], v);
        if (cut_here(err)) {
            keep_chunk(run, buf, tschunk_encoder_finish(&enc));
            cr_assert_eq(tschunk_encoder_restart(&enc, buf, capacity), 0);
            err = tschunk_append(&enc, s->ts[i], v);
        }
        cr_assert_eq(err, 0, "sample %zu: %s", i, tschunk_error_name(err));
        last = s->ts[i];
    }
    keep_chunk(run, buf, tschunk_encoder_finish(&enc));
    free(buf);
}

static void native_staged(const wl_series *s, const tschunk_encoder_options *opts, size_t capacity,
                          chunk_run *run, size_t *dropped)
{
    unsigned char *buf = malloc(capacity);
    tschunk_encoder enc;
    static tschunk_stage stage;
    tschunk_stage_init(&stage);
    cr_assert_eq(tschunk_encoder_init(&enc, buf, capacity, opts), 0);
    for (size_t i = 0; i < s->n; i++) {
        size_t err = tschunk_stage_push(&stage, &enc, s->ts[i], wl_double(s->bits[i]));
        if (tschunk_get_error_code(err) == TSCHUNK_ERROR_OUT_OF_ORDER) {
            ++*dropped;
            continue;
        }
        while (cut_here(err)) { /* the staged samples may fill more than one chunk */
            uint32_t staged = stage.count;
            keep_chunk(run, buf, tschunk_encoder_finish(&enc));
            cr_assert_eq(tschunk_encoder_restart(&enc, buf, capacity), 0);
            err = tschunk_stage_push(&stage, &enc, s->ts[i], wl_double(s->bits[i]));
            cr_assert(stage.count < staged || !err, "sample %zu: a fresh chunk took nothing", i);
        }
        cr_assert_eq(err, 0, "sample %zu: %s", i, tschunk_error_name(err));
    }
    size_t err;
    while (cut_here(err = tschunk_stage_flush(&stage, &enc))) {
        keep_chunk(run, buf, tschunk_encoder_finish(&enc));
        cr_assert_eq(tschunk_encoder_restart(&enc, buf, capacity), 0);
    }
    cr_assert_eq(err, 0, "%s", tschunk_error_name(err));
    cr_assert_eq(stage.count, 0);
    keep_chunk(run, buf, tschunk_encoder_finish(&enc));
    free(buf);
}

Test(stage, native_chunks_equal_one_sample_a_call, .timeout = 60)
{
    enum { N = 20000 };
    chunk_run a = {malloc(64 * N), 0, 0, {0}}, b = {malloc(64 * N), 0, 0, {0}};
    cr_assert(a.bytes && b.bytes);
    /* codec, max_samples, max_bytes, capacity: cut by count (above and below a stage), by bytes, by the buffer */
    const struct {
        uint32_t codec, max_samples, max_bytes;
        size_t capacity;
    } cases[] = {{TSCHUNK_CODEC_TSC2, 120, 0, TSCHUNK_BOUND(120)},
                 {TSCHUNK_CODEC_GORILLA, 120, 0, TSCHUNK_BOUND(120)},
                 {TSCHUNK_CODEC_TSC2, 1000, 0, TSCHUNK_BOUND(1000)},
                 {TSCHUNK_CODEC_GORILLA, 50, 0, TSCHUNK_BOUND(50)},
                 {TSCHUNK_CODEC_TSC2, 37, 0, TSCHUNK_BOUND(37)},
                 {TSCHUNK_CODEC_GORILLA, 0, 700, TSCHUNK_BOUND(4000)},
                 {TSCHUNK_CODEC_GORILLA, 4000, 0, 900},
                 {TSCHUNK_CODEC_TSC2, 0, 1500, TSCHUNK_BOUND(4000)}};
    for (int kind = 0; kind <= WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        if (kind < WL_SYNTHETIC_COUNT) wl_synthetic(&s, kind, N, (uint64_t)kind + 1);
        else test_awkward_series(&s, N, 77);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            tschunk_encoder_options opts = {cases[c].codec, cases[c].max_samples, cases[c].max_bytes, 0};
            size_t dropped_a = 0, dropped_b = 0;
            a.size = a.chunks = b.size = b.chunks = 0;
            native_one_by_one(&s, &opts, cases[c].capacity, &a, &dropped_a);
            native_staged(&s, &opts, cases[c].capacity, &b, &dropped_b);
            char what[160];
            snprintf(what, sizeof what, "%s, case %zu", s.name, c);
            cr_assert_eq(dropped_a, dropped_b, "%s", what);
            cr_assert_eq(dropped_a > 0, kind == WL_SYNTHETIC_COUNT, "%s", what);
            same_runs(&a, &b, what);
        }
        wl_free(&s);
    }
    free(a.bytes);
    free(b.bytes);
}

Test(stage, a_refused_push_stages_nothing)
{
    static tschunk_stage stage;
    tschunk_stage_init(&stage);
    unsigned char buf[TSCHUNK_BOUND(10)];
    tschunk_encoder enc;
    tschunk_encoder_options opts = {TSCHUNK_CODEC_GORILLA, 10, 0, 0};
    cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, &opts), 0);
    for (int i = 0; i < TSCHUNK_STAGE_SAMPLES; i++) cr_assert_eq(tschunk_stage_push(&stage, &enc, 1000 + i, i), 0);
    cr_assert_eq(stage.count, TSCHUNK_STAGE_SAMPLES);
    cr_assert_eq(tschunk_encoder_count(&enc), 0); /* nothing handed over until the stage is full */
    /* Time going back: refused at once, nothing staged, nothing flushed. */
    size_t err = tschunk_stage_push(&stage, &enc, 999 + TSCHUNK_STAGE_SAMPLES - 1, 0.5);
    cr_assert_eq(tschunk_get_error_code(err), TSCHUNK_ERROR_OUT_OF_ORDER);
    cr_assert_eq(stage.count, TSCHUNK_STAGE_SAMPLES);
    cr_assert_eq(tschunk_encoder_count(&enc), 0);
    /* A full stage flushes: 10 fit, the rest stay staged in order, and the pushed sample is not staged. */
    err = tschunk_stage_push(&stage, &enc, 5000, 1.5);
    cr_assert_eq(tschunk_get_error_code(err), TSCHUNK_ERROR_CHUNK_FULL);
    cr_assert_eq(tschunk_encoder_count(&enc), 10);
    cr_assert_eq(stage.count, TSCHUNK_STAGE_SAMPLES - 10);
    for (uint32_t i = 0; i < stage.count; i++) {
        cr_assert_eq(stage.ts[i], 1010 + (int64_t)i);
        cr_assert(stage.values[i] == 10.0 + i);
    }
    cr_assert_eq(tschunk_get_error_code(tschunk_stage_flush(&stage, &enc)), TSCHUNK_ERROR_CHUNK_FULL);
    cr_assert_eq(stage.count, TSCHUNK_STAGE_SAMPLES - 10);
    /* The next chunk takes them; an empty stage flushes to nothing. */
    tschunk_encoder_options roomy = {TSCHUNK_CODEC_GORILLA, 1000, 0, 0};
    static unsigned char big[TSCHUNK_BOUND(1000)];
    cr_assert_eq(tschunk_encoder_init(&enc, big, sizeof big, &roomy), 0);
    cr_assert_eq(tschunk_stage_push(&stage, &enc, 5000, 1.5), 0); /* the stage not full: nothing flushed */
    cr_assert_eq(stage.count, TSCHUNK_STAGE_SAMPLES - 9);
    cr_assert_eq(tschunk_encoder_count(&enc), 0);
    cr_assert_eq(tschunk_stage_flush(&stage, &enc), 0);
    cr_assert_eq(stage.count, 0);
    cr_assert_eq(tschunk_stage_flush(&stage, &enc), 0);
    cr_assert_eq(tschunk_encoder_count(&enc), TSCHUNK_STAGE_SAMPLES - 9);
    int64_t ts[TSCHUNK_STAGE_SAMPLES];
    double values[TSCHUNK_STAGE_SAMPLES];
    size_t size = tschunk_encoder_finish(&enc);
    cr_assert_eq(tschunk_decode(big, size, ts, values, TSCHUNK_STAGE_SAMPLES), TSCHUNK_STAGE_SAMPLES - 9);
    for (int i = 0; i < TSCHUNK_STAGE_SAMPLES - 10; i++) cr_assert(ts[i] == 1010 + i && values[i] == 10.0 + i);
    cr_assert(ts[TSCHUNK_STAGE_SAMPLES - 10] == 5000 && values[TSCHUNK_STAGE_SAMPLES - 10] == 1.5);
    cr_assert_eq(tschunk_get_error_code(tschunk_stage_flush(NULL, &enc)), TSCHUNK_ERROR_BAD_PARAMETER);
}

/* One sample through the stage, or (stage NULL) one tschunk_prom_append. */
static size_t prom_push(tschunk_stage *stage, tschunk_prom_encoder *enc, int64_t ts, double v)
{
    return stage ? tschunk_prom_stage_push(stage, enc, ts, v) : tschunk_prom_append(enc, ts, v);
}

static void prom_run(const wl_series *s, uint32_t max_samples, int staged, chunk_run *run)
{
    size_t capacity = TSCHUNK_PROM_BOUND(max_samples);
    unsigned char *buf = malloc(capacity);
    tschunk_encoder_options opts = {0, max_samples, 0, 0};
    tschunk_prom_encoder enc;
    static tschunk_stage stage;
    tschunk_stage_init(&stage);
    cr_assert_eq(tschunk_prom_encoder_init(&enc, buf, capacity, &opts), 0);
    for (size_t i = 0; i < s->n; i++) {
        double v = wl_double(s->bits[i]);
        size_t err = prom_push(staged ? &stage : NULL, &enc, s->ts[i], v);
        while (cut_here(err)) {
            keep_chunk(run, buf, tschunk_prom_encoder_finish(&enc));
            cr_assert_eq(tschunk_prom_encoder_init(&enc, buf, capacity, &opts), 0);
            err = prom_push(staged ? &stage : NULL, &enc, s->ts[i], v);
        }
        cr_assert_eq(err, 0, "sample %zu: %s", i, tschunk_error_name(err));
    }
    size_t err;
    while (staged && cut_here(err = tschunk_prom_stage_flush(&stage, &enc))) {
        keep_chunk(run, buf, tschunk_prom_encoder_finish(&enc));
        cr_assert_eq(tschunk_prom_encoder_init(&enc, buf, capacity, &opts), 0);
    }
    keep_chunk(run, buf, tschunk_prom_encoder_finish(&enc));
    free(buf);
}

Test(stage, prometheus_chunks_equal_one_sample_a_call, .timeout = 60)
{
    enum { N = 10000 };
    chunk_run a = {malloc(32 * N), 0, 0, {0}}, b = {malloc(32 * N), 0, 0, {0}};
    cr_assert(a.bytes && b.bytes);
    const uint32_t limits[] = {120, 50, 300};
    for (int kind = 0; kind <= WL_SYNTHETIC_COUNT; kind++) { /* the last: time going back, taken as Prometheus does */
        wl_series s;
        if (kind < WL_SYNTHETIC_COUNT) wl_synthetic(&s, kind, N, (uint64_t)kind + 5);
        else test_awkward_series(&s, N, 78);
        for (size_t c = 0; c < sizeof limits / sizeof limits[0]; c++) {
            a.size = a.chunks = b.size = b.chunks = 0;
            prom_run(&s, limits[c], 0, &a);
            prom_run(&s, limits[c], 1, &b);
            char what[160];
            snprintf(what, sizeof what, "%s, at most %u samples", s.name, limits[c]);
            cr_assert_eq(a.chunks, (N + limits[c] - 1) / limits[c], "%s", what);
            same_runs(&a, &b, what);
        }
        wl_free(&s);
    }
    free(a.bytes);
    free(b.bytes);
}
