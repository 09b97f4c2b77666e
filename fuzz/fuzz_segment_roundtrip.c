/*
 * Segment round trip: bytes -> chunks of several series (ids up to 2^64-1,
 * timestamps anywhere in int64, chunks added in any order) -> writer -> file
 * -> reader with every checksum verified (the same writer, delete, compaction
 * and merge through tschunk_segment_io into memory must make the files' bytes). Every chunk must come back once,
 * byte for byte, under its series, with its count and time span, in index
 * order (series, then first timestamp). Then a delete (series and time
 * range from the input's first bytes): the rewritten segment verifies, and
 * every series reads back exactly without the deleted samples. Inputs of odd
 * length carry summaries: each comes back with its chunk, and range merges
 * through the segment (stored block summaries of 2..9 chunks) equal merges of
 * the chunks' own summaries. Chunks alternate between codecs 2 and 1. Last, a
 * compaction of the deleted segment (it verifies, holds no deletions, and every
 * series reads back the same samples) and a merge of it with the segment (or of
 * both twice, four sources), by id or by name, its chunks kept or cut again
 * (every series holds the samples of every source).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tests/mem_io.h"
#include "harness.h"
#include "tschunk.h"

#define MAX_CHUNKS 96 /* more than one 64-entry index block */
#define MAX_PER_CHUNK 16
#define MAX_SOURCES 4 /* of a merge */

typedef struct {
    uint64_t series;
    size_t size;
    int64_t first, last;
    uint32_t count, matched;
    unsigned char bytes[TSCHUNK_BOUND(MAX_PER_CHUNK)];
    size_t summary_size; /* 0: none */
    unsigned char summary[1024];
} added_chunk;

/* The summaries' sketch (odd-length inputs), created once. */
static tschunk_sketch *summary_sketch(void)
{
    static tschunk_sketch *sk;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {NULL, NULL, NULL}, 0};
    if (!sk && tschunk_sketch_create(&sk, &so)) __builtin_trap();
    return sk;
}

/* The chunk's bytes in codec 2 or 1, and its summary when sk is given. */
static void encode_chunk(added_chunk *c, const int64_t *ts, const double *v, size_t k, tschunk_sketch *sk, int gorilla)
{
    tschunk_encoder_options opts = {gorilla ? TSCHUNK_CODEC_GORILLA : TSCHUNK_CODEC_TSC2, 0, 0, 0};
    c->summary_size = 0;
    if (!sk) {
        c->size = tschunk_encode(c->bytes, sizeof c->bytes, ts, v, k, &opts);
        if (tschunk_is_error(c->size)) __builtin_trap();
        return;
    }
    tschunk_encoder enc;
    if (tschunk_encoder_init(&enc, c->bytes, sizeof c->bytes, &opts) || tschunk_encoder_set_summary(&enc, sk))
        __builtin_trap();
    for (size_t i = 0; i < k; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], 8);
        if (tschunk_append_bits(&enc, ts[i], bits)) __builtin_trap();
    }
    c->size = tschunk_encoder_finish(&enc);
    c->summary_size = tschunk_encoder_write_summary(&enc, c->summary, sizeof c->summary);
    if (tschunk_is_error(c->size) || tschunk_is_error(c->summary_size)) __builtin_trap();
}

static const uint64_t series_ids[8] = {0, 1, 2, 127, 128, 300, UINT64_MAX - 1, UINT64_MAX};

