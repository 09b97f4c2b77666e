/* Segments: many series' chunks in one checksummed, indexed file. */
#define _DEFAULT_SOURCE /* syscall, for the fsync below */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <math.h>
#ifndef TSCHUNK_TESTS_NO_ROARING /* no libroaring: scripts/check-cross.sh, scripts/msan.sh */
#include <roaring/roaring.h>
#endif

#include "mem_io.h"
#include "test_util.h"
#include "segment/format.h"

typedef test_file blob;

static blob read_all(const char *path) { return test_read_file(path); }

/* What the test wrote, to compare with what the reader finds. */
typedef struct {
    uint64_t series;
    int64_t first, last;
    unsigned char *chunk, *summary;
    size_t chunk_size, summary_size;
} written;

#define NSERIES 40
#define PER_SERIES 6

/* To a path, or through io when path is NULL. */
static size_t write_segment_to(const char *path, const tschunk_segment_io *io, written *w, int with_summaries)
{
    tschunk_sketch *sk = NULL;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    /* 1 s before the first scrape: the synthetic jitter reaches 5 ms before it. */
    tschunk_segment_options o = {.min_ts = INT64_C(1699999999000), .has_summaries = (uint32_t)with_summaries,
                                 .summary_mapping = TSCHUNK_MAPPING_CUBIC, .summary_gamma = st.gamma,
                                 .summary_offset = st.index_offset, .ts_unit = TSCHUNK_UNIT_MS};
    tschunk_segment_writer *sw;
    size_t created = path ? tschunk_segment_writer_create(&sw, path, &o) : tschunk_segment_writer_create_io(&sw, io, &o);
    cr_assert_eq(created, 0);
    size_t n = 0;
    uint64_t rng = 99;
    /* Series ids are sparse 64-bit numbers; chunks arrive interleaved and out of order. */
    for (int round = PER_SERIES - 1; round >= 0; round--) {
        for (int k = 0; k < NSERIES; k++) {
            uint64_t id = UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)(k + 1);
            wl_series s;
            wl_synthetic(&s, k % WL_SYNTHETIC_COUNT, 120, (uint64_t)(k * 100 + round));
            for (size_t i = 0; i < s.n; i++) s.ts[i] += (int64_t)round * 1800000;
            written *x = &w[n++];
            x->series = id;
            x->first = s.ts[0];
            x->last = s.ts[s.n - 1];
            size_t cap = TSCHUNK_BOUND(s.n);
            x->chunk = malloc(cap);
            tschunk_encoder enc;
            cr_assert_eq(tschunk_encoder_init(&enc, x->chunk, cap, NULL), 0);
            if (with_summaries) tschunk_encoder_set_summary(&enc, sk);
            for (size_t i = 0; i < s.n; i++) tschunk_append_bits(&enc, s.ts[i], s.bits[i]);
            x->chunk_size = tschunk_encoder_finish(&enc);
            x->summary = NULL;
            x->summary_size = 0;
            if (with_summaries) {
                size_t scap = tschunk_encoder_summary_bound(&enc);
                x->summary = malloc(scap);
                x->summary_size = tschunk_encoder_write_summary(&enc, x->summary, scap);
            }
            cr_assert_eq(tschunk_segment_writer_add_chunk(sw, id, x->chunk, x->chunk_size, x->summary, x->summary_size), 0);
            if (round == 0) {
                char name[64];
                int len = snprintf(name, sizeof name, "metric_%d{host=\"h%llu\"}", k, (unsigned long long)(wl_rng(&rng) % 9));
                cr_assert_eq(tschunk_segment_writer_add_series(sw, id, name, (size_t)len), 0);
            }
            wl_free(&s);
        }
    }
    size_t size = tschunk_segment_writer_finish(sw);
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    tschunk_sketch_free(sk);
    return n;
}

static size_t write_segment(const char *path, written *w, int with_summaries)
{
    return write_segment_to(path, NULL, w, with_summaries);
}

static void free_written(written *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(w[i].chunk);
        free(w[i].summary);
    }
}

static char tmpdir[64];

static void make_tmp(void) { test_dir_make(tmpdir, sizeof tmpdir, "seg"); }
static void rm_tmp(void) { test_dir_remove(tmpdir); }

TestSuite(segment, .init = make_tmp, .fini = rm_tmp);

Test(segment, round_trip_and_lookups)
{
    static written w[NSERIES * PER_SERIES];
    char path[128];
    snprintf(path, sizeof path, "%s/a.tseg", tmpdir);
    size_t n = write_segment(path, w, 1);
    blob b = read_all(path);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, TSCHUNK_SEGMENT_VERIFY, NULL), 0);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    cr_assert_eq(info.series, NSERIES);
    cr_assert_eq(info.chunks, n);
    cr_assert_eq(info.samples, n * 120);
    cr_assert(info.has_summaries);
    for (size_t i = 0; i < n; i++) {
        size_t ord = tschunk_segment_find_series(seg, w[i].series);
        cr_assert(!tschunk_is_error(ord));
        const char *name;
        size_t len;
        uint64_t id;
        cr_assert_eq(tschunk_segment_series(seg, (uint32_t)ord, &id, &name, &len), 0);
        cr_assert_eq(id, w[i].series);
        cr_assert_eq(tschunk_segment_find_series_name(seg, name, len), ord);
        /* Exactly the chunk that was written, found by its own time range, bytes in place. */
        size_t begin, end, found = 0;
        cr_assert_eq(tschunk_segment_range(seg, (uint32_t)ord, w[i].first, w[i].last, &begin, &end), 0);
        for (size_t j = begin; j < end; j++) {
            tschunk_segment_chunk_info c;
            cr_assert_eq(tschunk_segment_chunk(seg, j, &c), 0);
            cr_assert_eq(c.ordinal, ord);
            cr_assert(c.last_ts >= w[i].first && c.first_ts <= w[i].last);
            if (c.ref.chunk_size == w[i].chunk_size && !memcmp(c.ref.chunk, w[i].chunk, w[i].chunk_size)) {
                found++;
                const unsigned char *at = (const unsigned char *)c.ref.chunk;
                cr_assert(at >= b.data && at < b.data + b.size, "chunk bytes are not copied");
                cr_assert_eq(c.ref.summary_size, w[i].summary_size);
            }
        }
        cr_assert_eq(found, 1);
    }
    /* Range lookups against brute force, including ranges between chunks. */
    uint64_t rng = 5;
    for (int q = 0; q < 300; q++) {
        uint32_t ord = (uint32_t)(wl_rng(&rng) % NSERIES);
        int64_t from = INT64_C(1700000000000) + (int64_t)(wl_rng(&rng) % 12000000) - 1000000;
        int64_t to = from + (int64_t)(wl_rng(&rng) % 4000000);
        size_t begin, end, want = 0;
        cr_assert_eq(tschunk_segment_range(seg, ord, from, to, &begin, &end), 0);
        uint64_t id;
        tschunk_segment_series(seg, ord, &id, NULL, NULL);
        for (size_t i = 0; i < n; i++) want += w[i].series == id && w[i].last >= from && w[i].first <= to;
        cr_assert_eq(end - begin, want, "query %d", q);
    }
    tschunk_segment_close(seg);
    free(b.data);
    free_written(w, n);
}

/* Both series of the small segment below, read through a lazy open by id: samples, or a failure bit. */
typedef struct {
    int opened, failed;
    size_t n[2];
    int64_t ts[2][16];
    uint64_t bits[2][16];
} lazy_reads;

static lazy_reads read_lazily(const unsigned char *data, size_t size)
{
    lazy_reads r;
    memset(&r, 0, sizeof r);
    tschunk_segment *seg;
    if (tschunk_segment_open(&seg, data, size, TSCHUNK_SEGMENT_LAZY, NULL)) {
        r.failed = 3;
        return r;
    }
    r.opened = 1;
    for (int k = 0; k < 2; k++) {
        size_t ord = tschunk_segment_find_series(seg, (uint64_t)k + 7), begin, end;
        if (tschunk_is_error(ord) || tschunk_segment_range(seg, (uint32_t)ord, INT64_MIN, INT64_MAX, &begin, &end)) {
            r.failed |= 1 << k;
            continue;
        }
        for (size_t i = begin; i < end && !(r.failed & (1 << k)); i++) {
            double v[16];
            size_t n = r.n[k] < 11 ? tschunk_segment_decode(seg, i, r.ts[k] + r.n[k], v, 16 - r.n[k]) : 0;
            if (tschunk_is_error(n) || r.n[k] >= 11) {
                r.failed |= 1 << k;
                break;
            }
            for (size_t j = 0; j < n; j++) r.bits[k][r.n[k] + j] = wl_bits(v[j]);
            r.n[k] += n;
        }
    }
    tschunk_segment_close(seg);
    return r;
}

Test(segment, every_bit_flip_and_truncation_is_detected, .timeout = 120)
{
    /* A small segment: two series, two chunks each, no summaries; its series bitmap and tombstones included. */
    char path[128];
    snprintf(path, sizeof path, "%s/small.tseg", tmpdir);
    tschunk_segment_options o = {.summary_mapping = TSCHUNK_MAPPING_LOGARITHMIC};
    tschunk_segment_writer *sw;
    cr_assert_eq(tschunk_segment_writer_create(&sw, path, &o), 0);
    for (int k = 0; k < 4; k++) {
        int64_t ts[5];
        double v[5];
        for (int i = 0; i < 5; i++) { ts[i] = k * 100 + i * 10; v[i] = k + i * 0.5; }
        unsigned char chunk[TSCHUNK_BOUND(5)];
        size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 5, NULL);
        cr_assert_eq(tschunk_segment_writer_add_chunk(sw, (uint64_t)(k % 2) + 7, chunk, size, NULL, 0), 0);
    }
    tschunk_segment_writer_add_series(sw, 7, "a", 1);
    tschunk_segment_writer_add_series(sw, 8, "bb", 2);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(sw)));
    /* With tombstones too: series 7 loses [10, 210], across both its chunks. */
    blob first = read_all(path);
    tschunk_segment *before;
    cr_assert_eq(tschunk_segment_open(&before, first.data, first.size, 0, NULL), 0);
    uint64_t deleted;
    cr_assert_eq(tschunk_segment_delete(before, path, 0, 10, 210, &deleted), 0);
    cr_assert_eq(deleted, 6);
    tschunk_segment_close(before);
    free(first.data);
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    unsigned char *copy = malloc(b.size);
    lazy_reads want = read_lazily(b.data, b.size);
    cr_assert_eq(want.failed, 0);
    size_t lazy_opened = 0;
    for (size_t bit = 0; bit < b.size * 8; bit++) {
        memcpy(copy, b.data, b.size);
        copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        size_t at;
        cr_assert(tschunk_is_error(tschunk_segment_verify(copy, b.size, &at)), "flip of bit %zu undetected", bit);
        /* A lazy reader checks less at open: whatever it returns must still be right. */
        lazy_reads got = read_lazily(copy, b.size);
        lazy_opened += got.opened;
        for (int k = 0; k < 2; k++) {
            if (got.failed & (1 << k)) continue;
            cr_assert(got.n[k] == want.n[k] && !memcmp(got.ts[k], want.ts[k], sizeof want.ts[k]) &&
                          !memcmp(got.bits[k], want.bits[k], sizeof want.bits[k]),
                      "flip of bit %zu: series %d read wrong", bit, k);
        }
    }
    cr_assert_gt(lazy_opened, 0); /* flips in chunk records get past a lazy open */
    for (size_t len = 0; len < b.size; len++) {
        unsigned char *cut = malloc(len ? len : 1);
        memcpy(cut, b.data, len);
        cr_assert(tschunk_is_error(tschunk_segment_verify(cut, len, NULL)), "truncation at %zu undetected", len);
        tschunk_segment *seg;
        cr_assert(tschunk_is_error(tschunk_segment_open(&seg, cut, len, 0, NULL)));
        cr_assert(tschunk_is_error(tschunk_segment_open(&seg, cut, len, TSCHUNK_SEGMENT_LAZY, NULL)));
        free(cut);
    }
    free(copy);
    free(b.data);
}

Test(segment, writer_refusals_and_no_torn_file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/r.tseg", tmpdir);
    tschunk_segment_options o = {.min_ts = 1000, .has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                 .summary_gamma = 1.02};
    tschunk_segment_writer *sw;
    cr_assert_eq(tschunk_segment_writer_create(&sw, path, &o), 0);
    int64_t ts[2] = {500, 1500};
    double v[2] = {1, 2};
    unsigned char chunk[TSCHUNK_BOUND(2)];
    size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
    unsigned char fake_summary[4] = {0xd1, 0, 0, 0};
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, fake_summary, 4)),
                 TSCHUNK_ERROR_BAD_PARAMETER, "before min_ts");
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, NULL, 0)),
                 TSCHUNK_ERROR_BAD_PARAMETER, "summary missing");
    chunk[0] ^= 0xff;
    cr_assert(tschunk_is_error(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, fake_summary, 4)), "bad chunk");
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "the final name exists before finish");
    tschunk_segment_writer_abort(sw);
    cr_assert_neq(stat(path, &st), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", tmpdir);
    cr_assert_eq(system(cmd), 0, "abort left a temporary file");
    /* A summary must be its chunk's; one of another mapping fails finish (combining block summaries),
     * leaving nothing on disk. */
    int64_t ts2[2] = {1500, 1600};
    size = tschunk_encode(chunk, sizeof chunk, ts2, v, 2, NULL);
    unsigned char summaries[2][512];
    size_t ssize[2];
    for (int k = 0; k < 2; k++) {
        tschunk_sketch *sk;
        tschunk_sketch_options so = {k ? TSCHUNK_MAPPING_LOGARITHMIC : TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
        cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
        unsigned char buf[TSCHUNK_BOUND(2)];
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, buf, sizeof buf, NULL), 0);
        tschunk_encoder_set_summary(&enc, sk);
        for (int i = 0; i < 2; i++) cr_assert_eq(tschunk_append(&enc, ts2[i] + k, v[i]), 0);
        tschunk_encoder_finish(&enc);
        ssize[k] = tschunk_encoder_write_summary(&enc, summaries[k], sizeof summaries[k]);
        cr_assert(!tschunk_is_error(ssize[k]));
        tschunk_sketch_free(sk);
    }
    tschunk_sketch_stats cs = test_cubic_stats();
    o.summary_gamma = cs.gamma;
    o.summary_offset = cs.index_offset;
    cr_assert_eq(tschunk_segment_writer_create(&sw, path, &o), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, summaries[1], ssize[1])),
                 TSCHUNK_ERROR_BAD_PARAMETER, "the summary of another time range");
    cr_assert_eq(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, summaries[0], ssize[0]), 0);
    cr_assert_eq(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, summaries[0], ssize[0]), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(sw)), "two chunks, one mapping");
    cr_assert_eq(stat(path, &st), 0);
    remove(path);
    ts2[0] += 1, ts2[1] += 1; /* the logarithmic summary's chunk */
    size = tschunk_encode(chunk, sizeof chunk, ts2, v, 2, NULL);
    cr_assert_eq(tschunk_segment_writer_create(&sw, path, &o), 0);
    /* Summaries of another mapping: refused when added (0.49.2; before, at finish, and only when a block summary
     * covered their chunk: writer_checks_summary_mappings). */
    cr_assert_eq(tschunk_segment_writer_add_chunk(sw, 1, chunk, size, summaries[1], ssize[1]),
                 TSC_ERROR(NOT_MERGEABLE));
    tschunk_segment_writer_abort(sw);
    cr_assert_neq(stat(path, &st), 0);
    cr_assert_eq(system(cmd), 0, "a failed finish left a temporary file");
}

/* Every live sample of a series, in index order, through the tombstone-aware decoder. */
static size_t series_samples(const tschunk_segment *seg, uint32_t ord, int64_t *ts, double *v, size_t cap)
{
    size_t begin, end, n = 0;
    cr_assert_eq(tschunk_segment_range(seg, ord, INT64_MIN, INT64_MAX, &begin, &end), 0);
    for (size_t i = begin; i < end; i++) {
        cr_assert(cap - n >= TSCHUNK_MAX_SAMPLES || cap - n >= 120);
        size_t got = tschunk_segment_decode(seg, i, ts + n, v + n, cap - n);
        cr_assert(!tschunk_is_error(got), "%s", tschunk_error_name(got));
        n += got;
    }
    return n;
}

Test(segment, series_bitmap_and_unit)
{
    char path[128];
    snprintf(path, sizeof path, "%s/bm.tseg", tmpdir);
    tschunk_segment_options o = {.min_ts = 0, .ts_unit = TSCHUNK_UNIT_US};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    int64_t ts[2] = {5, 6};
    double v[2] = {1, 2};
    unsigned char chunk[TSCHUNK_BOUND(2)];
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
    /* Ordinals 0..4 by id; the series with id 30 (ordinal 2) is named but holds no chunk. */
    uint64_t ids[5] = {10, 20, 30, 40, 50};
    for (int i = 0; i < 5; i++)
        if (ids[i] == 30) cr_assert_eq(tschunk_segment_writer_add_series(w, 30, "empty", 5), 0);
        else cr_assert_eq(tschunk_segment_writer_add_chunk(w, ids[i], chunk, n, NULL, 0), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    blob b = read_all(path);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    cr_assert_eq(info.ts_unit, TSCHUNK_UNIT_US);
    cr_assert_eq(info.series, 5);
    const void *bm;
    size_t bm_size;
    tschunk_segment_series_bitmap(seg, &bm, &bm_size);
#ifndef TSCHUNK_TESTS_NO_ROARING
    roaring_bitmap_t *r = roaring_bitmap_portable_deserialize_safe(bm, bm_size);
    cr_assert(r);
    cr_assert_eq(roaring_bitmap_get_cardinality(r), 4);
    for (uint32_t ord = 0; ord < 5; ord++) cr_assert_eq(roaring_bitmap_contains(r, ord), ord != 2, "ordinal %u", ord);
    roaring_bitmap_free(r);
#else
    /* {0, 1, 3, 4}: cookie 12346, one container (key 0, cardinality 4) at offset 16, an array. */
    static const uint8_t expected[] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 3, 0, 16, 0, 0, 0, 0, 0, 1, 0, 3, 0, 4, 0};
    cr_assert_eq(bm_size, sizeof expected);
    cr_assert_arr_eq(bm, expected, sizeof expected);
#endif
    tschunk_segment_close(seg);
    free(b.data);
}

/* A range merge over all of series ord takes `from_summaries` chunks from their summaries and decodes `decoded`,
 * and answers the quantiles of a sketch of values[0 .. n) (NaNs left out), bit for bit. */
static void range_merge_answers(const tschunk_segment *seg, uint32_t ord, size_t from_summaries, size_t decoded,
                                const double *values, size_t n)
{
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    tschunk_sketch_options so = {info.summary_mapping, 0.01, 0, 0, {0, 0, 0}, 0};
    tschunk_sketch *acc, *want;
    cr_assert_eq(tschunk_sketch_create(&acc, &so), 0);
    cr_assert_eq(tschunk_sketch_create(&want, &so), 0);
    tschunk_range_stats rs;
    cr_assert_eq(tschunk_segment_range_merge(seg, ord, INT64_MIN, INT64_MAX, acc, &rs), 0);
    cr_assert(rs.chunks_from_summaries == from_summaries && rs.chunks_decoded == decoded, "%zu from summaries, %zu decoded",
              (size_t)rs.chunks_from_summaries, (size_t)rs.chunks_decoded);
    for (size_t i = 0; i < n; i++)
        if (!isnan(values[i])) tschunk_sketch_add(want, values[i]);
    tschunk_sketch_stats sa, sw;
    tschunk_sketch_get_stats(acc, &sa);
    tschunk_sketch_get_stats(want, &sw);
    cr_assert(wl_bits(sa.count) == wl_bits(sw.count), "%g vs %g", sa.count, sw.count);
    for (double q = 0; q <= 1; q += 0.125) {
        double qa, qw;
        cr_assert_eq(tschunk_sketch_quantile(acc, q, &qa), 0);
        cr_assert_eq(tschunk_sketch_quantile(want, q, &qw), 0);
        cr_assert(wl_bits(qa) == wl_bits(qw), "q %g: %.17g vs %.17g", q, qa, qw);
    }
    tschunk_sketch_free(acc);
    tschunk_sketch_free(want);
}

