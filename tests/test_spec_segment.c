/* The README's segment reader (tests/spec_segment.h) against the library: segments the library writes and deletes
 * from, every truncation and bit flip of them, and every bit flip with the checksums made right again, so that the
 * format's structure rules alone decide; and the CLI on a segment whose chunk is damaged under right checksums. */
#include "cli_util.h"
#include "test_util.h"
#include "spec_segment.h"

static char spec_tmp[64];

static void make_spec_tmp(void) { test_dir_make(spec_tmp, sizeof spec_tmp, "spec"); }
static void rm_spec_tmp(void) { test_dir_remove(spec_tmp); }

TestSuite(spec_segment, .init = make_spec_tmp, .fini = rm_spec_tmp);

typedef test_file spec_file;

static spec_file spec_read_file(const char *path) { return test_read_file(path); }

/* What a segment holds, as shapes: series, chunks per series, samples per chunk, summaries or not, the records
 * group (through the chunk sizes), and deletions. */
typedef struct {
    unsigned series, chunks_each, samples, with_summaries, summary_block;
    int delete_series; /* -1: none */
    int64_t delete_from, delete_to;
} spec_shape;

static spec_file spec_write(const spec_shape *shape, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.tseg", spec_tmp, name);
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(sk, &st);
    tschunk_segment_options o = {.min_ts = 1000, .has_summaries = shape->with_summaries,
                                 .summary_mapping = TSCHUNK_MAPPING_CUBIC, .summary_gamma = st.gamma,
                                 .summary_offset = st.index_offset, .ts_unit = TSCHUNK_UNIT_MS,
                                 .summary_block_chunks = shape->summary_block};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    uint8_t chunk[TSCHUNK_BOUND(1024)], summary[1 << 16];
    uint64_t rng = 7;
    /* Chunks arrive series-interleaved, and one series of three out of time order: the index's every field
     * (ordinal steps, predictions, offsets that jump back) gets used. */
    for (unsigned c = 0; c < shape->chunks_each; c++) {
        for (unsigned k = 0; k < shape->series; k++) {
            unsigned at = k % 3 == 2 ? shape->chunks_each - 1 - c : c;
            uint64_t id = k % 5 == 4 ? UINT64_MAX - k : UINT64_C(0x9e3779b97f4a7c15) * (k + 1) >> 8;
            tschunk_encoder_options eo = {.codec = k % 4 == 1 ? TSCHUNK_CODEC_GORILLA : TSCHUNK_CODEC_TSC2};
            tschunk_encoder enc;
            cr_assert_eq(tschunk_encoder_init(&enc, chunk, sizeof chunk, &eo), 0);
            if (shape->with_summaries) tschunk_encoder_set_summary(&enc, sk);
            int64_t t = 1000 + (int64_t)(at * shape->samples) * 15000 + (int64_t)(k % 7);
            for (unsigned i = 0; i < shape->samples; i++) {
                t += 15000 + (int64_t)(wl_rng(&rng) % 11) - 5;
                double v = k % 2 ? (double)(wl_rng(&rng) % 10000) / 100 : (double)(c * shape->samples + i);
                cr_assert_eq(tschunk_append(&enc, t, v), 0);
            }
            size_t size = tschunk_encoder_finish(&enc), summary_size = 0;
            if (shape->with_summaries)
                summary_size = tschunk_encoder_write_summary(&enc, summary, sizeof summary);
            cr_assert_eq(tschunk_segment_writer_add_chunk(w, id, chunk, size, shape->with_summaries ? summary : NULL,
                                                          summary_size), 0);
            if (c == 0 && k % 4 != 3) {
                char label[48];
                int len = snprintf(label, sizeof label, "series_%u{k=\"%u\"}", k, k * 7);
                cr_assert_eq(tschunk_segment_writer_add_series(w, id, label, (size_t)len), 0);
            }
        }
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    tschunk_sketch_free(sk);
    if (shape->delete_series >= 0) {
        spec_file before = spec_read_file(path);
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open(&seg, before.data, before.size, 0, NULL), 0);
        uint64_t deleted;
        cr_assert_eq(tschunk_segment_delete(seg, path, (uint32_t)shape->delete_series, shape->delete_from,
                                            shape->delete_to, &deleted), 0);
        cr_assert_gt(deleted, 0);
        tschunk_segment_close(seg);
        free(before.data);
    }
    return spec_read_file(path);
}

/* verify and the README reader on the same bytes: both refuse, or both read them, alike. @return 1 when both
 * read them. */
static int spec_segment_agrees(const uint8_t *p, size_t size, const char *what, size_t at)
{
    specseg s;
    int rc = specseg_read(&s, p, size, SPECSEG_CHECK_HASHES);
    size_t lib = tschunk_segment_verify(p, size, NULL);
    if ((rc == 0) != (lib == 0) && getenv("SPEC_DUMP")) {
        FILE *d = fopen(getenv("SPEC_DUMP"), "wb");
        fwrite(p, 1, size, d);
        fclose(d);
    }
    cr_assert_eq(rc == 0, lib == 0, "%s (%zu): README reader %s (line %d), library %s", what, at,
                 rc ? "refuses it" : "reads it", -rc, lib ? tschunk_error_name(lib) : "reads it");
    if (rc == 0) {
        int line = specseg_same_as_library(&s, p, size);
        cr_assert_eq(line, 0, "%s (%zu): the library's reader parts at spec_segment.h:%d", what, at, line);
    }
    specseg_free(&s);
    return rc == 0;
}

static const spec_shape spec_shapes[] = {
    /* Two series blocks, three index blocks, records grouped by 64; a series loses samples in two chunks. */
    {.series = 70, .chunks_each = 2, .samples = 30, .delete_series = 3, .delete_from = 0, .delete_to = 600000},
    /* Summaries with stored block summaries of 2 chunks, one series with deletions (its blocks not
     * recomputed), 1,024-sample records (groups of fewer records). */
    {.series = 5, .chunks_each = 5, .samples = 1024, .with_summaries = 1, .summary_block = 2, .delete_series = 1,
     .delete_from = 40000000, .delete_to = 45000000},
    /* One series, one chunk, nothing else. */
    {.series = 1, .chunks_each = 1, .samples = 1, .delete_series = -1},
};

Test(spec_segment, reads_what_the_library_writes)
{
    for (size_t k = 0; k < sizeof spec_shapes / sizeof spec_shapes[0]; k++) {
        char name[16];
        snprintf(name, sizeof name, "shape%zu", k);
        spec_file f = spec_write(&spec_shapes[k], name);
        cr_assert(spec_segment_agrees(f.data, f.size, name, 0), "%s: refused", name);
        free(f.data);
    }
}