/* 1 + n*9 bytes per chunk: selector, then (step, value) pairs. */
static size_t make_chunks(const uint8_t *data, size_t size, added_chunk *out, int64_t *min_ts, tschunk_sketch *sk)
{
    size_t n = 0, off = 0;
    int64_t base = (int64_t)(size * 1000003u) - 4000000;
    *min_ts = INT64_MAX;
    while (off < size && n < MAX_CHUNKS) {
        uint8_t sel = data[off++];
        int64_t ts[MAX_PER_CHUNK];
        double v[MAX_PER_CHUNK];
        size_t k = 0;
        int64_t t = sel & 0x80 ? INT64_MIN + (int64_t)(sel & 15) : base + (int64_t)sel * 7919;
        for (; k < 1u + (sel & 15) && off + 9 <= size; k++, off += 9) {
            uint64_t raw;
            memcpy(&raw, data + off + 1, 8);
            if (k) {
                uint64_t step = data[off] < 128 ? 15000u + data[off] : data[off] < 250 ? raw >> 40 : raw >> 2;
                if (t > INT64_MAX - (int64_t)(step & (uint64_t)INT64_MAX)) break; /* stay ordered */
                t += (int64_t)step;
            }
            ts[k] = t;
            memcpy(&v[k], &raw, 8);
        }
        if (!k) break;
        added_chunk *c = &out[n];
        c->series = series_ids[(sel >> 4) & 7];
        encode_chunk(c, ts, v, k, sk, (int)(n & 1));
        c->first = ts[0];
        c->last = ts[k - 1];
        c->count = (uint32_t)k;
        c->matched = 0;
        if (c->first < *min_ts) *min_ts = c->first;
        n++;
    }
    return n;
}

/* The segment written through tschunk_segment_io into memory must be the file's bytes. */
static void same_as_file(const char *path, const mem_segment *m, size_t file_size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *bytes = malloc(file_size + 1);
    if (!f || !bytes || m->size != file_size || fread(bytes, 1, file_size + 1, f) != file_size ||
        memcmp(bytes, m->buf, file_size))
        __builtin_trap();
    fclose(f);
    free(bytes);
}

static size_t write_segment(const char *path, added_chunk *chunks, size_t n, int64_t min_ts, tschunk_sketch *sk,
                            uint32_t per_block)
{
    tschunk_segment_options opts;
    memset(&opts, 0, sizeof opts);
    opts.min_ts = min_ts;
    if (sk) {
        tschunk_sketch_stats st;
        tschunk_sketch_get_stats(sk, &st);
        opts.has_summaries = 1;
        opts.summary_mapping = st.mapping;
        opts.summary_gamma = st.gamma;
        opts.summary_offset = st.index_offset;
        opts.summary_block_chunks = per_block;
    }
    tschunk_segment_writer *ws[2];
    mem_segment m = mem_segment_empty();
    tschunk_segment_io io = mem_segment_io(&m);
    if (tschunk_segment_writer_create(&ws[0], path, &opts) || tschunk_segment_writer_create_io(&ws[1], &io, &opts))
        __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        char name[32];
        int len = snprintf(name, sizeof name, "s%llu", (unsigned long long)chunks[i].series);
        for (int k = 0; k < 2; k++)
            if (tschunk_segment_writer_add_series(ws[k], chunks[i].series, name, (size_t)len) ||
                tschunk_segment_writer_add_chunk(ws[k], chunks[i].series, chunks[i].bytes, chunks[i].size,
                                                 chunks[i].summary_size ? chunks[i].summary : NULL,
                                                 chunks[i].summary_size))
                __builtin_trap();
    }
    size_t file_size = tschunk_segment_writer_finish(ws[0]);
    if (tschunk_is_error(file_size) || tschunk_segment_writer_finish(ws[1]) != file_size) __builtin_trap();
    same_as_file(path, &m, file_size);
    free(m.buf);
    return file_size;
}

static void check_chunk(const tschunk_segment *seg, size_t i, added_chunk *chunks, size_t n)
{
    tschunk_segment_chunk_info c;
    uint64_t id;
    const char *name;
    size_t name_len;
    if (tschunk_segment_chunk(seg, i, &c) || tschunk_segment_series(seg, c.ordinal, &id, &name, &name_len))
        __builtin_trap();
    for (size_t k = 0; k < n; k++) {
        added_chunk *a = &chunks[k];
        if (a->matched || a->series != id || a->size != c.ref.chunk_size || memcmp(a->bytes, c.ref.chunk, a->size))
            continue;
        if (a->count != c.count || a->first != c.first_ts || a->last != c.last_ts ||
            c.ref.summary_size != a->summary_size || (a->summary_size && memcmp(c.ref.summary, a->summary, a->summary_size)))
            __builtin_trap();
        a->matched = 1;
        return;
    }
    __builtin_trap(); /* a chunk that was never added, or came back twice */
}

