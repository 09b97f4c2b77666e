/*
 * Bytes -> samples -> codec 2 encode (limits from the input; chunk after
 * chunk through tschunk_encoder_restart) -> decode -> compare bits. Values mix decimals (exact, noisy by a few ulps, float32),
 * repeats, special values and random bits, so every group form and
 * exception kind is reached. Each chunk keeps a summary (mapping and bin
 * limit from the input), which must be byte-identical to the summary codec 1
 * builds value by value from the same samples (codec 2 adds whole groups).
 * Aborts on any mismatch or limit broken.
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

/* The summary blob codec 1 writes for these samples, value by value (and, the same, in bulk). */
static size_t reference_summary(const int64_t *ts, const uint64_t *bits, size_t n, tschunk_sketch *sketch,
                                unsigned char *blob, size_t capacity)
{
    static unsigned char chunk[TSCHUNK_BOUND(MAX_SAMPLES)];
    tschunk_encoder enc;
    tschunk_encoder_options o = {TSCHUNK_CODEC_GORILLA, 0, 0, 0};
    if (tschunk_encoder_init(&enc, chunk, sizeof chunk, &o) || tschunk_encoder_set_summary(&enc, sketch)) __builtin_trap();
    for (size_t i = 0; i < n; i++)
        if (tschunk_append_bits(&enc, ts[i], bits[i])) __builtin_trap();
    if (tschunk_is_error(tschunk_encoder_finish(&enc))) __builtin_trap();
    size_t size = tschunk_encoder_write_summary(&enc, blob, capacity);
    /* Codec 1's bulk append hands the summary whole runs: the blob must be the same. */
    static unsigned char bulk_blob[1 << 16];
    static double values[MAX_SAMPLES];
    memcpy(values, bits, n * 8);
    if (tschunk_encoder_init(&enc, chunk, sizeof chunk, &o) || tschunk_encoder_set_summary(&enc, sketch)) __builtin_trap();
    if (tschunk_append_many(&enc, ts, values, n, NULL) || tschunk_is_error(tschunk_encoder_finish(&enc))) __builtin_trap();
    size_t bulk = tschunk_encoder_write_summary(&enc, bulk_blob, sizeof bulk_blob);
    if (bulk != size || (!tschunk_is_error(size) && memcmp(bulk_blob, blob, size) != 0)) __builtin_trap();
    /* Single appends and runs mixed (run lengths from the values' bits), so that codec 1's held values
     * meet bulk runs at every offset: the same blob again. */
    if (tschunk_encoder_init(&enc, chunk, sizeof chunk, &o) || tschunk_encoder_set_summary(&enc, sketch))
        __builtin_trap();
    for (size_t i = 0; i < n;) {
        size_t run = 1 + (size_t)(bits[i] >> 3 & 31);
        if (run > n - i) run = n - i;
        size_t err = run == 1 ? tschunk_append_bits(&enc, ts[i], bits[i])
                              : tschunk_append_many(&enc, ts + i, values + i, run, NULL);
        if (err) __builtin_trap();
        i += run;
    }
    if (tschunk_is_error(tschunk_encoder_finish(&enc))) __builtin_trap();
    bulk = tschunk_encoder_write_summary(&enc, bulk_blob, sizeof bulk_blob);
    if (bulk != size || (!tschunk_is_error(size) && memcmp(bulk_blob, blob, size) != 0)) __builtin_trap();
    return size;
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
    tschunk_sketch_options so = {data[3] & 1 ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC, 0.01,
                                 data[3] & 2 ? 16u : 0u, (data[3] >> 2) & 1u, {0, 0, 0}, 0};
    tschunk_sketch *summary, *reference;
    if (tschunk_sketch_create(&summary, &so) || tschunk_sketch_create(&reference, &so)) __builtin_trap();
    static unsigned char blob[1 << 16], want[1 << 16];
    for (size_t from = 0, chunks = 0; from < n && chunks < 64; chunks++) {
        size_t r0 = chunks ? tschunk_encoder_restart(&enc, buf, cap) : tschunk_encoder_init(&enc, buf, cap, &o);
        if (r0 != 0) __builtin_trap();
        if (!chunks && tschunk_encoder_set_summary(&enc, summary)) __builtin_trap(); /* restart keeps it, cleared */
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
        size_t blob_size = tschunk_encoder_write_summary(&enc, blob, sizeof blob);
        size_t want_size = reference_summary(ts + from, bits + from, accepted, reference, want, sizeof want);
        if (tschunk_is_error(blob_size) || blob_size != want_size || memcmp(blob, want, blob_size) != 0) __builtin_trap();
        if (accepted == 0) break; /* not even one sample fits these limits */
        from += accepted;
    }
    tschunk_sketch_free(summary);
    tschunk_sketch_free(reference);
    return 0;
}