/* Compacted, each shape with deletions reads alike again (the records encoded again included), and its stored
 * block summaries are the source's blocks (the block size kept) over chunks that all answer again. */
Test(spec_segment, reads_compacted_segments)
{
    size_t blocks_kept = 0;
    for (size_t k = 0; k < sizeof spec_shapes / sizeof spec_shapes[0]; k++) {
        if (spec_shapes[k].delete_series < 0) continue;
        char name[24], path[128];
        snprintf(name, sizeof name, "compact%zu", k);
        spec_file f = spec_write(&spec_shapes[k], name);
        tschunk_segment *seg;
        cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0);
        snprintf(path, sizeof path, "%s/%s.compacted.tseg", spec_tmp, name);
        tschunk_segment_compact_stats st;
        cr_assert(!tschunk_is_error(tschunk_segment_compact(seg, path, &st)));
        cr_assert_gt(st.chunks_rewritten, 0);
        spec_file c = spec_read_file(path);
        cr_assert(spec_segment_agrees(c.data, c.size, name, 0), "%s: refused", name);
        tschunk_segment *out;
        cr_assert_eq(tschunk_segment_open(&out, c.data, c.size, 0, NULL), 0);
        tschunk_segment_info before, after;
        tschunk_segment_get_info(seg, &before);
        tschunk_segment_get_info(out, &after);
        cr_assert(after.deleted == 0 && after.chunks == before.chunks - st.chunks_dropped);
        cr_assert(st.chunks_dropped || after.summary_blocks == before.summary_blocks,
                  "%s: %u -> %u stored block summaries", name, before.summary_blocks, after.summary_blocks);
        blocks_kept += !st.chunks_dropped && after.summary_blocks > 0;
        tschunk_segment_close(out);
        tschunk_segment_close(seg);
        free(c.data);
        free(f.data);
    }
    cr_assert_gt(blocks_kept, 0);
}

/* The real bytes of versions 1 and 2 (tests/vectors/segment/, written by 0.5.0 and 0.13.0, each with deletions):
 * read alike, and every single flip with the checksums made right read alike. */
static void old_version_read_alike(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/segment/%s", repo_dir(), file);
    spec_file f = spec_read_file(path);
    cr_assert(spec_segment_agrees(f.data, f.size, file, 0), "%s: refused", file);
    uint8_t *copy = malloc(f.size);
    size_t read_both = 0;
    for (size_t bit = 0; bit < 8 * f.size; bit++) {
        memcpy(copy, f.data, f.size);
        copy[bit / 8] ^= (uint8_t)(1u << bit % 8);
        specseg_rehash(copy, f.size);
        read_both += (size_t)spec_segment_agrees(copy, f.size, file, bit);
    }
    cr_assert_gt(read_both, 0);
    free(copy);
    free(f.data);
}

Test(spec_segment, version_1_read_alike, .timeout = 300) { old_version_read_alike("v1_small.tseg"); }
Test(spec_segment, version_2_read_alike, .timeout = 300) { old_version_read_alike("v2_small.tseg"); }

/* v1/v2 entries code first_ts as first_rel past the header's min_ts and last_ts as a span past first_ts: with min_ts
 * raised near INT64_MAX (checksums made right), the sums leave int64 and the entries are refused, by a full open, by
 * a lazy one and by the README reader. (A wrapped sum would land before min_ts, refused on its own: with the overflow
 * check taken out the test still passes; it pins the outcome, not that rule.) */
static void old_entries_past_int64_refused(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/segment/%s", repo_dir(), file);
    spec_file f = spec_read_file(path);
    const int64_t near_top[] = {INT64_MAX, INT64_MAX - 1};
    for (size_t k = 0; k < 2; k++) {
        specseg_put_u64(f.data + 8, (uint64_t)near_top[k]);
        specseg_rehash(f.data, f.size);
        cr_assert(!spec_segment_agrees(f.data, f.size, file, k), "%s: min_ts %lld read", file, (long long)near_top[k]);
        size_t got = tschunk_segment_verify(f.data, f.size, NULL);
        cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s: %s", file, tschunk_error_name(got));
        for (unsigned lazy = 0; lazy < 2; lazy++) {
            tschunk_segment *seg = NULL;
            got = tschunk_segment_open(&seg, f.data, f.size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL);
            if (!got) { /* a lazy open reads entries when asked */
                size_t begin, end;
                got = tschunk_segment_range(seg, 0, INT64_MIN, INT64_MAX, &begin, &end);
                tschunk_segment_close(seg);
            }
            cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s, lazy %u: %s", file, lazy,
                         tschunk_error_name(got));
        }
    }
    free(f.data);
}

Test(spec_segment, version_1_entries_past_int64_refused) { old_entries_past_int64_refused("v1_small.tseg"); }
Test(spec_segment, version_2_entries_past_int64_refused) { old_entries_past_int64_refused("v2_small.tseg"); }

/* Small segments whose every bit is tried: without and with summaries, each with deletions. */
static const spec_shape spec_small[] = {
    {.series = 3, .chunks_each = 2, .samples = 4, .delete_series = 0, .delete_from = 0, .delete_to = 70000},
    {.series = 2, .chunks_each = 3, .samples = 3, .with_summaries = 1, .summary_block = 2, .delete_series = 1,
     .delete_from = 0, .delete_to = 40000},
};

Test(spec_segment, every_truncation_and_bit_flip_refused_alike, .timeout = 300)
{
    for (size_t k = 0; k < sizeof spec_small / sizeof spec_small[0]; k++) {
        spec_file f = spec_write(&spec_small[k], "small");
        uint8_t *copy = malloc(f.size);
        for (size_t len = 0; len < f.size; len++) spec_segment_agrees(f.data, len, "truncated at", len);
        for (size_t bit = 0; bit < 8 * f.size; bit++) {
            memcpy(copy, f.data, f.size);
            copy[bit / 8] ^= (uint8_t)(1u << bit % 8);
            cr_assert(!spec_segment_agrees(copy, f.size, "bit flipped", bit));
        }
        free(copy);
        free(f.data);
    }
}

/* Damage with every checksum then made right: what decides is the README's rules against the library's. `flips`
 * bits at once, `trials` times at random (0: every single bit in turn). @return how many both read. */
static size_t flips_read_alike(const spec_shape *shape, unsigned flips, size_t trials)
{
    spec_file f = spec_write(shape, "small");
    uint8_t *copy = malloc(f.size);
    size_t read_both = 0, runs = trials ? trials : 8 * f.size;
    uint64_t rng = 42;
    for (size_t t = 0; t < runs; t++) {
        memcpy(copy, f.data, f.size);
        for (unsigned k = 0; k < flips; k++) {
            size_t bit = trials ? (size_t)(wl_rng(&rng) % (8 * f.size)) : t;
            copy[bit / 8] ^= (uint8_t)(1u << bit % 8);
        }
        specseg_rehash(copy, f.size);
        read_both += (size_t)spec_segment_agrees(copy, f.size, "flipped and rehashed", t);
    }
    free(copy);
    free(f.data);
    return read_both;
}

