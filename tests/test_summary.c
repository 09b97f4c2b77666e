/* Per-chunk summaries and range queries that merge them. */
#include <math.h>

#include "test_util.h"
#include "sketch/sketch.h"

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

/* The quantiles q = 0, 1/steps, ..., 1 of a and b, bit for bit (case: which trial or range). */
static void same_quantiles(const tschunk_sketch *a, const tschunk_sketch *b, int steps, int case_no)
{
    for (int q = 0; q <= steps; q++) {
        double x, y;
        cr_assert_eq(tschunk_sketch_quantile(a, q / (double)steps, &x), 0);
        cr_assert_eq(tschunk_sketch_quantile(b, q / (double)steps, &y), 0);
        cr_assert_eq(wl_bits(x), wl_bits(y), "case %d, q = %d/%d", case_no, q, steps);
    }
}

static tschunk_sketch *new_sketch(void)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.01, 4096, 0, {0, 0, 0}, 0};
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    return s;
}

/* One chunk of s[start, start + n) with a summary, in the given codec: the summary blob's bytes. */
static size_t summary_blob(const wl_series *s, size_t start, size_t n, uint32_t codec, tschunk_sketch *scratch,
                           unsigned char *blob, size_t capacity)
{
    size_t cap = TSCHUNK_BOUND(n);
    unsigned char *chunk = malloc(cap);
    tschunk_encoder_options o = {codec, 0, 0, 0};
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, chunk, cap, &o), 0);
    cr_assert_eq(tschunk_encoder_set_summary(&enc, scratch), 0);
    for (size_t i = start; i < start + n; i++) cr_assert_eq(tschunk_append_bits(&enc, s->ts[i], s->bits[i]), 0);
    cr_assert(!tschunk_is_error(tschunk_encoder_finish(&enc)));
    size_t size = tschunk_encoder_write_summary(&enc, blob, capacity);
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    free(chunk);
    return size;
}

/* Mix 0: awkward bits (NaNs, stale markers, infinities, -0.0, values beyond both ends of the range);
 * mix 1: moderate values of both signs, many below 1 (negative indices), so that the sum shows a
 * difference in any value's order or rounding. */
static void summary_mix(wl_series *s, int mix)
{
    uint64_t rng = 77 + (uint64_t)mix;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t r = wl_rng(&rng);
        s->ts[i] = (int64_t)i * 1000;
        if (mix) {
            double u = wl_uniform(&rng) * 3;
            s->bits[i] = wl_bits((r & 1 ? -1.0 : 1.0) * u * u * u / 7.0);
            continue;
        }
        switch (r % 9) {
        case 0: s->bits[i] = wl_rng(&rng); break;
        case 1: s->bits[i] = 0x7ff0000000000002; break;
        case 2: s->bits[i] = r & 1 ? wl_bits(INFINITY) : wl_bits(-0.0); break;
        case 3: s->bits[i] = wl_bits(r & 2 ? 1e-320 : -1e300); break;
        case 4: s->bits[i] = wl_bits(-(double)(wl_rng(&rng) % 1000) / 8.0); break;
        default: s->bits[i] = wl_bits((double)(int64_t)(wl_uniform(&rng) * 1e5) / 100.0); break;
        }
    }
}

/* Codec 2 gives its summary a group at a time, codec 1 16 values at a time: for the same samples the blobs
 * must be the same bytes, Kahan sum and NaN/infinity counts included, in both mappings, across partial groups
 * and awkward values. */
Test(summary, group_push_equals_push_by_push)
{
    static unsigned char a[1 << 16], b[1 << 16];
    for (int mix = 0; mix < 2; mix++) {
        wl_series s;
        wl_alloc(&s, 3000, "summary-mix");
        summary_mix(&s, mix);
        for (int mapping = 0; mapping < 2; mapping++) {
            tschunk_sketch_options o = {mapping ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 512, 0,
                                        {0, 0, 0}, 0};
            tschunk_sketch *scratch;
            cr_assert_eq(tschunk_sketch_create(&scratch, &o), 0);
            size_t lengths[] = {1, 2, 127, 128, 129, 300, 1000, 3000};
            for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
                size_t start = lengths[k] == s.n ? 0 : 17 * k, n = lengths[k];
                size_t na = summary_blob(&s, start, n, TSCHUNK_CODEC_GORILLA, scratch, a, sizeof a);
                size_t nb = summary_blob(&s, start, n, TSCHUNK_CODEC_TSC2, scratch, b, sizeof b);
                cr_assert_eq(na, nb, "mix %d, mapping %d, %zu samples: blob sizes", mix, mapping, n);
                cr_assert(!memcmp(a, b, na), "mix %d, mapping %d, %zu samples: blob bytes", mix, mapping, n);
            }
            tschunk_sketch_free(scratch);
        }
        wl_free(&s);
    }
}