/* Live samples of series `ordinal` in index order, through the tombstone-aware decoder. */
static size_t series_samples(const tschunk_segment *seg, uint32_t ordinal, int64_t *ts, double *v)
{
    size_t begin, end, n = 0;
    if (tschunk_segment_range(seg, ordinal, INT64_MIN, INT64_MAX, &begin, &end)) __builtin_trap();
    for (size_t i = begin; i < end; i++) {
        size_t got = tschunk_segment_decode(seg, i, ts + n, v + n, MAX_PER_CHUNK);
        if (tschunk_is_error(got)) __builtin_trap();
        n += got;
    }
    return n;
}

/* Per series, over a range from the input: the segment's range merge (stored block summaries) equals
 * tschunk_range_merge over the same chunks' own summaries; `other` must agree chunk by chunk too. */
static void check_merges(const tschunk_segment *seg, const tschunk_segment *other, const uint8_t *data, size_t size)
{
    static tschunk_chunk_ref refs[MAX_CHUNKS];
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    tschunk_sketch *a, *b;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {NULL, NULL, NULL}, 0};
    if (tschunk_sketch_create(&a, &so) || tschunk_sketch_create(&b, &so)) __builtin_trap();
    for (uint32_t o = 0; o < info.series; o++) {
        size_t begin, end, n = 0;
        if (tschunk_segment_range(seg, o, INT64_MIN, INT64_MAX, &begin, &end)) __builtin_trap();
        for (size_t i = begin; i < end; i++) {
            tschunk_segment_chunk_info c;
            if (tschunk_segment_chunk(other, i, &c)) __builtin_trap();
            refs[n++] = c.ref;
        }
        if (!n) continue;
        tschunk_segment_chunk_info c0;
        tschunk_segment_chunk(seg, begin + data[o % size] % n, &c0);
        int64_t from = data[(o + 1) % size] & 1 ? c0.first_ts : INT64_MIN, to = data[(o + 2) % size] & 1 ? c0.last_ts : INT64_MAX;
        if (data[(o + 3) % size] & 1 && from < to) from++;
        tschunk_range_stats sa, sb;
        tschunk_sketch_clear(a);
        tschunk_sketch_clear(b);
        if (tschunk_segment_range_merge(seg, o, from, to, a, &sa) || tschunk_range_merge(b, refs, n, from, to, &sb))
            __builtin_trap();
        tschunk_sketch_stats ka, kb;
        tschunk_sketch_get_stats(a, &ka);
        tschunk_sketch_get_stats(b, &kb);
        if (sa.chunks_from_summaries != sb.chunks_from_summaries || sa.chunks_decoded != sb.chunks_decoded ||
            sa.samples_decoded != sb.samples_decoded || /* skipped differ: the segment never visits some */
            sa.nan_count != sb.nan_count || sa.inf_count != sb.inf_count || memcmp(&ka.count, &kb.count, 8) ||
            (ka.count > 0 && (memcmp(&ka.min, &kb.min, 8) || memcmp(&ka.max, &kb.max, 8))))
            __builtin_trap();
        for (int q = 0; q <= 4 && ka.count > 0; q++) {
            double x, y;
            if (tschunk_sketch_quantile(a, q / 4.0, &x) || tschunk_sketch_quantile(b, q / 4.0, &y) || memcmp(&x, &y, 8))
                __builtin_trap();
        }
    }
    tschunk_sketch_free(a);
    tschunk_sketch_free(b);
}

typedef struct {
    int64_t ts;
    uint64_t bits;
} sample;

static int by_time_then_bits(const void *x, const void *y)
{
    const sample *a = x, *b = y;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return (a->bits > b->bits) - (a->bits < b->bits);
}

/* The same samples, in any order: where a series' chunks overlap in time, a chunk that lost its first samples
 * sorts by its new first timestamp, so index order may take the chunks in another order. */
