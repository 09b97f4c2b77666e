/* Segments: many series' chunks in one checksummed, indexed file. */
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

typedef struct {
    unsigned char *data;
    size_t size;
} blob;

static blob read_all(const char *path)
{
    blob b = {0, 0};
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    b.size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = malloc(b.size + 1);
    cr_assert_eq(fread(b.data, 1, b.size, f), b.size);
    fclose(f);
    return b;
}

/* What the test wrote, to compare with what the reader finds. */
typedef struct {
    uint64_t series;
    int64_t first, last;
    unsigned char *chunk, *summary;
    size_t chunk_size, summary_size;
} written;

#define NSERIES 40
#define PER_SERIES 6

static size_t write_segment(const char *path, written *w, int with_summaries)
{
    tschunk_sketch *sk = NULL;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    /* 1 s before the first scrape: the synthetic jitter reaches 5 ms before it. */
    tschunk_segment_options o = {INT64_C(1699999999000), (uint32_t)with_summaries, TSCHUNK_MAPPING_CUBIC, st.gamma,
                                 st.index_offset, {0, 0, 0}};
    tschunk_segment_writer *sw;
    cr_assert_eq(tschunk_segment_writer_create(&sw, path, &o), 0);
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

static void free_written(written *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(w[i].chunk);
        free(w[i].summary);
    }
}

static char tmpdir[64];

static void make_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tschunk-seg-XXXXXX");
    cr_assert(mkdtemp(tmpdir));
}

static void rm_tmp(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

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

Test(segment, every_bit_flip_and_truncation_is_detected, .timeout = 120)
{
    /* A small segment: two series, two chunks each, no summaries. */
    char path[128];
    snprintf(path, sizeof path, "%s/small.tseg", tmpdir);
    tschunk_segment_options o = {0, 0, TSCHUNK_MAPPING_LOGARITHMIC, 0, 0, {0, 0, 0}};
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
    blob b = read_all(path);
    cr_assert_eq(tschunk_segment_verify(b.data, b.size, NULL), 0);
    unsigned char *copy = malloc(b.size);
    for (size_t bit = 0; bit < b.size * 8; bit++) {
        memcpy(copy, b.data, b.size);
        copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        size_t at;
        cr_assert(tschunk_is_error(tschunk_segment_verify(copy, b.size, &at)), "flip of bit %zu undetected", bit);
    }
    for (size_t len = 0; len < b.size; len++) {
        unsigned char *cut = malloc(len ? len : 1);
        memcpy(cut, b.data, len);
        cr_assert(tschunk_is_error(tschunk_segment_verify(cut, len, NULL)), "truncation at %zu undetected", len);
        tschunk_segment *seg;
        cr_assert(tschunk_is_error(tschunk_segment_open(&seg, cut, len, 0, NULL)));
        free(cut);
    }
    free(copy);
    free(b.data);
}

Test(segment, writer_refusals_and_no_torn_file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/r.tseg", tmpdir);
    tschunk_segment_options o = {1000, 1, TSCHUNK_MAPPING_CUBIC, 1.02, 0, {0, 0, 0}};
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
}