/*
 * Whatever way the samples are appended (one at a time, tschunk_append_many runs of any length, the two
 * mixed, so that codec 1's held values meet a run), the finished summary is the sketch of adding the values
 * one by one with tschunk_sketch_add: the same bytes, Kahan sum included, in both codecs and mappings.
 */
Test(summary, summary_is_the_one_by_one_sketch_however_appended)
{
    static unsigned char want_bytes[1 << 15], got_bytes[1 << 15];
    wl_series s;
    wl_alloc(&s, 700, "summary-mix");
    uint64_t rng = 404;
    for (int mix = 0; mix < 2; mix++) {
        summary_mix(&s, mix);
        for (int mapping = 0; mapping < 2; mapping++) {
            tschunk_sketch_options o = {mapping ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 512, 0,
                                        {0, 0, 0}, 0};
            tschunk_sketch *want, *got;
            cr_assert_eq(tschunk_sketch_create(&want, &o), 0);
            cr_assert_eq(tschunk_sketch_create(&got, &o), 0);
            for (size_t i = 0; i < s.n; i++) tschunk_sketch_add(want, wl_double(s.bits[i])); /* NaN, inf refused */
            size_t nw = tschunk_sketch_encode(want, want_bytes, sizeof want_bytes, TSCHUNK_SKETCH_EXACT_STATS);
            for (uint32_t codec = TSCHUNK_CODEC_GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++)
                for (int pattern = 0; pattern < 4; pattern++) {
                    size_t cap = TSCHUNK_BOUND(s.n);
                    unsigned char *chunk = malloc(cap);
                    tschunk_encoder enc;
                    tschunk_encoder_options eo = {codec, 0, 0, 0};
                    cr_assert_eq(tschunk_encoder_init(&enc, chunk, cap, &eo), 0);
                    cr_assert_eq(tschunk_encoder_set_summary(&enc, got), 0);
                    for (size_t at = 0; at < s.n;) {
                        /* pattern 0: one at a time; 1: one run; 2, 3: random singles and runs */
                        size_t run = pattern == 0 ? 1 : pattern == 1 ? s.n : 1 + wl_rng(&rng) % (pattern == 2 ? 40 : 3);
                        if (run > s.n - at) run = s.n - at;
                        const double *values = (const double *)(const void *)(s.bits + at);
                        size_t err = run == 1 ? tschunk_append_bits(&enc, s.ts[at], s.bits[at])
                                              : tschunk_append_many(&enc, s.ts + at, values, run, NULL);
                        cr_assert_eq(err, 0);
                        at += run;
                    }
                    cr_assert(!tschunk_is_error(tschunk_encoder_finish(&enc)));
                    size_t ng = tschunk_sketch_encode(got, got_bytes, sizeof got_bytes, TSCHUNK_SKETCH_EXACT_STATS);
                    cr_assert(ng == nw && !memcmp(want_bytes, got_bytes, nw),
                              "mix %d, mapping %d, codec %u, pattern %d", mix, mapping, codec, pattern);
                    free(chunk);
                }
            tschunk_sketch_free(want);
            tschunk_sketch_free(got);
        }
    }
    wl_free(&s);
}

/* Each batch add kernel the CPU has (AVX2, AVX-512; the dispatched one too) against the scalar twin
 * (value by value), on bits of every kind, runs of every length, into sketches empty or not, with bins
 * inside and outside the stores' clean ranges, counts whole or not (a weighted add); since 0.57.0 into
 * bins-only sketches too (their loops skip the statistics but the count). */