static int same_samples(const int64_t *ts0, const double *v0, const int64_t *ts1, const double *v1, size_t n)
{
    static sample a[MAX_SOURCES * MAX_CHUNKS * MAX_PER_CHUNK], b[MAX_SOURCES * MAX_CHUNKS * MAX_PER_CHUNK];
    for (size_t i = 0; i < n; i++) {
        a[i].ts = ts0[i], b[i].ts = ts1[i];
        memcpy(&a[i].bits, &v0[i], 8);
        memcpy(&b[i].bits, &v1[i], 8);
    }
    qsort(a, n, sizeof *a, by_time_then_bits);
    qsort(b, n, sizeof *b, by_time_then_bits);
    return n == 0 || !memcmp(a, b, n * sizeof *a);
}

/* The segment just written to path (size bytes, or an error), read into file[0 .. cap) and removed: it must
 * verify and open with every checksum checked. */
static tschunk_segment *read_back(const char *path, size_t size, unsigned char *file, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(file, 1, cap, f) : 0;
    if (f) fclose(f);
    remove(path);
    tschunk_segment *seg;
    if (tschunk_is_error(size) || got != size || tschunk_segment_verify(file, got, NULL) ||
        tschunk_segment_open(&seg, file, got, TSCHUNK_SEGMENT_VERIFY, NULL))
        __builtin_trap();
    return seg;
}

/* Compact seg into path: the result verifies, has no deletions, and reads back every series as seg does. */
static void check_compact(const tschunk_segment *seg, const char *path)
{
    static unsigned char file[MAX_CHUNKS * (TSCHUNK_BOUND(MAX_PER_CHUNK) + 64 + 2048) + 65536];
    static int64_t ts0[MAX_CHUNKS * MAX_PER_CHUNK], ts1[MAX_CHUNKS * MAX_PER_CHUNK];
    static double v0[MAX_CHUNKS * MAX_PER_CHUNK], v1[MAX_CHUNKS * MAX_PER_CHUNK];
    tschunk_segment_compact_stats st;
    size_t size = tschunk_segment_compact(seg, path, &st);
    tschunk_segment *out = read_back(path, size, file, sizeof file);
    mem_segment m = mem_segment_empty();
    tschunk_segment_io io = mem_segment_io(&m);
    if (tschunk_segment_compact_io(seg, &io, NULL) != size || m.size != size || memcmp(m.buf, file, size))
        __builtin_trap(); /* through io: the same bytes */
    free(m.buf);
    tschunk_segment_info before, after;
    tschunk_segment_get_info(seg, &before);
    tschunk_segment_get_info(out, &after);
    if (after.deleted || after.series != before.series || after.samples != before.samples - before.deleted ||
        st.samples_dropped != before.deleted || after.chunks != before.chunks - st.chunks_dropped)
        __builtin_trap();
    for (uint32_t o = 0; o < before.series; o++) {
        size_t a = series_samples(seg, o, ts0, v0), b = series_samples(out, o, ts1, v1);
        if (a != b || !same_samples(ts0, v0, ts1, v1, a)) __builtin_trap();
    }
    tschunk_segment_close(out);
}

/* Merge the segment and its deleted copy (or, with `four`, each twice: 0.51.1's heap of sources past two), by id
 * (flags 0) or by name: every series of the result holds the samples of every source, and the deleted copy's
 * deletions are gone. */
