/* Chunk decode of arbitrary bytes: info, validate, iterate, seek, batch read. */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(data, size, &info);
    if (tschunk_validate(data, size) != r) __builtin_trap();
    if (tschunk_is_error(r)) return 0;
    tschunk_iter it;
    if (tschunk_iter_init(&it, data, size) != 0) __builtin_trap();
    int64_t ts, last = INT64_MIN;
    double v;
    size_t n = 0;
    while ((r = tschunk_iter_next(&it, &ts, &v)) == 1) {
        if (ts < last || ++n > info.count) __builtin_trap();
        last = ts;
    }
    if (!tschunk_is_error(r) && n != info.count) __builtin_trap();
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
