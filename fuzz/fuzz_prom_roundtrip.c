/* Differential: bytes -> samples (time may go backwards, as Prometheus' format
 * allows) -> Prometheus XOR encode (in bulk, one by one and through a tschunk_stage: the same bytes, odd-sized
 * inputs one by one through the baseline build) -> decode -> compare bits. 0.41.5: under a max_bytes and
 * max_samples from the input, one by one and in bulk take the same samples, refuse alike, write the same bytes. */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

#define MAX_SAMPLES 2048

/* Appends until the first refusal under the limits; @return samples taken, *err the refusal (0: none). */
static size_t append_limited(unsigned char *buf, const tschunk_encoder_options *o, const int64_t *ts,
                             const uint64_t *bits, const double *values, size_t n, int bulk, int plain,
                             size_t *err, size_t *bytes)
{
    tschunk_prom_encoder enc;
    if (tschunk_prom_encoder_init(&enc, buf, TSCHUNK_PROM_BOUND(MAX_SAMPLES), o) != 0) __builtin_trap();
    if (plain) enc.isa = 0;
    size_t taken = 0;
    *err = 0;
    if (bulk) {
        *err = tschunk_prom_append_many(&enc, ts, values, n, &taken);
    } else {
        while (taken < n && !(*err = tschunk_prom_append_bits(&enc, ts[taken], bits[taken]))) taken++;
    }
    *bytes = tschunk_prom_encoder_finish(&enc);
    return taken;
}

static void check_limits(const int64_t *ts, const uint64_t *bits, const double *values, size_t n, uint8_t a,
                         uint8_t b, int plain)
{
    static unsigned char one[TSCHUNK_PROM_BOUND(MAX_SAMPLES)], many[TSCHUNK_PROM_BOUND(MAX_SAMPLES)];
    tschunk_encoder_options o = {0, (b & 1) ? 1u + (a & 63) : 0, (b & 2) ? 2u + (uint32_t)a * ((b >> 2) + 1) : 0, 0};
    size_t err_one, err_many, bytes_one, bytes_many;
    size_t took_one = append_limited(one, &o, ts, bits, values, n, 0, plain, &err_one, &bytes_one);
    size_t took_many = append_limited(many, &o, ts, bits, values, n, 1, plain, &err_many, &bytes_many);
    if (took_one != took_many || err_one != err_many || bytes_one != bytes_many) __builtin_trap();
    if (memcmp(one, many, bytes_one) != 0 || tschunk_prom_count(one, bytes_one) != took_one) __builtin_trap();
    if (o.max_bytes && bytes_one > o.max_bytes) __builtin_trap();
    if (o.max_samples && took_one > o.max_samples) __builtin_trap();
    if (took_one < n && tschunk_get_error_code(err_one) != TSCHUNK_ERROR_CHUNK_FULL) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int64_t ts[MAX_SAMPLES], out_ts[MAX_SAMPLES];
    static uint64_t bits[MAX_SAMPLES];
    static double values[MAX_SAMPLES], out_v[MAX_SAMPLES];
    static unsigned char buf[TSCHUNK_PROM_BOUND(MAX_SAMPLES)];
    size_t n = 0;
    int64_t t = 1700000000000;
    uint64_t prev = 0;
    for (size_t off = 0; off + 9 <= size && n < MAX_SAMPLES; off += 9) {
        uint8_t sel = data[off];
        uint64_t raw;
        memcpy(&raw, data + off + 1, 8);
        uint64_t step = sel < 100 ? (uint64_t)(15000 + (sel & 15)) : sel < 200 ? raw >> (sel & 63) : raw;
        t = (int64_t)((uint64_t)t + step); /* wraps: any int64 sequence */
        uint64_t v = (sel & 3) == 0 ? prev : (sel & 3) == 1 ? prev ^ (raw >> 40) : raw;
        ts[n] = t;
        bits[n] = prev = v;
        memcpy(&values[n], &v, 8);
        n++;
    }
    size_t chunk = tschunk_prom_encode(buf, sizeof buf, ts, values, n, NULL);
    if (tschunk_is_error(chunk)) __builtin_trap();
    if (tschunk_prom_count(buf, chunk) != n) __builtin_trap();
    /* tschunk_prom_encode appends in bulk: one-by-one appends must give the same bytes. */
    static unsigned char again[TSCHUNK_PROM_BOUND(MAX_SAMPLES)];
    tschunk_prom_encoder enc;
    if (tschunk_prom_encoder_init(&enc, again, sizeof again, NULL) != 0) __builtin_trap();
    if (size & 1) enc.isa = 0; /* one by one through the baseline build too (init picks BMI where the CPU has it) */
    for (size_t i = 0; i < n; i++)
        if (tschunk_prom_append_bits(&enc, ts[i], bits[i]) != 0) __builtin_trap();
    if (tschunk_prom_encoder_finish(&enc) != chunk || memcmp(again, buf, chunk) != 0) __builtin_trap();
    /* And through a tschunk_stage (time going back taken, as one by one): the same bytes. */
    static tschunk_stage stage;
    tschunk_stage_init(&stage);
    if (tschunk_prom_encoder_init(&enc, again, sizeof again, NULL) != 0) __builtin_trap();
    for (size_t i = 0; i < n; i++)
        if (tschunk_prom_stage_push(&stage, &enc, ts[i], values[i]) != 0) __builtin_trap();
    if (tschunk_prom_stage_flush(&stage, &enc) != 0 || stage.count != 0) __builtin_trap();
    if (tschunk_prom_encoder_finish(&enc) != chunk || memcmp(again, buf, chunk) != 0) __builtin_trap();
    if (size >= 2) check_limits(ts, bits, values, n, data[size - 2], data[size - 1], size & 1);
    size_t got = tschunk_prom_decode(buf, chunk, out_ts, out_v, MAX_SAMPLES);
    if (got != n || memcmp(out_ts, ts, n * 8) != 0 || memcmp(out_v, bits, n * 8) != 0) __builtin_trap();
    return 0;
}
