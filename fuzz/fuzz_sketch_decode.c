/* DDSketch compact decoding of arbitrary bytes: standalone, into an existing sketch, then use it; the same
 * bytes as a chunk summary blob and as a block summary blob (which a range query never trusts blindly). */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 256, size & 1, {0, 0, 0}};
    tschunk_sketch *s = NULL;
    size_t at = 0;
    if (tschunk_sketch_decode_new(&s, data, size, &o, &at) == 0) {
        double q;
        for (int i = 0; i <= 10; i++) tschunk_sketch_quantile(s, i / 10.0, &q);
        static unsigned char out[1 << 16];
        size_t bound = tschunk_sketch_encode_bound(s);
        size_t n = tschunk_sketch_encode(s, out, sizeof out, TSCHUNK_SKETCH_EXACT_STATS);
        if (!tschunk_is_error(n) && n > bound) __builtin_trap();
        tschunk_sketch_free(s);
    } else if (s != NULL || at > size) {
        __builtin_trap();
    }
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