static void check_merge(const tschunk_segment *seg, const tschunk_segment *after, const char *path,
                        const tschunk_segment_merge_options *m, int four)
{
    unsigned by_name = m->flags & TSCHUNK_MERGE_BY_NAME;
    static unsigned char file[MAX_SOURCES * MAX_CHUNKS * (TSCHUNK_BOUND(MAX_PER_CHUNK) + 64 + 2048) + 65536];
    static int64_t ts0[MAX_SOURCES * MAX_CHUNKS * MAX_PER_CHUNK], ts1[MAX_SOURCES * MAX_CHUNKS * MAX_PER_CHUNK];
    static double v0[MAX_SOURCES * MAX_CHUNKS * MAX_PER_CHUNK], v1[MAX_SOURCES * MAX_CHUNKS * MAX_PER_CHUNK];
    const tschunk_segment *sources[MAX_SOURCES] = {after, seg, seg, after};
    size_t count = four ? 4 : 2;
    size_t size = tschunk_segment_merge(sources, count, path, m, NULL);
    tschunk_segment *out = read_back(path, size, file, sizeof file);
    mem_segment mem = mem_segment_empty();
    tschunk_segment_io io = mem_segment_io(&mem);
    if (tschunk_segment_merge_io(sources, count, &io, m, NULL) != size || mem.size != size ||
        memcmp(mem.buf, file, size))
        __builtin_trap(); /* through io: the same bytes */
    free(mem.buf);
    tschunk_segment_info info, merged;
    tschunk_segment_get_info(seg, &info);
    tschunk_segment_get_info(out, &merged);
    if (merged.series != info.series || merged.deleted) __builtin_trap();
    for (uint32_t o = 0; o < merged.series; o++) {
        const char *name;
        size_t len;
        uint64_t id;
        if (tschunk_segment_series(out, o, &id, &name, &len)) __builtin_trap();
        size_t at = by_name ? tschunk_segment_find_series_name(seg, name, len) : tschunk_segment_find_series(seg, id);
        if (tschunk_is_error(at) || (by_name && id != o)) __builtin_trap();
        size_t a = 0;
        for (size_t k = 0; k < count; k++) a += series_samples(sources[k], (uint32_t)at, ts0 + a, v0 + a);
        size_t b = series_samples(out, o, ts1, v1);
        if (a != b || !same_samples(ts0, v0, ts1, v1, a)) __builtin_trap();
    }
    tschunk_segment_close(out);
}