Test(segment, delete_hides_samples_from_every_reader, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    static int64_t ts0[1024], ts1[1024], ts2[1024];
    static double v0[1024], v1[1024], v2[1024];
    char path[128], path2[128];
    snprintf(path, sizeof path, "%s/d.tseg", tmpdir);
    snprintf(path2, sizeof path2, "%s/d2.tseg", tmpdir);
    size_t nw = write_segment(path, w, 1);
    blob b = read_all(path);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    const uint32_t ord = 3;
    size_t n0 = series_samples(seg, ord, ts0, v0, 1024);
    cr_assert_eq(n0, PER_SERIES * 120);
    /* From inside the second chunk to inside the fourth: two straddled chunks, one whole. */
    int64_t from = ts0[150], to = ts0[400];
    size_t in_range = 0;
    for (size_t i = 0; i < n0; i++) in_range += ts0[i] >= from && ts0[i] <= to;
    uint64_t deleted;
    cr_assert_eq(tschunk_segment_delete(seg, path2, ord, from, to, &deleted), 0);
    cr_assert_eq(deleted, in_range);
    blob b2 = read_all(path2);
    cr_assert_eq(tschunk_segment_verify(b2.data, b2.size, NULL), 0);
    /* Through io: the same bytes and count; a second delete of the same range writes nothing. */
    mem_segment m = mem_segment_empty();
    tschunk_segment_io io = {mem_write_at, NULL, &m};
    uint64_t deleted_io;
    cr_assert_eq(tschunk_segment_delete_io(seg, &io, ord, from, to, &deleted_io), 0);
    cr_assert(deleted_io == deleted && m.size == b2.size && !memcmp(m.buf, b2.data, b2.size));
    free(m.buf);
    tschunk_segment *again;
    cr_assert_eq(tschunk_segment_open(&again, b2.data, b2.size, 0, NULL), 0);
    mem_segment none = mem_segment_empty();
    io.ctx = &none;
    cr_assert_eq(tschunk_segment_delete_io(again, &io, ord, from, to, &deleted_io), 0);
    cr_assert(deleted_io == 0 && none.writes == 0);
    tschunk_segment_close(again);
    mem_segment failing = {NULL, 0, 0, 0, 0, 1, SIZE_MAX}; /* the tombstones' write fails */
    io.ctx = &failing;
    cr_assert_eq(tschunk_segment_delete_io(seg, &io, ord, from, to, &deleted_io), TSC_ERROR(GENERIC));
    free(failing.buf);
    cr_assert_eq(tschunk_segment_delete_io(seg, NULL, ord, from, to, &deleted_io), TSC_ERROR(BAD_PARAMETER));
    tschunk_segment *seg2;
    cr_assert_eq(tschunk_segment_open(&seg2, b2.data, b2.size, TSCHUNK_SEGMENT_VERIFY, NULL), 0);
    tschunk_segment_info info;
    tschunk_segment_get_info(seg2, &info);
    cr_assert_eq(info.deleted, in_range);
    /* The series reads back without the range; every other series is untouched. */
    size_t n1 = series_samples(seg2, ord, ts1, v1, 1024), k = 0;
    cr_assert_eq(n1, n0 - in_range);
    for (size_t i = 0; i < n0; i++) {
        if (ts0[i] >= from && ts0[i] <= to) continue;
        cr_assert_eq(ts1[k], ts0[i]);
        cr_assert(wl_bits(v1[k]) == wl_bits(v0[i]));
        k++;
    }
    for (uint32_t other = 0; other < NSERIES; other++) {
        if (other == ord) continue;
        size_t a = series_samples(seg, other, ts1, v1, 1024), c = series_samples(seg2, other, ts2, v2, 1024);
        cr_assert_eq(a, c);
        cr_assert(!memcmp(ts1, ts2, a * sizeof *ts1) && !memcmp(v1, v2, a * sizeof *v1), "series %u", other);
    }
    /* Chunks with deletions hide their stale summaries; range merges equal a sketch of the live values. */
    size_t begin, end, stale = 0;
    tschunk_segment_range(seg2, ord, INT64_MIN, INT64_MAX, &begin, &end);
    for (size_t i = begin; i < end; i++) {
        tschunk_segment_chunk_info c;
        cr_assert_eq(tschunk_segment_chunk(seg2, i, &c), 0);
        cr_assert_eq(c.ref.summary == NULL, c.deleted > 0);
        stale += c.deleted > 0;
    }
    cr_assert_eq(stale, 3);
    n1 = series_samples(seg2, ord, ts1, v1, 1024);
    range_merge_answers(seg2, ord, PER_SERIES - 3, 3, v1, n1);
    /* Deleting again: only new positions count; the same range again writes nothing. */
    cr_assert_eq(tschunk_segment_delete(seg2, path2, ord, to, ts0[500], &deleted), 0); /* seg2 keeps reading b2 */
    size_t more = 0;
    for (size_t i = 0; i < n0; i++) more += ts0[i] > to && ts0[i] <= ts0[500];
    cr_assert_eq(deleted, more);
    blob b3 = read_all(path2);
    tschunk_segment *seg3;
    cr_assert_eq(tschunk_segment_open(&seg3, b3.data, b3.size, 0, NULL), 0);
    tschunk_segment_get_info(seg3, &info);
    cr_assert_eq(info.deleted, in_range + more);
    cr_assert_eq(tschunk_segment_delete(seg3, path2, ord, from, to, &deleted), 0);
    cr_assert_eq(deleted, 0);
    cr_assert_neq(tschunk_segment_delete(seg3, path2, NSERIES, from, to, &deleted), 0);
    cr_assert_neq(tschunk_segment_delete(seg3, path2, ord, to, from, &deleted), 0);
    /* Every bit flip in the tombstone section is caught. */
    size_t tomb_at = b3.size - TSC_SEG_FOOTER_SIZE - 1;
    for (size_t bit = 0; bit < 8 * 16; bit++) {
        size_t at = tomb_at - bit / 8;
        b3.data[at] ^= (unsigned char)(1u << (bit % 8));
        tschunk_segment *bad = NULL;
        cr_assert(tschunk_is_error(tschunk_segment_open(&bad, b3.data, b3.size, 0, NULL)), "bit %zu", bit);
        b3.data[at] ^= (unsigned char)(1u << (bit % 8));
    }
    tschunk_segment_close(seg3);
    tschunk_segment_close(seg2);
    tschunk_segment_close(seg);
    free(b.data);
    free(b2.data);
    free(b3.data);
    free_written(w, nw);
}

/* Every series of a and b holds the same live samples, bit for bit. */
static void same_live_samples(const tschunk_segment *a, const tschunk_segment *b)
{
    static int64_t ta[1024], tb[1024];
    static double va[1024], vb[1024];
    tschunk_segment_info ia, ib;
    tschunk_segment_get_info(a, &ia);
    tschunk_segment_get_info(b, &ib);
    cr_assert_eq(ia.series, ib.series);
    for (uint32_t o = 0; o < ia.series; o++) {
        size_t na = series_samples(a, o, ta, va, 1024), nb = series_samples(b, o, tb, vb, 1024);
        cr_assert_eq(na, nb, "series %u", o);
        cr_assert(!memcmp(ta, tb, na * sizeof *ta) && !memcmp(va, vb, na * sizeof *va), "series %u", o);
    }
}

