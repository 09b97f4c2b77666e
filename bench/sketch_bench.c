/*
 * DDSketch and summary figures (issue "Chunk summaries"): compact sizes beside
 * sketches-java's, add ns per value, encode/decode of a 100,000-value sketch,
 * push with the summary on and off, and a range quantile over 10,000 chunks
 * from summaries against decoding them all. Medians of REPS repetitions.
 *
 *   sketch_bench [--quick]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tschunk.h"
#include "workloads.h"
#include "timing.h"

static int reps = 7;
static volatile double sink;

static tschunk_sketch *make_as(tschunk_mapping_kind kind, double gamma_or_alpha, int by_gamma, uint32_t bins_only)
{
    tschunk_sketch *s;
    /* 65,536 bins: as sketches-java's unbounded dense store for every case here */
    tschunk_sketch_options o = {kind, by_gamma ? 0 : gamma_or_alpha, 1u << 16, 0, {NULL, NULL, NULL}, bins_only};
    size_t r = by_gamma ? tschunk_sketch_create_mapping(&s, kind, gamma_or_alpha, 0, &o) : tschunk_sketch_create(&s, &o);
    if (r) abort();
    return s;
}

static tschunk_sketch *make(tschunk_mapping_kind kind, double gamma_or_alpha, int by_gamma)
{
    return make_as(kind, gamma_or_alpha, by_gamma, 0);
}

/* sketches-go's TestBenchmarkEncodedSize cases (cubic, gamma 1.02, offset 0) beside sketches-java's sizes. */
static void size_table(void)
{
    struct { const char *name; int sparse; double v[4], w[4]; int n; int java, java_no_mapping; } cases[] = {
        {"dense/empty", 0, {0}, {0}, 0, 17, 0},
        {"dense/small_int_count", 0, {0, 2, 28, -3}, {1, 1, 1, 1}, 4, 30, 13},
        {"dense/small_non_int_count", 0, {0, 2, 28, -3}, {0.1, 1.2, 8.66, 2.33}, 4, 61, 44},
        {"dense/small_far_apart", 0, {1, 1e20}, {0.1, 1.2}, 2, 40, 23},
        {"sparse/single_value", 1, {34654677.3676}, {1}, 1, 22, 5},
        {"sparse/small_int_count", 1, {0, 2, 28, -3}, {1, 1, 1, 1}, 4, 30, 13},
    };
    printf("Compact encoding sizes (bytes; cubic mapping, gamma 1.02; sketches-java from the spec's table):\n\n");
    printf("| case | tschunk | sketches-java | tschunk, no mapping | sketches-java, no mapping |\n|---|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tschunk_sketch *s = make(TSCHUNK_MAPPING_CUBIC, 1.02, 1);
        for (int k = 0; k < cases[i].n; k++) tschunk_sketch_add_weighted(s, cases[i].v[k], cases[i].w[k]);
        unsigned char buf[4096];
        unsigned flags = cases[i].sparse ? TSCHUNK_SKETCH_SPARSE : 0;
        size_t a = tschunk_sketch_encode(s, buf, sizeof buf, flags);
        size_t b = tschunk_sketch_encode(s, buf, sizeof buf, flags | TSCHUNK_SKETCH_OMIT_MAPPING);
        printf("| %s | %zu | %d | %zu | %d |\n", cases[i].name, a, cases[i].java, b, cases[i].java_no_mapping);
        tschunk_sketch_free(s);
    }
}

static double *lognormal(size_t n, uint64_t seed)
{
    double *v = malloc(n * sizeof *v);
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        double u1 = wl_uniform(&rng) + 1e-300, u2 = wl_uniform(&rng);
        v[i] = exp(2 * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
    }
    return v;
}

