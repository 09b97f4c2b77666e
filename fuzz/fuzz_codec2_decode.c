/*
 * Codec 2 decode of arbitrary group bytes: the input follows a fixed codec-2
 * header (format v1, codec 2, a count from the first two input bytes), so the
 * fuzzer spends its time in the group parser and decoders. Info, validate,
 * iterate, seek and batch read must agree and never misbehave.
 */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

#define MAX_INPUT 8192

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t chunk[MAX_INPUT + 8];
    static int64_t all_ts[TSCHUNK_MAX_SAMPLES];
    static double all_v[TSCHUNK_MAX_SAMPLES];
    if (size < 2 || size > MAX_INPUT) return 0;
    size_t count = ((size_t)data[0] << 8 | data[1]) % 1024;
    size_t h = 0;
    chunk[h++] = 0xc1;
    chunk[h++] = 0x02;
    chunk[h++] = (uint8_t)(count | (count >= 128 ? 0x80 : 0));
    if (count >= 128) chunk[h++] = (uint8_t)(count >> 7);
    memcpy(chunk + h, data + 2, size - 2);
    size_t len = h + size - 2;
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(chunk, len, &info);
    size_t v = tschunk_validate(chunk, len);
    /* validate makes info's checks: the group lengths, and the first group decoded. */
    if (v != r) __builtin_trap();
    tschunk_iter it;
    if (tschunk_is_error(v)) {
        /* The iterator checks each group as it reaches it: a chunk validate refuses never reads to a clean end. */
        if (tschunk_iter_init(&it, chunk, len) != 0) return 0;
        size_t got;
        while ((got = tschunk_iter_read(&it, all_ts, all_v, 300)) > 0 && !tschunk_is_error(got)) {}
        if (!tschunk_is_error(got)) __builtin_trap();
        return 0;
    }
    if (tschunk_iter_init(&it, chunk, len) != 0) __builtin_trap();
    int64_t ts, last = INT64_MIN;
    double value;
    size_t n = 0;
    while ((r = tschunk_iter_next(&it, &ts, &value)) == 1) {
        if (ts < last || n >= count) __builtin_trap();
        all_ts[n] = ts;
        memcpy(&all_v[n], &value, 8);
        last = ts;
        n++;
    }
    int clean = !tschunk_is_error(r);
    if (clean && n != count) __builtin_trap();
    /* The batch reader must give what the iterator gave. */
    static int64_t batch_ts[TSCHUNK_MAX_SAMPLES];
    static double batch_v[TSCHUNK_MAX_SAMPLES];
    size_t got = tschunk_decode(chunk, len, batch_ts, batch_v, TSCHUNK_MAX_SAMPLES);
    if (clean != !tschunk_is_error(got) || (!clean && got != r)) __builtin_trap(); /* the same error too */
    if (clean && (got != n || memcmp(batch_ts, all_ts, n * 8) || memcmp(batch_v, all_v, n * 8))) __builtin_trap();
    if (tschunk_iter_init(&it, chunk, len) == 0) {
        r = tschunk_iter_seek(&it, n ? all_ts[n / 2] : 0);
        int64_t tsa[37];
        double va[37];
        while (!tschunk_is_error(r) && (r = tschunk_iter_read(&it, tsa, va, 37)) > 0) {}
    }
    return 0;
}
