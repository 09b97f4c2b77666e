/*
 * Prometheus XOR decode of arbitrary bytes: iterate, seek, batch read; the
 * batch decode's loops (checked only, unchecked scalar, BMI2 twin) give the
 * same result as each other and as the iterator, sample for sample; the
 * input cut into up to four chunks decodes with tschunk_prom_decode_chunks
 * (two chunks side by side) as chunk by chunk.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "decode_loops.h"
#include "tschunk.h"
#include "prom/decoder.h"

static void batch_matches_iterator(const uint8_t *data, size_t size, size_t count)
{
    int64_t *ts = malloc((count + 1) * 3 * sizeof *ts);
    double *v = malloc((count + 1) * 3 * sizeof *v);
    if (!ts || !v) __builtin_trap();
    size_t batch = decode_every_loop(tsc_prom_decode_with, data, size, count, ts, v);
    tschunk_prom_iter it;
    if (tschunk_prom_iter_init(&it, data, size)) __builtin_trap();
    size_t n = 0, step;
    int64_t one_ts;
    uint64_t one_bits;
    while ((step = tschunk_prom_iter_next_bits(&it, &one_ts, &one_bits)) == 1) {
        if (!tschunk_is_error(batch) && (one_ts != ts[n] || memcmp(&one_bits, &v[n], 8))) __builtin_trap();
        n++;
    }
    if (tschunk_is_error(step) != tschunk_is_error(batch)) __builtin_trap();
    free(ts);
    free(v);
}

/* The input cut into chunks at points its first byte picks; each decoded alone, then all together. */
static void chunks_match_one_by_one(const uint8_t *data, size_t size)
{
    if (size < 1) return;
    const void *chunks[4];
    size_t sizes[4], n = (size_t)(data[0] & 3) + 1, total = 0, at = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        size_t end = i + 1 == n ? size : size * (i + 1) / n + (data[0] >> 4) % 4;
        if (end > size) end = size;
        if (end < at) end = at;
        chunks[i] = data + at;
        sizes[i] = end - at;
        at = end;
        size_t count = tschunk_prom_count(chunks[i], sizes[i]);
        if (tschunk_is_error(count)) return;
        total += count;
    }
    int64_t *ts = malloc((total + 1) * 2 * sizeof *ts);
    double *v = malloc((total + 1) * 2 * sizeof *v);
    if (!ts || !v) __builtin_trap();
    for (size_t i = 0, pos = 0; i < n; i++) {
        size_t r = tschunk_prom_decode(chunks[i], sizes[i], ts + pos, v + pos, total - pos);
        if (tschunk_is_error(r)) err = r;
        pos += tschunk_prom_count(chunks[i], sizes[i]);
    }
    static const int loops[3] = {TSC_LOOPS_CHECKED, TSC_LOOPS_SCALAR, TSC_LOOPS_AUTO};
    for (int l = 0; l < 3; l++) {
        size_t r = tsc_prom_decode_chunks_with(chunks, sizes, n, ts + total + 1, v + total + 1, total, loops[l]);
        if (tschunk_is_error(r) != (err != 0)) __builtin_trap();
        if (err) continue;
        if (r != total || memcmp(ts, ts + total + 1, total * sizeof *ts) || memcmp(v, v + total + 1, total * sizeof *v))
            __builtin_trap();
    }
    free(ts);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chunks_match_one_by_one(data, size);
    tschunk_prom_iter it;
    if (tschunk_is_error(tschunk_prom_iter_init(&it, data, size))) return 0;
    size_t count = tschunk_prom_count(data, size), n = 0, r;
    int64_t ts;
    double v;
    while ((r = tschunk_prom_iter_next(&it, &ts, &v)) == 1)
        if (++n > count) __builtin_trap();
    if (!tschunk_is_error(r) && n != count) __builtin_trap();
    batch_matches_iterator(data, size, count);
    if (tschunk_prom_iter_init(&it, data, size) == 0) {
        r = tschunk_prom_iter_seek(&it, (int64_t)((uint64_t)size * 7919u));
        int64_t tsa[40];
        double va[40];
        while (!tschunk_is_error(r) && (r = tschunk_prom_iter_read(&it, tsa, va, 40)) > 0) {}
    }
    return 0;
}