static void add_speed(size_t n)
{
    double *v = lognormal(n, 1);
    printf("\nAdd, ns per value (%zu lognormal values, median of %d):\n\n| mapping | ns/value |\n|---|---:|\n", n, reps);
    /* how: 0 one tschunk_sketch_add a value, 1 one add_many call, 2 one value a call through a stage; plain: a
     * bins-only sketch, the plain DDSketch whose add sketches-java and sketches-go were measured on */
    const struct { const char *name; tschunk_mapping_kind kind; int how; uint32_t plain; } maps[] = {
        {"cubic, dense", TSCHUNK_MAPPING_CUBIC, 0, 0}, {"logarithmic, dense", TSCHUNK_MAPPING_LOGARITHMIC, 0, 0},
        {"cubic, dense, tschunk_sketch_add_many", TSCHUNK_MAPPING_CUBIC, 1, 0},
        {"cubic, dense, one value a call through a tschunk_sketch_stage", TSCHUNK_MAPPING_CUBIC, 2, 0},
        {"cubic, dense, bins only (the plain DDSketch)", TSCHUNK_MAPPING_CUBIC, 0, 1},
        {"logarithmic, dense, bins only (the plain DDSketch)", TSCHUNK_MAPPING_LOGARITHMIC, 0, 1},
        {"cubic, dense, bins only, tschunk_sketch_add_many", TSCHUNK_MAPPING_CUBIC, 1, 1},
        {"cubic, dense, bins only, one value a call through a tschunk_sketch_stage", TSCHUNK_MAPPING_CUBIC, 2, 1}};
    static tschunk_sketch_stage stage;
    for (size_t m = 0; m < sizeof maps / sizeof *maps; m++) {
        double t[32];
        tschunk_sketch *s = make_as(maps[m].kind, 0.01, 0, maps[m].plain);
        for (int r = 0; r < reps; r++) {
            tschunk_sketch_clear(s);
            tschunk_sketch_stage_init(&stage);
            double t0 = now_ns();
            if (maps[m].how == 1) tschunk_sketch_add_many(s, v, n);
            else if (maps[m].how == 2) {
                for (size_t i = 0; i < n; i++) tschunk_sketch_stage_add(&stage, s, v[i]);
                tschunk_sketch_stage_flush(&stage, s);
            } else
                for (size_t i = 0; i < n; i++) tschunk_sketch_add(s, v[i]);
            t[r] = (now_ns() - t0) / (double)n;
        }
        printf("| %s | %.2f |\n", maps[m].name, median(t, reps));
        tschunk_sketch_free(s);
    }
    free(v);
}