/* Compacting seg into path: the new segment verifies, has no deletions and reads back what seg reads. */
static blob compact_checked(const tschunk_segment *seg, const char *path, tschunk_segment_compact_stats *st)
{
    size_t size = tschunk_segment_compact(seg, path, st);
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    blob b = read_all(path);
    cr_assert_eq(b.size, size);
    /* Through io: the same bytes and counts. */
    mem_segment m = mem_segment_empty();
    tschunk_segment_io io = mem_segment_io(&m);
    tschunk_segment_compact_stats io_stats;
    cr_assert_eq(tschunk_segment_compact_io(seg, &io, &io_stats), size);
    cr_assert(m.size == size && !memcmp(m.buf, b.data, size) && !memcmp(&io_stats, st, sizeof io_stats));
    free(m.buf);
    cr_assert_eq(tschunk_segment_compact_io(seg, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    tschunk_segment *out;
    cr_assert_eq(tschunk_segment_open(&out, b.data, b.size, TSCHUNK_SEGMENT_VERIFY, NULL), 0);
    tschunk_segment_info before, after;
    tschunk_segment_get_info(seg, &before);
    tschunk_segment_get_info(out, &after);
    cr_assert(after.format_version == 3 && after.deleted == 0 && after.min_ts == before.min_ts &&
              after.ts_unit == before.ts_unit && after.has_summaries == before.has_summaries);
    cr_assert_eq(after.samples, before.samples - st->samples_dropped);
    cr_assert_eq(after.chunks, before.chunks - st->chunks_dropped);
    cr_assert_eq(st->chunks_copied + st->chunks_rewritten + st->chunks_dropped, before.chunks);
    cr_assert_eq(st->samples_dropped, before.deleted);
    same_live_samples(seg, out);
    for (uint32_t o = 0; o < before.series; o++) { /* ids and names kept, so ordinals too */
        uint64_t ida, idb;
        const char *na, *nb;
        size_t la, lb;
        cr_assert_eq(tschunk_segment_series(seg, o, &ida, &na, &la), 0);
        cr_assert_eq(tschunk_segment_series(out, o, &idb, &nb, &lb), 0);
        cr_assert(ida == idb && la == lb && !memcmp(na, nb, la), "series %u", o);
    }
    tschunk_segment_close(out);
    return b;
}

/*
 * Compaction after deletes in two series (one loses a whole chunk and parts of two, the other everything): chunks
 * with deletions are encoded again with their codec and a summary of what is left, emptied ones dropped, every
 * other chunk copied byte for byte; range merges then take every chunk from its summary, and a second compaction
 * gives the same bytes.
 */
Test(segment, compact_makes_deletes_final, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    static int64_t ts0[1024], ts1[1024];
    static double v0[1024], v1[1024];
    char path[128], deleted[128], compacted[128], again[128];
    snprintf(path, sizeof path, "%s/c.tseg", tmpdir);
    snprintf(deleted, sizeof deleted, "%s/c-deleted.tseg", tmpdir);
    snprintf(compacted, sizeof compacted, "%s/c-compacted.tseg", tmpdir);
    snprintf(again, sizeof again, "%s/c-again.tseg", tmpdir);
    size_t nw = write_segment(path, w, 1);
    blob b = read_all(path);
    tschunk_segment *seg, *del;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    const uint32_t partly = 3, wholly = 5;
    size_t n0 = series_samples(seg, partly, ts0, v0, 1024);
    cr_assert_eq(tschunk_segment_delete(seg, deleted, partly, ts0[150], ts0[400], NULL), 0);
    blob d = read_all(deleted);
    cr_assert_eq(tschunk_segment_open(&del, d.data, d.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_delete(del, deleted, wholly, INT64_MIN, INT64_MAX, NULL), 0);
    tschunk_segment_close(del);
    free(d.data);
    d = read_all(deleted);
    for (int lazy = 0; lazy <= 1; lazy++) {
        cr_assert_eq(tschunk_segment_open(&del, d.data, d.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL), 0);
        tschunk_segment_compact_stats st;
        blob c = compact_checked(del, compacted, &st);
        cr_assert(st.chunks_rewritten == 2 && st.chunks_dropped == 1 + PER_SERIES, "%llu rewritten, %llu dropped",
                  (unsigned long long)st.chunks_rewritten, (unsigned long long)st.chunks_dropped);
        cr_assert_eq(st.samples_dropped, (400 - 150 + 1) + PER_SERIES * 120);
        tschunk_segment *out;
        cr_assert_eq(tschunk_segment_open(&out, c.data, c.size, 0, NULL), 0);
        size_t begin, end;
        cr_assert_eq(tschunk_segment_range(out, wholly, INT64_MIN, INT64_MAX, &begin, &end), 0);
        cr_assert_eq(begin, end); /* kept as a series, without chunks */
        /* Copied chunks are the same bytes; encoded again, the same codec, with a summary of their samples. */
        size_t live = series_samples(out, partly, ts1, v1, 1024);
        cr_assert_eq(live, n0 - (400 - 150 + 1));
        cr_assert_eq(tschunk_segment_range(out, partly, INT64_MIN, INT64_MAX, &begin, &end), 0);
        cr_assert_eq(end - begin, PER_SERIES - 1);
        for (size_t i = 0; i < end - begin; i++) {
            tschunk_segment_chunk_info cn, co;
            cr_assert_eq(tschunk_segment_chunk(out, begin + i, &cn), 0);
            cr_assert_eq(tschunk_segment_chunk(seg, begin + i + (i >= 2), &co), 0); /* the third chunk is gone */
            tschunk_chunk_info in, io;
            cr_assert(cn.ref.summary != NULL && cn.deleted == 0);
            cr_assert_eq(tschunk_chunk_info_get(cn.ref.chunk, cn.ref.chunk_size, &in), 0);
            cr_assert_eq(tschunk_chunk_info_get(co.ref.chunk, co.ref.chunk_size, &io), 0);
            cr_assert_eq(in.codec, io.codec);
            int rewritten = i == 1 || i == 2;
            int same = cn.ref.chunk_size == co.ref.chunk_size && !memcmp(cn.ref.chunk, co.ref.chunk, cn.ref.chunk_size);
            cr_assert_eq(same, !rewritten, "chunk %zu", i);
            tschunk_summary_info si;
            cr_assert_eq(tschunk_summary_parse(cn.ref.summary, cn.ref.summary_size, &si), 0);
            cr_assert(si.count == cn.count && si.first_ts == cn.first_ts && si.last_ts == cn.last_ts);
        }
        /* Every chunk answers a range merge from its summary again, with the quantiles of the live values. */
        tschunk_segment_info info;
        tschunk_segment_get_info(out, &info);
        cr_assert_gt(info.summary_blocks, 0);
        range_merge_answers(out, partly, PER_SERIES - 1, 0, v1, live);
        /* Nothing left to compact: the same bytes again, every chunk copied. */
        tschunk_segment_compact_stats st2;
        blob c2 = compact_checked(out, again, &st2);
        cr_assert(st2.chunks_rewritten == 0 && st2.chunks_dropped == 0 && st2.chunks_copied == info.chunks);
        cr_assert(c2.size == c.size && !memcmp(c2.data, c.data, c.size));
        tschunk_segment_close(out);
        tschunk_segment_close(del);
        free(c.data);
        free(c2.data);
    }
    /* In place: the segment being read is the one replaced, and keeps reading its old bytes. */
    cr_assert_eq(tschunk_segment_open(&del, d.data, d.size, 0, NULL), 0);
    tschunk_segment_compact_stats st;
    blob c = compact_checked(del, deleted, &st);
    tschunk_segment_close(del);
    cr_assert_eq(tschunk_segment_compact(NULL, deleted, &st), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(st.chunks_copied, 0);
    cr_assert_eq(tschunk_segment_compact(seg, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/such/dir.tseg", tmpdir);
    cr_assert_eq(tschunk_segment_compact(seg, missing, &st), TSC_ERROR(GENERIC));
    tschunk_segment_close(seg);
    free(b.data);
    free(c.data);
    free(d.data);
    free_written(w, nw);
}

/* How write_part copies a segment's series. */
typedef struct {
    int64_t from, to;      /* the chunks whose first timestamp lies here */
    uint64_t id_shift;     /* added to every id */
    unsigned name_every;   /* the series whose ordinal is a multiple of this keep their name (0: none) */
    const char *rename;    /* this name for series 0 instead of its own (NULL: its own) */
    tschunk_ts_unit unit;
    uint32_t summaries;    /* 0: without the source's summaries */
    uint32_t only;         /* 1 + the one series' ordinal to copy (0: every series) */
} part_shape;

/* A writer at path for a segment like seg (its min_ts and summary mapping), in unit, with summaries if asked and
 * seg has them. *info: seg's. */
static tschunk_segment_writer *writer_like(const tschunk_segment *seg, const char *path, tschunk_ts_unit unit,
                                           uint32_t summaries, tschunk_segment_info *info)
{
    tschunk_segment_get_info(seg, info);
    tschunk_segment_options o = {.min_ts = info->min_ts, .has_summaries = info->has_summaries && summaries,
                                 .summary_mapping = info->summary_mapping, .summary_gamma = info->summary_gamma,
                                 .summary_offset = info->summary_offset, .ts_unit = unit};
    tschunk_segment_writer *sw;
    cr_assert_eq(tschunk_segment_writer_create(&sw, path, &o), 0);
    return sw;
}

/* Part of seg's chunks, copied, as a new segment at path (min_ts seg's). */
static blob write_part(const tschunk_segment *seg, const char *path, const part_shape *p)
{
    tschunk_segment_info info;
    tschunk_segment_writer *sw = writer_like(seg, path, p->unit, p->summaries, &info);
    int summaries = info.has_summaries && p->summaries;
    for (uint32_t ord = 0; ord < info.series; ord++) {
        uint64_t id;
        const char *name;
        size_t len;
        cr_assert_eq(tschunk_segment_series(seg, ord, &id, &name, &len), 0);
        if (ord == 0 && p->rename) name = p->rename, len = strlen(p->rename);
        if (p->name_every && ord % p->name_every == 0)
            cr_assert_eq(tschunk_segment_writer_add_series(sw, id + p->id_shift, name, len), 0);
    }
    for (size_t i = 0; i < info.chunks; i++) {
        tschunk_segment_chunk_info c;
        uint64_t id;
        cr_assert_eq(tschunk_segment_chunk(seg, i, &c), 0);
        cr_assert_eq(tschunk_segment_series(seg, c.ordinal, &id, NULL, NULL), 0);
        if (c.first_ts < p->from || c.first_ts > p->to || (p->only && c.ordinal != p->only - 1)) continue;
        cr_assert_eq(tschunk_segment_writer_add_chunk(sw, id + p->id_shift, c.ref.chunk, c.ref.chunk_size,
                                                      summaries ? c.ref.summary : NULL,
                                                      summaries ? c.ref.summary_size : 0), 0);
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(sw)));
    return read_all(path);
}

static tschunk_segment *open_blob(const blob *b)
{
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b->data, b->size, 0, NULL), 0);
    return seg;
}

/*
 * A segment split in time into two (the later one naming every other series, and with a delete of its own), merged
 * back in either order: the same bytes as the whole segment with that delete, compacted. By name, the later part's
 * ids shifted: the same series, numbered by name. Sources that differ in unit, summaries or a series' name are
 * refused, and leave no file.
 */
Test(segment, merge_joins_segments, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    static int64_t ts0[1024];
    static double v0[1024];
    char path[128], pa[128], pb[128], pm[128], pm2[128], pc[128];
    snprintf(path, sizeof path, "%s/m.tseg", tmpdir);
    snprintf(pa, sizeof pa, "%s/m-a.tseg", tmpdir);
    snprintf(pb, sizeof pb, "%s/m-b.tseg", tmpdir);
    snprintf(pm, sizeof pm, "%s/m-merged.tseg", tmpdir);
    snprintf(pm2, sizeof pm2, "%s/m-merged2.tseg", tmpdir);
    snprintf(pc, sizeof pc, "%s/m-compacted.tseg", tmpdir);
    size_t nw = write_segment(path, w, 1);
    blob whole = read_all(path);
    tschunk_segment *seg = open_blob(&whole);
    const uint32_t victim = 7;
    series_samples(seg, victim, ts0, v0, 1024);
    int64_t cut = ts0[3 * 120], from = ts0[400], to = ts0[650];
    part_shape early = {INT64_MIN, cut - 1, 0, 1, NULL, TSCHUNK_UNIT_MS, 1, 0};
    part_shape late = {cut, INT64_MAX, 0, 2, NULL, TSCHUNK_UNIT_MS, 1, 0};
    blob a = write_part(seg, pa, &early), b = write_part(seg, pb, &late);
    tschunk_segment *sa = open_blob(&a), *sb = open_blob(&b);
    cr_assert_eq(tschunk_segment_delete(sb, pb, victim, from, to, NULL), 0);
    tschunk_segment_close(sb);
    free(b.data);
    b = read_all(pb);
    sb = open_blob(&b);
    /* The whole segment with the same delete, compacted: what the merge must give, byte for byte. */
    cr_assert_eq(tschunk_segment_delete(seg, path, victim, from, to, NULL), 0);
    blob deleted = read_all(path);
    tschunk_segment *sd = open_blob(&deleted);
    tschunk_segment_compact_stats st, st2;
    cr_assert(!tschunk_is_error(tschunk_segment_compact(sd, pc, &st)));
    blob want = read_all(pc);
    const tschunk_segment *ab[2] = {sa, sb}, *ba[2] = {sb, sa};
    const tschunk_segment_merge_options blocks_of_4 = {4, 0, 0, 0}, by_name = {0, TSCHUNK_MERGE_BY_NAME, 0, 0};
    size_t size = tschunk_segment_merge(ab, 2, pm, NULL, &st2);
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    cr_assert(st2.chunks_copied == st.chunks_copied && st2.chunks_rewritten == st.chunks_rewritten &&
              st2.chunks_dropped == st.chunks_dropped && st2.samples_dropped == st.samples_dropped &&
              st.chunks_rewritten);
    blob m = read_all(pm);
    cr_assert(m.size == want.size && !memcmp(m.data, want.data, m.size));
    mem_segment mio = mem_segment_empty(); /* through io: the same bytes */
    tschunk_segment_io io = mem_segment_io(&mio);
    cr_assert_eq(tschunk_segment_merge_io(ab, 2, &io, &blocks_of_4, NULL), tschunk_segment_merge(ab, 2, pm2,
                                                                                                 &blocks_of_4, NULL));
    blob mb = read_all(pm2);
    cr_assert(mio.size == mb.size && !memcmp(mio.buf, mb.data, mb.size));
    free(mb.data);
    free(mio.buf);
    cr_assert_eq(tschunk_segment_merge_io(ab, 2, NULL, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert(!tschunk_is_error(tschunk_segment_merge(ba, 2, pm2, NULL, NULL)));
    blob m2 = read_all(pm2);
    cr_assert(m2.size == want.size && !memcmp(m2.data, want.data, m2.size));
    free(m2.data);
    /* Blocks of 4: every series' summaries in blocks again, its range merge from summaries alone. */
    cr_assert(!tschunk_is_error(tschunk_segment_merge(ab, 2, pm2, &blocks_of_4, NULL)));
    m2 = read_all(pm2);
    tschunk_segment *sm = open_blob(&m2);
    tschunk_segment_info info;
    tschunk_segment_get_info(sm, &info);
    cr_assert_eq(info.summary_blocks, 2 * NSERIES - 1); /* the victim's 5 chunks: one block of 4 */
    size_t live = series_samples(sd, victim, ts0, v0, 1024);
    range_merge_answers(sm, victim, PER_SERIES - 1, 0, v0, live);
    same_live_samples(sd, sm);
    tschunk_segment_close(sm);
    free(m2.data);
    /* By name: the later part's ids moved, its names all given; the same series and samples, ids by name order. */
    part_shape shifted = {cut, INT64_MAX, 12345, 1, NULL, TSCHUNK_UNIT_MS, 1, 0};
    blob c = write_part(seg, pb, &shifted);
    tschunk_segment *sc = open_blob(&c);
    const tschunk_segment *ac[2] = {sa, sc};
    cr_assert(!tschunk_is_error(tschunk_segment_merge(ac, 2, pm2, &by_name, NULL)));
    m2 = read_all(pm2);
    sm = open_blob(&m2);
    tschunk_segment_get_info(sm, &info);
    cr_assert_eq(info.series, NSERIES);
    for (uint32_t o = 0; o < NSERIES; o++) {
        uint64_t id;
        const char *name, *prev = NULL;
        size_t len, prev_len = 0;
        cr_assert_eq(tschunk_segment_series(sm, o, &id, &name, &len), 0);
        cr_assert_eq(id, o);
        if (o) cr_assert_eq(tschunk_segment_series(sm, o - 1, NULL, &prev, &prev_len), 0);
        cr_assert(!o || memcmp(prev, name, prev_len < len ? prev_len : len) < 0 ||
                  (!memcmp(prev, name, prev_len < len ? prev_len : len) && prev_len < len));
        size_t at = tschunk_segment_find_series_name(seg, name, len);
        cr_assert(!tschunk_is_error(at));
        static int64_t ts1[1024], ts2[1024];
        static double v1[1024], v2[1024];
        size_t n1 = series_samples(sm, o, ts1, v1, 1024), n2 = series_samples(seg, (uint32_t)at, ts2, v2, 1024);
        cr_assert(n1 == n2 && !memcmp(ts1, ts2, n1 * sizeof *ts1) && !memcmp(v1, v2, n1 * sizeof *v1));
    }
    tschunk_segment_close(sm);
    free(m2.data);
    /* Refusals: by id, the shifted part is other series with the same names (not refused) but a renamed series,
     * another unit, no summaries; by name, an unnamed series. None leaves a file. */
    remove(pm2);
    part_shape renamed = {cut, INT64_MAX, 0, 1, "another name", TSCHUNK_UNIT_MS, 1, 0};
    part_shape in_seconds = {cut, INT64_MAX, 0, 1, NULL, TSCHUNK_UNIT_S, 1, 0};
    part_shape plain = {cut, INT64_MAX, 0, 1, NULL, TSCHUNK_UNIT_MS, 0, 0};
    const part_shape *refused_shapes[3] = {&renamed, &in_seconds, &plain};
    for (int k = 0; k < 3; k++) {
        tschunk_segment_close(sc);
        free(c.data);
        c = write_part(seg, pb, refused_shapes[k]);
        ac[1] = sc = open_blob(&c);
        cr_assert_eq(tschunk_segment_merge(ac, 2, pm2, NULL, &st2), TSC_ERROR(NOT_MERGEABLE), "shape %d", k);
        cr_assert_eq(st2.chunks_copied + st2.chunks_rewritten, 0);
        cr_assert_neq(access(pm2, F_OK), 0);
    }
    const tschunk_segment *unnamed[2] = {sa, sb}; /* sb names every other series */
    cr_assert_eq(tschunk_segment_merge(unnamed, 2, pm2, &by_name, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_neq(access(pm2, F_OK), 0);
    cr_assert_eq(tschunk_segment_merge(ab, 0, pm2, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_merge(NULL, 2, pm2, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_merge(ab, 2, NULL, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    const tschunk_segment_merge_options bad[4] = {{4097, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, TSCHUNK_MAX_SAMPLES + 1, 0},
                                                  {0, 0, 100, 3}};
    for (int k = 0; k < 4; k++)
        cr_assert_eq(tschunk_segment_merge(ab, 2, pm2, &bad[k], NULL), TSC_ERROR(BAD_PARAMETER));
    const tschunk_segment *with_null[2] = {sa, NULL};
    cr_assert_eq(tschunk_segment_merge(with_null, 2, pm2, NULL, NULL), TSC_ERROR(BAD_PARAMETER));
    tschunk_segment_close(sc);
    tschunk_segment_close(sa);
    tschunk_segment_close(sb);
    tschunk_segment_close(sd);
    tschunk_segment_close(seg);
    free(c.data);
    free(a.data);
    free(b.data);
    free(m.data);
    free(want.data);
    free(deleted.data);
    free(whole.data);
    free_written(w, nw);
}

/* Chunks i of seg with i % parts == part (every series named), as a new segment at path. */
static blob write_stripe(const tschunk_segment *seg, const char *path, size_t parts, size_t part)
{
    tschunk_segment_info info;
    tschunk_segment_writer *sw = writer_like(seg, path, TSCHUNK_UNIT_MS, 1, &info);
    for (uint32_t ord = 0; ord < info.series; ord++) {
        uint64_t id;
        const char *name;
        size_t len;
        cr_assert_eq(tschunk_segment_series(seg, ord, &id, &name, &len), 0);
        cr_assert_eq(tschunk_segment_writer_add_series(sw, id, name, len), 0);
    }
    for (size_t i = part; i < info.chunks; i += parts) {
        tschunk_segment_chunk_info c;
        uint64_t id;
        cr_assert_eq(tschunk_segment_chunk(seg, i, &c), 0);
        cr_assert_eq(tschunk_segment_series(seg, c.ordinal, &id, NULL, NULL), 0);
        cr_assert_eq(tschunk_segment_writer_add_chunk(sw, id, c.ref.chunk, c.ref.chunk_size, c.ref.summary,
                                                      c.ref.summary_size), 0);
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(sw)));
    return read_all(path);
}

/*
 * A segment's chunks dealt round-robin to 37 segments (0.51.0: the merge keeps its sources' cursors in a heap),
 * merged back in either order: the same bytes as the whole segment compacted, each chunk in index order.
 */
Test(segment, merge_of_many_sources_keeps_index_order, .timeout = 60)
{
    enum { PARTS = 37 };
    static written w[NSERIES * PER_SERIES];
    static blob parts[PARTS];
    static tschunk_segment *open_parts[PARTS];
    const tschunk_segment *forward[PARTS], *backward[PARTS];
    char path[128], pc[128], pm[128], pp[160];
    snprintf(path, sizeof path, "%s/many.tseg", tmpdir);
    snprintf(pc, sizeof pc, "%s/many-compacted.tseg", tmpdir);
    snprintf(pm, sizeof pm, "%s/many-merged.tseg", tmpdir);
    size_t nw = write_segment(path, w, 1);
    blob whole = read_all(path);
    tschunk_segment *seg = open_blob(&whole);
    cr_assert(!tschunk_is_error(tschunk_segment_compact(seg, pc, NULL)));
    blob want = read_all(pc);
    for (size_t k = 0; k < PARTS; k++) {
        snprintf(pp, sizeof pp, "%s/many-%zu.tseg", tmpdir, k);
        parts[k] = write_stripe(seg, pp, PARTS, k);
        forward[k] = backward[PARTS - 1 - k] = open_parts[k] = open_blob(&parts[k]);
    }
    for (int order = 0; order < 2; order++) {
        tschunk_segment_compact_stats st;
        cr_assert(!tschunk_is_error(tschunk_segment_merge(order ? backward : forward, PARTS, pm, NULL, &st)));
        cr_assert_eq(st.chunks_copied, NSERIES * PER_SERIES);
        blob m = read_all(pm);
        cr_assert(m.size == want.size && !memcmp(m.data, want.data, m.size), "order %d", order);
        free(m.data);
    }
    for (size_t k = 0; k < PARTS; k++) {
        tschunk_segment_close(open_parts[k]);
        free(parts[k].data);
    }
    tschunk_segment_close(seg);
    free(want.data);
    free(whole.data);
    free_written(w, nw);
}

/*
 * Chunks cut again: each series' live samples in chunks of 500 (the last shorter), in the codec asked for, each
 * with its own summary; a series whose chunks overlap in time starts a new chunk where time goes back. Same
 * samples, in the same order, and range merges answer from summaries alone.
 */
Test(segment, merge_cuts_chunks_again, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    static int64_t ts0[1024], ts1[1024];
    static double v0[1024], v1[1024];
    char path[128], out[128];
    snprintf(path, sizeof path, "%s/cut.tseg", tmpdir);
    snprintf(out, sizeof out, "%s/cut-merged.tseg", tmpdir);
    size_t nw = write_segment(path, w, 1);
    blob b = read_all(path);
    tschunk_segment *seg = open_blob(&b);
    const uint32_t victim = 11;
    series_samples(seg, victim, ts0, v0, 1024);
    cr_assert_eq(tschunk_segment_delete(seg, path, victim, ts0[100], ts0[199], NULL), 0);
    tschunk_segment_close(seg);
    free(b.data);
    b = read_all(path);
    seg = open_blob(&b);
    /* A second part holding series 0's first chunk again: its samples go back in time after the first part's. */
    char again[128];
    snprintf(again, sizeof again, "%s/cut-again.tseg", tmpdir);
    tschunk_segment_chunk_info first;
    cr_assert_eq(tschunk_segment_chunk(seg, 0, &first), 0);
    part_shape repeat = {first.first_ts, first.first_ts, 0, 0, NULL, TSCHUNK_UNIT_MS, 1, 1};
    blob r = write_part(seg, again, &repeat);
    tschunk_segment *sr = open_blob(&r);
    const tschunk_segment *both[2] = {seg, sr};
    for (uint32_t codec = TSCHUNK_CODEC_GORILLA; codec <= TSCHUNK_CODEC_TSC2; codec++) {
        tschunk_segment_merge_options m = {0, 0, 500, codec};
        tschunk_segment_compact_stats st;
        size_t size = tschunk_segment_merge(both, 2, out, &m, &st);
        cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
        cr_assert(st.chunks_copied == 0 && st.chunks_rewritten == NSERIES * PER_SERIES + 1 && st.chunks_dropped == 0,
                  "%llu %llu %llu", (unsigned long long)st.chunks_copied, (unsigned long long)st.chunks_rewritten,
                  (unsigned long long)st.chunks_dropped);
        cr_assert_eq(st.samples_dropped, 100);
        blob c = read_all(out);
        cr_assert_eq(tschunk_segment_verify(c.data, c.size, NULL), 0);
        tschunk_segment *cut = open_blob(&c);
        tschunk_segment_info info;
        tschunk_segment_get_info(cut, &info);
        cr_assert_eq(info.chunks, st.chunks_written);
        /* Series 0: its first chunk, the same again (time goes back: a new chunk), then the rest: chunks of 120, 500
         * and 220 samples. The others 500 and the rest (the victim 620 live samples). */
        cr_assert_eq(info.chunks, 2 * NSERIES + 1);
        for (uint32_t o = 0; o < NSERIES; o++) {
            size_t n0 = series_samples(seg, o, ts0, v0, 1024), n1 = series_samples(cut, o, ts1, v1, 1024);
            if (o == 0) { /* the repeated chunk after the first */
                memmove(ts0 + 240, ts0 + 120, (n0 - 120) * sizeof *ts0);
                memmove(v0 + 240, v0 + 120, (n0 - 120) * sizeof *v0);
                cr_assert_eq(series_samples(sr, 0, ts0 + 120, v0 + 120, 1024 - 120), 120);
                n0 += 120;
            }
            cr_assert_eq(n1, n0, "series %u", o);
            cr_assert(!memcmp(ts0, ts1, n1 * sizeof *ts0) && !memcmp(v0, v1, n1 * sizeof *v0), "series %u", o);
            size_t begin, end;
            cr_assert_eq(tschunk_segment_range(cut, o, INT64_MIN, INT64_MAX, &begin, &end), 0);
            const uint32_t first_series[3] = {120, 500, 220}, others[2] = {500, (uint32_t)n0 - 500};
            cr_assert_eq(end - begin, o == 0 ? 3 : 2);
            for (size_t i = begin; i < end; i++) {
                tschunk_segment_chunk_info ci;
                tschunk_chunk_info hi;
                cr_assert_eq(tschunk_segment_chunk(cut, i, &ci), 0);
                cr_assert_eq(tschunk_chunk_info_get(ci.ref.chunk, ci.ref.chunk_size, &hi), 0);
                uint32_t want = o == 0 ? first_series[i - begin] : others[i - begin];
                cr_assert(ci.count == want && hi.codec == codec && ci.ref.summary, "series %u chunk %zu: %u samples",
                          o, i - begin, ci.count);
            }
        }
        size_t n = series_samples(seg, victim, ts0, v0, 1024);
        range_merge_answers(cut, victim, 2, 0, v0, n);
        tschunk_segment_close(cut);
        free(c.data);
    }
    /* A series that starts after the one before it ends: its samples begin a chunk of their own all the same. */
    int64_t cut_at = first.first_ts + 3 * 1800000 - 1000; /* the fourth chunk of a series starts after it */
    part_shape early0 = {INT64_MIN, cut_at - 1, 0, 1, NULL, TSCHUNK_UNIT_MS, 1, 1};
    part_shape late1 = {cut_at, INT64_MAX, 0, 1, NULL, TSCHUNK_UNIT_MS, 1, 2};
    blob e = write_part(seg, again, &early0);
    tschunk_segment *se = open_blob(&e);
    blob l = write_part(seg, path, &late1);
    tschunk_segment *sl = open_blob(&l);
    const tschunk_segment *apart[2] = {se, sl};
    tschunk_segment_merge_options m = {0, 0, 500, 0};
    cr_assert(!tschunk_is_error(tschunk_segment_merge(apart, 2, out, &m, NULL)));
    blob c = read_all(out);
    tschunk_segment *cut = open_blob(&c);
    tschunk_segment_info info;
    tschunk_segment_get_info(cut, &info);
    cr_assert_eq(info.chunks, 2);
    for (size_t i = 0; i < 2; i++) {
        tschunk_segment_chunk_info ci;
        cr_assert_eq(tschunk_segment_chunk(cut, i, &ci), 0);
        cr_assert(ci.ordinal == i && ci.count == 3 * 120, "chunk %zu: series %u, %u samples", i, ci.ordinal, ci.count);
    }
    tschunk_segment_close(cut);
    tschunk_segment_close(se);
    tschunk_segment_close(sl);
    free(c.data);
    free(e.data);
    free(l.data);
    tschunk_segment_close(sr);
    tschunk_segment_close(seg);
    free(r.data);
    free(b.data);
    free_written(w, nw);
}

static size_t largest_allocation;
static void *largest_alloc(void *opaque, size_t size)
{
    (void)opaque;
    if (size > largest_allocation) largest_allocation = size;
    return malloc(size);
}
static void largest_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

/* Range merges over chunks with deletions, small and large in turn: equal to a sketch of the live values in range,
 * with scratch sized by the chunks (until 0.39.1, TSCHUNK_MAX_SAMPLES samples a query whatever their size). */
Test(segment, range_merge_over_deleted_chunks_of_any_size, .timeout = 60)
{
    static const size_t sizes[] = {300, 5000, 2000, 40000, 700};
    enum { CHUNKS = sizeof sizes / sizeof sizes[0], TOTAL = 300 + 5000 + 2000 + 40000 + 700 };
    static int64_t ts[TOTAL], got_ts[TOTAL];
    static double v[TOTAL], got_v[TOTAL];
    char paths[CHUNKS + 1][128];
    for (size_t i = 0; i < TOTAL; i++) {
        ts[i] = 1000000 + (int64_t)i * 1000;
        v[i] = (double)((i * 7919) % 1000) / 100.0 - 3.0;
        if (i % 997 == 5) v[i] = i % 2 ? NAN : -INFINITY; /* counted apart, never in the sketch */
    }
    for (int k = 0; k <= CHUNKS; k++) snprintf(paths[k], sizeof paths[k], "%s/sizes%d.tseg", tmpdir, k);
    tschunk_segment_options o = {.min_ts = 0, .ts_unit = TSCHUNK_UNIT_MS};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, paths[0], &o), 0);
    size_t at = 0;
    for (int k = 0; k < CHUNKS; k++) {
        unsigned char *chunk = malloc(TSCHUNK_BOUND(sizes[k]));
        size_t size = tschunk_encode(chunk, TSCHUNK_BOUND(sizes[k]), ts + at, v + at, sizes[k], NULL);
        cr_assert(!tschunk_is_error(size));
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, 7, chunk, size, NULL, 0), 0);
        free(chunk);
        at += sizes[k];
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    /* A few samples deleted in every chunk, one delete (one file) after another. */
    at = 0;
    for (int k = 0; k < CHUNKS; k++) {
        blob b = read_all(paths[k]);
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
        uint64_t deleted;
        size_t from = at + sizes[k] / 3;
        cr_assert_eq(tschunk_segment_delete(seg, paths[k + 1], 0, ts[from], ts[from + 9], &deleted), 0);
        cr_assert_eq(deleted, 10);
        tschunk_segment_close(seg);
        free(b.data);
        at += sizes[k];
    }
    blob b = read_all(paths[CHUNKS]);
    tschunk_segment *seg;
    tschunk_allocator tracked = {largest_alloc, largest_free, NULL};
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, &tracked), 0);
    size_t live = series_samples(seg, 0, got_ts, got_v, TOTAL);
    cr_assert_eq(live, TOTAL - 10 * CHUNKS);
    const int64_t ranges[][2] = {{INT64_MIN, INT64_MAX}, {ts[100], ts[TOTAL - 100]}, {ts[6000], ts[9000]}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
        tschunk_sketch *acc, *want;
        cr_assert_eq(tschunk_sketch_create(&acc, &so), 0);
        cr_assert_eq(tschunk_sketch_create(&want, &so), 0);
        tschunk_range_stats st;
        largest_allocation = 0;
        cr_assert_eq(tschunk_segment_range_merge(seg, 0, ranges[r][0], ranges[r][1], acc, &st), 0);
        cr_assert_gt(largest_allocation, 0);
        cr_assert_leq(largest_allocation, 40000 * sizeof(int64_t), "range %zu: %zu bytes", r, largest_allocation);
        size_t in_range = 0, nans = 0, infinities = 0;
        for (size_t i = 0; i < live; i++)
            if (got_ts[i] >= ranges[r][0] && got_ts[i] <= ranges[r][1]) {
                if (isnan(got_v[i])) nans++;
                else if (tschunk_is_error(tschunk_sketch_add(want, got_v[i]))) infinities++;
                in_range++;
            }
        cr_assert_eq(st.samples_decoded, in_range, "range %zu", r);
        cr_assert(nans > 0 && infinities > 0);
        cr_assert_eq(st.nan_count, nans, "range %zu", r);
        cr_assert_eq(st.inf_count, infinities, "range %zu", r);
        tschunk_sketch_stats sa, sw;
        tschunk_sketch_get_stats(acc, &sa);
        tschunk_sketch_get_stats(want, &sw);
        cr_assert(sa.count == sw.count && wl_bits(sa.min) == wl_bits(sw.min) && wl_bits(sa.max) == wl_bits(sw.max));
        cr_assert(wl_bits(sa.sum) == wl_bits(sw.sum), "range %zu: sum %.17g vs %.17g", r, sa.sum, sw.sum);
        for (double q = 0; q <= 1; q += 0.125) {
            double qa, qw;
            cr_assert_eq(tschunk_sketch_quantile(acc, q, &qa), 0);
            cr_assert_eq(tschunk_sketch_quantile(want, q, &qw), 0);
            cr_assert(wl_bits(qa) == wl_bits(qw), "range %zu, q %g: %.17g vs %.17g", r, q, qa, qw);
        }
        tschunk_sketch_free(acc);
        tschunk_sketch_free(want);
    }
    tschunk_segment_close(seg);
    free(b.data);
}

/* Fuzzing found it (fuzz_segment_read, 2026-11-30): a series table placed past the footer with a
 * tombstone length that wraps the sum back onto the footer passed the section check, and the metadata
 * checksum then read far outside the file. Footer rebuilt with a valid checksum: open must refuse it. */
Test(segment, section_offsets_that_wrap_are_refused)
{
    char path[128];
    snprintf(path, sizeof path, "%s/wrap.tseg", tmpdir);
    tschunk_segment_options o = {.min_ts = 0};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    int64_t ts[2] = {1, 2};
    double v[2] = {1, 2};
    unsigned char chunk[TSCHUNK_BOUND(2)];
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 1, chunk, n, NULL, 0), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    blob b = read_all(path);
    unsigned char *footer = b.data + b.size - TSC_SEG_FOOTER_SIZE;
    uint64_t footer_at = b.size - TSC_SEG_FOOTER_SIZE, series_off = b.size + 17; /* past the end of the file */
    uint64_t fields[12];
    for (int i = 0; i < 12; i++) fields[i] = tsc_load64_le(footer + 8 * i);
    uint64_t shift = series_off - fields[0];
    for (int i = 0; i < 6; i++) fields[2 * i] += shift; /* every section moved past the end */
    fields[11] = footer_at - fields[10]; /* the tombstone length wraps the sum back to the footer */
    for (int i = 0; i < 12; i++) tsc_store64_le(footer + 8 * i, fields[i]);
    tsc_store64_le(footer + 136, tsc_xxh3(footer, 136));
    tschunk_segment *seg;
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_open(&seg, b.data, b.size, 0, NULL)), TSCHUNK_ERROR_CORRUPT);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_open(&seg, b.data, b.size, TSCHUNK_SEGMENT_LAZY, NULL)),
                 TSCHUNK_ERROR_CORRUPT);
    cr_assert(tschunk_is_error(tschunk_segment_verify(b.data, b.size, NULL)));
    free(b.data);
}

