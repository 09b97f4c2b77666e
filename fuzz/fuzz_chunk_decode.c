/*
 * Chunk decode of arbitrary bytes: info, validate, iterate, seek, batch read;
 * codec 1's batch loops (checked only, unchecked scalar, BMI2 twin) give the
 * same result as each other and as the iterator, sample for sample; the
 * input cut into up to sixteen chunks, and taken whole 16 times, decodes with tschunk_decode_chunks
 * (codec-1 chunks two side by side) as chunk by chunk; 0.42.1: the inline
 * iterator step answers as the call, leaving the same iterator state; 0.45: the segment writer's check of
 * a chunk (tsc_seg_scan_chunk) refuses and counts as the iterator.
 */
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_iter_next_inline */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "decode_loops.h"
#include "tschunk.h"
#include "chunk/format.h"
#include "segment/format.h"

static void batch_matches_iterator(const uint8_t *data, size_t size, size_t count)
{
    int64_t *ts = malloc((count + 1) * 3 * sizeof *ts);
    double *v = malloc((count + 1) * 3 * sizeof *v);
    if (!ts || !v) __builtin_trap();
    size_t batch = decode_every_loop(tsc_chunk_decode_with, data, size, count, ts, v);
    tschunk_iter it;
    if (tschunk_iter_init(&it, data, size)) __builtin_trap();
    size_t n = 0, step;
    int64_t one_ts, first = 0, last = 0;
    uint64_t one_bits;
    while ((step = tschunk_iter_next_bits(&it, &one_ts, &one_bits)) == 1) {
        if (!tschunk_is_error(batch) && (one_ts != ts[n] || memcmp(&one_bits, &v[n], 8))) __builtin_trap();
        if (!n++) first = one_ts;
        last = one_ts;
    }
    if (tschunk_is_error(step) != tschunk_is_error(batch)) __builtin_trap();
    /* 0.45: the segment writer's check of a chunk (runs through tschunk_iter_read) refuses what the iterator
     * refuses, and finds the count and time range it reads. */
    uint32_t scan_count;
    int64_t scan_first, scan_last;
    size_t scan = tsc_seg_scan_chunk(data, size, &scan_count, &scan_first, &scan_last);
    if (tschunk_is_error(step) ? !tschunk_is_error(scan)
                               : n ? scan || scan_count != n || scan_first != first || scan_last != last
                                   : scan != TSC_ERROR(BAD_PARAMETER))
        __builtin_trap();
    free(ts);
    free(v);
}

static size_t chunk_count(const void *chunk, size_t size)
{
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(chunk, size, &info);
    return tschunk_is_error(r) ? r : info.count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chunks_match_one_by_one(data, size, tsc_chunk_decode_chunks_with, tschunk_decode, chunk_count);
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(data, size, &info);
    if (tschunk_validate(data, size) != r) __builtin_trap();
    if (tschunk_is_error(r)) return 0;
    tschunk_iter it, inl;
    if (tschunk_iter_init(&it, data, size) != 0 || tschunk_iter_init(&inl, data, size) != 0) __builtin_trap();
    int64_t ts, last = INT64_MIN, inl_ts = 0;
    double v, inl_v = 0;
    size_t n = 0;
    for (;;) {
        r = tschunk_iter_next(&it, &ts, &v);
        if (tschunk_iter_next_inline(&inl, &inl_ts, &inl_v) != r) __builtin_trap();
        if (memcmp(&it, &inl, offsetof(tschunk_iter, group_ts))) __builtin_trap();
        if (r != 1) break;
        if (inl_ts != ts || memcmp(&inl_v, &v, sizeof v)) __builtin_trap();
        if (ts < last || ++n > info.count) __builtin_trap();
        last = ts;
    }
    if (!tschunk_is_error(r) && n != info.count) __builtin_trap();
    batch_matches_iterator(data, size, info.count);
    /* Seek to a timestamp taken from the input, then batch-read the rest. */
    if (tschunk_iter_init(&it, data, size) == 0) {
        int64_t target = (int64_t)((uint64_t)info.first_ts + (uint64_t)size * 977u); /* wraps by design */
        r = tschunk_iter_seek(&it, target);
        int64_t tsa[50];
        double va[50];
        while (!tschunk_is_error(r) && (r = tschunk_iter_read(&it, tsa, va, 50)) > 0) {}
    }
    return 0;
}
