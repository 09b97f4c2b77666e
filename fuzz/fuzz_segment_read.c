/*
 * Segment reader on arbitrary bytes. In the fuzzing build checksums are
 * skipped (the mutations reach the parsers behind them); fuzz_segment_checked
 * keeps them. Open (full and lazy), look up every series and range, read and
 * decode every chunk (raw and without its deleted samples; in runs as one by
 * one), merge summaries and ranges, verify; a lazy open must answer as the full one.
 */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

#ifndef SEGMENT_OPEN_FLAGS
#define SEGMENT_OPEN_FLAGS 0x80000000u /* skip checksums: honoured only in fuzzing builds */
#endif

static int64_t ts[TSCHUNK_MAX_SAMPLES];
static double v[TSCHUNK_MAX_SAMPLES];

/* tschunk_segment_chunks over runs of 50 (crossing 64-entry blocks) gives what single calls give: the chunks
 * before the first one refused, then that refusal. */
static void runs_match_singles(const tschunk_segment *seg, uint32_t chunks)
{
    tschunk_segment_chunk_info run[50], one;
    for (uint32_t at = 0; at < chunks; at += 50) {
        size_t count = chunks - at < 50 ? chunks - at : 50, run_err = tschunk_segment_chunks(seg, at, count, run);
        for (size_t k = 0; k < count; k++) {
            size_t err = tschunk_segment_chunk(seg, at + k, &one);
            if (err) {
                if (err != run_err) __builtin_trap();
                break;
            }
            if (one.ref.chunk != run[k].ref.chunk || one.ref.summary != run[k].ref.summary ||
                one.count != run[k].count || one.deleted != run[k].deleted || one.first_ts != run[k].first_ts ||
                one.last_ts != run[k].last_ts || one.ordinal != run[k].ordinal)
                __builtin_trap();
            if (k + 1 == count && run_err) __builtin_trap();
        }
    }
}

/* Every call a reader can make; errors are fine, crashes and impossible answers are not. */
static void exercise(const tschunk_segment *seg, const uint8_t *data, size_t size)
{
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    for (uint32_t o = 0; o < info.series; o++) {
        uint64_t id;
        const char *name;
        size_t len, begin, end;
        if (tschunk_segment_series(seg, o, &id, &name, &len)) continue; /* a lazy read may refuse a block */
        if (tschunk_segment_find_series(seg, id) != o) __builtin_trap();
        if (!tschunk_segment_range(seg, o, INT64_MIN, INT64_MAX, &begin, &end) && (begin > end || end > info.chunks))
            __builtin_trap();
    }
    for (uint32_t i = 0; i < info.chunks; i++) {
        tschunk_segment_chunk_info c;
        if (tschunk_segment_chunk(seg, i, &c)) continue;
        tschunk_decode(c.ref.chunk, c.ref.chunk_size, ts, v, TSCHUNK_MAX_SAMPLES);
        if (c.ref.summary) {
            tschunk_summary_info s;
            tschunk_summary_parse(c.ref.summary, c.ref.summary_size, &s);
        }
        size_t live = tschunk_segment_decode(seg, i, ts, v, TSCHUNK_MAX_SAMPLES);
        if (!tschunk_is_error(live) && live + c.deleted != c.count) __builtin_trap();
    }
    runs_match_singles(seg, info.chunks);
    const void *bitmap;
    size_t bitmap_size;
    tschunk_segment_series_bitmap(seg, &bitmap, &bitmap_size);
    if (!bitmap || (const uint8_t *)bitmap < data || (const uint8_t *)bitmap + bitmap_size > data + size) __builtin_trap();
    tschunk_sketch *acc;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 64, 0, {NULL, NULL, NULL}, 0};
    if (tschunk_sketch_create(&acc, &so) == 0) {
        tschunk_segment_range_merge(seg, TSCHUNK_SEGMENT_ALL_SERIES, INT64_MIN, INT64_MAX, acc, NULL);
        tschunk_sketch_free(acc);
    }
}

/* A range merge through both readers: the same stats and sketch (stored block summaries included). */
static void merge_both(const tschunk_segment *full, const tschunk_segment *lazy, uint32_t ordinal, int64_t from,
                       int64_t to, int verified)
{
    tschunk_sketch *a = NULL, *b = NULL;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 64, 0, {NULL, NULL, NULL}, 0};
    if (tschunk_sketch_create(&a, &so) || tschunk_sketch_create(&b, &so)) {
        tschunk_sketch_free(a);
        return;
    }
    tschunk_range_stats sa, sb;
    size_t ea = tschunk_segment_range_merge(full, ordinal, from, to, a, &sa);
    size_t eb = tschunk_segment_range_merge(lazy, ordinal, from, to, b, &sb);
    if (eb && !ea && !verified) eb = ea = 1; /* a lazy read may refuse a block only the full open trusted */
    tschunk_sketch_stats ka, kb;
    tschunk_sketch_get_stats(a, &ka);
    tschunk_sketch_get_stats(b, &kb);
    if ((ea != 0) != (eb != 0) ||
        (!ea && (sa.chunks_from_summaries != sb.chunks_from_summaries || sa.chunks_decoded != sb.chunks_decoded ||
                 sa.samples_decoded != sb.samples_decoded || memcmp(&ka.count, &kb.count, sizeof ka.count))))
        __builtin_trap();
    tschunk_sketch_free(a);
    tschunk_sketch_free(b);
}