/* A segment whose series table and index each span several 64-record blocks: 150 series, series 3
 * with 150 chunks, series 5 with overlapping chunks, and deletions in series 3 and 5. */
#define MANY_SERIES 150
static void write_many(const char *path)
{
    tschunk_segment_options o = {.min_ts = 0, .summary_mapping = TSCHUNK_MAPPING_LOGARITHMIC};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    for (int k = 0; k < MANY_SERIES; k++) {
        uint64_t id = UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)(k + 1) >> 3;
        char name[32];
        int len = snprintf(name, sizeof name, "s%d", k);
        cr_assert_eq(tschunk_segment_writer_add_series(w, id, name, (size_t)len), 0);
        int chunks = k == 3 ? 150 : 1 + k % 3;
        for (int c = 0; c < chunks; c++) {
            int64_t ts[10];
            double v[10];
            int64_t start = k == 5 ? c * 50 : c * 100; /* series 5: each chunk overlaps the next */
            for (int i = 0; i < 10; i++) { ts[i] = 1000 + start + i * 10 - (k == 5 && c == 1 ? 40 : 0); v[i] = k + c * 0.25 + i; }
            unsigned char chunk[TSCHUNK_BOUND(10)];
            size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 10, NULL);
            cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
        }
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
}

static size_t lazy_allocated;
static void *lazy_alloc(void *opaque, size_t size)
{
    (void)opaque;
    lazy_allocated += size;
    return malloc(size);
}
static void lazy_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

static int same_chunk_info(const tschunk_segment_chunk_info *a, const tschunk_segment_chunk_info *b)
{
    return a->ordinal == b->ordinal && a->count == b->count && a->deleted == b->deleted && a->first_ts == b->first_ts &&
           a->last_ts == b->last_ts && a->ref.chunk == b->ref.chunk && a->ref.chunk_size == b->ref.chunk_size &&
           a->ref.summary == b->ref.summary && a->ref.summary_size == b->ref.summary_size;
}

/* tschunk_segment_chunks gives what tschunk_segment_chunk gives, chunk by chunk, over runs of any length that start
 * anywhere (crossing 64-entry blocks), and refuses a run past the index. */
static void chunks_in_runs_answer_as_one_by_one(const tschunk_segment *seg)
{
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    tschunk_segment_chunk_info *runs = malloc((info.chunks + 1) * sizeof *runs), one;
    cr_assert(runs);
    static const size_t lengths[] = {1, 2, 63, 64, 65, 100, 129};
    for (size_t at = 0; at < info.chunks; at = at * 3 + 7) {
        for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
            size_t count = lengths[l] < info.chunks - at ? lengths[l] : info.chunks - at;
            memset(runs, 0xa5, count * sizeof *runs);
            cr_assert_eq(tschunk_segment_chunks(seg, at, count, runs), 0, "run [%zu, +%zu)", at, count);
            for (size_t k = 0; k < count; k++) {
                cr_assert_eq(tschunk_segment_chunk(seg, at + k, &one), 0);
                cr_assert(same_chunk_info(&one, &runs[k]), "run [%zu, +%zu): chunk %zu", at, count, at + k);
            }
        }
    }
    cr_assert_eq(tschunk_segment_chunks(seg, 0, info.chunks, runs), 0);
    cr_assert_eq(tschunk_segment_chunks(seg, info.chunks, 0, NULL), 0);
    cr_assert(tschunk_is_error(tschunk_segment_chunks(seg, 0, info.chunks + 1, runs)));
    cr_assert(tschunk_is_error(tschunk_segment_chunks(seg, info.chunks, 1, runs)));
    cr_assert(tschunk_is_error(tschunk_segment_chunks(seg, SIZE_MAX, 2, runs)));
    cr_assert(tschunk_is_error(tschunk_segment_chunks(seg, 1, SIZE_MAX, runs)));
    cr_assert(tschunk_is_error(tschunk_segment_chunks(seg, 0, 1, NULL)));
    free(runs);
}

/* Everything a reader can ask, asked of a full and a lazy open of the same bytes. */
static void same_answers(const tschunk_segment *full, const tschunk_segment *lazy)
{
    tschunk_segment_info fi, li;
    tschunk_segment_get_info(full, &fi);
    tschunk_segment_get_info(lazy, &li);
    cr_assert(fi.min_ts == li.min_ts && fi.ts_unit == li.ts_unit && fi.series == li.series && fi.chunks == li.chunks &&
                  fi.samples == li.samples && fi.deleted == li.deleted && fi.has_summaries == li.has_summaries &&
                  fi.format_version == li.format_version && fi.format_version == 3,
              "info differs");
    uint64_t rng = 17;
    for (uint32_t ord = 0; ord < fi.series; ord++) {
        uint64_t fid, lid;
        const char *fname, *lname;
        size_t flen, llen;
        cr_assert_eq(tschunk_segment_series(full, ord, &fid, &fname, &flen), 0);
        cr_assert_eq(tschunk_segment_series(lazy, ord, &lid, &lname, &llen), 0);
        cr_assert(fid == lid && fname == lname && flen == llen, "series %u", ord);
        cr_assert_eq(tschunk_segment_find_series(lazy, fid), ord);
        cr_assert(tschunk_is_error(tschunk_segment_find_series(lazy, fid + 1)));
        cr_assert_eq(tschunk_segment_find_series_name(lazy, lname, llen), ord);
        for (int q = 0; q < 12; q++) {
            int64_t from = q == 0 ? INT64_MIN : 900 + (int64_t)(wl_rng(&rng) % 16000);
            int64_t to = q == 0 ? INT64_MAX : from + (int64_t)(wl_rng(&rng) % 3000) - 500;
            size_t fb, fe, lb, le;
            cr_assert_eq(tschunk_segment_range(full, ord, from, to, &fb, &fe), 0);
            cr_assert_eq(tschunk_segment_range(lazy, ord, from, to, &lb, &le), 0);
            cr_assert(fb == lb && fe == le, "series %u [%lld, %lld]: [%zu, %zu) vs [%zu, %zu)", ord, (long long)from,
                      (long long)to, fb, fe, lb, le);
        }
    }
    cr_assert(tschunk_is_error(tschunk_segment_find_series(lazy, 0)));
    cr_assert(tschunk_is_error(tschunk_segment_find_series(lazy, UINT64_MAX)));
    cr_assert(tschunk_is_error(tschunk_segment_find_series_name(lazy, "nope", 4)));
    for (size_t i = 0; i < fi.chunks; i++) {
        tschunk_segment_chunk_info fc, lc;
        cr_assert_eq(tschunk_segment_chunk(full, i, &fc), 0);
        cr_assert_eq(tschunk_segment_chunk(lazy, i, &lc), 0);
        cr_assert(same_chunk_info(&fc, &lc), "chunk %zu", i);
        int64_t fts[16], lts[16];
        double fv[16], lv[16];
        size_t fn = tschunk_segment_decode(full, i, fts, fv, 16), ln = tschunk_segment_decode(lazy, i, lts, lv, 16);
        cr_assert(fn == ln && !memcmp(fts, lts, fn * sizeof *fts) && !memcmp(fv, lv, fn * sizeof *fv), "chunk %zu", i);
    }
    tschunk_segment_chunk_info c;
    cr_assert(tschunk_is_error(tschunk_segment_chunk(lazy, fi.chunks, &c)));
    chunks_in_runs_answer_as_one_by_one(full);
    chunks_in_runs_answer_as_one_by_one(lazy);
}

Test(segment, lazy_open_answers_as_a_full_open, .timeout = 60)
{
    char path[128], by_full[128], by_lazy[128];
    snprintf(path, sizeof path, "%s/many.tseg", tmpdir);
    snprintf(by_full, sizeof by_full, "%s/full.tseg", tmpdir);
    snprintf(by_lazy, sizeof by_lazy, "%s/lazy.tseg", tmpdir);
    write_many(path);
    blob b = read_all(path);
    tschunk_segment *full, *lazy;
    tschunk_allocator counted = {lazy_alloc, lazy_free, NULL};
    lazy_allocated = 0;
    cr_assert_eq(tschunk_segment_open(&full, b.data, b.size, 0, &counted), 0);
    size_t full_bytes = lazy_allocated;
    lazy_allocated = 0;
    cr_assert_eq(tschunk_segment_open(&lazy, b.data, b.size, TSCHUNK_SEGMENT_LAZY, &counted), 0);
    cr_assert_lt(lazy_allocated, 1024, "a lazy open allocated %zu bytes", lazy_allocated);
    cr_assert_gt(full_bytes, 10000);
    same_answers(full, lazy);
    /* A delete through either writes the same bytes; they read back the same both ways. */
    uint64_t df, dl;
    uint32_t s3 = (uint32_t)tschunk_segment_find_series_name(full, "s3", 2);
    uint32_t s5 = (uint32_t)tschunk_segment_find_series_name(full, "s5", 2);
    cr_assert_eq(tschunk_segment_delete(full, by_full, s3, 2000, 9005, &df), 0);
    cr_assert_eq(tschunk_segment_delete(lazy, by_lazy, s3, 2000, 9005, &dl), 0);
    cr_assert(df == dl && df > 100, "%llu vs %llu", (unsigned long long)df, (unsigned long long)dl);
    blob bf = read_all(by_full), bl = read_all(by_lazy);
    cr_assert(bf.size == bl.size && !memcmp(bf.data, bl.data, bf.size));
    tschunk_segment_close(full);
    tschunk_segment_close(lazy);
    tschunk_segment *f2, *l2;
    cr_assert_eq(tschunk_segment_open(&f2, bf.data, bf.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_delete(f2, by_full, s5, 1010, 1100, &df), 0);
    cr_assert_gt(df, 0);
    tschunk_segment_close(f2);
    free(bf.data);
    bf = read_all(by_full);
    cr_assert_eq(tschunk_segment_verify(bf.data, bf.size, NULL), 0);
    cr_assert_eq(tschunk_segment_open(&f2, bf.data, bf.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_open(&l2, bf.data, bf.size, TSCHUNK_SEGMENT_LAZY, NULL), 0);
    same_answers(f2, l2);
    tschunk_segment_close(f2);
    tschunk_segment_close(l2);
    free(b.data);
    free(bf.data);
    free(bl.data);
}

/* Fences must agree with the blocks: forge a block hash (with every other checksum made to match) and
 * a full open still reads the index, but verify names the fences and a lazy read refuses the block. */
Test(segment, verify_checks_every_fence)
{
    char path[128];
    snprintf(path, sizeof path, "%s/fence.tseg", tmpdir);
    write_many(path);
    blob b = read_all(path);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    tsc_seg_footer f = {0};
    unsigned char *footer = b.data + b.size - TSC_SEG_FOOTER_SIZE;
    f.series_off = tsc_load64_le(footer), f.fence_off = tsc_load64_le(footer + 32), f.tomb_off = tsc_load64_le(footer + 80);
    f.tomb_len = tsc_load64_le(footer + 88);
    tschunk_segment_close(seg);
    size_t fence = tsc_seg_blocks(MANY_SERIES) + 1; /* the second index fence */
    b.data[f.fence_off + fence * TSC_SEG_FENCE_SIZE + 16] ^= 1;
    uint64_t end = f.tomb_off + f.tomb_len;
    tsc_store64_le(footer + 112, tsc_xxh3(b.data + f.series_off, (size_t)(end - f.series_off)));
    tsc_store64_le(footer + 120, tsc_xxh3(b.data + f.fence_off, (size_t)(end - f.fence_off)));
    tsc_store64_le(footer + 136, tsc_xxh3(footer, 136));
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    tschunk_segment_close(seg);
    size_t at = 0;
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_verify(b.data, b.size, &at)), TSCHUNK_ERROR_CORRUPT);
    cr_assert_eq(at, f.fence_off);
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, TSCHUNK_SEGMENT_LAZY, NULL), 0);
    tschunk_segment_chunk_info c;
    cr_assert_eq(tschunk_segment_chunk(seg, 0, &c), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_chunk(seg, TSC_SEG_BLOCK + 1, &c)), TSCHUNK_ERROR_CORRUPT);
    /* A run into the broken block: refused there, the chunks before it given. */
    tschunk_segment_chunk_info run[TSC_SEG_BLOCK + 2];
    memset(run, 0, sizeof run);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_chunks(seg, 1, TSC_SEG_BLOCK + 1, run)), TSCHUNK_ERROR_CORRUPT);
    for (size_t k = 0; k + 1 < TSC_SEG_BLOCK; k++) {
        cr_assert_eq(tschunk_segment_chunk(seg, 1 + k, &c), 0);
        cr_assert(same_chunk_info(&c, &run[k]), "chunk %zu", 1 + k);
    }
    tschunk_segment_close(seg);
    free(b.data);
}