Test(spec_segment, every_bit_flip_with_checksums_made_right_read_alike, .timeout = 600)
{
    /* Flips in values, names and timestamps both sides read back: the test is not vacuous. */
    for (size_t k = 0; k < sizeof spec_small / sizeof spec_small[0]; k++)
        cr_assert_gt(flips_read_alike(&spec_small[k], 1, 0), 0);
}

/* Rules a single flip cannot isolate: a field and the one it must agree with, changed together. */
Test(spec_segment, pairs_and_triples_of_flips_with_checksums_made_right_read_alike, .timeout = 600)
{
    for (size_t k = 0; k < sizeof spec_small / sizeof spec_small[0]; k++) {
        flips_read_alike(&spec_small[k], 2, 20000);
        flips_read_alike(&spec_small[k], 3, 20000);
    }
}

/* The checksums a change in the header or the fences moves (not the fences' own block hashes, which cover the
 * blocks): the header's, the lazy and metadata hashes, the footer's. */
static void rehash_header_and_footer(uint8_t *p, size_t size)
{
    specseg_put_u64(p + 40, XXH3_64bits(p, 40));
    uint8_t *f = p + size - 144;
    uint64_t series_off = specseg_u64(f), fences = specseg_u64(f + 32);
    specseg_put_u64(f + 112, XXH3_64bits(p + series_off, (size_t)(size - 144 - series_off)));
    specseg_put_u64(f + 120, XXH3_64bits(p + fences, (size_t)(size - 144 - fences)));
    specseg_put_u64(f + 136, XXH3_64bits(f, 136));
}

/* The checksums a change in the header or inside the index moves: the index block's fence (one series block, then
 * the one index block), then the header's, the lazy and metadata hashes, the footer's. */
static void rehash_index_tail(uint8_t *p, size_t size)
{
    const uint8_t *f = p + size - 144;
    uint64_t index_off = specseg_u64(f + 16), index_len = specseg_u64(f + 24), fences = specseg_u64(f + 32);
    specseg_put_u64(p + fences + 24 + 16, XXH3_64bits(p + index_off, (size_t)index_len));
    rehash_header_and_footer(p, size);
}

/* README: bit 6's byte holds two differences "only when both are 1-15 zigzagged". Before 0.29.3 the library read a
 * zero nibble as "no difference", a second spelling of an entry the README does not allow. */
Test(spec_segment, a_jitter_byte_with_a_zero_nibble_is_refused)
{
    char path[128];
    snprintf(path, sizeof path, "%s/nibble.tseg", spec_tmp);
    tschunk_segment_options o = {.summary_mapping = TSCHUNK_MAPPING_CUBIC};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    /* The second chunk starts where the first one's step predicts (50) and spans one more (41): its entry is
     * flags 0x08 (span differs) and the zigzagged difference 2, which a jitter byte 0x20 would say too. */
    for (int c = 0; c < 2; c++) {
        int64_t ts[5];
        double v[5];
        for (int i = 0; i < 5; i++) {
            ts[i] = 50 * c + 10 * i + (c == 1 && i == 4);
            v[i] = i;
        }
        uint8_t chunk[TSCHUNK_BOUND(5)];
        size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 5, NULL);
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, 1, chunk, size, NULL, 0), 0);
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    spec_file f = spec_read_file(path);
    const uint8_t *footer = f.data + f.size - 144;
    uint8_t *index = f.data + specseg_u64(footer + 16), *second = NULL;
    for (uint8_t *q = index; q + 1 < index + specseg_u64(footer + 24); q++)
        if (q[0] == 0x08 && q[1] == 0x02) second = q;
    cr_assert(second, "the second entry's span field");
    cr_assert_eq(tschunk_segment_verify(f.data, f.size, NULL), 0);
    second[0] = 0x40;
    second[1] = 0x20;
    rehash_index_tail(f.data, f.size);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_verify(f.data, f.size, NULL)), TSCHUNK_ERROR_CORRUPT);
    spec_segment_agrees(f.data, f.size, "a zero nibble", 0);
    free(f.data);
}

/* The rules one change cannot reach: a field and the one it must agree with, changed together. The segment holds
 * one chunk of series 1 and, with a name, names series named_id. */
static spec_file spec_one_chunk_segment(const char *file, int64_t first_ts, uint64_t named_id, const char *name,
                                        size_t name_len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.tseg", spec_tmp, file);
    tschunk_segment_options o = {.summary_mapping = TSCHUNK_MAPPING_CUBIC};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    int64_t ts[3] = {first_ts, first_ts + 10, first_ts + 20};
    double v[3] = {1, 2, 3};
    uint8_t chunk[TSCHUNK_BOUND(3)];
    size_t size = tschunk_encode(chunk, sizeof chunk, ts, v, 3, NULL);
    cr_assert_eq(tschunk_segment_writer_add_chunk(w, 1, chunk, size, NULL, 0), 0);
    if (name_len == 4096) /* the longest name it takes, from a buffer of 4,097 bytes: one more is refused */
        cr_assert_neq(tschunk_segment_writer_add_series(w, named_id, name, 4097), 0);
    if (name) cr_assert_eq(tschunk_segment_writer_add_series(w, named_id, name, name_len), 0);
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    spec_file f = spec_read_file(path);
    cr_assert_eq(tschunk_segment_verify(f.data, f.size, NULL), 0);
    spec_segment_agrees(f.data, f.size, file, 0);
    return f;
}

/* min_ts 100 past the chunk and its entry's first_ts coded 100 below it: the entry still names the chunk's own
 * first timestamp, which lies before "the segment's minimum timestamp". */
Test(spec_segment, a_chunk_before_min_ts_is_refused)
{
    spec_file f = spec_one_chunk_segment("min_ts", 1000, 0, NULL, 0);
    const uint8_t *footer = f.data + f.size - 144;
    uint8_t *index = f.data + specseg_u64(footer + 16), *first = NULL;
    for (uint8_t *q = index; q + 1 < index + specseg_u64(footer + 24); q++)
        if (q[0] == 0xd0 && q[1] == 0x0f) first = q; /* zigzag(1000 - 0) = 2000 */
    cr_assert(first, "the entry's first_ts field");
    first[0] = 0xc7; /* zigzag(-100) = 199 */
    first[1] = 0x01;
    int64_t min_ts = 1100;
    specseg_put_u64(f.data + 8, (uint64_t)min_ts);
    rehash_index_tail(f.data, f.size);
    cr_assert_eq(tschunk_get_error_code(tschunk_segment_verify(f.data, f.size, NULL)), TSCHUNK_ERROR_CORRUPT);
    spec_segment_agrees(f.data, f.size, "a chunk before min_ts", 0);
    free(f.data);
}