/* Delete [from, to] of one series into path; compare every series with the original minus the range. */
static void check_delete(const tschunk_segment *seg, const char *path, const uint8_t *data, size_t size)
{
    static unsigned char file[MAX_CHUNKS * (TSCHUNK_BOUND(MAX_PER_CHUNK) + 64 + 2048) + 65536];
    static int64_t ts0[MAX_CHUNKS * MAX_PER_CHUNK], ts1[MAX_CHUNKS * MAX_PER_CHUNK];
    static double v0[MAX_CHUNKS * MAX_PER_CHUNK], v1[MAX_CHUNKS * MAX_PER_CHUNK];
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    uint32_t victim = (uint32_t)(data[0] % info.series);
    size_t n0 = series_samples(seg, victim, ts0, v0);
    if (n0 == 0) __builtin_trap(); /* every series was given samples */
    int64_t from = ts0[data[size / 2] % n0], to = ts0[data[size - 1] % n0];
    if (from > to) { int64_t t = from; from = to; to = t; }
    uint64_t deleted, want = 0;
    for (size_t i = 0; i < n0; i++) want += ts0[i] >= from && ts0[i] <= to;
    if (tschunk_segment_delete(seg, path, victim, from, to, &deleted) || deleted != want) __builtin_trap();
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(file, 1, sizeof file, f) : 0;
    if (f) fclose(f);
    remove(path);
    mem_segment mem = mem_segment_empty();
    tschunk_segment_io io = {mem_write_at, NULL, &mem};
    uint64_t deleted_io;
    if (tschunk_segment_delete_io(seg, &io, victim, from, to, &deleted_io) || deleted_io != deleted ||
        mem.size != got || memcmp(mem.buf, file, got))
        __builtin_trap(); /* through io: the same bytes */
    free(mem.buf);
    tschunk_segment *after;
    if (tschunk_segment_verify(file, got, NULL) || tschunk_segment_open(&after, file, got, TSCHUNK_SEGMENT_VERIFY, NULL))
        __builtin_trap();
    for (uint32_t o = 0; o < info.series; o++) {
        size_t a = series_samples(seg, o, ts0, v0), b = series_samples(after, o, ts1, v1), k = 0;
        for (size_t i = 0; i < a; i++) {
            if (o == victim && ts0[i] >= from && ts0[i] <= to) continue;
            if (k >= b || ts1[k] != ts0[i] || memcmp(&v1[k], &v0[i], 8)) __builtin_trap();
            k++;
        }
        if (k != b) __builtin_trap();
    }
    check_compact(after, path);
    /* By id or by name; chunks kept, or cut again into 1..16 samples (codec 1 or 2) */
    uint8_t how = data[size - 1];
    tschunk_segment_merge_options m = {2, how & 1 ? TSCHUNK_MERGE_BY_NAME : 0, how & 2 ? 1u + (how >> 4) : 0,
                                       how & 4 ? TSCHUNK_CODEC_GORILLA : 0};
    check_merge(seg, after, path, &m, how >> 3 & 1);
    tschunk_segment_close(after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static added_chunk chunks[MAX_CHUNKS];
    static unsigned char file[MAX_CHUNKS * (TSCHUNK_BOUND(MAX_PER_CHUNK) + 64 + 2048) + 65536];
    int64_t min_ts;
    tschunk_sketch *sk = size & 1 ? summary_sketch() : NULL;
    size_t n = make_chunks(data, size, chunks, &min_ts, sk);
    if (!n) return 0;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tschunk-fuzz-segment-%ld", (long)getpid());
    size_t file_size = write_segment(path, chunks, n, min_ts, sk, 2 + data[0] % 8);
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(file, 1, sizeof file, f) : 0;
    if (f) fclose(f);
    remove(path);
    if (got != file_size || tschunk_segment_verify(file, got, NULL)) __builtin_trap();
    tschunk_segment *seg;
    if (tschunk_segment_open(&seg, file, got, TSCHUNK_SEGMENT_VERIFY, NULL)) __builtin_trap();
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    if (info.chunks != n || info.min_ts != min_ts) __builtin_trap();
    int64_t prev_first = INT64_MIN;
    uint32_t prev_ordinal = 0;
    for (size_t i = 0; i < n; i++) {
        check_chunk(seg, i, chunks, n);
        tschunk_segment_chunk_info c;
        tschunk_segment_chunk(seg, i, &c);
        if (i && (c.ordinal < prev_ordinal || (c.ordinal == prev_ordinal && c.first_ts < prev_first))) __builtin_trap();
        prev_ordinal = c.ordinal;
        prev_first = c.first_ts;
    }
    tschunk_segment *lazy;
    if (tschunk_segment_open(&lazy, file, got, TSCHUNK_SEGMENT_LAZY, NULL)) __builtin_trap();
    for (size_t i = 0; i < n; i++) chunks[i].matched = 0;
    for (size_t i = 0; i < n; i++) check_chunk(lazy, i, chunks, n);
    for (int pass = 0; pass < 2; pass++) {
        const tschunk_segment *reader = pass ? lazy : seg;
        for (uint32_t o = 0; o < info.series; o++) {
            uint64_t id;
            const char *name;
            size_t len, begin, end, lazy_begin, lazy_end;
            char want[32];
            if (tschunk_segment_series(reader, o, &id, &name, &len)) __builtin_trap();
            int want_len = snprintf(want, sizeof want, "s%llu", (unsigned long long)id);
            if (len != (size_t)want_len || memcmp(name, want, len) || tschunk_segment_find_series(reader, id) != o ||
                tschunk_segment_find_series_name(reader, name, len) != o)
                __builtin_trap();
            int64_t from = min_ts > INT64_MAX / 2 ? min_ts : min_ts + data[o % size] * 7;
            int64_t to = from > INT64_MAX / 2 ? from : from + data[(o + 1) % size] * 11;
            if (tschunk_segment_range(seg, o, from, to, &begin, &end) ||
                tschunk_segment_range(lazy, o, from, to, &lazy_begin, &lazy_end) || begin != lazy_begin ||
                end != lazy_end)
                __builtin_trap();
        }
    }
    if (sk) {
        check_merges(seg, lazy, data, size);
        check_merges(lazy, seg, data + size / 3, size - size / 3);
    }
    tschunk_segment_close(lazy);
    check_delete(seg, path, data, size);
    tschunk_segment_close(seg);
    return 0;
}