/* The three series of v1_small.expected.csv (tests/vectors/segment/), line by line. */
static void reads_as_expected(const tschunk_segment *seg, FILE *expected)
{
    rewind(expected);
    char want[256], got[256];
    size_t lines = 0;
    const char *order[3] = {"cpu_a", "mem_bytes", "temp.c"};
    for (int k = 0; k < 3; k++) {
        size_t ord = tschunk_segment_find_series_name(seg, order[k], strlen(order[k]));
        cr_assert(!tschunk_is_error(ord));
        static int64_t ts[1024];
        static double v[1024];
        size_t n = series_samples(seg, (uint32_t)ord, ts, v, 1024);
        for (size_t i = 0; i < n; i++, lines++) {
            cr_assert(fgets(want, sizeof want, expected));
            snprintf(got, sizeof got, "%s,%lld,0x%016llx\n", order[k], (long long)ts[i],
                     (unsigned long long)wl_bits(v[i]));
            cr_assert_str_eq(got, want);
        }
    }
    cr_assert_eq(lines, 430);
    cr_assert(!fgets(want, sizeof want, expected));
}

/* Real bytes of the older formats (tests/vectors/segment/README.md: v1 written by 0.5.0, v2 by 0.13.0), read by
 * this version both ways; both hold the same samples and the same deletion. Compacted, they are version 3 and
 * read the same without it. */
static void check_old_segment(const char *file, unsigned version)
{
    char path[512];
    const char *repo = getenv("TSCHUNK_REPO") ? getenv("TSCHUNK_REPO") : ".";
    snprintf(path, sizeof path, "%s/tests/vectors/segment/%s", repo, file);
    blob b = read_all(path);
    snprintf(path, sizeof path, "%s/tests/vectors/segment/v1_small.expected.csv", repo);
    FILE *expected = fopen(path, "r");
    cr_assert(expected, "%s", path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    for (int lazy = 0; lazy < 2; lazy++) {
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL), 0);
        tschunk_segment_info info;
        tschunk_segment_get_info(seg, &info);
        cr_assert(info.format_version == version && info.series == 3 && info.chunks == 6 && info.deleted == 20);
        reads_as_expected(seg, expected);
        snprintf(path, sizeof path, "%s/compacted-v%u.tseg", tmpdir, version);
        tschunk_segment_compact_stats st;
        blob c = compact_checked(seg, path, &st);
        tschunk_segment_close(seg);
        cr_assert_eq(tschunk_segment_open(&seg, c.data, c.size, 0, NULL), 0);
        reads_as_expected(seg, expected);
        tschunk_segment_close(seg);
        free(c.data);
    }
    fclose(expected);
    /* A delete keeps the file's version: the new footer is written in that version's layout. */
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    static int64_t ts[1024];
    static double v[1024];
    size_t live0 = series_samples(seg, 0, ts, v, 1024), live1 = series_samples(seg, 1, ts, v, 1024);
    cr_assert(live0 > 0 && live1 > 0);
    snprintf(path, sizeof path, "%s/deleted-v%u.tseg", tmpdir, version);
    uint64_t deleted = 0;
    cr_assert_eq(tschunk_segment_delete(seg, path, 0, INT64_MIN, INT64_MAX, &deleted), 0);
    cr_assert_eq(deleted, live0);
    tschunk_segment_close(seg);
    blob d = read_all(path);
    cr_assert_eq(tschunk_segment_verify(d.data, d.size, NULL), 0, "v%u after a delete", version);
    cr_assert_eq(tschunk_segment_open(&seg, d.data, d.size, 0, NULL), 0);
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    cr_assert_eq(info.format_version, version);
    cr_assert_eq(info.deleted, 20 + live0);
    cr_assert_eq(series_samples(seg, 0, ts, v, 1024), 0);
    cr_assert_eq(series_samples(seg, 1, ts, v, 1024), live1);
    tschunk_segment_close(seg);
    free(d.data);
    free(b.data);
}

Test(segment, v1_segments_still_read) { check_old_segment("v1_small.tseg", 1); }
Test(segment, v2_segments_still_read) { check_old_segment("v2_small.tseg", 2); }

/* One long series (300 chunks of 120 samples) and a short one, with summaries; `per_block` as the
 * writer option (1: no stored block summaries). */
static void write_long(const char *path, uint32_t per_block)
{
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    tschunk_segment_options o = {.min_ts = 0, .has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                 .summary_gamma = st.gamma, .summary_offset = st.index_offset,
                                 .summary_block_chunks = per_block};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    for (int k = 0; k < 305; k++) {
        uint64_t id = k < 300 ? 42 : 7;
        wl_series s;
        wl_synthetic(&s, k % WL_SYNTHETIC_COUNT, 120, (uint64_t)k);
        int64_t base = (int64_t)(k < 300 ? k : k - 300) * 2000000 + 1000000;
        unsigned char chunk[TSCHUNK_BOUND(120)], summary[4096];
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, chunk, sizeof chunk, NULL), 0);
        tschunk_encoder_set_summary(&enc, sk);
        for (size_t i = 0; i < s.n; i++) tschunk_append_bits(&enc, base + (int64_t)i * 15000, s.bits[i]);
        size_t size = tschunk_encoder_finish(&enc);
        size_t ssize = tschunk_encoder_write_summary(&enc, summary, sizeof summary);
        cr_assert(!tschunk_is_error(ssize));
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, size, summary, ssize), 0);
        wl_free(&s);
    }
    cr_assert_eq(tschunk_segment_writer_add_series(w, 42, "long", 4), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    tschunk_sketch_free(sk);
}

static size_t merged(const tschunk_segment *seg, uint32_t ord, int64_t from, int64_t to, tschunk_sketch **acc,
                     tschunk_range_stats *st)
{
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(acc, &so), 0);
    return tschunk_segment_range_merge(seg, ord, from, to, *acc, st);
}

Test(segment, stored_block_summaries_answer_as_chunk_summaries, .timeout = 60)
{
    char with[128], without[128];
    snprintf(with, sizeof with, "%s/blocks.tseg", tmpdir);
    snprintf(without, sizeof without, "%s/noblocks.tseg", tmpdir);
    write_long(with, 0);
    write_long(without, 1);
    blob a = read_all(with), b = read_all(without);
    cr_assert_gt(a.size, b.size); /* the blocks are there: 300 chunks of one series, 64 a block */
    cr_assert_eq(tschunk_segment_verify(a.data, a.size, NULL), 0);
    tschunk_segment *segs[3];
    cr_assert_eq(tschunk_segment_open(&segs[0], a.data, a.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_open(&segs[1], a.data, a.size, TSCHUNK_SEGMENT_LAZY, NULL), 0);
    cr_assert_eq(tschunk_segment_open(&segs[2], b.data, b.size, 0, NULL), 0);
    uint32_t ord = (uint32_t)tschunk_segment_find_series(segs[0], 42);
    tschunk_segment_info ia, ib;
    tschunk_segment_get_info(segs[0], &ia);
    tschunk_segment_get_info(segs[2], &ib);
    cr_assert_eq(ia.summary_blocks, 5 + 1); /* the long series: 4 x 64 + 44 chunks; the short one: 5 in one */
    cr_assert_eq(ib.summary_blocks, 0);
    const int64_t ranges[][2] = {{INT64_MIN, INT64_MAX},     {1000000 + 10 * 2000000 + 500000, 1000000 + 290 * 2000000 + 700000},
                                 {1000000 + 64 * 2000000, 1000000 + 192 * 2000000 - 1}, {0, 999999},
                                 {1000000 + 5 * 2000000 + 1, 1000000 + 70 * 2000000}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        for (int all = 0; all < 2; all++) {
            tschunk_sketch *acc[3];
            tschunk_range_stats st[3];
            for (int k = 0; k < 3; k++)
                cr_assert_eq(merged(segs[k], all ? TSCHUNK_SEGMENT_ALL_SERIES : ord, ranges[r][0], ranges[r][1], &acc[k],
                                    &st[k]), 0);
            for (int k = 1; k < 3; k++) {
                cr_assert(st[0].chunks_from_summaries == st[k].chunks_from_summaries &&
                              st[0].chunks_decoded == st[k].chunks_decoded && st[0].chunks_skipped == st[k].chunks_skipped &&
                              st[0].samples_decoded == st[k].samples_decoded && st[0].nan_count == st[k].nan_count,
                          "range %zu, reader %d", r, k);
                tschunk_sketch_stats x, y;
                tschunk_sketch_get_stats(acc[0], &x);
                tschunk_sketch_get_stats(acc[k], &y);
                cr_assert(x.count == y.count && wl_bits(x.min) == wl_bits(y.min) && wl_bits(x.max) == wl_bits(y.max));
                cr_assert(fabs(x.sum - y.sum) <= 1e-9 * fabs(y.sum) + 1e-9, "range %zu: %.17g vs %.17g", r, x.sum, y.sum);
                for (int q = 0; q <= 20 && x.count > 0; q++) {
                    double qa, qb;
                    cr_assert_eq(tschunk_sketch_quantile(acc[0], q / 20.0, &qa), 0);
                    cr_assert_eq(tschunk_sketch_quantile(acc[k], q / 20.0, &qb), 0);
                    cr_assert(wl_bits(qa) == wl_bits(qb), "range %zu, reader %d, q %d", r, k, q);
                }
            }
            for (int k = 0; k < 3; k++) tschunk_sketch_free(acc[k]);
        }
    }
    for (int k = 0; k < 3; k++) tschunk_segment_close(segs[k]);
    /* The blocks answer without touching their chunks: a broken record inside a block does not matter
     * to a range the block covers, while without blocks the same query meets it. */
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, a.data, a.size, 0, NULL), 0);
    tschunk_segment_chunk_info c;
    size_t begin, end;
    cr_assert_eq(tschunk_segment_range(seg, ord, INT64_MIN, INT64_MAX, &begin, &end), 0);
    cr_assert_eq(tschunk_segment_chunk(seg, begin + 3, &c), 0);
    size_t broken = (size_t)((const unsigned char *)c.ref.chunk - a.data) + 5;
    tschunk_segment_close(seg);
    a.data[broken] ^= 0x10;
    b.data[broken] ^= 0x10; /* the same records in both files: the blocks come after them */
    tschunk_sketch *acc;
    tschunk_range_stats st;
    cr_assert_eq(tschunk_segment_open(&seg, a.data, a.size, 0, NULL), 0);
    cr_assert_eq(merged(seg, ord, INT64_MIN, INT64_MAX, &acc, &st), 0);
    cr_assert_eq(st.chunks_from_summaries, 300);
    tschunk_sketch_free(acc);
    tschunk_segment_close(seg);
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    cr_assert_eq(tschunk_get_error_code(merged(seg, ord, INT64_MIN, INT64_MAX, &acc, &st)), TSCHUNK_ERROR_CORRUPT);
    tschunk_sketch_free(acc);
    tschunk_segment_close(seg);
    cr_assert(tschunk_is_error(tschunk_segment_verify(a.data, a.size, NULL)));
    free(a.data);
    free(b.data);
}

/* A block blob that is not its chunks' combination (every checksum made to match) is found by verify. */
Test(segment, verify_recomputes_block_summaries)
{
    char path[128];
    snprintf(path, sizeof path, "%s/forged.tseg", tmpdir);
    write_long(path, 0);
    blob b = read_all(path);
    unsigned char *footer = b.data + b.size - TSC_SEG_FOOTER_SIZE;
    uint64_t series_off = tsc_load64_le(footer), fence_off = tsc_load64_le(footer + 32);
    uint64_t blocks_off = tsc_load64_le(footer + 48), blocks_len = tsc_load64_le(footer + 56);
    uint64_t end = tsc_load64_le(footer + 80) + tsc_load64_le(footer + 88);
    cr_assert_gt(blocks_len, 100);
    b.data[blocks_off + blocks_len - 1] ^= 1; /* the last bin count byte of the last block */
    tsc_store64_le(footer + 112, tsc_xxh3(b.data + series_off, (size_t)(end - series_off)));
    tsc_store64_le(footer + 120, tsc_xxh3(b.data + fence_off, (size_t)(end - fence_off)));
    tsc_store64_le(footer + 136, tsc_xxh3(footer, 136));
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    tschunk_segment_close(seg);
    size_t at = 0;
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_verify(b.data, b.size, &at)), TSCHUNK_ERROR_CORRUPT);
    cr_assert_eq(at, blocks_off);
    free(b.data);
}

/* A writer of tmpdir/file (its path in path[128]). */
static tschunk_segment_writer *new_writer(char path[128], const char *file, const tschunk_segment_options *o)
{
    snprintf(path, 128, "%s/%s", tmpdir, file);
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, o), 0);
    return w;
}

/* Format v3's index codes each entry from the previous one of its block: aligned series of one chunk each,
 * written in order, cost a flag byte, a jitter byte and a length. 1,000 such series of 120 samples, with
 * Prometheus-like names: what the container adds beside the names stays under 3% of the chunk bytes. */
Test(segment, v3_container_of_aligned_series_is_small)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = INT64_C(1700000000000) - 10};
    tschunk_segment_writer *w = new_writer(path, "aligned.tseg", &o);
    size_t chunk_bytes = 0, name_bytes = 0;
    for (size_t i = 0; i < 1000; i++) {
        wl_series s;
        wl_synthetic(&s, (int)(i % WL_SYNTHETIC_COUNT), 120, i + 1);
        unsigned char chunk[TSCHUNK_BOUND(120)];
        size_t n = tschunk_encode(chunk, sizeof chunk, s.ts, (const double *)(const void *)s.bits, s.n, NULL);
        cr_assert(!tschunk_is_error(n));
        char name[64];
        int len = snprintf(name, sizeof name, "node_metric{instance=\"host-%zu\"}", i);
        cr_assert_eq(tschunk_segment_writer_add_series(w, i * 7919 + 1, name, (size_t)len), 0);
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, i * 7919 + 1, chunk, n, NULL, 0), 0);
        chunk_bytes += n;
        name_bytes += (size_t)len;
        wl_free(&s);
    }
    size_t size = tschunk_segment_writer_finish(w);
    cr_assert(!tschunk_is_error(size));
    double overhead = (double)(size - chunk_bytes - name_bytes) / (double)chunk_bytes;
    cr_assert_lt(overhead, 0.03, "container adds %.2f%% beside the names", 100 * overhead);
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    free(b.data);
}

/* A summary needs a segment with summaries (v3 records hold one only then). Every kind of index field:
 * a named series without chunks (an ordinal skipped), chunks arriving in reverse (records not in index order),
 * counts and spans that change, a chunk far after the previous one; read back by a full and a lazy open. */
Test(segment, v3_index_fields_round_trip)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = -5};
    tschunk_segment_writer *w = new_writer(path, "fields.tseg", &o);
    int64_t ts[200];
    double v[200];
    unsigned char chunk[TSCHUNK_BOUND(200)], summary[4] = {0xd1, 0, 0, 0};
    for (int i = 0; i < 200; i++) ts[i] = i * 7, v[i] = i;
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_add_chunk(w, 1, chunk, n, summary, 4)),
                 TSCHUNK_ERROR_BAD_PARAMETER, "a summary in a segment without summaries");
    cr_assert_eq(tschunk_segment_writer_add_series(w, 2, "no chunks", 9), 0);
    /* series 1..150 (but 2), 3 chunks each, given in reverse; chunk k of a series has 10 + k * (id % 7) samples */
    typedef struct {
        int64_t first;
        size_t count;
    } shape;
    static shape want[151][3];
    for (int k = 2; k >= 0; k--)
        for (uint64_t id = 150; id >= 1; id--) {
            if (id == 2) continue;
            size_t count = 10 + (size_t)k * (id % 7);
            int64_t base = k == 2 ? INT64_C(1) << 40 : (int64_t)(k * 5000) + (int64_t)(id % 3);
            for (size_t i = 0; i < count; i++) ts[i] = base + (int64_t)i * (7 + (int64_t)(id % 2));
            n = tschunk_encode(chunk, sizeof chunk, ts, v, count, NULL);
            cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
            want[id][k] = (shape){base, count};
        }
    /* series 151..220: one chunk each, aligned but for a few units of jitter at both ends */
    for (uint64_t id = 151; id <= 220; id++) {
        for (size_t i = 0; i < 50; i++) ts[i] = 1000000 + (int64_t)(id % 5) + (int64_t)i * 10;
        ts[49] += (int64_t)(id % 4);
        n = tschunk_encode(chunk, sizeof chunk, ts, v, 50, NULL);
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    for (int lazy = 0; lazy < 2; lazy++) {
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL), 0);
        for (uint64_t id = 151; id <= 220; id++) {
            size_t ord = tschunk_segment_find_series(seg, id), begin, end;
            cr_assert(!tschunk_is_error(ord));
            cr_assert_eq(tschunk_segment_range(seg, (uint32_t)ord, INT64_MIN, INT64_MAX, &begin, &end), 0);
            tschunk_segment_chunk_info c;
            cr_assert(end == begin + 1 && tschunk_segment_chunk(seg, begin, &c) == 0);
            int64_t first = 1000000 + (int64_t)(id % 5);
            cr_assert(c.count == 50 && c.first_ts == first && c.last_ts == first + 490 + (int64_t)(id % 4));
        }
        for (uint64_t id = 1; id <= 150; id++) {
            size_t ord = tschunk_segment_find_series(seg, id), begin, end;
            cr_assert(!tschunk_is_error(ord));
            cr_assert_eq(tschunk_segment_range(seg, (uint32_t)ord, INT64_MIN, INT64_MAX, &begin, &end), 0);
            cr_assert_eq(end - begin, id == 2 ? 0u : 3u, "series %llu", (unsigned long long)id);
            for (size_t k = 0; k < end - begin; k++) {
                tschunk_segment_chunk_info c;
                cr_assert_eq(tschunk_segment_chunk(seg, begin + k, &c), 0);
                int64_t step = 7 + (int64_t)(id % 2);
                int64_t last = want[id][k].first + (int64_t)(want[id][k].count - 1) * step;
                cr_assert(c.count == want[id][k].count && c.first_ts == want[id][k].first && c.last_ts == last,
                          "series %llu chunk %zu", (unsigned long long)id, k);
                int64_t got_ts[200];
                double got_v[200];
                cr_assert_eq(tschunk_segment_decode(seg, begin + k, got_ts, got_v, 200), c.count);
                cr_assert(got_ts[0] == c.first_ts && got_ts[c.count - 1] == last);
            }
        }
        tschunk_segment_close(seg);
    }
    free(b.data);
}

/* Ranges asked of one lazy open from several threads, against a full open's answers. */
#define WALK_POINTS 16
typedef struct {
    const tschunk_segment *seg;
    const int64_t *points;
    const size_t (*want)[WALK_POINTS][WALK_POINTS][2];
    unsigned start;
    size_t wrong;
} walk_job;

static void *ask_ranges(void *arg)
{
    walk_job *j = arg;
    for (unsigned k = 0; k < 3 * WALK_POINTS * WALK_POINTS; k++) {
        unsigned q = (j->start + k * 7) % (3 * WALK_POINTS * WALK_POINTS);
        unsigned ord = q / (WALK_POINTS * WALK_POINTS), f = q / WALK_POINTS % WALK_POINTS, t = q % WALK_POINTS;
        size_t begin, end;
        j->wrong += tschunk_segment_range(j->seg, ord, j->points[f], j->points[t], &begin, &end) != 0 ||
                    begin != j->want[ord][f][t][0] || end != j->want[ord][f][t][1];
    }
    return NULL;
}

/* A lazy open remembers each index block's largest last_ts once a call has parsed the block, and a range walk
 * passes over the blocks known to end before its start. Series 1: 150 chunks, the first spanning them all (a
 * block's largest last_ts, not its last entry's); series 2 ends inside a block that series 3 goes on in (a walk
 * that finds no chunk stops at the series' end, in that block). Every range asked of a lazy open whose blocks
 * are remembered, and of a fresh one, answers as a full open. */