/* A record of a segment with summaries must carry one: a summary length of 0 is refused by verify, by a read of the
 * chunk and by the README reader, checksums made right. Since 0.57.2 that includes the record's group hash (the
 * README reader's fixing stopped at a record whose parts did not parse, so the group hash refused the read before the
 * length rule was reached: `make coverage` showed the rule's line never run). The summary's bytes, now read as the
 * chunk's, would fail the chunk's own checks too. */
Test(spec_segment, a_record_with_an_empty_summary_is_refused)
{
    static const spec_shape shape = {.series = 1, .chunks_each = 1, .samples = 3, .with_summaries = 1,
                                     .delete_series = -1};
    spec_file f = spec_write(&shape, "empty_summary");
    uint64_t len = 0;
    size_t pos = 48; /* the first record, after the 48-byte header */
    cr_assert(!spec_uvarint(f.data, f.size, &pos, &len) && pos == 49 && len > 0 && len < 128, "length %llu",
              (unsigned long long)len);
    f.data[48] = 0; /* the summary's bytes now read as the chunk's first ones */
    specseg_rehash(f.data, f.size);
    size_t got = tschunk_segment_verify(f.data, f.size, NULL);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s", tschunk_error_name(got));
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0, "the index and footer still hold");
    tschunk_segment_chunk_info c;
    got = tschunk_segment_chunk(seg, 0, &c);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s", tschunk_error_name(got));
    tschunk_segment_close(seg);
    spec_segment_agrees(f.data, f.size, "an empty summary", 0);
    free(f.data);
}

/* f (format v3) with its section k (1: the index of one block, 3: block summaries, 4: series bitmap, 5: tombstones;
 * the footer's order) replaced by bytes, the sections after it moved, every checksum made right. */
static uint8_t *with_section(const spec_file *f, int k, const uint8_t *bytes, uint64_t len, size_t *size)
{
    const uint8_t *footer = f->data + f->size - 144;
    uint64_t at = specseg_u64(footer + 16 * k), end = at + specseg_u64(footer + 16 * k + 8);
    uint64_t tail = f->size - 144 - end, moved = at + len;
    *size = (size_t)(moved + tail + 144);
    uint8_t *out = malloc(*size);
    memcpy(out, f->data, (size_t)at);
    memcpy(out + at, bytes, (size_t)len);
    memcpy(out + moved, f->data + end, (size_t)tail);
    uint8_t *new_footer = out + *size - 144;
    memcpy(new_footer, footer, 144);
    specseg_put_u64(new_footer + 16 * k + 8, len);
    for (int later = k + 1; later < 6; later++) {
        uint64_t off = specseg_u64(footer + 16 * later) - end + moved;
        specseg_put_u64(new_footer + 16 * later, off);
    }
    rehash_index_tail(out, *size);
    return out;
}

static uint8_t *with_bitmap(const spec_file *f, const uint8_t *blob, uint64_t blob_len, size_t *size)
{
    return with_section(f, 4, blob, blob_len, size);
}

/* A stored block summary's blob length must be at least 1. Its chunks have deleted samples, so nobody recomputes
 * the block: only this rule refuses it. */
Test(spec_segment, an_empty_block_summary_blob_is_refused)
{
    static const spec_shape shape = {.series = 1, .chunks_each = 3, .samples = 3, .with_summaries = 1,
                                     .summary_block = 3, .delete_series = 0, .delete_from = 0, .delete_to = 16000};
    spec_file f = spec_write(&shape, "empty_block");
    const uint8_t *footer = f.data + f.size - 144;
    const uint8_t *blocks = f.data + specseg_u64(footer + 48);
    size_t blocks_len = (size_t)specseg_u64(footer + 56), pos = 0, size;
    uint64_t first = 0, count = 0, len = 0;
    cr_assert(!spec_uvarint(blocks, blocks_len, &pos, &first) && !spec_uvarint(blocks, blocks_len, &pos, &count) &&
              !spec_uvarint(blocks, blocks_len, &pos, &len) && pos + len == blocks_len && count == 3);
    /* The surgery with the section's own bytes reads: what is refused below is the empty blob. */
    uint8_t *out = with_section(&f, 3, blocks, blocks_len, &size);
    cr_assert_eq(tschunk_segment_verify(out, size, NULL), 0);
    free(out);
    const uint8_t empty[3] = {(uint8_t)first, (uint8_t)count, 0};
    out = with_section(&f, 3, empty, sizeof empty, &size);
    size_t got = tschunk_segment_verify(out, size, NULL);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s", tschunk_error_name(got));
    spec_segment_agrees(out, size, "an empty block summary blob", 0);
    free(out);
    free(f.data);
}

/* The series bitmap must hold exactly the ordinals with chunks: here it also names the series that has none. */
Test(spec_segment, a_series_bitmap_naming_a_series_without_chunks_is_refused)
{
    spec_file f = spec_one_chunk_segment("bitmap", 1000, 2, "named, no chunk", 15);
    const uint8_t *footer = f.data + f.size - 144;
    size_t size;
    /* The surgery with the bitmap's own bytes ({0}) reads: what is refused below is the extra ordinal. */
    uint8_t *out = with_bitmap(&f, f.data + specseg_u64(footer + 64), specseg_u64(footer + 72), &size);
    cr_assert_eq(size, f.size);
    cr_assert_eq(tschunk_segment_verify(out, size, NULL), 0);
    free(out);
    /* {0, 1}: cookie 12346, one container (key 0, cardinality 2) at offset 16, an array of 0 and 1. */
    const uint8_t both[20] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 16, 0, 0, 0, 0, 0, 1, 0};
    out = with_bitmap(&f, both, sizeof both, &size);
    size_t got = tschunk_segment_verify(out, size, NULL);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s", tschunk_error_name(got));
    spec_segment_agrees(out, size, "a series bitmap with an extra ordinal", 0);
    free(out);
    free(f.data);
}

/* README "Summary blob v1" read alike by the README reader's parser and tschunk_summary_parse: summaries of chunks
 * with NaNs, infinities, one sample and negative times, and every truncation and bit flip of them. */
static void summary_read_alike(const uint8_t *blob, size_t size, const char *what, size_t at)
{
    specseg_summary spec;
    tschunk_summary_info lib;
    int rc = specseg_summary_parse(blob, size, &spec);
    size_t got = tschunk_summary_parse(blob, size, &lib);
    cr_assert_eq(rc == 0, got == 0, "%s (%zu): README parser %s (line %d), library %s", what, at,
                 rc ? "refuses it" : "reads it", -rc, got ? tschunk_error_name(got) : "reads it");
    if (rc) return;
    cr_assert(spec.count == lib.count && spec.first_ts == lib.first_ts && spec.last_ts == lib.last_ts &&
                  spec.nan_count == lib.nan_count && spec.inf_count == lib.inf_count && spec.sketch == lib.sketch &&
                  spec.sketch_size == lib.sketch_size,
              "%s (%zu): fields", what, at);
}

