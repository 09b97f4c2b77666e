/*
 * Prometheus XOR decode of arbitrary bytes: iterate, seek, batch read; the
 * batch decode's loops (checked only, unchecked scalar, BMI2 twin) give the
 * same result as each other and as the iterator, sample for sample; the
 * input cut into up to sixteen chunks, and taken whole 16 times, decodes
 * with tschunk_prom_decode_chunks (two side by side, or 8 and 16 in AVX-512
 * lanes) as chunk by chunk; 0.8: what transcodes to a
 * native chunk holds the same samples, and transcodes back to them; 0.42:
 * the iterator's runs decoded ahead answer as one sample a step; 0.42.1: the
 * inline iterator step answers as the call, leaving the same iterator state.
 */
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_prom_iter_next_inline */
#include <stddef.h>
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

/* 0.42: the iterator, which decodes runs of samples ahead, against one stepped a sample at a time: the same
 * samples and the same error at the same sample, one by one, then after a seek in blocks of 37. */
static void runs_match_steps(const uint8_t *data, size_t size)
{
    tschunk_prom_iter runs, steps;
    if (tschunk_prom_iter_init(&runs, data, size) || tschunk_prom_iter_init(&steps, data, size)) __builtin_trap();
    tsc_prom_iter_step_only(&steps);
    size_t ra, rb;
    do {
        int64_t ta = 0, tb = 0;
        uint64_t ba = 0, bb = 0;
        ra = tschunk_prom_iter_next_bits(&runs, &ta, &ba);
        rb = tschunk_prom_iter_next_bits(&steps, &tb, &bb);
        if (ra != rb || ta != tb || ba != bb) __builtin_trap();
    } while (ra == 1);
    if (tschunk_prom_iter_init(&runs, data, size) || tschunk_prom_iter_init(&steps, data, size)) __builtin_trap();
    tsc_prom_iter_step_only(&steps);
    int64_t target = size > 12 ? (int64_t)tsc_load64_be(data + size - 8) >> (data[size - 9] & 63) : 0;
    ra = tschunk_prom_iter_seek(&runs, target);
    if (ra != tschunk_prom_iter_seek(&steps, target)) __builtin_trap();
    while (ra != 0 && !tschunk_is_error(ra)) {
        int64_t ta[37], tb[37];
        uint64_t va[37], vb[37];
        ra = tschunk_prom_iter_read(&runs, ta, (double *)(void *)va, 37);
        rb = tschunk_prom_iter_read(&steps, tb, (double *)(void *)vb, 37);
        if (ra != rb) __builtin_trap();
        if (!tschunk_is_error(ra) && (memcmp(ta, tb, ra * 8) || memcmp(va, vb, ra * 8))) __builtin_trap();
    }
}

/* Transcoding hostile bytes: an error, or a native chunk with the samples the Prometheus decoder reads,
 * which transcodes back to a chunk that decodes to them too. */
static void transcode_matches_decode(const uint8_t *data, size_t size, size_t count)
{
    size_t ncap = TSCHUNK_BOUND(count), pcap = TSCHUNK_PROM_BOUND(count);
    unsigned char *native = malloc(ncap), *back = malloc(pcap);
    int64_t *ts = malloc((count + 1) * 2 * sizeof *ts);
    double *v = malloc((count + 1) * 2 * sizeof *v);
    if (!native || !back || !ts || !v) __builtin_trap();
    size_t nsize = tschunk_prom_to_native(data, size, native, ncap);
    if (!tschunk_is_error(nsize)) {
        size_t n = tschunk_prom_decode(data, size, ts, v, count);
        if (n != count || tschunk_decode(native, nsize, ts + count + 1, v + count + 1, count) != count) __builtin_trap();
        if (memcmp(ts, ts + count + 1, count * 8) || memcmp(v, v + count + 1, count * 8)) __builtin_trap();
        size_t psize = tschunk_native_to_prom(native, nsize, back, pcap);
        if (tschunk_is_error(psize) || tschunk_prom_decode(back, psize, ts + count + 1, v + count + 1, count) != count)
            __builtin_trap();
        if (memcmp(ts, ts + count + 1, count * 8) || memcmp(v, v + count + 1, count * 8)) __builtin_trap();
    }
    free(native);
    free(back);
    free(ts);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chunks_match_one_by_one(data, size, tsc_prom_decode_chunks_with, tschunk_prom_decode, tschunk_prom_count);
    tschunk_prom_iter it, inl;
    if (tschunk_is_error(tschunk_prom_iter_init(&it, data, size))) return 0;
    if (tschunk_prom_iter_init(&inl, data, size)) __builtin_trap();
    size_t count = tschunk_prom_count(data, size), n = 0, r;
    int64_t ts, inl_ts = 0;
    double v, inl_v = 0;
    for (;;) {
        r = tschunk_prom_iter_next(&it, &ts, &v);
        if (tschunk_prom_iter_next_inline(&inl, &inl_ts, &inl_v) != r) __builtin_trap();
        if (memcmp(&it, &inl, offsetof(tschunk_prom_iter, run_ts))) __builtin_trap();
        if (r != 1) break;
        if (inl_ts != ts || memcmp(&inl_v, &v, sizeof v)) __builtin_trap();
        if (++n > count) __builtin_trap();
    }
    if (!tschunk_is_error(r) && n != count) __builtin_trap();
    batch_matches_iterator(data, size, count);
    runs_match_steps(data, size);
    transcode_matches_decode(data, size, count);
    if (tschunk_prom_iter_init(&it, data, size) == 0) {
        r = tschunk_prom_iter_seek(&it, (int64_t)((uint64_t)size * 7919u));
        int64_t tsa[40];
        double va[40];
        while (!tschunk_is_error(r) && (r = tschunk_prom_iter_read(&it, tsa, va, 40)) > 0) {}
    }
    return 0;
}