/* When both opens succeed, the lazy one answers as the full one. With checksums on it may refuse a
 * block the full open did not hash (only verify hashes every block), so there an error is allowed
 * when verify fails; with checksums skipped both check the same structure and must agree. Ranges are
 * asked of a lazy open that has parsed no index block yet (cold) and of one that has (its blocks' largest
 * last timestamps remembered, so that its range walks pass over blocks). */
static void compare_ranges(const tschunk_segment *full, const tschunk_segment *lazy, const uint8_t *data,
                           int verified)
{
    tschunk_segment_info fi, li;
    tschunk_segment_get_info(full, &fi);
    tschunk_segment_get_info(lazy, &li);
    if (fi.series != li.series || fi.chunks != li.chunks || fi.deleted != li.deleted) __builtin_trap();
    uint64_t spread = (uint64_t)data[0] << 8 | data[5]; /* ranges that depend on the input */
    for (uint32_t o = 0; o < fi.series; o++) {
        uint64_t fid, lid;
        size_t fb, fe, lb, le;
        if (tschunk_segment_series(full, o, &fid, NULL, NULL)) __builtin_trap();
        if (tschunk_segment_series(lazy, o, &lid, NULL, NULL)) {
            if (verified) __builtin_trap();
            continue;
        }
        if (fid != lid || tschunk_segment_find_series(lazy, fid) != o) __builtin_trap();
        int64_t from = fi.min_ts > INT64_MAX / 2 ? fi.min_ts : fi.min_ts + (int64_t)(spread * o % 100000);
        int64_t to = from > INT64_MAX / 2 ? from : from + (int64_t)(spread % 5000);
        if (tschunk_segment_range(full, o, from, to, &fb, &fe)) __builtin_trap();
        if (tschunk_segment_range(lazy, o, from, to, &lb, &le)) {
            if (verified) __builtin_trap();
            continue;
        }
        if (fb != lb || fe != le) __builtin_trap();
    }
}

static void compare(const tschunk_segment *full, const tschunk_segment *lazy, const uint8_t *data, int verified)
{
    tschunk_segment_info fi;
    tschunk_segment_get_info(full, &fi);
    compare_ranges(full, lazy, data, verified);
    merge_both(full, lazy, TSCHUNK_SEGMENT_ALL_SERIES, INT64_MIN, INT64_MAX, verified);
    for (uint32_t o = 0; o < fi.series && o < 8; o++) merge_both(full, lazy, o, fi.min_ts, INT64_MAX / 2, verified);
    for (uint32_t i = 0; i < fi.chunks; i++) {
        tschunk_segment_chunk_info fc, lc;
        size_t ferr = tschunk_segment_chunk(full, i, &fc), lerr = tschunk_segment_chunk(lazy, i, &lc);
        if (lerr && !ferr && !verified) continue;
        if (ferr != lerr || (!ferr && (fc.ref.chunk != lc.ref.chunk || fc.first_ts != lc.first_ts ||
                                       fc.last_ts != lc.last_ts || fc.deleted != lc.deleted)))
            __builtin_trap();
    }
}

static int checksums_skipped(void) { return (SEGMENT_OPEN_FLAGS & 0x80000000u) != 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tschunk_segment *full = NULL, *lazy = NULL;
    int verified = tschunk_segment_verify(data, size, NULL) == 0 || checksums_skipped();
    if (!tschunk_segment_open(&full, data, size, SEGMENT_OPEN_FLAGS, NULL)) exercise(full, data, size);
    if (full && !tschunk_segment_open(&lazy, data, size, SEGMENT_OPEN_FLAGS | TSCHUNK_SEGMENT_LAZY, NULL)) {
        compare_ranges(full, lazy, data, verified); /* cold */
        tschunk_segment_close(lazy);
        lazy = NULL;
    }
    if (!tschunk_segment_open(&lazy, data, size, SEGMENT_OPEN_FLAGS | TSCHUNK_SEGMENT_LAZY, NULL))
        exercise(lazy, data, size);
    if (full && lazy) compare(full, lazy, data, verified);
    tschunk_segment_close(full);
    tschunk_segment_close(lazy);
    return 0;
}