Test(spec_segment, summary_blobs_read_alike)
{
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    const double special[] = {NAN, INFINITY, -INFINITY, 1e300, -0.0, 2.5};
    /* One sample; a ramp; special values; a ramp ending at INT64_MAX (flips past it must be refused). */
    for (unsigned shape = 0; shape < 4; shape++) {
        uint8_t chunk[TSCHUNK_BOUND(200)], blob[1 << 16], damaged[1 << 16];
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, chunk, sizeof chunk, NULL), 0);
        cr_assert_eq(tschunk_encoder_set_summary(&enc, sk), 0);
        unsigned n = shape == 0 ? 1 : 200;
        for (unsigned i = 0; i < n; i++) {
            double v = shape == 2 ? special[i % 6] : (double)i * 0.25 - 3;
            int64_t t = shape == 3 ? INT64_MAX - 1000 * (int64_t)(n - 1 - i) : -5000 + 1000 * (int64_t)i * (shape + 1);
            cr_assert_eq(tschunk_append(&enc, t, v), 0);
        }
        tschunk_encoder_finish(&enc);
        size_t size = tschunk_encoder_write_summary(&enc, blob, sizeof blob);
        cr_assert(!tschunk_is_error(size));
        summary_read_alike(blob, size, "summary", shape);
        for (size_t len = 0; len < size; len++) summary_read_alike(blob, len, "truncated at", len);
        for (size_t bit = 0; bit < 8 * size; bit++) {
            memcpy(damaged, blob, size);
            damaged[bit / 8] ^= (uint8_t)(1u << bit % 8);
            summary_read_alike(damaged, size, "bit flipped", bit);
        }
    }
    tschunk_sketch_free(sk);
}

/* A name is at most 4,096 bytes. The library's writer refuses a longer one, so the test writes the longest it takes
 * and makes it one byte longer by hand: the series table grows by a byte, the sections after it move, and every
 * checksum is made right, so that only the length rule refuses it. */
Test(spec_segment, a_name_over_4096_bytes_is_refused)
{
    static char name[4097];
    memset(name, 'n', sizeof name);
    spec_file f = spec_one_chunk_segment("long_name", 1000, 1, name, 4096);
    const uint8_t *footer = f.data + f.size - 144;
    const uint8_t *table = f.data + specseg_u64(footer);
    /* id 1, then the length 4,096 as a uvarint (0x80 0x20) and the name. */
    cr_assert(specseg_u64(footer + 8) == 3 + 4096 && table[0] == 1 && table[1] == 0x80 && table[2] == 0x20);
    uint8_t longer[3 + 4097] = {1, 0x81, 0x20};
    memset(longer + 3, 'n', 4097);
    for (unsigned len = 4096; len <= 4097; len++) {
        size_t size;
        uint8_t *out = with_section(&f, 0, longer, 3 + len, &size);
        out[specseg_u64(out + size - 144) + 1] = (uint8_t)(0x80 | (len & 0x7f));
        specseg_rehash(out, size);
        size_t got = tschunk_segment_verify(out, size, NULL);
        /* 4,096 rewritten the same way reads: what is refused at 4,097 is the length. */
        cr_assert_eq(tschunk_get_error_code(got), len == 4096 ? TSCHUNK_OK : TSCHUNK_ERROR_CORRUPT, "%u: %s",
                     len, tschunk_error_name(got));
        spec_segment_agrees(out, size, "a name of", len);
        free(out);
    }
    free(f.data);
}

/* A stored block summary covers at most 4,096 chunks. One of 4,096 made to say 4,097 (the uvarint keeps its length);
 * a chunk of the block has a deleted sample, so nobody recombines the block: only the count rule refuses it. */
Test(spec_segment, a_block_summary_over_4096_chunks_is_refused, .timeout = 300)
{
    static const spec_shape shape = {.series = 1, .chunks_each = 4097, .samples = 2, .with_summaries = 1,
                                     .summary_block = 4096, .delete_series = 0, .delete_from = 0, .delete_to = 16010};
    spec_file f = spec_write(&shape, "big_block");
    cr_assert_eq(tschunk_segment_verify(f.data, f.size, NULL), 0);
    const uint8_t *footer = f.data + f.size - 144;
    uint8_t *blocks = f.data + specseg_u64(footer + 48);
    /* first 0, count 4,096 (0x80 0x20): the one block; chunk 4,096 is left alone. */
    cr_assert(blocks[0] == 0 && blocks[1] == 0x80 && blocks[2] == 0x20);
    for (unsigned count = 4096; count <= 4097; count++) {
        blocks[1] = (uint8_t)(0x80 | (count & 0x7f));
        specseg_rehash(f.data, f.size);
        size_t got = tschunk_segment_verify(f.data, f.size, NULL);
        cr_assert_eq(tschunk_get_error_code(got), count == 4096 ? TSCHUNK_OK : TSCHUNK_ERROR_CORRUPT,
                     "%u: %s", count, tschunk_error_name(got));
        spec_segment_agrees(f.data, f.size, "a block summary of", count);
    }
    free(f.data);
}

/* The offset of the only place in p where the 8 bytes of v (little-endian) stand; fails unless there is one. */
static size_t only_double_at(const uint8_t *p, size_t size, double v)
{
    uint8_t le[8];
    uint64_t bits;
    memcpy(&bits, &v, 8);
    for (int k = 0; k < 8; k++) le[k] = (uint8_t)(bits >> (8 * k));
    size_t at = SIZE_MAX, found = 0;
    for (size_t i = 0; i + 8 <= size; i++)
        if (!memcmp(p + i, le, 8)) at = i, found++;
    cr_assert_eq(found, 1, "%.17g stands %zu times in the segment", v, found);
    return at;
}

/* 0.55.0: a block summary's SUM is Kahan's sum plus its compensation, as the reference libraries give it; a segment
 * written before holds Kahan's sum alone, which verify (and the README reader) still take, and nothing else. Two
 * one-sample chunks whose sums make a tie: -0.4202672617718341 - 1.7771205895727977. */
