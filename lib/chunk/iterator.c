/*
 * Chunk decoder: caller-allocated iterator with next, seek and batch read.
 *
 * The timestamp and value streams are read by two independent readers, so
 * the two per-sample dependency chains (dod -> delta -> ts, and
 * XOR -> window -> value) overlap in the CPU. Every read is bounds-checked
 * (tsc_br_window never loads outside the chunk); an overrun is reported once
 * per sample as TRUNCATED.
 */
#include "format.h"
#include "../codec/bitstream.h"

/* Decode tables for dod prefixes `0`, `10`, `110`, `1110` (index = leading ones). */
static const uint8_t dod_prefix_len[4] = {1, 2, 3, 4};
static const uint8_t dod_payload_len[4] = {0, 5, 8, 16};
static const uint64_t dod_sign_bit[4] = {0, UINT64_C(1) << 4, UINT64_C(1) << 7, UINT64_C(1) << 15};

static size_t fail(tschunk_iter *it, tschunk_error_code code)
{
    it->error = (uint32_t)code;
    return TSC_ERROR_CODE(code);
}

TSC_INLINE uint64_t decode_dod(tschunk_bit_reader *restrict r)
{
    uint64_t win = tsc_br_window(r);
    unsigned ones = tsc_clz64(~win | (UINT64_C(1) << 59)); /* 0..4 */
    if (TSC_UNLIKELY(ones == TSC_DOD_ESCAPE)) {
        r->bit_pos += 4;
        return tsc_br_get64(r, 64);
    }
    unsigned prefix = dod_prefix_len[ones], payload = dod_payload_len[ones];
    uint64_t raw = ((win << prefix) >> (63 - payload)) >> 1; /* payload 0 gives 0 */
    r->bit_pos += prefix + payload;
    return (raw ^ dod_sign_bit[ones]) - dod_sign_bit[ones];
}

/* @return the XOR with the previous value; sets *bad on an impossible field. */
TSC_INLINE uint64_t decode_xor(tschunk_iter *restrict it, tschunk_bit_reader *restrict r, unsigned *bad)
{
    uint64_t win = tsc_br_window(r);
    if (!(win >> 63)) {
        r->bit_pos += 1;
        return 0;
    }
    uint64_t payload;
    if (!((win >> 62) & 1)) {
        unsigned width = it->window_width;
        if (TSC_UNLIKELY(width == 0)) { /* reuse before any window was opened */
            *bad = 1;
            return 0;
        }
        if (TSC_LIKELY(width <= TSC_BITS_MAX_FIELD - 2)) {
            payload = (win << 2) >> (64 - width);
            r->bit_pos += 2 + width;
        } else {
            r->bit_pos += 2;
            payload = tsc_br_get64(r, width);
        }
        return payload << (64 - it->window_lead - width);
    }
    unsigned lead = (unsigned)(win >> 57) & 31;
    unsigned size = ((unsigned)(win >> 51) & 63) + 1;
    if (TSC_UNLIKELY(lead + size > 64)) {
        *bad = 1;
        return 0;
    }
    if (TSC_LIKELY(size <= TSC_BITS_MAX_FIELD - 13)) {
        payload = (win << 13) >> (64 - size);
        r->bit_pos += 13 + size;
    } else {
        r->bit_pos += 13;
        payload = tsc_br_get64(r, size);
    }
    it->window_lead = (uint8_t)lead;
    it->window_width = (uint8_t)size;
    return payload << (64 - lead - size);
}

/* The bits left in a finished stream must be the zero padding of its last byte. */
static int stream_tail_ok(const tschunk_bit_reader *r)
{
    uint64_t left = r->bit_len - r->bit_pos;
    if (left >= 8) return 0;
    return left == 0 || (tsc_br_window(r) >> (64 - left)) == 0;
}

static size_t finish_check(tschunk_iter *it)
{
    if (it->count >= 2 && !(it->flags & TSCHUNK_FLAG_VAL_CONST) && !stream_tail_ok(&it->val_in))
        return fail(it, TSCHUNK_ERROR_RESERVED_BITS);
    if (it->count >= 3 && !(it->flags & TSCHUNK_FLAG_TS_CONST) && !stream_tail_ok(&it->ts_in))
        return fail(it, TSCHUNK_ERROR_RESERVED_BITS);
    return 0;
}