Test(segment, lazy_range_walk_passes_over_remembered_blocks)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = 0};
    tschunk_segment_writer *w = new_writer(path, "walk.tseg", &o);
    static const size_t chunks_of[] = {150, 100, 70};
    int64_t ts[2];
    double v[2] = {1, 2};
    unsigned char chunk[TSCHUNK_BOUND(2)];
    for (uint64_t id = 1; id <= 3; id++)
        for (size_t k = 0; k < chunks_of[id - 1]; k++) {
            ts[0] = (int64_t)k * 1000;
            ts[1] = id == 1 && k == 0 ? 1000000 : ts[0] + 500;
            size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 2, NULL);
            cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
        }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    blob b = read_all(path);
    tschunk_segment *full, *warm, *cold;
    cr_assert_eq(tschunk_segment_open(&full, b.data, b.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_open(&warm, b.data, b.size, TSCHUNK_SEGMENT_LAZY, NULL), 0);
    size_t fb, fe, lb, le;
    for (uint32_t ord = 0; ord < 3; ord++) /* every block parsed once: all remembered */
        cr_assert_eq(tschunk_segment_range(warm, ord, INT64_MIN, INT64_MAX, &lb, &le), 0);
    static const int64_t points[] = {INT64_MIN, -1, 0, 499, 500, 501, 63500, 64000, 99500, 120000, 149500, 149501,
                                     500000, 1000000, 1000001, INT64_MAX};
    size_t npoints = sizeof points / sizeof *points;
    for (uint32_t ord = 0; ord < 3; ord++)
        for (size_t f = 0; f < npoints; f++)
            for (size_t t = 0; t < npoints; t++) {
                cr_assert_eq(tschunk_segment_range(full, ord, points[f], points[t], &fb, &fe), 0);
                cr_assert_eq(tschunk_segment_open(&cold, b.data, b.size, TSCHUNK_SEGMENT_LAZY, NULL), 0);
                for (int pass = 0; pass < 3; pass++) {
                    tschunk_segment *lazy = pass == 0 ? warm : cold; /* cold twice: then its own blocks known */
                    cr_assert_eq(tschunk_segment_range(lazy, ord, points[f], points[t], &lb, &le), 0);
                    cr_assert(fb == lb && fe == le, "series %u [%lld, %lld] pass %d: [%zu, %zu) vs [%zu, %zu)", ord,
                              (long long)points[f], (long long)points[t], pass, fb, fe, lb, le);
                }
                tschunk_segment_close(cold);
            }
    /* four threads share a fresh lazy open: each block's maximum stored while the others walk */
    static size_t want[3][WALK_POINTS][WALK_POINTS][2];
    cr_assert_eq(npoints, WALK_POINTS);
    for (uint32_t ord = 0; ord < 3; ord++)
        for (size_t f = 0; f < npoints; f++)
            for (size_t t = 0; t < npoints; t++)
                cr_assert_eq(tschunk_segment_range(full, ord, points[f], points[t], &want[ord][f][t][0],
                                                   &want[ord][f][t][1]), 0);
    cr_assert_eq(tschunk_segment_open(&cold, b.data, b.size, TSCHUNK_SEGMENT_LAZY, NULL), 0);
    pthread_t threads[4];
    walk_job jobs[4];
    for (unsigned t = 0; t < 4; t++) {
        jobs[t] = (walk_job){cold, points, (const size_t(*)[WALK_POINTS][WALK_POINTS][2])want, t * 191, 0};
        cr_assert_eq(pthread_create(&threads[t], NULL, ask_ranges, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(pthread_join(threads[t], NULL), 0);
        cr_assert_eq(jobs[t].wrong, 0, "thread %d", t);
    }
    tschunk_segment_close(cold);
    /* the cases the walk must get right, spelled out */
    cr_assert_eq(tschunk_segment_range(warm, 0, 500000, 500000, &lb, &le), 0);
    cr_assert(lb == 0 && le == 150, "the long first chunk reaches 500000: [%zu, %zu)", lb, le);
    cr_assert_eq(tschunk_segment_range(warm, 1, 1000000, INT64_MAX, &lb, &le), 0);
    cr_assert(lb == 250 && le == 250, "series 2 ends at 250, inside block 3: [%zu, %zu)", lb, le);
    tschunk_segment_close(warm);
    tschunk_segment_close(full);
    free(b.data);
}

/* Records are checked in groups: as many records as fit in about 32 KB, at most a 64-entry index block
 * (header byte 33: log2 of the group). A damaged record makes exactly the chunks of its group unreadable
 * (their hash no longer holds), in a full and a lazy open; the others still read. `samples` chunks of
 * random doubles for each of 70 series, one chunk each. */
static void damage_one_record(size_t samples, unsigned want_shift)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = 0};
    tschunk_segment_writer *w = new_writer(path, "groups.tseg", &o);
    static int64_t ts[1024];
    static uint64_t bits[1024];
    static unsigned char chunk[TSCHUNK_BOUND(1024)];
    uint64_t rng = 5;
    for (size_t i = 0; i < samples; i++) ts[i] = (int64_t)i * 10, bits[i] = wl_rng(&rng) >> 2;
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, (const double *)(const void *)bits, samples, NULL);
    for (uint64_t id = 1; id <= 70; id++) cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    blob b = read_all(path);
    cr_assert_eq(b.data[TSC_SEG_GROUP_AT], want_shift, "%zu-byte records", n);
    /* Records follow the header in the order given: series 69 (index position 68, block 1) is record 68. */
    b.data[TSC_SEG_HEADER_SIZE + 68 * n + n - 1] ^= 1;
    cr_assert(tschunk_is_error(tschunk_segment_verify(b.data, b.size, NULL)));
    for (int lazy = 0; lazy < 2; lazy++) {
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL), 0);
        for (size_t i = 0; i < 70; i++) {
            tschunk_segment_chunk_info c;
            size_t err = tschunk_segment_chunk(seg, i, &c);
            unsigned damaged = i >> want_shift == 68u >> want_shift;
            cr_assert_eq(tschunk_is_error(err), damaged, "chunk %zu (group of %u)", i, 1u << want_shift);
            if (damaged) cr_assert_eq(tschunk_get_error_code(err), TSCHUNK_ERROR_CORRUPT);
        }
        tschunk_segment_close(seg);
    }
    free(b.data);
}

Test(segment, v3_records_are_checked_by_group)
{
    damage_one_record(3, 6);    /* tiny chunks: a group is the whole 64-entry block */
    damage_one_record(1024, 2); /* ~7.4 KB chunks: four a group */
}

/* The records-checked bits are the one thing an open segment writes: four threads read every chunk of one
 * full and one lazy open at once, in different orders; each gets every chunk right, and a damaged record's
 * group fails in every thread (a group is marked only once its hash held). */
typedef struct {
    const tschunk_segment *seg;
    size_t chunks, start, bad_group, failures, wrong;
    unsigned shift;
    const uint64_t *want; /* per chunk: the bits of its last value; chunks are read in steps of 11 (prime to 301) */
} reader_job;

static void *read_all_chunks(void *arg)
{
    reader_job *j = arg;
    static _Thread_local int64_t ts[TSCHUNK_MAX_SAMPLES];
    static _Thread_local double v[TSCHUNK_MAX_SAMPLES];
    for (size_t k = 0; k < j->chunks; k++) {
        size_t i = (j->start + k * 11) % j->chunks, n = tschunk_segment_decode(j->seg, i, ts, v, TSCHUNK_MAX_SAMPLES);
        int bad = i >> j->shift == j->bad_group;
        if (tschunk_is_error(n)) j->failures += bad, j->wrong += !bad;
        else j->wrong += bad || wl_bits(v[n - 1]) != j->want[i];
    }
    return NULL;
}

Test(segment, v3_readers_share_an_open_segment, .timeout = 60)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = 0};
    tschunk_segment_writer *w = new_writer(path, "threads.tseg", &o);
    static uint64_t want[301];
    for (uint64_t id = 1; id <= 301; id++) {
        wl_series s;
        wl_synthetic(&s, (int)(id % WL_SYNTHETIC_COUNT), 120, id);
        unsigned char chunk[TSCHUNK_BOUND(120)];
        size_t n = tschunk_encode(chunk, sizeof chunk, s.ts, (const double *)(const void *)s.bits, s.n, NULL);
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
        want[id - 1] = s.bits[s.n - 1];
        wl_free(&s);
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    blob b = read_all(path);
    unsigned shift = b.data[TSC_SEG_GROUP_AT];
    for (int damaged = 0; damaged < 2; damaged++) {
        size_t bad_group = SIZE_MAX;
        if (damaged) { /* the last byte of series 301's chunk: its group is the last one */
            tschunk_segment *probe;
            cr_assert_eq(tschunk_segment_open(&probe, b.data, b.size, 0, NULL), 0);
            tschunk_segment_chunk_info c;
            cr_assert_eq(tschunk_segment_chunk(probe, 300, &c), 0);
            size_t at = (size_t)((const unsigned char *)c.ref.chunk - b.data) + c.ref.chunk_size - 1;
            tschunk_segment_close(probe);
            b.data[at] ^= 0x10;
            bad_group = 300u >> shift;
        }
        for (int lazy = 0; lazy < 2; lazy++) {
            tschunk_segment *seg;
            cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL), 0);
            pthread_t threads[4];
            reader_job jobs[4];
            for (int t = 0; t < 4; t++) {
                jobs[t] = (reader_job){seg, 301, (size_t)t * 75, bad_group, 0, 0, shift, want};
                cr_assert_eq(pthread_create(&threads[t], NULL, read_all_chunks, &jobs[t]), 0);
            }
            size_t group_size = 301 - (bad_group << shift) < (1u << shift) ? 301 - (bad_group << shift) : 1u << shift;
            for (int t = 0; t < 4; t++) {
                cr_assert_eq(pthread_join(threads[t], NULL), 0);
                cr_assert_eq(jobs[t].wrong, 0, "thread %d, damaged %d, lazy %d", t, damaged, lazy);
                cr_assert_eq(jobs[t].failures, damaged ? group_size : 0);
            }
            tschunk_segment_close(seg);
        }
    }
    free(b.data);
}

/* The next chunk of a series is predicted to start one mean step after the previous one ends: 500 chunks of
 * one regular series (and of one with jittered scrapes) cost a flag byte and a record length an entry, plus
 * each 64-entry block's first entry and its records hashes. */
Test(segment, v3_chunks_of_one_series_cost_a_flag_and_a_length)
{
    for (int jitter = 0; jitter < 2; jitter++) {
        char path[128];
        tschunk_segment_options o = {.min_ts = -5};
        tschunk_segment_writer *w = new_writer(path, "series.tseg", &o);
        uint64_t rng = 3;
        for (int k = 0; k < 500; k++) {
            int64_t ts[120];
            double v[120];
            for (int i = 0; i < 120; i++) {
                int64_t at = (int64_t)(k * 120 + i) * 15000;
                ts[i] = at + (jitter ? (int64_t)(wl_rng(&rng) % 11) - 5 : 0);
                v[i] = 20 + 0.01 * (double)((k * 120 + i) % 97);
            }
            unsigned char chunk[TSCHUNK_BOUND(120)];
            size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 120, NULL);
            cr_assert_eq(tschunk_segment_writer_add_chunk(w, 9, chunk, n, NULL, 0), 0);
        }
        cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
        blob b = read_all(path);
        cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
        uint64_t index_len = tsc_load64_le(b.data + b.size - TSC_SEG_FOOTER_SIZE + 24); /* the index's length */
        size_t blocks = tsc_seg_blocks(500), plain = 500 * (jitter ? 4 : 3);
        cr_assert_leq(index_len, plain + blocks * (32 + 8), "%s: %llu index bytes for 500 entries",
                      jitter ? "jittered" : "regular", (unsigned long long)index_len);
        free(b.data);
    }
}

/* An allocator that refuses its call number `refuse_at` (from 0) and counts the blocks still held. */
static size_t alloc_calls, alloc_refuse_at, alloc_held;
static void *refusing_alloc(void *opaque, size_t size)
{
    (void)opaque;
    if (alloc_calls++ == alloc_refuse_at) return NULL;
    void *p = malloc(size);
    alloc_held += p != NULL;
    return p;
}
static void refusing_free(void *opaque, void *p)
{
    (void)opaque;
    alloc_held -= p != NULL;
    free(p);
}

/* Either the call's success, or ALLOCATION. */
static int refused(size_t r)
{
    cr_assert(r == 0 || r == TSC_ERROR(ALLOCATION), "%s", tschunk_error_name(r));
    return r != 0;
}

/* An allocator whose memory holds a file's name (as freed memory may), refusing one call. */
static char stale_name[160];
static size_t stale_calls, stale_refuse_at;
static void *stale_alloc(void *opaque, size_t size)
{
    (void)opaque;
    if (stale_calls++ == stale_refuse_at) return NULL;
    char *p = malloc(size < sizeof stale_name ? sizeof stale_name : size);
    if (p) memcpy(p, stale_name, sizeof stale_name);
    return p;
}
static void stale_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

/* A writer whose name could not be copied removes no file: until 0.55.5 its abort removed the file named by what
 * the temporary name's fresh memory held. Each of the create's allocations refused in turn. */
Test(segment, a_refused_create_removes_no_file)
{
    snprintf(stale_name, sizeof stale_name, "%s/bystander", tmpdir);
    tschunk_segment_options o = {.min_ts = 0, .allocator = {stale_alloc, stale_free, NULL}};
    char path[160];
    snprintf(path, sizeof path, "%s/stale.tseg", tmpdir);
    for (stale_refuse_at = 0; stale_refuse_at < 3; stale_refuse_at++) {
        FILE *f = fopen(stale_name, "w");
        cr_assert(f);
        fclose(f);
        stale_calls = 0;
        tschunk_segment_writer *w;
        cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), TSC_ERROR(ALLOCATION));
        cr_assert(access(stale_name, F_OK) == 0, "allocation %zu refused: the bystander was removed",
                  stale_refuse_at);
    }
    remove(stale_name);
}

/*
 * Every allocation the writer and both opens make, refused in turn: each refusal is ALLOCATION (never a
 * crash or another error), leaves neither the segment nor its temporary file on disk, and holds no memory
 * once the writer is aborted or finished; the run where nothing is refused writes a segment that verifies
 * and opens.
 */
Test(segment, every_refused_allocation_fails_cleanly, .timeout = 60)
{
    char path[128], tmp[160];
    snprintf(path, sizeof path, "%s/refused.tseg", tmpdir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    enum { CHUNKS = 90 }; /* past the writer's first 64-entry arrays, and two stored block summaries */
    static unsigned char chunks[CHUNKS][TSCHUNK_BOUND(40)], summaries[CHUNKS][1024];
    size_t sizes[CHUNKS], ssizes[CHUNKS];
    for (int c = 0; c < CHUNKS; c++) {
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, chunks[c], sizeof chunks[c], NULL), 0);
        tschunk_encoder_set_summary(&enc, sk);
        for (int i = 0; i < 40; i++) tschunk_append(&enc, 1000 + c * 1000 + i * 10, c + i * 0.5);
        sizes[c] = tschunk_encoder_finish(&enc);
        ssizes[c] = tschunk_encoder_write_summary(&enc, summaries[c], sizeof summaries[c]);
        cr_assert(!tschunk_is_error(ssizes[c]));
    }
    tschunk_sketch_free(sk);
    tschunk_allocator refusing = {refusing_alloc, refusing_free, NULL};
    tschunk_segment_options o = {.min_ts = 0, .has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                 .summary_gamma = st.gamma, .summary_offset = st.index_offset,
                                 .allocator = refusing};
    size_t refusals = 0;
    for (alloc_refuse_at = 0;; alloc_refuse_at++) {
        cr_assert_lt(alloc_refuse_at, 5000);
        alloc_calls = alloc_held = 0;
        remove(path);
        tschunk_segment_writer *w;
        int failed = refused(tschunk_segment_writer_create(&w, path, &o));
        for (int c = 0; c < CHUNKS && !failed; c++) {
            uint64_t id = (uint64_t)(c % 30) * 977; /* 30 series of 3 chunks */
            char name[16];
            int len = snprintf(name, sizeof name, "series-%d", c % 30);
            failed = refused(tschunk_segment_writer_add_series(w, id, name, (size_t)len)) ||
                     refused(tschunk_segment_writer_add_chunk(w, id, chunks[c], sizes[c], summaries[c], ssizes[c]));
            if (failed) tschunk_segment_writer_abort(w);
        }
        if (!failed) {
            size_t r = tschunk_segment_writer_finish(w);
            failed = tschunk_is_error(r);
            if (failed) refused(r);
        }
        cr_assert_eq(alloc_held, 0, "refusing call %zu: %zu blocks held", alloc_refuse_at, alloc_held);
        cr_assert_neq(access(tmp, F_OK), 0, "refusing call %zu left the temporary file", alloc_refuse_at);
        if (!failed) break;
        cr_assert_neq(access(path, F_OK), 0, "refusing call %zu left a segment", alloc_refuse_at);
        refusals++;
    }
    cr_assert_gt(refusals, 5);
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    /* The opens, refused in turn the same way. */
    for (int lazy = 0; lazy <= 1; lazy++)
        for (alloc_refuse_at = 0;; alloc_refuse_at++) {
            cr_assert_lt(alloc_refuse_at, 5000);
            alloc_calls = alloc_held = 0;
            tschunk_segment *seg;
            if (refused(tschunk_segment_open(&seg, b.data, b.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, &refusing))) {
                cr_assert_eq(alloc_held, 0, "open refusing call %zu: %zu blocks held", alloc_refuse_at, alloc_held);
                continue;
            }
            tschunk_segment_info info;
            tschunk_segment_get_info(seg, &info);
            cr_assert_eq(info.chunks, CHUNKS);
            tschunk_segment_close(seg);
            cr_assert_eq(alloc_held, 0);
            break;
        }
    /* A delete through a segment opened with that allocator, its allocations refused in turn. */
    char deleted_path[160], deleted_tmp[200];
    snprintf(deleted_path, sizeof deleted_path, "%s/refused-deleted.tseg", tmpdir);
    snprintf(deleted_tmp, sizeof deleted_tmp, "%s.tmp.%ld", deleted_path, (long)getpid());
    tschunk_segment *seg;
    alloc_refuse_at = SIZE_MAX;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, &refusing), 0);
    size_t open_held = alloc_held;
    uint32_t ord = (uint32_t)tschunk_segment_find_series(seg, 977);
    for (alloc_refuse_at = 0;; alloc_refuse_at++) {
        cr_assert_lt(alloc_refuse_at, 5000);
        alloc_calls = 0;
        remove(deleted_path);
        uint64_t gone = 0;
        size_t r = tschunk_segment_delete(seg, deleted_path, ord, 0, INT64_MAX, &gone);
        cr_assert_eq(alloc_held, open_held, "delete refusing call %zu", alloc_refuse_at);
        cr_assert_neq(access(deleted_tmp, F_OK), 0, "delete refusing call %zu left the temporary file",
                      alloc_refuse_at);
        if (!refused(r)) {
            cr_assert_eq(gone, 3 * 40);
            break;
        }
        cr_assert_eq(gone, 0);
        cr_assert_neq(access(deleted_path, F_OK), 0, "delete refusing call %zu left a segment", alloc_refuse_at);
    }
    cr_assert_gt(alloc_refuse_at, 1);
    tschunk_segment_close(seg);
    cr_assert_eq(alloc_held, 0);
    blob d = read_all(deleted_path);
    cr_assert_eq(tschunk_segment_verify(d.data, d.size, NULL), 0);
    /* A compaction of it, after a delete of part of a chunk, its allocations refused in turn the same way. */
    alloc_refuse_at = SIZE_MAX;
    cr_assert_eq(tschunk_segment_open(&seg, d.data, d.size, 0, &refusing), 0);
    cr_assert_eq(tschunk_segment_delete(seg, deleted_path, 0, 1100, 1200, NULL), 0);
    tschunk_segment_close(seg);
    free(d.data);
    d = read_all(deleted_path);
    cr_assert_eq(tschunk_segment_open(&seg, d.data, d.size, 0, &refusing), 0);
    open_held = alloc_held;
    for (alloc_refuse_at = 0;; alloc_refuse_at++) {
        cr_assert_lt(alloc_refuse_at, 5000);
        alloc_calls = 0;
        remove(path);
        tschunk_segment_compact_stats cst;
        size_t r = tschunk_segment_compact(seg, path, &cst);
        cr_assert_eq(alloc_held, open_held, "compact refusing call %zu", alloc_refuse_at);
        cr_assert_neq(access(tmp, F_OK), 0, "compact refusing call %zu left the temporary file", alloc_refuse_at);
        if (!tschunk_is_error(r)) {
            cr_assert(cst.chunks_rewritten == 1 && cst.chunks_dropped == 3 && cst.samples_dropped == 3 * 40 + 11);
            break;
        }
        refused(r);
        cr_assert_eq(cst.chunks_copied + cst.chunks_rewritten + cst.chunks_dropped + cst.samples_dropped, 0);
        cr_assert_neq(access(path, F_OK), 0, "compact refusing call %zu left a segment", alloc_refuse_at);
    }
    cr_assert_gt(alloc_refuse_at, 5);
    tschunk_segment_close(seg);
    cr_assert_eq(alloc_held, 0);
    free(d.data);
    d = read_all(path);
    cr_assert_eq(tschunk_segment_verify(d.data, d.size, NULL), 0);
    free(d.data);
    free(b.data);
}

