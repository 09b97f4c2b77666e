/* Prometheus XOR chunk <-> native chunk, bit-exact, no allocation: batches of samples on the stack, read
 * by the batch decoders and written by the bulk appends. */
#include "../common/common.h"

#define BATCH 256

size_t tschunk_prom_to_native(const void *prom, size_t prom_size, void *dst, size_t capacity)
{
    if (!dst) return TSC_ERROR(BAD_PARAMETER);
    tschunk_prom_iter it;
    size_t r = tschunk_prom_iter_init(&it, prom, prom_size);
    if (tsc_is_error(r)) return r;
    tschunk_encoder enc;
    r = tschunk_encoder_init(&enc, dst, capacity, NULL);
    if (tsc_is_error(r)) return r;
    int64_t ts[BATCH];
    double values[BATCH];
    while ((r = tschunk_prom_iter_read(&it, ts, values, BATCH)) != 0 && !tsc_is_error(r)) {
        size_t err = tschunk_append_many(&enc, ts, values, r, NULL);
        if (err) return err; /* OUT_OF_ORDER: time goes backwards in the Prometheus chunk */
    }
    if (tsc_is_error(r)) return r;
    return tschunk_encoder_finish(&enc);
}

size_t tschunk_native_to_prom(const void *chunk, size_t size, void *dst, size_t capacity)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, chunk, size);
    if (tsc_is_error(r)) return r;
    tschunk_prom_encoder enc;
    r = tschunk_prom_encoder_init(&enc, dst, capacity, NULL);
    if (tsc_is_error(r)) return r;
    int64_t ts[BATCH];
    double values[BATCH];
    while ((r = tschunk_iter_read(&it, ts, values, BATCH)) != 0 && !tsc_is_error(r)) {
        size_t err = tschunk_prom_append_many(&enc, ts, values, r, NULL);
        if (err) return err;
    }
    if (tsc_is_error(r)) return r;
    return tschunk_prom_encoder_finish(&enc);
}