static void check_batch_add(int isa, uint32_t bins_only)
{
    uint64_t rng = 5, bits[131];
    static unsigned char a[1 << 16], b[1 << 16];
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.01, 256, 0, {0, 0, 0}, bins_only};
    tschunk_sketch *want, *got;
    size_t kernel_values = 0;
    cr_assert_eq(tschunk_sketch_create(&want, &o), 0);
    cr_assert_eq(tschunk_sketch_create(&got, &o), 0);
    for (int round = 0; round < 3000; round++) {
        size_t n = (size_t)(round % 132);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = wl_rng(&rng);
            bits[i] = r % 4 == 0 ? wl_rng(&rng) : r % 4 == 1 ? wl_bits((double)(int64_t)(r >> 40) / 64.0 - 1000.0)
                    : r % 4 == 2 ? wl_bits(ldexp(1.0, (int)(r >> 50) % 2100 - 1075)) : wl_bits(-(double)(r >> 44));
            if (round % 3 != 2) /* one sign per run: the fast quads, positive and negative */
                bits[i] = wl_bits((round % 3 ? -1.0 : 1.0) * (1.0 + (double)(bits[i] >> 20) * 0x1p-40));
        }
        if (round % 50 == 0) tschunk_sketch_clear(want), tschunk_sketch_clear(got);
        if (round % 100 == 50) { /* a count not whole: the kernels must add their runs' values one by one to it */
            double weight = 0.6984195474951608; /* + 8 and + 1 eight times round apart */
            cr_assert_eq(tschunk_sketch_add_weighted(want, 3.0, weight), 0);
            cr_assert_eq(tschunk_sketch_add_weighted(got, 3.0, weight), 0);
        }
        uint64_t nan_a = 0, nan_b = 0, refused_a = 0, refused_b = 0;
        tsc_sketch_add_bits_scalar(want, bits, n, &nan_a, &refused_a);
        kernel_values += tsc_sketch_add_bits_isa(got, bits, n, &nan_b, &refused_b, isa);
        cr_assert(nan_a == nan_b && refused_a == refused_b, "kernel %d, round %d: refused values", isa, round);
        size_t na = tschunk_sketch_encode(want, a, sizeof a, TSCHUNK_SKETCH_EXACT_STATS);
        size_t nb = tschunk_sketch_encode(got, b, sizeof b, TSCHUNK_SKETCH_EXACT_STATS);
        cr_assert(na == nb && !memcmp(a, b, na), "kernel %d, round %d: sketches differ", isa, round);
        tschunk_sketch_stats sa, sb;
        tschunk_sketch_get_stats(want, &sa);
        tschunk_sketch_get_stats(got, &sb);
        cr_assert(wl_bits(sa.count) == wl_bits(sb.count) && sa.exact == !bins_only && sb.exact == !bins_only,
                  "kernel %d, round %d: count %.17g, want %.17g", isa, round, sb.count, sa.count);
    }
    if (isa != TSC_ADD_AUTO || tsc_avx2_here())
        cr_assert(kernel_values > 100000, "kernel %d added only %zu values", isa, kernel_values);
    tschunk_sketch_free(want);
    tschunk_sketch_free(got);
}

