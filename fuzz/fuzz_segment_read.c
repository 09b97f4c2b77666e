/*
 * Segment reader on arbitrary bytes. In the fuzzing build checksums are
 * skipped (the mutations reach the parsers behind them); fuzz_segment_checked
 * keeps them. Open, look up every series and range, read and decode every
 * chunk (raw and without its deleted samples), merge summaries and ranges,
 * verify.
 */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

#ifndef SEGMENT_OPEN_FLAGS
#define SEGMENT_OPEN_FLAGS 0x80000000u /* skip checksums: honoured only in fuzzing builds */
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tschunk_segment *seg;
    tschunk_segment_verify(data, size, NULL);
    if (tschunk_segment_open(&seg, data, size, SEGMENT_OPEN_FLAGS, NULL)) return 0;
    tschunk_segment_info info;
    tschunk_segment_get_info(seg, &info);
    static int64_t ts[TSCHUNK_MAX_SAMPLES];
    static double v[TSCHUNK_MAX_SAMPLES];
    for (uint32_t o = 0; o < info.series; o++) {
        uint64_t id;
        const char *name;
        size_t len, begin, end;
        if (tschunk_segment_series(seg, o, &id, &name, &len)) __builtin_trap();
        if (tschunk_segment_find_series(seg, id) != o) __builtin_trap();
        if (tschunk_segment_range(seg, o, INT64_MIN, INT64_MAX, &begin, &end) || begin > end || end > info.chunks)
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
    const void *bitmap;
    size_t bitmap_size;
    tschunk_segment_series_bitmap(seg, &bitmap, &bitmap_size);
    if (!bitmap || (const uint8_t *)bitmap < data || (const uint8_t *)bitmap + bitmap_size > data + size) __builtin_trap();
    tschunk_sketch *acc;
    tschunk_sketch_options so = {TSCHUNK_MAPPING_CUBIC, 0.01, 64, 0, {NULL, NULL, NULL}};
    if (tschunk_sketch_create(&acc, &so) == 0) {
        tschunk_segment_range_merge(seg, TSCHUNK_SEGMENT_ALL_SERIES, INT64_MIN, INT64_MAX, acc, NULL);
        tschunk_sketch_free(acc);
    }
    tschunk_segment_close(seg);
    return 0;
}
