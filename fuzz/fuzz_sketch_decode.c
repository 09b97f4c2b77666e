/* DDSketch compact decoding of arbitrary bytes: standalone, into an existing sketch, then use it; with the
 * one-at-a-time bin reader and each bin kernel, scalar, pext, AVX2 and AVX-512 (the same sketch or the same error
 * at the same offset); the same bytes as a chunk summary blob and as a block summary blob (which a range query never
 * trusts blindly); what decodes, once or merged twice, encodes to a stream that decodes. */
#include <string.h>

#include "harness.h"
#include "sketch/sketch.h"
#include "tschunk.h"

/* The one-at-a-time reader against a bin kernel (TSC_BINS_*). */
static void reader_agrees(const uint8_t *data, size_t size, const tschunk_sketch_options *o, int reader)
{
    static unsigned char a[1 << 16], b[1 << 16];
    tschunk_sketch *x, *y;
    if (tschunk_sketch_create(&x, o) != 0 || tschunk_sketch_create(&y, o) != 0) __builtin_trap();
    size_t at_x = 0, at_y = 0;
    size_t rx = tsc_sketch_decode_merge_isa(x, data, size, &at_x, TSC_BINS_ONE_AT_A_TIME);
    size_t ry = tsc_sketch_decode_merge_isa(y, data, size, &at_y, reader);
    if (rx != ry || at_x != at_y) __builtin_trap();
    if (!tschunk_is_error(rx)) {
        size_t nx = tschunk_sketch_encode(x, a, sizeof a, TSCHUNK_SKETCH_EXACT_STATS);
        size_t ny = tschunk_sketch_encode(y, b, sizeof b, TSCHUNK_SKETCH_EXACT_STATS);
        if (nx != ny || (!tschunk_is_error(nx) && memcmp(a, b, nx) != 0)) __builtin_trap();
    }
    tschunk_sketch_free(x);
    tschunk_sketch_free(y);
}

static void readers_agree(const uint8_t *data, size_t size, const tschunk_sketch_options *o)
{
    reader_agrees(data, size, o, TSC_BINS_SCALAR_KERNEL);
    if (tsc_pext_here()) reader_agrees(data, size, o, TSC_BINS_PEXT_KERNEL);
    if (tsc_sketch_reader_runs_here(TSC_BINS_AVX2_KERNEL)) reader_agrees(data, size, o, TSC_BINS_AVX2_KERNEL);
    if (tsc_sketch_simd_here()) reader_agrees(data, size, o, TSC_BINS_AVX512);
}

/* What a sketch holds, it encodes to a stream this decoder reads (0.29.1: bins summed past DBL_MAX once made an
 * infinite count, which the decoder refuses; counts now saturate). */
static void encodes_to_what_decodes(const tschunk_sketch *s, const tschunk_sketch_options *o)
{
    static unsigned char out[1 << 16];
    size_t n = tschunk_sketch_encode(s, out, sizeof out, TSCHUNK_SKETCH_EXACT_STATS);
    if (tschunk_is_error(n)) return; /* larger than the buffer */
    tschunk_sketch *back;
    if (tschunk_sketch_decode_new(&back, out, n, o, NULL) != 0) __builtin_trap();
    tschunk_sketch_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 256, size & 1, {0, 0, 0}, 0};
    tschunk_sketch *s = NULL;
    size_t at = 0;
    if (tschunk_sketch_decode_new(&s, data, size, &o, &at) == 0) {
        double q;
        for (int i = 0; i <= 10; i++) tschunk_sketch_quantile(s, i / 10.0, &q);
        static unsigned char out[1 << 16];
        size_t bound = tschunk_sketch_encode_bound(s);
        size_t n = tschunk_sketch_encode(s, out, sizeof out, TSCHUNK_SKETCH_EXACT_STATS);
        if (!tschunk_is_error(n) && n > bound) __builtin_trap();
        encodes_to_what_decodes(s, &o);
        if (tschunk_sketch_decode_merge(s, data, size, NULL) == 0) encodes_to_what_decodes(s, &o); /* twice: sums */
        tschunk_sketch_free(s);
    } else if (s != NULL || at > size) {
        __builtin_trap();
    }
    readers_agree(data, size, &o);
    tschunk_sketch *t;
    if (tschunk_sketch_create(&t, &o) != 0) __builtin_trap();
    tschunk_sketch_add(t, 42.0);
    unsigned char before[512], after[512];
    size_t n1 = tschunk_sketch_encode(t, before, sizeof before, TSCHUNK_SKETCH_EXACT_STATS);
    if (tschunk_is_error(tschunk_sketch_decode_merge(t, data, size, NULL))) {
        size_t n2 = tschunk_sketch_encode(t, after, sizeof after, TSCHUNK_SKETCH_EXACT_STATS);
        if (n1 != n2 || memcmp(before, after, n1) != 0) __builtin_trap(); /* a failed decode changed it */
    }
    /* As summary blobs: a block of no chunks whose blob is these bytes never fails the query. */
    tschunk_summary_info info;
    if (tschunk_summary_parse(data, size, &info) == 0 &&
        (info.sketch < data || info.sketch + info.sketch_size != data + size || info.nan_count > info.count))
        __builtin_trap();
    tschunk_summary_merge(t, data, size);
    tschunk_summary_block block = {0, 0, data, size};
    tschunk_range_stats st;
    if (tschunk_range_merge_blocks(t, NULL, 0, &block, 1, INT64_MIN, INT64_MAX, &st) != 0) __builtin_trap();
    if (st.chunks_from_summaries + st.chunks_decoded + st.chunks_skipped != 0) __builtin_trap();
    tschunk_sketch_free(t);
    return 0;
}