/* A standard normal value (Box-Muller; the second value of the pair is dropped). */
static double gaussian(uint64_t *rng)
{
    double u1 = wl_uniform(rng) + 1e-300, u2 = wl_uniform(rng);
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* sketches-java's jmh TRIMODAL_NORMAL data as the spec's section 6 ran it: N(100, 10) a third of the
 * time, else N(1000, 100) or N(10000, 1000) half and half, as abs(round(x)) integer nanoseconds. */
static double trimodal(uint64_t *rng)
{
    double u = wl_uniform(rng), x;
    if (u < 0.33) x = 100 + 10 * gaussian(rng);
    else if (wl_uniform(rng) < 0.5) x = 1000 + 100 * gaussian(rng);
    else x = 10000 + 1000 * gaussian(rng);
    return fabs(round(x));
}

/* sketches-java's jmh POISSON data: abs(round(-ln(U) / 0.1)), as integer nanoseconds. */
static void codec_speed(void)
{
    printf("\nEncode and decode of a 100,000-value sketch (microseconds per sketch, median of %d x 200):\n\n", reps);
    printf("| data | mapping | bytes | encode us | decode us (new sketch) | decode-merge us (cleared sketch) | "
           "decode-merge us, exact statistics (COUNT, MIN, MAX, SUM) |\n");
    printf("|---|---|---:|---:|---:|---:|---:|\n");
    for (int d = 0; d < 3; d++) {
        for (int m = 0; m < 2; m++) {
            tschunk_mapping_kind kind = m ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC;
            tschunk_sketch *s = make(kind, 0.01, 0), *t = make(kind, 0.01, 0);
            uint64_t rng = 5388928120325255124ULL;
            double *ln = d == 1 ? lognormal(100000, 7) : NULL;
            for (int i = 0; i < 100000; i++)
                tschunk_sketch_add(s, d == 1 ? ln[i] : d == 2 ? trimodal(&rng)
                                                     : fabs(round(-log(wl_uniform(&rng) + 1e-300) / 0.1)));
            free(ln);
            static unsigned char buf[1 << 16], exact[1 << 16];
            size_t n = 0, exact_n = tschunk_sketch_encode(s, exact, sizeof exact, TSCHUNK_SKETCH_EXACT_STATS);
            double te[32], td[32], tm[32], tx[32];
            for (int r = 0; r < reps; r++) {
                double t0 = now_ns();
                for (int k = 0; k < 200; k++) n = tschunk_sketch_encode(s, buf, sizeof buf, 0);
                te[r] = (now_ns() - t0) / 200 / 1000;
                t0 = now_ns();
                for (int k = 0; k < 200; k++) {
                    tschunk_sketch *x;
                    tschunk_sketch_decode_new(&x, buf, n, NULL, NULL);
                    tschunk_sketch_free(x);
                }
                td[r] = (now_ns() - t0) / 200 / 1000;
                t0 = now_ns();
                for (int k = 0; k < 200; k++) {
                    tschunk_sketch_clear(t);
                    tschunk_sketch_decode_merge(t, buf, n, NULL);
                }
                tm[r] = (now_ns() - t0) / 200 / 1000;
                t0 = now_ns();
                for (int k = 0; k < 200; k++) {
                    tschunk_sketch_clear(t);
                    tschunk_sketch_decode_merge(t, exact, exact_n, NULL);
                }
                tx[r] = (now_ns() - t0) / 200 / 1000;
            }
            printf("| %s | %s | %zu | %.3f | %.3f | %.3f | %.3f |\n",
                   d == 1 ? "lognormal(0, 2)" : d == 2 ? "TRIMODAL_NORMAL (jmh)" : "POISSON (jmh)",
                   m ? "cubic" : "logarithmic", n, median(te, reps), median(td, reps), median(tm, reps),
                   median(tx, reps));
            tschunk_sketch_free(s);
            tschunk_sketch_free(t);
        }
    }
}

static double encode_series(const wl_series *s, tschunk_sketch *summary, unsigned char *buf, size_t cap,
                            uint32_t codec, int many)
{
    tschunk_encoder_options o = {codec, 0, 0, 0};
    double t0 = now_ns();
    for (size_t start = 0; start < s->n; start += 120) {
        tschunk_encoder enc;
        size_t len = s->n - start < 120 ? s->n - start : 120;
        tschunk_encoder_init(&enc, buf, cap, &o);
        if (summary) tschunk_encoder_set_summary(&enc, summary);
        if (many) tschunk_append_many(&enc, s->ts + start, (const double *)(const void *)(s->bits + start), len, NULL);
        else
            for (size_t i = start; i < start + len; i++) tschunk_append_bits(&enc, s->ts[i], s->bits[i]);
        tschunk_encoder_finish(&enc);
    }
    return (now_ns() - t0) / (double)s->n;
}

static void push_with_summary(void)
{
    printf("\nPush with the summary off and on (gauge-2dp, 120-sample chunks, cubic 0.01; ns per push; one sample\n"
           "a call, and a chunk's samples a call through tschunk_append_many):\n\n");
    printf("| codec | appends | off | on | difference |\n|---|---|---:|---:|---:|\n");
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 122880, 42);
    static unsigned char buf[TSCHUNK_BOUND(120)];
    tschunk_sketch *sk = make(TSCHUNK_MAPPING_CUBIC, 0.01, 0);
    for (uint32_t codec = TSCHUNK_CODEC_GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++)
        for (int many = 0; many < 2; many++) {
            double off[32], on[32];
            for (int r = 0; r < reps; r++) {
                off[r] = encode_series(&s, NULL, buf, sizeof buf, codec, many);
                on[r] = encode_series(&s, sk, buf, sizeof buf, codec, many);
            }
            double a = median(off, reps), b = median(on, reps);
            printf("| %s | %s | %.2f | %.2f | %+.2f |\n", codec == TSCHUNK_CODEC_TSC2 ? "codec 2" : "codec 1",
                   many ? "append_many" : "one by one", a, b, b - a);
        }
    tschunk_sketch_free(sk);
    wl_free(&s);
}

/* The same chunks in a segment of one series, block summaries stored by the writer (64 or 256 chunks a
 * block, or none): tschunk_segment_range_merge on an open segment against decoding its chunks. */