/* Through the caller's io the writer makes the very bytes it writes to a file (summaries read back through
 * read_at for the block summaries included), and the segment verifies. */
Test(segment, io_writer_makes_the_file_writers_bytes)
{
    for (int with_summaries = 0; with_summaries < 2; with_summaries++) {
        char path[128];
        snprintf(path, sizeof path, "%s/file_%d.tseg", tmpdir, with_summaries);
        static written a[NSERIES * PER_SERIES], b[NSERIES * PER_SERIES];
        size_t n = write_segment(path, a, with_summaries);
        mem_segment m = mem_segment_empty();
        tschunk_segment_io io = mem_segment_io(&m);
        cr_assert_eq(write_segment_to(NULL, &io, b, with_summaries), n);
        blob file = read_all(path);
        cr_assert_eq(m.size, file.size, "%zu bytes against %zu", m.size, file.size);
        cr_assert(!memcmp(m.buf, file.data, file.size), "summaries %d: the bytes differ", with_summaries);
        cr_assert_eq(tschunk_segment_verify(m.buf, m.size, NULL), 0);
        cr_assert_eq(m.reads > 0, with_summaries == 1, "%zu reads", m.reads);
        free(file.data);
        free(m.buf);
        free_written(a, n);
        free_written(b, n);
    }
}

/* NULL options are the zeroed ones (no summaries, min_ts 0), for a path and through io: the same bytes. */
Test(segment, null_options_are_the_defaults)
{
    unsigned char chunk[TSCHUNK_BOUND(3)];
    int64_t ts[3] = {1000, 2000, 3000};
    double v[3] = {1.5, 2.5, 2.5};
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 3, NULL);
    cr_assert(!tschunk_is_error(n));
    static const tschunk_segment_options zeroed;
    blob files[2];
    for (int k = 0; k < 2; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/null_options_%d.tseg", tmpdir, k);
        tschunk_segment_writer *w;
        cr_assert_eq(tschunk_segment_writer_create(&w, path, k ? &zeroed : NULL), 0);
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, 7, chunk, n, NULL, 0), 0);
        cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
        files[k] = read_all(path);
    }
    cr_assert(files[0].size == files[1].size && !memcmp(files[0].data, files[1].data, files[0].size));
    mem_segment m = mem_segment_empty();
    tschunk_segment_io io = mem_segment_io(&m);
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create_io(&w, &io, NULL), 0);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 7, chunk, n, NULL, 0), 0);
    cr_assert_eq(tschunk_segment_writer_finish(w), files[0].size);
    cr_assert(m.size == files[0].size && !memcmp(m.buf, files[0].data, m.size));
    free(m.buf);
    for (int k = 0; k < 2; k++) free(files[k].data);
}

/* Three chunks of one series with summaries and block summaries: every write_at failing in turn fails create,
 * add_chunk or finish with GENERIC, and a failed read_at fails finish; nothing crashes or leaks (ASan). */
Test(segment, io_failures_fail_the_writer)
{
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    tschunk_segment_options o = {.has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                 .summary_gamma = st.gamma, .summary_offset = st.index_offset};
    unsigned char chunks[3][TSCHUNK_BOUND(50)], summaries[3][4096];
    size_t sizes[3], summary_sizes[3];
    for (int k = 0; k < 3; k++) {
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, chunks[k], sizeof chunks[k], NULL), 0);
        tschunk_encoder_set_summary(&enc, sk);
        for (int i = 0; i < 50; i++) cr_assert_eq(tschunk_append(&enc, 1000 * (50 * k + i), i % 7 + 0.5), 0);
        sizes[k] = tschunk_encoder_finish(&enc);
        summary_sizes[k] = tschunk_encoder_write_summary(&enc, summaries[k], sizeof summaries[k]);
        cr_assert(!tschunk_is_error(summary_sizes[k]));
    }
    tschunk_sketch_free(sk);
    size_t whole = 0;
    for (size_t fail_write = 0, fail_read = SIZE_MAX;; fail_write++) {
        mem_segment m = {NULL, 0, 0, 0, 0, fail_write, fail_read};
        tschunk_segment_io io = mem_segment_io(&m);
        tschunk_segment_writer *w;
        size_t r = tschunk_segment_writer_create_io(&w, &io, &o);
        for (int k = 0; k < 3 && !r; k++) {
            r = tschunk_segment_writer_add_chunk(w, 9, chunks[k], sizes[k], summaries[k], summary_sizes[k]);
            if (r) tschunk_segment_writer_abort(w);
        }
        if (!r) r = tschunk_segment_writer_finish(w);
        free(m.buf);
        if (m.writes <= fail_write) { /* no write failed: done */
            cr_assert(!tschunk_is_error(r), "%s", tschunk_error_name(r));
            whole = r;
            break;
        }
        cr_assert_eq(tschunk_get_error_code(r), TSCHUNK_ERROR_GENERIC, "write %zu: %s", fail_write,
                     tschunk_error_name(r));
    }
    cr_assert_gt(whole, 0);
    mem_segment m = {NULL, 0, 0, 0, 0, SIZE_MAX, 1};
    tschunk_segment_io io = mem_segment_io(&m);
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create_io(&w, &io, &o), 0);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, 9, chunks[k], sizes[k], summaries[k], summary_sizes[k]), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_finish(w)), TSCHUNK_ERROR_GENERIC);
    cr_assert_gt(m.reads, 1, "the block summary read the records back");
    free(m.buf);
    tschunk_segment_io no_read = {mem_write_at, NULL, &m};
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_create_io(&w, &no_read, &o)),
                 TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_writer_create_io(&w, NULL, &o)), TSCHUNK_ERROR_BAD_PARAMETER);
}

/* Mappings this process holds of files in the test's directory (lines of /proc/self/maps that name it; only
 * those, since a sanitizer's allocator maps memory of its own as it goes). */
static size_t mappings_held(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert(f != NULL);
    size_t lines = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) lines += strstr(line, tmpdir) != NULL;
    fclose(f);
    return lines;
}

/* The same segment through open_file and through open over the file's bytes: the same info, series, chunk and
 * summary bytes, samples; and a delete renamed over the path leaves the open file reading what it opened. */
Test(segment, open_file_reads_as_open_in_memory, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    static int64_t ts_mem[1024], ts_file[1024];
    static double v_mem[1024], v_file[1024];
    char path[128];
    snprintf(path, sizeof path, "%s/f.tseg", tmpdir);
    size_t n = write_segment(path, w, 1);
    blob b = read_all(path);
    for (unsigned flags = 0; flags <= (TSCHUNK_SEGMENT_VERIFY | TSCHUNK_SEGMENT_LAZY); flags++) {
        tschunk_segment *mem, *file;
        cr_assert_eq(tschunk_segment_open(&mem, b.data, b.size, flags, NULL), 0);
        cr_assert_eq(tschunk_segment_open_file(&file, path, flags, NULL), 0);
        tschunk_segment_info im, ifl;
        tschunk_segment_get_info(mem, &im);
        tschunk_segment_get_info(file, &ifl);
        cr_assert(im.series == ifl.series && im.chunks == ifl.chunks && im.chunks == n && im.samples == ifl.samples &&
                  im.min_ts == ifl.min_ts && im.summary_blocks == ifl.summary_blocks);
        for (uint32_t ord = 0; ord < im.series; ord++) {
            uint64_t id_mem, id_file;
            const char *name_mem, *name_file;
            size_t len_mem, len_file;
            cr_assert_eq(tschunk_segment_series(mem, ord, &id_mem, &name_mem, &len_mem), 0);
            cr_assert_eq(tschunk_segment_series(file, ord, &id_file, &name_file, &len_file), 0);
            cr_assert(id_mem == id_file && len_mem == len_file && !memcmp(name_mem, name_file, len_mem));
            size_t got_mem = series_samples(mem, ord, ts_mem, v_mem, 1024);
            cr_assert_eq(series_samples(file, ord, ts_file, v_file, 1024), got_mem);
            cr_assert(!memcmp(ts_mem, ts_file, got_mem * sizeof *ts_mem));
            cr_assert(!memcmp(v_mem, v_file, got_mem * sizeof *v_mem));
        }
        for (size_t i = 0; i < n; i++) {
            tschunk_segment_chunk_info cm, cf;
            cr_assert_eq(tschunk_segment_chunk(mem, i, &cm), 0);
            cr_assert_eq(tschunk_segment_chunk(file, i, &cf), 0);
            cr_assert(cm.ref.chunk_size == cf.ref.chunk_size && !memcmp(cm.ref.chunk, cf.ref.chunk, cm.ref.chunk_size));
            cr_assert(cm.ref.summary_size == cf.ref.summary_size &&
                      !memcmp(cm.ref.summary, cf.ref.summary, cm.ref.summary_size));
        }
        tschunk_segment_close(mem);
        tschunk_segment_close(file);
    }
    tschunk_segment *before;
    cr_assert_eq(tschunk_segment_open_file(&before, path, 0, NULL), 0);
    size_t all = series_samples(before, 5, ts_mem, v_mem, 1024);
    uint64_t deleted;
    cr_assert_eq(tschunk_segment_delete(before, path, 5, ts_mem[10], ts_mem[200], &deleted), 0);
    cr_assert_eq(deleted, 191);
    cr_assert_eq(series_samples(before, 5, ts_file, v_file, 1024), all); /* the bytes it opened */
    tschunk_segment *after;
    cr_assert_eq(tschunk_segment_open_file(&after, path, TSCHUNK_SEGMENT_VERIFY, NULL), 0);
    cr_assert_eq(series_samples(after, 5, ts_file, v_file, 1024), all - 191);
    tschunk_segment_close(after);
    tschunk_segment_close(before);
    free(b.data);
    free_written(w, n);
}

/* Paths that are not segments: each refused with its error (errno for a file error), no mapping left behind,
 * no wait on a FIFO; damaged bytes refused as open refuses them in memory; refused allocations hold nothing. */
Test(segment, open_file_refusals_leave_nothing_mapped, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    char path[128], cut[128], fifo[128], empty[128], text[128];
    snprintf(path, sizeof path, "%s/r.tseg", tmpdir);
    snprintf(cut, sizeof cut, "%s/cut.tseg", tmpdir);
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    snprintf(empty, sizeof empty, "%s/empty", tmpdir);
    snprintf(text, sizeof text, "%s/text.csv", tmpdir);
    size_t n = write_segment(path, w, 1);
    blob b = read_all(path);
    tschunk_segment *seg = (tschunk_segment *)&seg; /* open_file must clear it on failure */
    cr_assert_eq(tschunk_segment_open_file(NULL, path, 0, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_open_file(&seg, NULL, 0, NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_null(seg);
    struct {
        const char *path;
        size_t error;
        int err_no; /* for GENERIC */
    } cases[] = {{"/nonexistent/x.tseg", TSC_ERROR(GENERIC), ENOENT}, {tmpdir, TSC_ERROR(GENERIC), EISDIR},
                 {fifo, TSC_ERROR(GENERIC), EINVAL}, {empty, TSC_ERROR(TRUNCATED), 0},
                 {text, TSC_ERROR(BAD_MAGIC), 0}};
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    test_write_file(empty, "", 0);
    test_write_file(text, "ts,value\n1,2\n", 13);
    size_t held = mappings_held();
    for (int round = 0; round < 100; round++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            seg = (tschunk_segment *)&seg;
            errno = 0;
            cr_assert_eq(tschunk_segment_open_file(&seg, cases[c].path, 0, NULL), cases[c].error, "%s: %s",
                         cases[c].path, tschunk_error_name(tschunk_segment_open_file(&seg, cases[c].path, 0, NULL)));
            cr_assert_null(seg);
            if (cases[c].err_no) cr_assert_eq(errno, cases[c].err_no, "%s: %s", cases[c].path, strerror(errno));
        }
        /* Cut short, and a header byte changed: what open says of the same bytes in memory. */
        size_t len = b.size / 100 * (size_t)round + 1;
        test_write_file(cut, b.data, len);
        tschunk_segment *mem = NULL;
        size_t expect = tschunk_segment_open(&mem, b.data, len, 0, NULL);
        cr_assert(tschunk_is_error(expect), "%zu bytes", len);
        cr_assert_eq(tschunk_segment_open_file(&seg, cut, 0, NULL), expect);
        unsigned char *flipped = malloc(b.size);
        memcpy(flipped, b.data, b.size);
        flipped[(size_t)round % 48] ^= 0x10;
        test_write_file(cut, flipped, b.size);
        expect = tschunk_segment_open(&mem, flipped, b.size, 0, NULL);
        cr_assert(tschunk_is_error(expect));
        cr_assert_eq(tschunk_segment_open_file(&seg, cut, 0, NULL), expect);
        free(flipped);
    }
    cr_assert_eq(mappings_held(), held, "failed opens left mappings behind");
    cr_assert_eq(held, 0);
    /* Every allocation refused in turn: ALLOCATION, nothing held, nothing mapped; then it opens. */
    tschunk_allocator refusing = {refusing_alloc, refusing_free, NULL};
    for (alloc_refuse_at = 0;; alloc_refuse_at++) {
        cr_assert_lt(alloc_refuse_at, 100);
        alloc_calls = alloc_held = 0;
        size_t r = tschunk_segment_open_file(&seg, path, TSCHUNK_SEGMENT_VERIFY, &refusing);
        if (!refused(r)) break;
        cr_assert(seg == NULL && alloc_held == 0);
    }
    cr_assert_gt(alloc_refuse_at, 0);
    cr_assert_eq(mappings_held(), held + 1); /* the open segment's own */
    tschunk_segment_close(seg);
    cr_assert_eq(alloc_held, 0);
    cr_assert_eq(mappings_held(), held, "close left the mapping");
    free(b.data);
    free_written(w, n);
}

/* A chunk with its summary blob, the sketch of the given mapping. */
static size_t chunk_with_summary(unsigned char *chunk, size_t cap, unsigned char *summary, size_t scap,
                                 tschunk_mapping_kind kind, size_t *summary_size)
{
    tschunk_sketch *sk;
    tschunk_sketch_options so = {kind, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_encoder enc;
    cr_assert_eq(tschunk_encoder_init(&enc, chunk, cap, NULL), 0);
    tschunk_encoder_set_summary(&enc, sk);
    for (int i = 0; i < 50; i++) cr_assert_eq(tschunk_append(&enc, 1000 + i * 15, 3.5 + i % 7), 0);
    size_t n = tschunk_encoder_finish(&enc);
    *summary_size = tschunk_encoder_write_summary(&enc, summary, scap);
    cr_assert(!tschunk_is_error(*summary_size));
    tschunk_sketch_free(sk);
    return n;
}

/* The writer takes only a summary mapping a reader can build (kind 99 and gamma 0 were written as they came, and
 * refused by the reader), and only summaries of that mapping: a lone chunk of a series, in no block summary, went
 * unchecked, and verify called the segment corrupt. A refused chunk is not added; the writer goes on. */
Test(segment, writer_checks_summary_mappings)
{
    char path[128];
    snprintf(path, sizeof path, "%s/mapping.tseg", tmpdir);
    tschunk_sketch_stats st = test_cubic_stats();
    const struct {
        int kind;
        double gamma, offset;
    } bad[] = {{99, st.gamma, st.index_offset}, {TSCHUNK_MAPPING_CUBIC, 0, 0}, {TSCHUNK_MAPPING_CUBIC, 1, 0},
               {TSCHUNK_MAPPING_CUBIC, -2, 0}, {TSCHUNK_MAPPING_CUBIC, INFINITY, 0},
               {TSCHUNK_MAPPING_CUBIC, st.gamma, NAN}};
    mem_segment m = mem_segment_empty();
    tschunk_segment_io io = {mem_write_at, mem_read_at, &m};
    tschunk_segment_writer *w;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tschunk_segment_options o = {.has_summaries = 1, .summary_mapping = (tschunk_mapping_kind)bad[i].kind,
                                     .summary_gamma = bad[i].gamma, .summary_offset = bad[i].offset};
        cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), TSC_ERROR(BAD_PARAMETER), "case %zu", i);
        cr_assert_eq(tschunk_segment_writer_create_io(&w, &io, &o), TSC_ERROR(BAD_PARAMETER), "case %zu", i);
        o.has_summaries = 0; /* without summaries the mapping is not read */
        cr_assert_eq(tschunk_segment_writer_create_io(&w, &io, &o), 0, "case %zu", i);
        tschunk_segment_writer_abort(w);
    }
    cr_assert_eq(access(path, F_OK), -1);
    unsigned char chunk[TSCHUNK_BOUND(50)], summary[4096], damaged[4096];
    size_t summary_size, log_size;
    size_t n = chunk_with_summary(chunk, sizeof chunk, summary, sizeof summary, TSCHUNK_MAPPING_CUBIC, &summary_size);
    unsigned char log_chunk[TSCHUNK_BOUND(50)], log_summary[4096];
    size_t log_n = chunk_with_summary(log_chunk, sizeof log_chunk, log_summary, sizeof log_summary,
                                      TSCHUNK_MAPPING_LOGARITHMIC, &log_size);
    memcpy(damaged, summary, summary_size);
    damaged[summary_size - 1] = 0xff; /* the last bin's count: a varint that does not end */
    tschunk_segment_options o = {.has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                 .summary_gamma = st.gamma, .summary_offset = st.index_offset};
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 1, log_chunk, log_n, log_summary, log_size),
                 TSC_ERROR(NOT_MERGEABLE));
    cr_assert(tschunk_is_error(tschunk_segment_writer_add_chunk(w, 2, chunk, n, damaged, summary_size)));
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 3, chunk, n, summary, summary_size), 0);
    size_t size = tschunk_segment_writer_finish(w);
    cr_assert(!tschunk_is_error(size), "%s", tschunk_error_name(size));
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, b.data, b.size, 0, NULL), 0);
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    cr_assert(info.series == 1 && info.chunks == 1 && info.samples == 50);
    tschunk_segment_close(seg);
    free(b.data);
    free(m.buf);
}