Test(spec_segment, block_summaries_written_before_0_55_verify)
{
    char path[128];
    snprintf(path, sizeof path, "%s/tie.tseg", spec_tmp);
    tschunk_sketch_stats st = test_cubic_stats();
    tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&sk, &so), 0);
    tschunk_segment_options o = {.min_ts = 0, .has_summaries = 1, .summary_mapping = TSCHUNK_MAPPING_CUBIC,
                                 .summary_gamma = st.gamma, .summary_offset = st.index_offset};
    tschunk_segment_writer *w;
    cr_assert_eq(tschunk_segment_writer_create(&w, path, &o), 0);
    static const double values[2] = {-0.4202672617718341, -1.7771205895727977};
    for (int i = 0; i < 2; i++) {
        uint8_t chunk[TSCHUNK_BOUND(1)], summary[512];
        tschunk_encoder enc;
        cr_assert_eq(tschunk_encoder_init(&enc, chunk, sizeof chunk, NULL), 0);
        tschunk_encoder_set_summary(&enc, sk);
        cr_assert_eq(tschunk_append(&enc, 100 * (i + 1), values[i]), 0);
        size_t size = tschunk_encoder_finish(&enc);
        size_t summary_size = tschunk_encoder_write_summary(&enc, summary, sizeof summary);
        cr_assert_eq(tschunk_segment_writer_add_chunk(w, 1, chunk, size, summary, summary_size), 0);
    }
    cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
    tschunk_sketch_free(sk);
    spec_file f = spec_read_file(path);
    cr_assert_eq(tschunk_segment_verify(f.data, f.size, NULL), 0);
    size_t at = only_double_at(f.data, f.size, -2.1973878513446312); /* the block's SUM, as written now */
    static const double kinds[3] = {-2.1973878513446317, -2.1973878513446308, -2.1973878513446312};
    for (int k = 0; k < 3; k++) { /* Kahan's sum alone (before 0.55.0), another value, then back */
        uint64_t bits;
        memcpy(&bits, &kinds[k], 8);
        for (int b = 0; b < 8; b++) f.data[at + b] = (uint8_t)(bits >> (8 * b));
        specseg_rehash(f.data, f.size);
        size_t err = tschunk_segment_verify(f.data, f.size, NULL);
        cr_assert_eq(err, k == 1 ? TSC_ERROR(CORRUPT) : 0, "SUM %.17g: %s", kinds[k], tschunk_error_name(err));
        spec_segment_agrees(f.data, f.size, "a block summary's SUM", at);
    }
    free(f.data);
}

/* Refused as CORRUPT by verify and by a full and a lazy open (a lazy one when a range walk or a series lookup reads
 * the blocks), and by the README reader. */
static void refused_everywhere(const uint8_t *p, size_t size, const char *what, size_t at)
{
    size_t got = tschunk_segment_verify(p, size, NULL);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s (%zu): verify %s", what, at,
                 got ? tschunk_error_name(got) : "reads it");
    for (unsigned lazy = 0; lazy < 2; lazy++) {
        tschunk_segment *seg = NULL;
        got = tschunk_segment_open(&seg, p, size, lazy ? TSCHUNK_SEGMENT_LAZY : 0, NULL);
        if (!got) {
            size_t begin, end;
            got = tschunk_segment_range(seg, 0, INT64_MIN, INT64_MAX, &begin, &end);
            if (!got) got = tschunk_segment_series(seg, 0, NULL, NULL, NULL);
            tschunk_segment_close(seg);
        }
        cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_CORRUPT, "%s (%zu), lazy %u: %s", what, at, lazy,
                     got ? tschunk_error_name(got) : "reads it");
    }
    cr_assert(!spec_segment_agrees(p, size, what, at));
}

/* README: header byte 5 is reserved (0), byte 6 is the chunk codec (1), byte 32 the unit (0-4), byte 33 the records
 * group's log2 (0-6), bytes 34-39 reserved. Each other value, the header's checksum made right, is refused (a
 * single flip never reached the rule: the README reader refused the header before it made its checksum right). */
Test(spec_segment, reserved_and_out_of_range_header_fields_are_refused)
{
    static const spec_shape shape = {.series = 1, .chunks_each = 1, .samples = 3, .delete_series = -1};
    spec_file f = spec_write(&shape, "header_fields");
    uint8_t *copy = malloc(f.size);
    static const struct { unsigned at; uint8_t value; } changes[] = {
        {5, 1}, {5, 0x80}, {6, 0}, {6, 2}, {32, 5}, {32, 0xff}, {33, 7}, {33, 0x80}, {34, 1}, {36, 0x10}, {39, 0x80},
    };
    for (size_t k = 0; k < sizeof changes / sizeof changes[0]; k++) {
        memcpy(copy, f.data, f.size);
        copy[changes[k].at] = changes[k].value;
        rehash_header_and_footer(copy, f.size);
        refused_everywhere(copy, f.size, "header byte", changes[k].at);
    }
    free(copy);
    free(f.data);
}

/* The fence of index block b, or of series block b (of_index 0), in a v3 segment. */
static uint8_t *fence_at(uint8_t *p, size_t size, int of_index, size_t b)
{
    const uint8_t *footer = p + size - 144;
    size_t series_blocks = (specseg_u32(footer + 100) + 63) / 64;
    return p + specseg_u64(footer + 32) + 24 * ((of_index ? series_blocks : 0) + b);
}

/* An index fence's key is the first series ordinal of its block: one past the last series, or one below the
 * fence before it, is refused (fences checked when a segment opens, lazy or not). With that check taken out the
 * test still passes: reading the block then finds its first ordinal is not the fence's key. It pins the outcome;
 * `make coverage` shows the open's rule is the one that runs. */
Test(spec_segment, an_index_fence_key_out_of_order_or_past_the_series_is_refused)
{
    static const spec_shape one = {.series = 1, .chunks_each = 1, .samples = 2, .delete_series = -1};
    spec_file f = spec_write(&one, "index_fence_past");
    specseg_put_u64(fence_at(f.data, f.size, 1, 0), 1);
    rehash_header_and_footer(f.data, f.size);
    refused_everywhere(f.data, f.size, "an index fence past the series", 0);
    free(f.data);
    static const spec_shape many = {.series = 200, .chunks_each = 1, .samples = 2, .delete_series = -1};
    f = spec_write(&many, "index_fence_order");
    uint8_t *third = fence_at(f.data, f.size, 1, 2);
    cr_assert_eq(specseg_u64(third), 128);
    specseg_put_u64(third, 63); /* below the second fence's 64 */
    rehash_header_and_footer(f.data, f.size);
    refused_everywhere(f.data, f.size, "an index fence below the one before", 2);
    free(f.data);
}

/* A block's last key must lie below the next fence's (series ids: strictly; index ordinals: a series' chunks may
 * run on into the next block). A next fence that still rises from its own predecessor but not past the block's
 * last key is refused when the block is read. */
