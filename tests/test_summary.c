/* Per-chunk summaries and range queries that merge them. */
#include <math.h>

#include "test_util.h"

typedef struct {
    unsigned char *chunk, *summary;
    size_t chunk_size, summary_size;
} stored;

/* Encode s in chunks of per_chunk with summaries. */
static size_t store_series(const wl_series *s, size_t per_chunk, tschunk_sketch *scratch, stored *out)
{
    size_t n = 0;
    for (size_t start = 0; start < s->n; start += per_chunk, n++) {
        size_t len = start + per_chunk <= s->n ? per_chunk : s->n - start;
        size_t cap = TSCHUNK_BOUND(len);
        out[n].chunk = malloc(cap);
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, out[n].chunk, cap, NULL), 0);
        cr_assert_eq(tschunk_encoder_set_summary(&enc, scratch), 0);
        for (size_t i = start; i < start + len; i++) cr_assert_eq(tschunk_append_bits(&enc, s->ts[i], s->bits[i]), 0);
        out[n].chunk_size = tschunk_encoder_finish(&enc);
        size_t scap = tschunk_encoder_summary_bound(&enc);
        out[n].summary = malloc(scap);
        out[n].summary_size = tschunk_encoder_write_summary(&enc, out[n].summary, scap);
        cr_assert(!tschunk_is_error(out[n].summary_size), "%s", tschunk_error_name(out[n].summary_size));
    }
    return n;
}

static tschunk_sketch *new_sketch(void)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.01, 4096, 0, {0, 0, 0}};
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    return s;
}


Test(summary, blob_fields_and_quantiles_match_a_direct_sketch)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 600, 31);
    s.bits[10] = 0x7ff0000000000002; /* stale marker */
    s.bits[20] = 0x7ff0000000000000; /* +Inf */
    tschunk_sketch *scratch = new_sketch(), *direct = new_sketch(), *from_summary = new_sketch();
    stored chunks[8];
    size_t n = store_series(&s, 120, scratch, chunks);
    cr_assert_eq(n, 5);
    tschunk_summary_info info;
    cr_assert_eq(tschunk_summary_parse(chunks[0].summary, chunks[0].summary_size, &info), 0);
    cr_assert_eq(info.count, 120);
    cr_assert_eq(info.first_ts, s.ts[0]);
    cr_assert_eq(info.last_ts, s.ts[119]);
    cr_assert_eq(info.nan_count, 1);
    cr_assert_eq(info.inf_count, 1);
    for (size_t i = 0; i < n; i++) cr_assert_eq(tschunk_summary_merge(from_summary, chunks[i].summary, chunks[i].summary_size), 0);
    for (size_t i = 0; i < s.n; i++) tschunk_sketch_add(direct, wl_double(s.bits[i]));
    tschunk_sketch_stats a, b;
    tschunk_sketch_get_stats(direct, &a);
    tschunk_sketch_get_stats(from_summary, &b);
    cr_assert_eq(a.count, 598);
    cr_assert_eq(b.count, a.count);
    cr_assert(b.exact);
    cr_assert_eq(wl_bits(a.min), wl_bits(b.min));
    cr_assert_eq(wl_bits(a.max), wl_bits(b.max));
    cr_assert_leq(fabs(a.sum - b.sum), 1e-9 * fabs(a.sum));
    for (int q = 0; q <= 100; q++) {
        double x, y;
        cr_assert_eq(tschunk_sketch_quantile(direct, q / 100.0, &x), 0);
        cr_assert_eq(tschunk_sketch_quantile(from_summary, q / 100.0, &y), 0);
        cr_assert_eq(wl_bits(x), wl_bits(y), "q=%d", q);
    }
    /* Damaged blobs are refused. */
    cr_assert_eq(tschunk_get_error_code(tschunk_summary_parse(chunks[0].summary, 3, &info)), TSCHUNK_ERROR_TRUNCATED);
    chunks[0].summary[0] = 0xd2;
    cr_assert_eq(tschunk_get_error_code(tschunk_summary_parse(chunks[0].summary, chunks[0].summary_size, &info)),
                 TSCHUNK_ERROR_BAD_VERSION);
    for (size_t i = 0; i < n; i++) { free(chunks[i].chunk); free(chunks[i].summary); }
    tschunk_sketch_free(scratch); tschunk_sketch_free(direct); tschunk_sketch_free(from_summary);
    wl_free(&s);
}

Test(summary, range_merge_is_exact_on_the_samples_in_range)
{
    wl_series s;
    wl_synthetic(&s, WL_COUNTER, 120 * 40, 5);
    tschunk_sketch *scratch = new_sketch();
    static stored chunks[64];
    size_t n = store_series(&s, 120, scratch, chunks);
    tschunk_chunk_ref refs[64];
    for (size_t i = 0; i < n; i++) refs[i] = (tschunk_chunk_ref){chunks[i].chunk, chunks[i].chunk_size, chunks[i].summary, chunks[i].summary_size};
    uint64_t rng = 17;
    for (int trial = 0; trial < 25; trial++) {
        size_t a = (size_t)(wl_rng(&rng) % s.n), b = (size_t)(wl_rng(&rng) % s.n);
        if (a > b) { size_t t = a; a = b; b = t; }
        int64_t from = s.ts[a] - (trial & 1), to = s.ts[b] + (trial & 2 ? 1 : 0);
        tschunk_sketch *acc = new_sketch(), *want = new_sketch();
        tschunk_range_stats st;
        cr_assert_eq(tschunk_range_merge(acc, refs, n, from, to, &st), 0);
        for (size_t i = 0; i < s.n; i++)
            if (s.ts[i] >= from && s.ts[i] <= to) tschunk_sketch_add(want, wl_double(s.bits[i]));
        cr_assert_leq(st.chunks_decoded, 2, "only the chunks at the ends are decoded");
        cr_assert_eq(st.chunks_from_summaries + st.chunks_decoded + st.chunks_skipped, n);
        tschunk_sketch_stats x, y;
        tschunk_sketch_get_stats(acc, &x);
        tschunk_sketch_get_stats(want, &y);
        cr_assert_eq(x.count, y.count, "trial %d", trial);
        for (int q = 0; q <= 20; q++) {
            double p, r;
            cr_assert_eq(tschunk_sketch_quantile(acc, q / 20.0, &p), 0);
            cr_assert_eq(tschunk_sketch_quantile(want, q / 20.0, &r), 0);
            cr_assert_eq(wl_bits(p), wl_bits(r), "trial %d q=%d", trial, q);
        }
        tschunk_sketch_free(acc);
        tschunk_sketch_free(want);
    }
    for (size_t i = 0; i < n; i++) { free(chunks[i].chunk); free(chunks[i].summary); }
    tschunk_sketch_free(scratch);
    wl_free(&s);
}

Test(summary, off_by_default_and_set_only_before_the_first_sample)
{
    unsigned char buf[TSCHUNK_BOUND(4)];
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, NULL), 0);
    cr_assert_eq(tschunk_encoder_summary_bound(&enc), 0);
    cr_assert_eq(tschunk_append(&enc, 1, 1.0), 0);
    tschunk_sketch *sk = new_sketch();
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_set_summary(&enc, sk)), TSCHUNK_ERROR_STAGE);
    tschunk_encoder_finish(&enc);
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_write_summary(&enc, buf, sizeof buf)), TSCHUNK_ERROR_STAGE);
    tschunk_sketch_free(sk);
}