/* A name names one series and a series takes one name (0.49.3: a second series named "a" was written, and `cat a`
 * read whichever came first); naming a series again with its own name is a no-op, an empty name is no name. */
Test(segment, names_are_unique_and_given_once)
{
    char path[128];
    snprintf(path, sizeof path, "%s/names.tseg", tmpdir);
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, "", NULL), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_writer_create(&w, path, NULL), 0);
    cr_assert_eq(tschunk_segment_writer_add_series(w, 1, "a", 1), 0);
    cr_assert_eq(tschunk_segment_writer_add_series(w, 1, "a", 1), 0);
    cr_assert_eq(tschunk_segment_writer_add_series(w, 2, "a", 1), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_writer_add_series(w, 1, "b", 1), TSC_ERROR(BAD_PARAMETER));
    cr_assert_eq(tschunk_segment_writer_add_series(w, 3, "", 0), 0);
    cr_assert_eq(tschunk_segment_writer_add_series(w, 4, NULL, 0), 0);
    cr_assert_eq(tschunk_segment_writer_add_series(w, 3, "c", 1), 0); /* it had no name */
    cr_assert_eq(tschunk_segment_writer_add_series(w, 3, "", 0), TSC_ERROR(BAD_PARAMETER));
    /* Past the tables' first sizes: each name once, each again a no-op, each for another id refused. */
    char name[32];
    for (int round = 0; round < 3; round++)
        for (uint64_t id = 10; id < 3000; id++) {
            int len = snprintf(name, sizeof name, "series-%llu", (unsigned long long)id);
            size_t want = round < 2 ? 0 : TSC_ERROR(BAD_PARAMETER);
            cr_assert_eq(tschunk_segment_writer_add_series(w, round < 2 ? id : id + 5000, name, (size_t)len), want,
                         "round %d id %llu", round, (unsigned long long)id);
        }
    unsigned char chunk[TSCHUNK_BOUND(3)];
    int64_t ts[3] = {10, 20, 30};
    double v[3] = {1, 2, 3};
    size_t n = tschunk_encode(chunk, sizeof chunk, ts, v, 3, NULL);
    for (uint64_t id = 1; id <= 4; id++) cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, n, NULL, 0), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open_file(&seg, path, TSCHUNK_SEGMENT_VERIFY, NULL), 0);
    const char *want[] = {"a", NULL, "c", ""};
    for (uint64_t id = 1; id <= 4; id++) {
        size_t ord = tschunk_segment_find_series(seg, id);
        cr_assert(!tschunk_is_error(ord) || !want[id - 1], "id %llu", (unsigned long long)id);
        if (!want[id - 1]) continue;
        const char *got;
        size_t len;
        uint64_t got_id;
        cr_assert_eq(tschunk_segment_series(seg, (uint32_t)ord, &got_id, &got, &len), 0);
        cr_assert(len == strlen(want[id - 1]) && !memcmp(got, want[id - 1], len), "id %llu", (unsigned long long)id);
    }
    cr_assert_eq(tschunk_segment_find_series_name(seg, "series-2999", 11), tschunk_segment_find_series(seg, 2999));
    tschunk_segment_close(seg);
}

/* from > to is an empty range: no chunk overlaps it (0.49.3: the chunk holding both ends was returned), in a full
 * and a lazy open, and range merges skip every chunk. */
Test(segment, a_range_that_ends_before_it_starts_is_empty)
{
    static written w[NSERIES * PER_SERIES];
    char path[128];
    snprintf(path, sizeof path, "%s/empty_range.tseg", tmpdir);
    size_t n = write_segment(path, w, 1);
    tschunk_sketch *acc;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&acc, &so), 0);
    for (unsigned flags = 0; flags <= TSCHUNK_SEGMENT_LAZY; flags += TSCHUNK_SEGMENT_LAZY) {
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open_file(&seg, path, flags, NULL), 0);
        size_t begin, end;
        cr_assert_eq(tschunk_segment_range(seg, 2, INT64_MIN, INT64_MAX, &begin, &end), 0);
        cr_assert_eq(end - begin, PER_SERIES);
        tschunk_segment_chunk_info c;
        cr_assert_eq(tschunk_segment_chunk(seg, begin + 1, &c), 0);
        int64_t mid = c.first_ts + (c.last_ts - c.first_ts) / 2;
        cr_assert_eq(tschunk_segment_range(seg, 2, mid, c.first_ts, &begin, &end), 0);
        cr_assert_eq(begin, end, "flags %u: %zu chunks", flags, end - begin);
        tschunk_range_stats st;
        cr_assert_eq(tschunk_segment_range_merge(seg, TSCHUNK_SEGMENT_ALL_SERIES, c.last_ts, c.first_ts, acc, &st), 0);
        cr_assert(st.chunks_from_summaries == 0 && st.chunks_decoded == 0 && st.samples_decoded == 0);
        tschunk_chunk_ref ref = c.ref;
        cr_assert_eq(tschunk_range_merge(acc, &ref, 1, c.last_ts, c.first_ts, &st), 0);
        cr_assert(st.chunks_skipped == 1 && st.chunks_decoded == 0);
        tschunk_sketch_stats ss;
        tschunk_sketch_get_stats(acc, &ss);
        cr_assert_eq(ss.count, 0);
        tschunk_segment_close(seg);
    }
    tschunk_sketch_free(acc);
    free_written(w, n);
}

/* A segment of one chunk of `series` (samples at 100, 110, ...) written by w, which is finished. */
static size_t finish_with_series(tschunk_segment_writer *w, uint64_t series)
{
    int64_t ts[3] = {100, 110, 120};
    double v[3] = {1, 2, (double)series};
    unsigned char chunk[TSCHUNK_BOUND(3)];
    size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 3, NULL);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, series, chunk, size, NULL, 0), 0);
    return tschunk_segment_writer_finish(w);
}

/* The one series of the segment at path, which must verify. */
static uint64_t only_series_of(const char *path)
{
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0, "%s", path);
    free(b.data);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0, "%s", path);
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    cr_assert_eq(info.series, 1);
    uint64_t id;
    const char *name;
    size_t name_len;
    cr_assert_eq(tschunk_segment_series(seg, 0, &id, &name, &name_len), 0);
    tschunk_segment_close(seg);
    return id;
}

/* 0.52.1: each writer creates its own temporary file (exclusively: O_EXCL). Two writers of one path shared
 * "path.tmp.PID": the second's create emptied the first's file, its abort removed it, and the two finished wrote
 * one file between them. A link planted at that name was followed: the file it named was overwritten. */
Test(segment, writers_of_one_path_keep_their_own_temporary_files)
{
    char path[128], victim[160], link[192];
    tschunk_segment_options o = {.min_ts = 0};
    tschunk_segment_writer *first = new_writer(path, "shared.tseg", &o), *second = new_writer(path, "shared.tseg", &o);
    tschunk_segment_writer_abort(second);
    cr_assert(!tschunk_is_error(finish_with_series(first, 7)), "the other writer's abort took this one's file");
    cr_assert_eq(only_series_of(path), 7);
    first = new_writer(path, "shared.tseg", &o), second = new_writer(path, "shared.tseg", &o);
    cr_assert(!tschunk_is_error(finish_with_series(second, 8)));
    cr_assert_eq(only_series_of(path), 8);
    cr_assert(!tschunk_is_error(finish_with_series(first, 9)));
    cr_assert_eq(only_series_of(path), 9, "the last rename holds the last writer's segment, whole");
    snprintf(victim, sizeof victim, "%s/victim", tmpdir);
    snprintf(link, sizeof link, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(victim, "w");
    cr_assert(f);
    fputs("keep me\n", f);
    fclose(f);
    cr_assert_eq(symlink(victim, link), 0);
    cr_assert(!tschunk_is_error(finish_with_series(new_writer(path, "shared.tseg", &o), 10)));
    cr_assert_eq(only_series_of(path), 10);
    test_file kept = test_read_file(victim);
    cr_assert(kept.size == 8 && !memcmp(kept.data, "keep me\n", 8), "the planted link was followed");
    free(kept.data);
    remove(link);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return st.st_mode & 07777;
}

/* A file replaced by a writer or a delete keeps its permission bits (and group, where the process may set it): a
 * private segment must not come back readable by all. A new file has the umask's default. Until 0.55.1 every
 * replaced file came back 0666 less the umask. */
Test(segment, replaced_files_keep_their_mode)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = 0};
    mode_t mask = umask(022);
    cr_assert(!tschunk_is_error(finish_with_series(new_writer(path, "private.tseg", &o), 1)));
    cr_assert_eq(mode_of(path), 0644, "a new file: 0666 less the umask");
    cr_assert_eq(chmod(path, 0640), 0);
    gid_t other = getegid() == 0 ? 1 : getegid(); /* root may give the file another group */
    cr_assert_eq(chown(path, (uid_t)-1, other), 0);
    cr_assert(!tschunk_is_error(finish_with_series(new_writer(path, "private.tseg", &o), 2)));
    cr_assert_eq(mode_of(path), 0640, "the writer's file: %o", (unsigned)mode_of(path));
    cr_assert_eq(chmod(path, 0600), 0);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0);
    uint64_t deleted = 0;
    cr_assert_eq(tschunk_segment_delete(seg, path, 0, 110, 110, &deleted), 0);
    cr_assert_eq(deleted, 1);
    tschunk_segment_close(seg);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "the deleted file: %o", (unsigned)(st.st_mode & 07777));
    cr_assert_eq(st.st_gid, other, "its group");
    umask(mask);
}

/* Every fsync in this test binary comes here (defined in the executable, it takes the library's calls too), which
 * notes the last file synced and passes the call on to the kernel. */
static struct {
    dev_t dev;
    ino_t ino;
    int dir;
} last_synced;

/* When not 0, a directory's fsync fails with this errno instead (a file system that cannot sync one says EINVAL). */
static int directory_sync_fails_with;

int fsync(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0) {
        last_synced.dev = st.st_dev;
        last_synced.ino = st.st_ino;
        last_synced.dir = S_ISDIR(st.st_mode);
        if (last_synced.dir && directory_sync_fails_with) {
            errno = directory_sync_fails_with;
            return -1;
        }
    }
    return (int)syscall(SYS_fsync, fd);
}

static void assert_last_synced_is_tmpdir(const char *what)
{
    struct stat st;
    cr_assert_eq(stat(tmpdir, &st), 0);
    cr_assert(last_synced.dir && last_synced.dev == st.st_dev && last_synced.ino == st.st_ino,
              "%s: the last fsync was not of the directory holding the file", what);
    memset(&last_synced, 0, sizeof last_synced);
}

/* 0.52.0: finish, delete, compaction and merge to a path sync the directory after their rename (only the file was
 * synced: its name could be lost to a power loss). The CLI commits through lib/segment/durable.c itself since 0.53.0:
 * this checks the library's own paths. */
Test(segment, commits_to_a_path_sync_the_directory)
{
    char path[128], out[160];
    tschunk_segment_options o = {.min_ts = 0};
    cr_assert(!tschunk_is_error(finish_with_series(new_writer(path, "synced.tseg", &o), 3)));
    assert_last_synced_is_tmpdir("finish");
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0);
    uint64_t deleted;
    cr_assert_eq(tschunk_segment_delete(seg, path, 0, 100, 100, &deleted), 0);
    cr_assert_eq(deleted, 1);
    assert_last_synced_is_tmpdir("delete");
    tschunk_segment_close(seg);
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0);
    snprintf(out, sizeof out, "%s/compacted.tseg", tmpdir);
    cr_assert(!tschunk_is_error(tschunk_segment_compact(seg, out, NULL)));
    assert_last_synced_is_tmpdir("compact");
    const tschunk_segment *one[1] = {seg};
    snprintf(out, sizeof out, "%s/merged.tseg", tmpdir);
    cr_assert(!tschunk_is_error(tschunk_segment_merge(one, 1, out, NULL, NULL)));
    assert_last_synced_is_tmpdir("merge");
    tschunk_segment_close(seg);
}

/* A path that names a directory: the writer writes its temporary file beside it, then the rename fails at finish.
 * GENERIC with errno saying why (EISDIR), the temporary file removed, the directory as it was (`make coverage`
 * showed the commit's failure path never run). */
Test(segment, a_finish_onto_a_directory_fails_cleanly)
{
    char path[128], tmp[160], inside[192];
    snprintf(path, sizeof path, "%s/a_directory", tmpdir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    snprintf(inside, sizeof inside, "%s/kept", path);
    cr_assert_eq(mkdir(path, 0700), 0);
    FILE *kept = fopen(inside, "w");
    cr_assert(kept);
    fclose(kept);
    tschunk_segment_writer *w = test_writer_with_one_chunk(path, 1);
    struct stat st;
    cr_assert_eq(stat(tmp, &st), 0, "the temporary file %s while writing", tmp);
    errno = 0;
    size_t got = tschunk_segment_writer_finish(w);
    int failed = errno;
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_GENERIC, "%s", tschunk_error_name(got));
    cr_assert(failed == EISDIR || failed == ENOTEMPTY || failed == EEXIST, "errno %d (%s)", failed, strerror(failed));
    cr_assert_neq(stat(tmp, &st), 0, "%s left behind", tmp);
    cr_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode) && stat(inside, &st) == 0);
    remove(inside);
    rmdir(path);
}

/* Names in tmpdir that hold ".tmp." (a writer's temporary files). */
static int temporary_files_left(void)
{
    DIR *d = opendir(tmpdir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* A directory whose sync fails after the rename: finish and delete say GENERIC with errno saying why, and the file
 * is in place and whole (tschunk.h); a file system that cannot sync a directory at all (EINVAL) is no failure.
 * `make coverage` showed the failing sync never run. */
Test(segment, a_directory_sync_that_fails_leaves_the_file_in_place)
{
    char path[128];
    tschunk_segment_options o = {.min_ts = 0};
    directory_sync_fails_with = EIO;
    errno = 0;
    size_t got = finish_with_series(new_writer(path, "unsynced.tseg", &o), 4);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_GENERIC, "%s", tschunk_error_name(got));
    cr_assert_eq(errno, EIO, "%s", strerror(errno));
    cr_assert_eq(only_series_of(path), 4, "the file is not in place and whole");
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0);
    uint64_t deleted = 0;
    errno = 0;
    got = tschunk_segment_delete(seg, path, 0, 110, 110, &deleted);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_GENERIC, "%s", tschunk_error_name(got));
    cr_assert_eq(errno, EIO, "%s", strerror(errno));
    tschunk_segment_close(seg);
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0);
    int64_t ts[128];
    double v[128];
    cr_assert_eq(series_samples(seg, 0, ts, v, 128), 2, "the delete is not in place");
    cr_assert(ts[0] == 100 && ts[1] == 120);
    tschunk_segment_close(seg);
    cr_assert_eq(temporary_files_left(), 0);
    directory_sync_fails_with = EINVAL;
    cr_assert(!tschunk_is_error(finish_with_series(new_writer(path, "unsynced.tseg", &o), 5)));
    cr_assert_eq(only_series_of(path), 5);
    directory_sync_fails_with = 0;
}

/* Writes the file system refuses part-way (a file size limit, SIGXFSZ ignored, so that they fail with EFBIG, as
 * on a full disk): a delete in place, a compaction, a merge and a writer each say GENERIC with errno EFBIG, and
 * leave no temporary file and no output; the segment deleted from keeps its bytes. The CLI's test of a full disk
 * deletes through tschunk_segment_delete_io, so `make coverage` showed the path delete's failed write never run. */
Test(segment, writes_the_file_system_refuses_lose_nothing, .timeout = 60)
{
    static written w[NSERIES * PER_SERIES];
    char path[128], out[128];
    snprintf(path, sizeof path, "%s/full.tseg", tmpdir);
    snprintf(out, sizeof out, "%s/out.tseg", tmpdir);
    size_t nw = write_segment(path, w, 1);
    blob before = read_all(path);
    cr_assert_gt(before.size, 4 * BUFSIZ, "the segment must outgrow stdio's buffer: %zu bytes", before.size);
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open_file(&seg, path, 0, NULL), 0);
    struct rlimit old, limit;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    limit = old;
    limit.rlim_cur = (rlim_t)(before.size / 2);
    signal(SIGXFSZ, SIG_IGN);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    const tschunk_segment *one[1] = {seg};
    uint64_t deleted;
    for (int step = 0; step < 4; step++) {
        errno = 0;
        size_t got = step == 0   ? tschunk_segment_delete(seg, path, 3, INT64_MIN, INT64_MAX, &deleted)
                     : step == 1 ? tschunk_segment_compact(seg, out, NULL)
                     : step == 2 ? tschunk_segment_merge(one, 1, out, NULL, NULL)
                                 : 0;
        if (step == 3) { /* the writer: what it is given goes out as it comes, so add_chunk may be the one to fail */
            tschunk_segment_writer *sw;
            cr_assert_eq(tschunk_segment_writer_create(&sw, out, NULL), 0);
            for (size_t i = 0; i < nw && !got; i++)
                got = tschunk_segment_writer_add_chunk(sw, w[i].series, w[i].chunk, w[i].chunk_size, NULL, 0);
            if (got) tschunk_segment_writer_abort(sw);
            else got = tschunk_segment_writer_finish(sw);
        }
        int failed = errno;
        cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_GENERIC, "step %d: %s", step, tschunk_error_name(got));
        cr_assert_eq(failed, EFBIG, "step %d: %s", step, strerror(failed));
        cr_assert_eq(temporary_files_left(), 0, "step %d left a temporary file", step);
        cr_assert_neq(access(out, F_OK), 0, "step %d left its output", step);
    }
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    tschunk_segment_close(seg);
    blob after = read_all(path);
    cr_assert(after.size == before.size && !memcmp(after.data, before.data, before.size), "the segment changed");
    free(before.data);
    free(after.data);
    free_written(w, nw);
}

/* Every temporary name a writer tries (path.tmp.PID, then .1 to .999) taken by someone else: create says GENERIC
 * with errno EEXIST, and removes none of them (`make coverage` showed the last try never run). */
Test(segment, a_writer_with_every_temporary_name_taken_fails_cleanly)
{
    char path[128], tmp[192];
    snprintf(path, sizeof path, "%s/crowded.tseg", tmpdir);
    for (unsigned k = 0; k < 1000; k++) {
        int n = k ? snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), k)
                  : snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
        cr_assert(n > 0 && (size_t)n < sizeof tmp);
        FILE *f = fopen(tmp, "w");
        cr_assert(f, "%s", tmp);
        fclose(f);
    }
    tschunk_segment_writer *w = NULL;
    errno = 0;
    size_t got = tschunk_segment_writer_create(&w, path, NULL);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_GENERIC, "%s", tschunk_error_name(got));
    cr_assert_eq(errno, EEXIST, "%s", strerror(errno));
    cr_assert_eq(temporary_files_left(), 1000, "a name someone else holds was removed");
    cr_assert_neq(access(path, F_OK), 0);
    cr_assert_eq(remove(tmp), 0); /* the last name free: the writer takes it */
    cr_assert(!tschunk_is_error(finish_with_series(new_writer(path, "crowded.tseg", NULL), 6)));
    cr_assert_eq(only_series_of(path), 6);
    cr_assert_eq(temporary_files_left(), 999);
}