static void segment_range_query(const tschunk_chunk_ref *refs, size_t nchunks, const tschunk_sketch *scratch,
                                tschunk_sketch *acc, double decode_ms)
{
    tschunk_sketch_stats ks;
    tschunk_sketch_get_stats(scratch, &ks);
    const uint32_t per_block[3] = {1, 64, 256};
    printf("\nThe same p99 from a segment (one series of %zu chunks; `tschunk_segment_range_merge`, segment open):\n\n",
           nchunks);
    printf("| stored block summaries | ms | x faster than decoding in memory (%.3f ms) | segment bytes |\n|---|---:|---:|---:|\n",
           decode_ms);
    for (int k = 0; k < 3; k++) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/tschunk-sketch-bench-%ld.tseg", (long)getpid());
        tschunk_segment_options o = {.min_ts = INT64_MIN, .has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                     .summary_gamma = ks.gamma, .summary_offset = ks.index_offset,
                                     .summary_block_chunks = per_block[k]};
        tschunk_segment_writer *w;
        if (tschunk_segment_writer_create(&w, path, &o)) abort();
        for (size_t c = 0; c < nchunks; c++)
            if (tschunk_segment_writer_add_chunk(w, 1, refs[c].chunk, refs[c].chunk_size, refs[c].summary,
                                                 refs[c].summary_size))
                abort();
        size_t size = tschunk_segment_writer_finish(w);
        if (tschunk_is_error(size)) abort();
        unsigned char *file = malloc(size);
        FILE *f = fopen(path, "rb");
        if (!file || !f || fread(file, 1, size, f) != size) abort();
        fclose(f);
        remove(path);
        tschunk_segment *seg;
        if (tschunk_segment_open(&seg, file, size, 0, NULL)) abort();
        double t[32], q = 0;
        for (int r = 0; r < reps; r++) {
            double t0 = now_ns();
            tschunk_sketch_clear(acc);
            if (tschunk_segment_range_merge(seg, 0, INT64_MIN, INT64_MAX, acc, NULL)) abort();
            tschunk_sketch_quantile(acc, 0.99, &q);
            t[r] = (now_ns() - t0) / 1e6;
        }
        sink = q;
        double ms = median(t, reps);
        printf("| %s | %.3f | %.0fx | %zu |\n", k == 0 ? "none (one summary per chunk)" : k == 1 ? "64 chunks" : "256 chunks",
               ms, decode_ms / ms, size);
        tschunk_segment_close(seg);
        free(file);
    }
}

