/* Shared by the decode harnesses that compare a decoder's loops. */
#ifndef TSCHUNK_FUZZ_DECODE_LOOPS_H
#define TSCHUNK_FUZZ_DECODE_LOOPS_H
#include "tschunk.h"
#include "common/common.h"
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
#endif