Test(spec_segment, a_fence_not_past_the_blocks_before_is_refused)
{
    static const spec_shape shape = {.series = 200, .chunks_each = 1, .samples = 2, .delete_series = -1};
    spec_file f = spec_write(&shape, "fence_overlap");
    uint8_t *copy = malloc(f.size);
    memcpy(copy, f.data, f.size);
    uint64_t first_id = specseg_u64(fence_at(copy, f.size, 0, 0));
    specseg_put_u64(fence_at(copy, f.size, 0, 1), first_id + 1); /* ids are far apart: block 0's last is above */
    rehash_header_and_footer(copy, f.size);
    refused_everywhere(copy, f.size, "a series fence inside the block before", 1);
    memcpy(copy, f.data, f.size);
    uint8_t *second = fence_at(copy, f.size, 1, 1);
    cr_assert_eq(specseg_u64(second), 64);
    specseg_put_u64(second, 62); /* block 0 ends at ordinal 63 */
    rehash_header_and_footer(copy, f.size);
    refused_everywhere(copy, f.size, "an index fence inside the block before", 1);
    free(copy);
    free(f.data);
}

/* An index entry's flags byte: bit 7 is reserved and ordinal kind 3 is unassigned; either, the index block's hash
 * made right, is refused. */
Test(spec_segment, an_index_entry_with_a_reserved_flag_or_ordinal_kind_is_refused)
{
    spec_file f = spec_one_chunk_segment("entry_flags", 1000, 0, NULL, 0);
    uint8_t *copy = malloc(f.size);
    const uint8_t *footer = f.data + f.size - 144;
    size_t index = (size_t)specseg_u64(footer + 16);
    const uint8_t flags = f.data[index];
    cr_assert_eq(flags & 0x83u, 0, "flags 0x%02x", flags);
    const uint8_t changed[2] = {(uint8_t)(flags | 0x80u), (uint8_t)(flags | 3u)};
    for (int k = 0; k < 2; k++) {
        memcpy(copy, f.data, f.size);
        copy[index] = changed[k];
        rehash_index_tail(copy, f.size);
        refused_everywhere(copy, f.size, "an entry's flags", changed[k]);
    }
    free(copy);
    free(f.data);
}

/* README: ordinal kind 2 is "a uvarint difference >= 2". The one chunk's entry, of ordinal 0 or 1 (kinds 0 and 1:
 * the chunk's series alone, or named after series 0), spelt as kind 2 with the difference 0 or 1 instead: the same
 * segment in a second spelling, the index one byte longer and every section after it moved, is refused. */
Test(spec_segment, an_ordinal_difference_below_2_is_refused)
{
    for (uint8_t ordinal = 0; ordinal < 2; ordinal++) {
        char path[128];
        snprintf(path, sizeof path, "%s/ordinal_%u.tseg", spec_tmp, ordinal);
        tschunk_segment_writer *w = test_writer_with_one_chunk(path, 5);
        if (ordinal) cr_assert_eq(tschunk_segment_writer_add_series(w, 0, "a", 1), 0);
        cr_assert(!tschunk_is_error(tschunk_segment_writer_finish(w)));
        spec_file f = spec_read_file(path);
        const uint8_t *footer = f.data + f.size - 144;
        const uint8_t *index = f.data + specseg_u64(footer + 16);
        size_t index_len = (size_t)specseg_u64(footer + 24);
        cr_assert_eq(index[0] & 3, ordinal, "flags 0x%02x", index[0]);
        uint8_t *spelt = malloc(index_len + 1);
        spelt[0] = (uint8_t)((index[0] & ~3u) | 2u);
        spelt[1] = ordinal;
        memcpy(spelt + 2, index + 1, index_len - 1);
        size_t changed_size;
        uint8_t *changed = with_section(&f, 1, spelt, index_len + 1, &changed_size);
        refused_everywhere(changed, changed_size, "an ordinal difference", ordinal);
        free(changed);
        free(spelt);
        free(f.data);
    }
}

/* A segment of the shape written to spec_tmp/forged.tseg with chunk 1's magic damaged and every checksum made right
 * again: verify refuses it, an open takes it. @return its bytes (the caller frees them). */
static spec_file write_forged(const spec_shape *shape)
{
    spec_file f = spec_write(shape, "forged");
    tschunk_segment *seg;
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0);
    tschunk_segment_chunk_info c;
    cr_assert_eq(tschunk_segment_chunk(seg, 1, &c), 0);
    size_t at = (size_t)((const uint8_t *)c.ref.chunk - f.data);
    tschunk_segment_close(seg);
    f.data[at] = 0xee;
    specseg_rehash(f.data, f.size);
    size_t got = tschunk_segment_verify(f.data, f.size, NULL);
    cr_assert_eq(tschunk_get_error_code(got), TSCHUNK_ERROR_BAD_MAGIC, "%s", tschunk_error_name(got));
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0, "the checksums are not right");
    tschunk_segment_close(seg);
    char path[192];
    snprintf(path, sizeof path, "%s/forged.tseg", spec_tmp);
    test_write_file(path, f.data, f.size);
    return f;
}

/* `tschunk ARGS` in spec_tmp: its exit status, its output (stderr too) in out. */
static int run_in_spec_tmp(char *out, size_t cap, const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", spec_tmp, cli(), args);
    return run_line(out, cap, cmd);
}

/* A segment whose chunk is damaged under checksums made right (what a faulty or hostile writer could leave): verify
 * refuses it; every CLI command that decodes it fails naming the chunk, as the readers name a damaged chunk, and
 * writes no output (delete leaves the file as it was). compact, merge, delete and quantiles name it too since 0.57.4
 * (they said the library's error alone: merge not which of its segments). ls reads the index alone and lists the
 * file. `make coverage` showed the CLI's messages for a chunk that does not decode never run: the checksums had
 * always caught the damage first. */