Test(summary, batch_add_matches_scalar)
{
    for (uint32_t bins_only = 0; bins_only < 2; bins_only++) {
        check_batch_add(TSC_ADD_AUTO, bins_only);
        if (tsc_avx2_here()) check_batch_add(TSC_ADD_AVX2, bins_only);
        if (tsc_avx512_here()) check_batch_add(TSC_ADD_AVX512, bins_only);
    }
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
    for (size_t i = 5; i < s.n; i += 37) s.bits[i] = i % 2 ? 0x7ff0000000000002 : 0xfff0000000000000; /* NaN, -Inf */
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
        uint64_t nans = 0, refused = 0; /* the untracked values in the range, counted one by one */
        for (size_t i = 0; i < s.n; i++) {
            double v = wl_double(s.bits[i]);
            if (s.ts[i] < from || s.ts[i] > to) continue;
            if (isnan(v)) nans++;
            else if (tschunk_is_error(tschunk_sketch_add(want, v))) refused++;
        }
        cr_assert(st.nan_count == nans && st.inf_count == refused, "trial %d: NaN %llu of %llu, refused %llu of %llu",
                  trial, (unsigned long long)st.nan_count, (unsigned long long)nans,
                  (unsigned long long)st.inf_count, (unsigned long long)refused);
        cr_assert_leq(st.chunks_decoded, 2, "only the chunks at the ends are decoded");
        cr_assert_eq(st.chunks_from_summaries + st.chunks_decoded + st.chunks_skipped, n);
        tschunk_sketch_stats x, y;
        tschunk_sketch_get_stats(acc, &x);
        tschunk_sketch_get_stats(want, &y);
        cr_assert_eq(x.count, y.count, "trial %d", trial);
        same_quantiles(acc, want, 20, trial);
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

/* A summary's statistics are exact (README "Summary blob v1"): a bins-only sketch is refused, and neither the sketch
 * nor the encoder changes (the sketch keeps its values: set_summary clears only the sketch it takes). */
Test(summary, bins_only_sketch_is_refused)
{
    unsigned char buf[TSCHUNK_BOUND(4)];
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, NULL), 0);
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 1};
    tschunk_sketch *plain;
    cr_assert_eq(tschunk_sketch_create(&plain, &o), 0);
    cr_assert_eq(tschunk_sketch_add(plain, 2.0), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_encoder_set_summary(&enc, plain)), TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_encoder_summary_bound(&enc), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(plain, &st);
    cr_assert_eq(st.count, 1.0);
    tschunk_sketch_free(plain);
}

/* Block summaries answer a range query as the chunks' own summaries do: same quantiles, count, min,
 * max and untracked counts (the sum within rounding: it is added block by block), for ranges that
 * cover blocks, cut them, fall in one chunk or miss everything; chunks outside blocks, a damaged block
 * blob and a block that claims another number of chunks go chunk by chunk. */
