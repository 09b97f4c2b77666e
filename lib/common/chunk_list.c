/*
 * Decoding a list of chunks into one pair of arrays (tschunk_decode_chunks,
 * tschunk_prom_decode_chunks): the walk shared by both formats, which differ
 * in how they count a chunk's samples and decode several chunks at a time.
 */
#include "chunk_list.h"

size_t tsc_decode_chunk_list(const void *const *chunks, const size_t *sizes, size_t n_chunks, int64_t *ts,
                             double *values, size_t capacity, int loops, tsc_count_fn count, size_t per_call,
                             tsc_decode_some_fn some)
{
    if (n_chunks && (!chunks || !sizes)) return TSC_ERROR(BAD_PARAMETER);
    size_t total = 0;
    for (size_t i = 0; i < n_chunks; i++) {
        size_t c = count(chunks[i], sizes[i]);
        if (tschunk_is_error(c)) return c;
        total += c;
    }
    if (total > capacity) return TSC_ERROR(DST_TOO_SMALL);
    if (total && (!ts || !values)) return TSC_ERROR(BAD_PARAMETER);
    size_t done = 0;
    for (size_t i = 0; i < n_chunks; i = n_chunks - i < per_call ? n_chunks : i + per_call) {
        size_t r = some(chunks, sizes, i, n_chunks, ts + done, values + done, loops);
        if (tschunk_is_error(r)) return r;
        done += r;
    }
    return done;
}