Test(spec_segment, a_chunk_damaged_under_right_checksums_is_named_by_the_cli)
{
    static const spec_shape shape = {.series = 3, .chunks_each = 2, .samples = 120, .delete_series = -1};
    spec_file f = write_forged(&shape);
    char args[256], out[4096], path[192];
    static const char *const cmds[][2] = {{"decompress", " -o forged.csv"}, {"cat", " 'series_1{k=\"7\"}'"},
                                          {"stats", ""}, {"quantiles", " --all"}, {"compact", " -o forged.out"},
                                          {"merge", " -o forged.out"}, {"verify", ""}, {"ls", ""},
                                          {"delete", " 'series_1{k=\"7\"}' --from 0 --to 99999999999"}};
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        snprintf(args, sizeof args, "%s forged.tseg%s", cmds[k][0], cmds[k][1]);
        int rc = run_in_spec_tmp(out, sizeof out, args);
        const char *want = !strcmp(cmds[k][0], "verify") ? "forged.tseg: broken segment: not a tschunk chunk"
                           : !strcmp(cmds[k][0], "ls")   ? "series_1{k=\"7\"}\t"
                                                         : "forged.tseg: chunk 1 is damaged: not a tschunk chunk";
        cr_assert_eq(rc, !strcmp(cmds[k][0], "ls") ? 0 : 1, "%s: %s", cmds[k][0], out);
        cr_assert(strstr(out, want), "%s: %s", cmds[k][0], out);
    }
    snprintf(path, sizeof path, "%s/forged.tseg", spec_tmp);
    spec_file kept = spec_read_file(path);
    cr_assert(kept.size == f.size && !memcmp(kept.data, f.data, f.size), "delete changed the file");
    free(kept.data);
    free(f.data);
    snprintf(path, sizeof path, "%s/forged.csv", spec_tmp);
    cr_assert_neq(access(path, F_OK), 0, "decompress left its output");
    snprintf(path, sizeof path, "%s/forged.out", spec_tmp);
    cr_assert_neq(access(path, F_OK), 0, "compact or merge left its output");
    /* With summaries, the range query answers from them without decoding: --exact decodes, and must not leave the
     * chunk out (0.57.3 printed the exact quantiles without its samples). */
    static const spec_shape summed = {.series = 3, .chunks_each = 2, .samples = 120, .with_summaries = 1,
                                      .delete_series = -1};
    free(write_forged(&summed).data);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, "quantiles forged.tseg --all"), 0, "the summaries answer: %s", out);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, "quantiles forged.tseg --all --exact"), 1, "--exact: %s", out);
    cr_assert(strstr(out, "forged.tseg: chunk 1 is damaged: not a tschunk chunk"), "--exact: %s", out);
}

/* A chunk whose header reads and whose samples do not, under checksums made right: verify, which decodes every
 * chunk, refuses the segment; `ls`, which reads the index alone but decodes a chunk with deleted samples for the time
 * range of those left, names the chunk. `make coverage` showed ls's message never run (0.57.5). */
Test(spec_segment, a_chunk_body_damaged_under_right_checksums_fails_verify_and_ls)
{
    static const spec_shape shape = {.series = 3, .chunks_each = 2, .samples = 120, .delete_series = -1};
    spec_file f = spec_write(&shape, "body");
    char path[192], out[4096];
    snprintf(path, sizeof path, "%s/body.tseg", spec_tmp);
    tschunk_segment *seg;
    tschunk_segment_chunk_info c;
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_chunk(seg, 1, &c), 0);
    uint64_t deleted;
    cr_assert_eq(tschunk_segment_delete(seg, path, c.ordinal, c.first_ts, c.first_ts, &deleted), 0);
    cr_assert_eq(deleted, 1);
    tschunk_segment_close(seg);
    free(f.data);
    f = spec_read_file(path);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, "ls body.tseg"), 0, "undamaged: %s", out);
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_chunk(seg, 1, &c), 0);
    cr_assert_eq(c.deleted, 1);
    size_t at = (size_t)((const uint8_t *)c.ref.chunk - f.data), size = c.ref.chunk_size;
    tschunk_segment_close(seg);
    damage_chunk_body(f.data + at, size);
    specseg_rehash(f.data, f.size);
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0, "the checksums are not right");
    tschunk_segment_close(seg);
    size_t bad = 0, err = tschunk_segment_verify(f.data, f.size, &bad);
    cr_assert(tschunk_is_error(err) && bad > 0 && bad <= at, "%s at %zu (the chunk at %zu)", tschunk_error_name(err),
              bad, at);
    test_write_file(path, f.data, f.size);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, "verify body.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "body.tseg: broken segment: "), "%s", out);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, "ls body.tseg"), 1, "%s", out);
    cr_assert(strstr(out, "body.tseg: chunk 1 is damaged: "), "%s", out);
    free(f.data);
}

/* A byte of the chunk changed so that it still decodes, its count unchanged, and its samples leave [first, last]
 * (the range its index entry gives). */
static void move_chunk_out_of_its_range(unsigned char *chunk, size_t size, int64_t first, int64_t last)
{
    static int64_t ts[TSCHUNK_MAX_SAMPLES];
    static double values[TSCHUNK_MAX_SAMPLES];
    size_t count = tschunk_decode(chunk, size, ts, values, TSCHUNK_MAX_SAMPLES);
    cr_assert(!tschunk_is_error(count) && count > 0);
    for (size_t at = 0; at < size; at++) {
        unsigned char was = chunk[at];
        for (unsigned value = 0; value < 256; value++) {
            chunk[at] = (unsigned char)value;
            size_t n = tschunk_decode(chunk, size, ts, values, TSCHUNK_MAX_SAMPLES);
            if (n == count && (ts[0] < first || ts[n - 1] > last)) return;
        }
        chunk[at] = was;
    }
    cr_assert(0, "no byte of the chunk moves its samples");
}

/* 0.57.6: `cat` merges a series' overlapping chunks by the time ranges of their index entries, so a chunk whose
 * samples leave its entry's range under right checksums is named as damaged (as verify refuses it), never printed
 * out of order. */
Test(spec_segment, a_chunk_outside_its_index_range_fails_cat_and_verify)
{
    static const spec_shape shape = {.series = 3, .chunks_each = 3, .samples = 120, .delete_series = -1};
    spec_file f = spec_write(&shape, "moved");
    char path[192], args[96], out[1 << 15];
    snprintf(path, sizeof path, "%s/moved.tseg", spec_tmp);
    tschunk_segment *seg;
    tschunk_segment_chunk_info c;
    uint64_t id;
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0);
    cr_assert_eq(tschunk_segment_chunk(seg, 1, &c), 0);
    cr_assert_eq(tschunk_segment_series(seg, c.ordinal, &id, NULL, NULL), 0);
    size_t at = (size_t)((const uint8_t *)c.ref.chunk - f.data);
    tschunk_segment_close(seg);
    snprintf(args, sizeof args, "cat moved.tseg %llu", (unsigned long long)id);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, args), 0, "undamaged: %s", out);
    move_chunk_out_of_its_range(f.data + at, c.ref.chunk_size, c.first_ts, c.last_ts);
    specseg_rehash(f.data, f.size);
    cr_assert_eq(tschunk_segment_open(&seg, f.data, f.size, 0, NULL), 0, "the checksums are not right");
    tschunk_segment_close(seg);
    cr_assert(tschunk_is_error(tschunk_segment_verify(f.data, f.size, NULL)));
    test_write_file(path, f.data, f.size);
    cr_assert_eq(run_in_spec_tmp(out, sizeof out, args), 1, "%s", out);
    cr_assert(strstr(out, "moved.tseg: chunk 1 is damaged: samples outside its time range"), "%s", out);
    free(f.data);
}
