/* Prometheus XOR chunk <-> native chunk, sample by sample, bit-exact, no allocation. */
#include "../common/common.h"

size_t tschunk_prom_to_native(const void *prom, size_t prom_size, void *dst, size_t capacity)
{
    tschunk_prom_iter it;
    size_t r = tschunk_prom_iter_init(&it, prom, prom_size);
    if (tschunk_is_error(r)) return r;
    tschunk_encoder enc;
    r = tschunk_encoder_init(&enc, dst, capacity, NULL);
    if (tschunk_is_error(r)) return r;
    int64_t ts;
    uint64_t bits;
    while ((r = tschunk_prom_iter_next_bits(&it, &ts, &bits)) == 1) {
        r = tschunk_append_bits(&enc, ts, bits);
        if (tschunk_is_error(r)) return r; /* OUT_OF_ORDER: time goes backwards in the Prometheus chunk */
    }
    if (tschunk_is_error(r)) return r;
    return tschunk_encoder_finish(&enc);
}

size_t tschunk_native_to_prom(const void *chunk, size_t size, void *dst, size_t capacity)
{
    tschunk_iter it;
    size_t r = tschunk_iter_init(&it, chunk, size);
    if (tschunk_is_error(r)) return r;
    tschunk_prom_encoder enc;
    r = tschunk_prom_encoder_init(&enc, dst, capacity, NULL);
    if (tschunk_is_error(r)) return r;
    int64_t ts;
    uint64_t bits;
    while ((r = tschunk_iter_next_bits(&it, &ts, &bits)) == 1) {
        r = tschunk_prom_append_bits(&enc, ts, bits);
        if (tschunk_is_error(r)) return r;
    }
    if (tschunk_is_error(r)) return r;
    return tschunk_prom_encoder_finish(&enc);
}
