/*
 * Bytes -> samples -> codec 2 encode (limits from the input; chunk after
 * chunk through tschunk_encoder_restart) -> decode -> compare bits. Values mix decimals (exact, noisy by a few ulps, float32),
 * repeats, special values and random bits, so every group form and
 * exception kind is reached. Aborts on any mismatch or limit broken.
 */
#include <string.h>

#include "harness.h"
#include "tschunk.h"

#define MAX_SAMPLES 2048

static const double scale[4] = {1, 10, 100, 1000};

static uint64_t value_from(uint8_t sel, uint64_t raw, uint64_t prev)
{
    double d;
    switch (sel & 7) {
    case 0: return prev;
    case 1: return raw;
    case 2: d = (double)(int64_t)(raw % 200001 - 100000) / scale[(raw >> 20) & 3]; break;
    case 3: d = (double)(int64_t)(raw % 200001 - 100000) / scale[(raw >> 20) & 3]; memcpy(&raw, &d, 8); return raw + (sel >> 6) - 2;
    case 4: d = (double)(float)((double)(int64_t)(raw % 20001) / 100.0); break;
    case 5: return (sel & 8) ? 0x7ff0000000000002 : (sel & 16) ? 0x8000000000000000 : 0x7ff8000000000000 | (raw >> 14);
    case 6: d = (double)(raw % 1000000); break;
    default: return prev ^ (raw & 0xff);
    }
    memcpy(&raw, &d, 8);
    return raw;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int64_t ts[MAX_SAMPLES], out_ts[MAX_SAMPLES];
    static uint64_t bits[MAX_SAMPLES];
    static double out_v[MAX_SAMPLES];
    static unsigned char buf[TSCHUNK_BOUND(MAX_SAMPLES)];
    if (size < 4) return 0;
    /* First bytes: max_bytes (0 = none), capacity, max_samples. */
    uint32_t max_bytes = data[0] < 128 ? 0 : (uint32_t)data[0] * 23u;
    size_t cap = data[1] < 64 ? TSCHUNK_BOUND(1) + data[1] * 60u : sizeof buf;
    uint32_t max_samples = data[2] < 200 ? 0 : (uint32_t)(data[2] - 199) * 37u;
    int64_t t = (int64_t)((uint64_t)data[3] << 56);
    size_t n = 0;
    uint64_t prev = 0;
    for (size_t off = 4; off + 9 <= size && n < MAX_SAMPLES; off += 9) {
        uint8_t sel = data[off];
        uint64_t raw;
        memcpy(&raw, data + off + 1, 8);
        unsigned kind = sel >> 3u;
        uint64_t step = kind < 24 ? 15000u + kind : kind < 30 ? (uint64_t)(kind - 24) : raw >> 30;
        if ((uint64_t)INT64_MAX - (uint64_t)t < step) step = 0; /* stay non-decreasing */
        t = (int64_t)((uint64_t)t + step);
        ts[n] = t;
        bits[n++] = prev = value_from(sel, raw, prev);
    }
    /* The samples as one series' chunks: the first after init, the next ones after restart (learning carried). */
    tschunk_encoder enc;
    tschunk_encoder_options o = {TSCHUNK_CODEC_TSC2, max_samples, max_bytes, 0};
    for (size_t from = 0, chunks = 0; from < n && chunks < 64; chunks++) {
        size_t r0 = chunks ? tschunk_encoder_restart(&enc, buf, cap) : tschunk_encoder_init(&enc, buf, cap, &o);
        if (r0 != 0) __builtin_trap();
        size_t accepted = 0;
        for (; from + accepted < n; accepted++) {
            size_t r = tschunk_append_bits(&enc, ts[from + accepted], bits[from + accepted]);
            if (tschunk_is_error(r)) {
                tschunk_error_code c = tschunk_get_error_code(r);
                if (c != TSCHUNK_ERROR_DST_TOO_SMALL && c != TSCHUNK_ERROR_CHUNK_FULL) __builtin_trap();
                break;
            }
        }
        size_t chunk = tschunk_encoder_finish(&enc);
        if (tschunk_is_error(chunk) || chunk > cap || (max_bytes && chunk > max_bytes)) __builtin_trap();
        if (max_samples && accepted > max_samples) __builtin_trap();
        size_t got = tschunk_decode(buf, chunk, out_ts, out_v, MAX_SAMPLES);
        if (got != accepted) __builtin_trap();
        if (memcmp(out_ts, ts + from, got * 8) != 0 || memcmp(out_v, bits + from, got * 8) != 0) __builtin_trap();
        if (accepted == 0) break; /* not even one sample fits these limits */
        from += accepted;
    }
    return 0;
}
