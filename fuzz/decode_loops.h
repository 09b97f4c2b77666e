/* Shared by the decode harnesses that compare a decoder's loops. */
#ifndef TSCHUNK_FUZZ_DECODE_LOOPS_H
#define TSCHUNK_FUZZ_DECODE_LOOPS_H
#include "tschunk.h"
#include "common/common.h"
#include <stdlib.h>
#include <string.h>

/* An internal decode with its loops chosen (TSC_LOOPS_*): tsc_chunk_decode_with, tsc_prom_decode_with. */
typedef size_t (*decode_with_fn)(const void *, size_t, int64_t *, double *, size_t, int);

/*
 * Decodes with the checked loop into ts/v[0, count] and with the unchecked
 * loops (scalar, then as dispatched) into the next two thirds of the 3 *
 * (count + 1) entries; traps unless all three give the same result.
 * @return the checked loop's result (its samples at the start of ts/v).
 */
static inline size_t decode_every_loop(decode_with_fn decode_with, const uint8_t *data, size_t size, size_t count,
                                       int64_t *ts, double *v)
{
    static const int loops[3] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO};
    size_t r[3];
    for (int l = 0; l < 3; l++)
        r[l] = decode_with(data, size, ts + l * (count + 1), v + l * (count + 1), count, loops[l]);
    for (int l = 1; l < 3; l++) {
        if (r[l] != r[0]) __builtin_trap();
        if (tschunk_is_error(r[0])) continue;
        if (memcmp(ts, ts + l * (count + 1), r[0] * sizeof *ts)) __builtin_trap();
        if (memcmp(v, v + l * (count + 1), r[0] * sizeof *v)) __builtin_trap();
    }
    return r[0];
}
typedef size_t (*decode_chunks_with_fn)(const void *const *, const size_t *, size_t, int64_t *, double *, size_t, int);
typedef size_t (*decode_one_fn)(const void *, size_t, int64_t *, double *, size_t);
typedef size_t (*count_fn)(const void *, size_t);

/*
 * The input cut into up to sixteen chunks at points its first byte picks
 * (so that Prometheus's AVX-512 and AVX2 lanes, 8 or 16 chunks side by
 * side, are reached), then also taken whole 16 times; each chunk decoded alone, then
 * all together by decode_chunks with every loop choice: the same samples,
 * and an error exactly when one chunk has one.
 */
/* A list of chunks decoded one by one, then by decode_chunks with every loop choice: traps on a difference. */
static inline void list_matches_one_by_one(const void *const *chunks, const size_t *sizes, size_t n,
                                           decode_chunks_with_fn decode_chunks, decode_one_fn decode, count_fn count_of)
{
    size_t total = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        size_t count = count_of(chunks[i], sizes[i]);
        if (tschunk_is_error(count)) return;
        total += count;
    }
    int64_t *ts = malloc((total + 1) * 2 * sizeof *ts);
    double *v = malloc((total + 1) * 2 * sizeof *v);
    if (!ts || !v) __builtin_trap();
    for (size_t i = 0, pos = 0; i < n; i++) {
        size_t r = decode(chunks[i], sizes[i], ts + pos, v + pos, total - pos);
        if (tschunk_is_error(r)) err = r;
        pos += count_of(chunks[i], sizes[i]);
    }
    static const int loops[4] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO, TSC_LOOPS_AVX2};
    for (int l = 0; l < 4; l++) {
        size_t r = decode_chunks(chunks, sizes, n, ts + total + 1, v + total + 1, total, loops[l]);
        if (tschunk_is_error(r) != (err != 0)) __builtin_trap();
        if (err) continue;
        if (r != total || memcmp(ts, ts + total + 1, total * sizeof *ts) || memcmp(v, v + total + 1, total * sizeof *v))
            __builtin_trap();
    }
    free(ts);
    free(v);
}

static inline void chunks_match_one_by_one(const uint8_t *data, size_t size, decode_chunks_with_fn decode_chunks,
                                           decode_one_fn decode, count_fn count_of)
{
    if (size < 1) return;
    enum { MOST = 16 };
    const void *chunks[MOST];
    size_t sizes[MOST], n = (size_t)(data[0] & 15) + 1, at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t end = i + 1 == n ? size : size * (i + 1) / n + (data[0] >> 4) % 4;
        if (end > size) end = size;
        if (end < at) end = at;
        chunks[i] = data + at;
        sizes[i] = end - at;
        at = end;
    }
    list_matches_one_by_one(chunks, sizes, n, decode_chunks, decode, count_of);
    for (size_t i = 0; i < MOST; i++) {
        chunks[i] = data;
        sizes[i] = size;
    }
    list_matches_one_by_one(chunks, sizes, MOST, decode_chunks, decode, count_of);
}

#endif