Test(summary, block_summaries_answer_as_chunk_summaries)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 100 * 50, 9);
    for (size_t i = 7; i < s.n; i += 331) s.bits[i] = i % 2 ? 0x7ff0000000000002 : 0xfff0000000000000;
    tschunk_sketch *scratch = new_sketch();
    static stored chunks[64];
    size_t n = store_series(&s, 100, scratch, chunks);
    cr_assert_eq(n, 50);
    tschunk_chunk_ref refs[64];
    for (size_t i = 0; i < n; i++) refs[i] = (tschunk_chunk_ref){chunks[i].chunk, chunks[i].chunk_size, chunks[i].summary, chunks[i].summary_size};
    /* blocks of 8 chunks from chunk 1, chunks 41..49 in none; block 1's sketch cut short, block 2's
     * magic damaged, block 3 saying it combines 7 chunks: those go chunk by chunk */
    tschunk_summary_block blocks[5];
    unsigned char *blobs[5];
    size_t cap = tschunk_summary_combine_bound(scratch);
    for (size_t k = 0; k < 5; k++) {
        blobs[k] = malloc(cap);
        size_t size = tschunk_summary_combine(scratch, refs + 1 + 8 * k, 8, blobs[k], cap);
        cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
        tschunk_summary_info info;
        cr_assert_eq(tschunk_get_error_code(tschunk_summary_parse(blobs[k], size, &info)), TSCHUNK_ERROR_BAD_VERSION);
        blocks[k] = (tschunk_summary_block){1 + 8 * k, 8, blobs[k], size};
    }
    blocks[1].summary_size -= 3;
    blobs[2][0] = 0xd7;
    blobs[3][1] = 7;
    int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {s.ts[150], s.ts[4321]}, {s.ts[905], s.ts[1700]},
                           {s.ts[2001], s.ts[2050]}, {s.ts[s.n - 1] + 1, INT64_MAX}, {s.ts[0], s.ts[s.n - 1]}};
    for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
        tschunk_sketch *want = new_sketch(), *got = new_sketch();
        tschunk_range_stats a, b;
        cr_assert_eq(tschunk_range_merge(want, refs, n, ranges[r][0], ranges[r][1], &a), 0);
        size_t err = tschunk_range_merge_blocks(got, refs, n, blocks, 5, ranges[r][0], ranges[r][1], &b);
        cr_assert_eq(err, 0, "range %zu: %s", r, tschunk_error_name(err));
        cr_assert_eq(b.chunks_from_summaries + b.chunks_decoded + b.chunks_skipped, n, "range %zu", r);
        cr_assert_eq(b.chunks_decoded, a.chunks_decoded, "range %zu", r);
        cr_assert_eq(b.samples_decoded, a.samples_decoded, "range %zu", r);
        cr_assert(b.nan_count == a.nan_count && b.inf_count == a.inf_count, "range %zu", r);
        tschunk_sketch_stats x, y;
        tschunk_sketch_get_stats(want, &x);
        tschunk_sketch_get_stats(got, &y);
        cr_assert_eq(y.count, x.count, "range %zu", r);
        if (x.count > 0) {
            cr_assert(wl_bits(x.min) == wl_bits(y.min) && wl_bits(x.max) == wl_bits(y.max), "range %zu", r);
            cr_assert_leq(fabs(x.sum - y.sum), 1e-9 * fabs(x.sum) + 1e-9, "range %zu: sums %.17g %.17g", r, x.sum, y.sum);
            same_quantiles(got, want, 50, (int)r);
        }
        tschunk_sketch_free(want);
        tschunk_sketch_free(got);
    }
    /* The whole range: every chunk answers from a summary, its own or its block's. */
    tschunk_sketch *acc = new_sketch();
    tschunk_range_stats st;
    cr_assert_eq(tschunk_range_merge_blocks(acc, refs, n, blocks, 5, INT64_MIN, INT64_MAX, &st), 0);
    cr_assert_eq(st.chunks_from_summaries, n);
    cr_assert_eq(st.chunks_decoded, 0);
    /* And the sound blocks are what answers: a block summary of other chunks changes the answer. */
    unsigned char *other = malloc(cap);
    tschunk_summary_block lie = blocks[0];
    lie.summary = other;
    lie.summary_size = tschunk_summary_combine(scratch, refs + 41, 8, other, cap);
    tschunk_sketch *lied = new_sketch();
    cr_assert_eq(tschunk_range_merge_blocks(lied, refs, n, &lie, 1, INT64_MIN, INT64_MAX, NULL), 0);
    tschunk_sketch_stats honest, told;
    tschunk_sketch_get_stats(acc, &honest);
    tschunk_sketch_get_stats(lied, &told);
    cr_assert_eq(told.count, honest.count);
    cr_assert_neq(wl_bits(told.sum), wl_bits(honest.sum));
    tschunk_sketch_free(lied);
    free(other);
    /* Blocks out of order, overlapping or past the chunks are refused. */
    tschunk_summary_block bad[2] = {blocks[1], blocks[0]};
    cr_assert_eq(tschunk_get_error_code(tschunk_range_merge_blocks(acc, refs, n, bad, 2, 0, 1, NULL)), TSCHUNK_ERROR_BAD_PARAMETER);
    bad[0] = blocks[0], bad[1] = blocks[0], bad[1].first += 4;
    cr_assert_eq(tschunk_get_error_code(tschunk_range_merge_blocks(acc, refs, n, bad, 2, 0, 1, NULL)), TSCHUNK_ERROR_BAD_PARAMETER);
    bad[0] = blocks[4], bad[0].count = 20;
    cr_assert_eq(tschunk_get_error_code(tschunk_range_merge_blocks(acc, refs, n, bad, 1, 0, 1, NULL)), TSCHUNK_ERROR_BAD_PARAMETER);
    /* Too small a buffer, and a chunk without a summary, cannot be combined. */
    unsigned char small[8];
    cr_assert_eq(tschunk_get_error_code(tschunk_summary_combine(scratch, refs, 2, small, sizeof small)), TSCHUNK_ERROR_DST_TOO_SMALL);
    tschunk_chunk_ref bare = refs[0];
    bare.summary = NULL;
    cr_assert_eq(tschunk_get_error_code(tschunk_summary_combine(scratch, &bare, 1, small, sizeof small)), TSCHUNK_ERROR_BAD_PARAMETER);
    tschunk_sketch_free(acc);
    for (size_t k = 0; k < 5; k++) free(blobs[k]);
    for (size_t i = 0; i < n; i++) { free(chunks[i].chunk); free(chunks[i].summary); }
    tschunk_sketch_free(scratch);
    wl_free(&s);
}