static void range_query(size_t nchunks)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, nchunks * 120, 11);
    size_t cap = TSCHUNK_BOUND(120), scap = 1 << 16;
    unsigned char *chunks = malloc(nchunks * cap), *sums = malloc(nchunks * 4096);
    tschunk_chunk_ref *refs = malloc(nchunks * sizeof *refs);
    tschunk_sketch *scratch = make(TSCHUNK_MAPPING_CUBIC, 0.01, 0), *acc = make(TSCHUNK_MAPPING_CUBIC, 0.01, 0);
    static unsigned char sbuf[1 << 16];
    size_t summary_bytes = 0, chunk_bytes = 0;
    for (size_t c = 0; c < nchunks; c++) {
        tschunk_encoder enc;
        tschunk_encoder_init(&enc, chunks + c * cap, cap, NULL);
        tschunk_encoder_set_summary(&enc, scratch);
        for (size_t i = c * 120; i < (c + 1) * 120; i++) tschunk_append_bits(&enc, s.ts[i], s.bits[i]);
        size_t size = tschunk_encoder_finish(&enc), ssize = tschunk_encoder_write_summary(&enc, sbuf, scap);
        if (tschunk_is_error(ssize) || ssize > 4096) abort();
        memcpy(sums + c * 4096, sbuf, ssize);
        refs[c] = (tschunk_chunk_ref){chunks + c * cap, size, sums + c * 4096, ssize};
        summary_bytes += ssize;
        chunk_bytes += size;
    }
    /* Block summaries of 64 and of 256 chunks, as a TSDB would keep beside its index (built once, not timed). */
    size_t bcap = tschunk_summary_combine_bound(scratch), nblocks[2], block_bytes[2] = {0, 0};
    tschunk_summary_block *blocks[2];
    unsigned char *bsums[2];
    for (int k = 0; k < 2; k++) {
        size_t per = k ? 256 : 64;
        nblocks[k] = (nchunks + per - 1) / per;
        blocks[k] = malloc(nblocks[k] * sizeof *blocks[k]);
        bsums[k] = malloc(nblocks[k] * bcap);
        for (size_t b = 0; b < nblocks[k]; b++) {
            size_t first = b * per, count = nchunks - first < per ? nchunks - first : per;
            size_t size = tschunk_summary_combine(scratch, refs + first, count, bsums[k] + b * bcap, bcap);
            if (tschunk_is_error(size)) abort();
            blocks[k][b] = (tschunk_summary_block){first, count, bsums[k] + b * bcap, size};
            block_bytes[k] += size;
        }
    }
    double ts[32], td[32], tb[2][32], tc[32], q1 = 0, q2 = 0, q3 = 0, q4 = 0;
    static int64_t out_ts[120];
    static double out_v[120];
    /* a range that cuts chunks and blocks: from the middle of chunk 10 to the middle of the last but 10 */
    int64_t cut_from = s.ts[10 * 120 + 60], cut_to = s.ts[(nchunks - 10) * 120 + 60];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        tschunk_sketch_clear(acc);
        tschunk_range_merge(acc, refs, nchunks, INT64_MIN, INT64_MAX, NULL);
        tschunk_sketch_quantile(acc, 0.99, &q1);
        ts[r] = (now_ns() - t0) / 1e6;
        t0 = now_ns();
        tschunk_sketch_clear(acc);
        for (size_t c = 0; c < nchunks; c++) {
            size_t n = tschunk_decode(refs[c].chunk, refs[c].chunk_size, out_ts, out_v, 120);
            for (size_t i = 0; i < n; i++) tschunk_sketch_add(acc, out_v[i]);
        }
        tschunk_sketch_quantile(acc, 0.99, &q2);
        td[r] = (now_ns() - t0) / 1e6;
        for (int k = 0; k < 2; k++) {
            t0 = now_ns();
            tschunk_sketch_clear(acc);
            tschunk_range_merge_blocks(acc, refs, nchunks, blocks[k], nblocks[k], INT64_MIN, INT64_MAX, NULL);
            tschunk_sketch_quantile(acc, 0.99, &q3);
            tb[k][r] = (now_ns() - t0) / 1e6;
        }
        t0 = now_ns();
        tschunk_sketch_clear(acc);
        tschunk_range_merge_blocks(acc, refs, nchunks, blocks[0], nblocks[0], cut_from, cut_to, NULL);
        tschunk_sketch_quantile(acc, 0.99, &q4);
        tc[r] = (now_ns() - t0) / 1e6;
    }
    sink = q1 + q2 + q3 + q4;
    double a = median(ts, reps), b = median(td, reps), c = median(tb[0], reps), c4 = median(tb[1], reps),
           d = median(tc, reps);
    printf("\nRange quantile (p99) over %zu chunks of 120 samples (gauge-2dp, cubic 0.01), median of %d:\n\n",
           nchunks, reps);
    printf("| method | ms | answer |\n|---|---:|---:|\n| merge summaries | %.3f | %.6g |\n| decode every chunk | %.3f | %.6g |\n",
           a, q1, b, q2);
    printf("| merge block summaries (64 chunks a block) | %.3f | %.6g |\n", c, q3);
    printf("| merge block summaries (256 chunks a block) | %.3f | %.6g |\n", c4, q3);
    printf("| 64-chunk blocks, range cut inside chunks 10 and %zu (2 chunks decoded) | %.3f | %.6g |\n", nchunks - 10, d, q4);
    printf("\nSummaries answer %.0fx faster, block summaries %.0fx (64 chunks) and %.0fx (256 chunks); %.0fx with the "
           "range cut inside chunks. Summary blobs: %.1f bytes per chunk (%.2f bytes per sample) beside %.1f bytes per "
           "chunk of samples; block summaries %.0f / %.0f bytes each.\n", b / a, b / c, b / c4, b / d,
           (double)summary_bytes / (double)nchunks, (double)summary_bytes / (double)(nchunks * 120),
           (double)chunk_bytes / (double)nchunks, (double)block_bytes[0] / (double)nblocks[0],
           (double)block_bytes[1] / (double)nblocks[1]);
    segment_range_query(refs, nchunks, scratch, acc, b);
    free(chunks); free(sums); free(refs);
    for (int k = 0; k < 2; k++) free(blocks[k]), free(bsums[k]);
    tschunk_sketch_free(scratch); tschunk_sketch_free(acc);
    wl_free(&s);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    if (quick) reps = 3;
    size_table();
    add_speed(quick ? 100000 : 1000000);
    codec_speed();
    push_with_summary();
    range_query(quick ? 1000 : 10000);
    return 0;
}
