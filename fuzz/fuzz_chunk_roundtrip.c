/* Bytes -> samples -> encode (codec 1 or 2, from the input; one by one, codec 1 through its baseline or BMI
 * build, with tschunk_append_many, tschunk_append_inline and tschunk_stage, which must agree) -> decode ->
 * compare bits; aborts on any mismatch. */
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_append_inline */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tschunk.h"

#define MAX_SAMPLES 2048

/* Each sample takes 9 input bytes: a timestamp step selector and value bits. */
static size_t samples_from_bytes(const uint8_t *data, size_t size, int64_t *ts, uint64_t *bits)
{
    size_t n = 0;
    int64_t t = size >= 8 ? (int64_t)((uint64_t)data[0] << 56 | (uint64_t)data[1] << 40) : 0;
    uint64_t prev = 0;
    for (size_t off = 0; off + 9 <= size && n < MAX_SAMPLES; off += 9) {
        uint8_t sel = data[off];
        uint64_t raw = 0;
        memcpy(&raw, data + off + 1, 8);
        uint64_t step = sel < 128 ? 0 : sel < 200 ? (uint64_t)(sel - 128) : sel < 250 ? raw >> 40 : raw >> 1;
        if ((uint64_t)INT64_MAX - (uint64_t)t < step) step = 0; /* stay non-decreasing */
        t = (int64_t)((uint64_t)t + step);
        uint64_t v = (sel & 3) == 0 ? prev : (sel & 3) == 1 ? prev ^ (raw & 0xffff) : raw;
        ts[n] = t;
        bits[n++] = prev = v;
    }
    return n;
}

/* The snapshot of n appended samples decodes to them; a sample going back is refused and changes nothing. */
static void check_snapshot_and_refusal(tschunk_encoder *enc, const int64_t *ts, const uint64_t *bits, size_t n)
{
    static unsigned char snap[TSCHUNK_BOUND(MAX_SAMPLES)];
    static int64_t snap_ts[MAX_SAMPLES];
    static double snap_v[MAX_SAMPLES];
    size_t size = tschunk_encoder_snapshot(enc, snap, sizeof snap);
    if (tschunk_is_error(size) || tschunk_decode(snap, size, snap_ts, snap_v, MAX_SAMPLES) != n ||
        memcmp(snap_ts, ts, n * 8) != 0 || memcmp(snap_v, bits, n * 8) != 0)
        __builtin_trap();
    if (ts[n - 1] == INT64_MIN) return;
    tschunk_encoder before = *enc;
    if (tschunk_get_error_code(tschunk_append_bits(enc, ts[n - 1] - 1, 0)) != TSCHUNK_ERROR_OUT_OF_ORDER ||
        memcmp(&before, enc, sizeof before) != 0)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int64_t ts[MAX_SAMPLES], out_ts[MAX_SAMPLES];
    static uint64_t bits[MAX_SAMPLES];
    static double out_v[MAX_SAMPLES];
    static unsigned char buf[TSCHUNK_BOUND(MAX_SAMPLES)];
    size_t n = samples_from_bytes(data, size, ts, bits);
    /* A capacity taken from the input exercises the buffer-full and rebalance paths. */
    size_t cap = size > 0 && data[size - 1] < 64 ? TSCHUNK_BOUND(1) + data[size - 1] * 40u : sizeof buf;
    tschunk_encoder enc;
    tschunk_encoder_options opts = {size > 1 && (data[1] & 1) ? TSCHUNK_CODEC_GORILLA : TSCHUNK_CODEC_TSC2, 0, 0, 0};
    if (tschunk_encoder_init(&enc, buf, cap, &opts) != 0) __builtin_trap();
    if (size > 1 && (data[1] & 2)) enc.isa = 0; /* codec 1 one by one through its baseline build (init picks BMI) */
    size_t accepted = 0, snap_at = size > 2 ? data[2] * 8u : 0; /* where a snapshot and a refusal are checked */
    for (; accepted < n; accepted++) {
        size_t r = tschunk_append_bits(&enc, ts[accepted], bits[accepted]);
        if (tschunk_is_error(r)) {
            if (tschunk_get_error_code(r) != TSCHUNK_ERROR_DST_TOO_SMALL) __builtin_trap();
            break;
        }
        /* The count, a snapshot and a refusal while codec 2's state lags behind its open group. */
        if (tschunk_encoder_count(&enc) != accepted + 1) __builtin_trap();
        if (accepted == snap_at) check_snapshot_and_refusal(&enc, ts, bits, accepted + 1);
    }
    size_t chunk = tschunk_encoder_finish(&enc);
    if (tschunk_is_error(chunk) || chunk > cap) __builtin_trap();
    /* tschunk_append_many: the same samples taken, the same refusal, the same bytes. */
    static unsigned char again[TSCHUNK_BOUND(MAX_SAMPLES)];
    static double values[MAX_SAMPLES];
    memcpy(values, bits, n * 8);
    tschunk_encoder bulk;
    size_t taken;
    if (tschunk_encoder_init(&bulk, again, cap, &opts) != 0) __builtin_trap();
    size_t r = tschunk_append_many(&bulk, ts, values, n, &taken);
    if (taken != accepted || (r != 0) != (accepted < n)) __builtin_trap();
    if (tschunk_encoder_finish(&bulk) != chunk || memcmp(again, buf, chunk) != 0) __builtin_trap();
    /* tschunk_append_inline: the same samples taken, the same bytes. */
    tschunk_encoder inlined;
    if (tschunk_encoder_init(&inlined, again, cap, &opts) != 0) __builtin_trap();
    size_t kept = 0;
    while (kept < n && !tschunk_is_error(tschunk_append_inline(&inlined, ts[kept], values[kept]))) kept++;
    if (kept != accepted || tschunk_encoder_finish(&inlined) != chunk || memcmp(again, buf, chunk) != 0)
        __builtin_trap();
    /* tschunk_stage: pushed until a push (or the last flush) is refused: the same samples taken, the same bytes. */
    static tschunk_stage stage;
    tschunk_stage_init(&stage);
    tschunk_encoder staged;
    if (tschunk_encoder_init(&staged, again, cap, &opts) != 0) __builtin_trap();
    size_t pushed = 0, refused = 0;
    while (pushed < n && !(refused = tschunk_stage_push(&stage, &staged, ts[pushed], values[pushed]))) pushed++;
    if (!refused) refused = tschunk_stage_flush(&stage, &staged);
    if (tschunk_encoder_count(&staged) != accepted || (refused != 0) != (accepted < n)) __builtin_trap();
    if (tschunk_encoder_finish(&staged) != chunk || memcmp(again, buf, chunk) != 0) __builtin_trap();
    size_t got = tschunk_decode(buf, chunk, out_ts, out_v, MAX_SAMPLES);
    if (got != accepted) __builtin_trap();
    if (memcmp(out_ts, ts, got * 8) != 0 || memcmp(out_v, bits, got * 8) != 0) __builtin_trap();
    return 0;
}