/* Decode sample number it->index into it->ts / it->bits. @return 0 or an error. */
TSC_INLINE size_t step(tschunk_iter *restrict it)
{
    uint32_t i = it->index;
    if (TSC_UNLIKELY(i < 2)) {
        if (i == 0) {
            it->ts = it->first_ts;
            it->bits = it->first_bits;
            it->index = 1;
            return it->count == 1 ? finish_check(it) : 0;
        }
        it->delta = it->first_delta;
    } else if (!(it->flags & TSCHUNK_FLAG_TS_CONST)) {
        it->delta += decode_dod(&it->ts_in);
    }
    unsigned bad = 0;
    if (!(it->flags & TSCHUNK_FLAG_VAL_CONST)) it->bits ^= decode_xor(it, &it->val_in, &bad);
    int64_t ts = (int64_t)((uint64_t)it->ts + it->delta);
    if (TSC_UNLIKELY(bad | (ts < it->ts))) return fail(it, TSCHUNK_ERROR_CORRUPT);
    if (TSC_UNLIKELY(tsc_br_overrun(&it->ts_in) | tsc_br_overrun(&it->val_in)))
        return fail(it, TSCHUNK_ERROR_TRUNCATED);
    it->ts = ts;
    it->index = ++i;
    return i == it->count ? finish_check(it) : 0;
}

size_t tschunk_iter_init(tschunk_iter *it, const void *chunk, size_t size)
{
    if (!it || !chunk) return TSC_ERROR(BAD_PARAMETER);
    tsc_chunk_header h;
    size_t err = tsc_chunk_parse((const uint8_t *)chunk, size, &h);
    if (err) return err;
    const uint8_t *src = (const uint8_t *)chunk;
    memset(it, 0, sizeof(*it));
    it->chunk = src;
    it->size = size;
    it->count = h.info.count;
    it->flags = (uint8_t)h.info.flags;
    it->first_ts = h.info.first_ts;
    it->first_bits = h.info.first_bits;
    it->first_delta = h.info.first_delta;
    tsc_br_init(&it->val_in, src + h.value_offset, h.info.value_bytes);
    tsc_br_init(&it->ts_in, src + h.ts_offset, h.info.ts_bytes);
    return 0;
}

size_t tschunk_iter_next_bits(tschunk_iter *it, int64_t *ts, uint64_t *value_bits)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    if (it->pending) {
        it->pending = 0;
    } else {
        if (it->index >= it->count) return 0;
        size_t err = step(it);
        if (err) return err;
    }
    if (ts) *ts = it->ts;
    if (value_bits) *value_bits = it->bits;
    return 1;
}

size_t tschunk_iter_next(tschunk_iter *it, int64_t *ts, double *value)
{
    uint64_t bits;
    size_t r = tschunk_iter_next_bits(it, ts, &bits);
    if (r == 1 && value) memcpy(value, &bits, sizeof bits);
    return r;
}

size_t tschunk_iter_seek(tschunk_iter *it, int64_t t)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    /* The wanted sample may lie at or before the current one: start over. */
    if (it->index > 0 && it->ts >= t) {
        size_t err = tschunk_iter_init(it, it->chunk, it->size);
        if (err) return err;
    }
    it->pending = 0;
    while (it->index < it->count) {
        size_t err = step(it);
        if (err) return err;
        if (it->ts >= t) {
            it->pending = 1;
            return 1;
        }
    }
    return 0;
}

size_t tschunk_iter_read(tschunk_iter *restrict it, int64_t *restrict ts, double *restrict values,
                         size_t capacity)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    size_t n = 0;
    if (it->pending && capacity) {
        it->pending = 0;
        if (ts) ts[0] = it->ts;
        if (values) memcpy(&values[0], &it->bits, 8);
        n = 1;
    }
    size_t left = it->count - it->index;
    size_t end = capacity - n < left ? capacity : n + left;
    for (; n < end; n++) {
        size_t err = step(it);
        if (TSC_UNLIKELY(err != 0)) return err;
        if (ts) ts[n] = it->ts;
        if (values) memcpy(&values[n], &it->bits, 8);
    }
    return n;
}

size_t tschunk_decode(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity)
{
    tschunk_iter it;
    size_t err = tschunk_iter_init(&it, chunk, size);
    if (err) return err;
    if (it.count > capacity) return TSC_ERROR(DST_TOO_SMALL);
    return tschunk_iter_read(&it, ts, values, capacity);
}
