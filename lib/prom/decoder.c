/*
 * Prometheus XOR chunk decoder: iterator, seek, batch read. Follows
 * Prometheus' reader (a window-reuse field before any window reads 64 bits;
 * bytes after the last sample are ignored) and never reads outside the chunk.
 */
#include "../common/common.h"
#include "../codec/bitstream.h"

static size_t fail(tschunk_prom_iter *it, tschunk_error_code code)
{
    it->error = (uint32_t)code;
    return TSC_ERROR_CODE(code);
}

/* Go's binary.Uvarint: LEB128, non-canonical forms accepted, > 64 bits refused.
 * @return bytes read, 0 when truncated or overflowing. */
static size_t go_uvarint(const uint8_t *p, size_t avail, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < avail && i < 10; i++) {
        uint64_t b = p[i];
        if (i == 9 && b > 1) return 0;
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

/* A dod: `0`, `10`+14, `110`+17, `1110`+20 (n-bit fields read as v - 2^n when
 * v > 2^(n-1), as Prometheus does), `1111`+64. */
TSC_INLINE uint64_t decode_dod(const uint8_t *base, size_t len, uint64_t *pos)
{
    uint64_t win = tsc_peek(base, len, *pos);
    unsigned ones = (unsigned)__builtin_clzll(~win | (UINT64_C(1) << 59));
    if (TSC_UNLIKELY(ones == 4)) {
        uint64_t dod = tsc_peek_wide(base, len, *pos + 4, 64);
        *pos += 68;
        return dod;
    }
    unsigned prefix = ones + 1;                                                /* 1, 2, 3, 4 */
    unsigned payload = (unsigned)(UINT32_C(0x14110e00) >> (ones * 8)) & 0xff; /* 0, 14, 17, 20 */
    uint64_t raw = ((win << prefix) >> (63 - payload)) >> 1;
    uint64_t half = (UINT64_C(1) << payload) >> 1;
    *pos += prefix + payload;
    return raw > half ? raw - (UINT64_C(1) << payload) : raw;
}

/* The XOR field; the window is (lead, width), width 64 before any window. */
TSC_INLINE uint64_t decode_xor(const uint8_t *base, size_t len, uint64_t *pos, unsigned *lead, unsigned *width,
                               unsigned *bad)
{
    uint64_t win = tsc_peek(base, len, *pos);
    if (!(win >> 63)) {
        *pos += 1;
        return 0;
    }
    unsigned head = 2;
    if ((win >> 62) & 1) {
        unsigned new_lead = (unsigned)(win >> 57) & 31;
        unsigned size = (unsigned)(win >> 51) & 63;
        size = size ? size : 64;
        *bad |= new_lead + size > 64;
        *lead = new_lead;
        *width = size;
        head = 13;
    }
    uint64_t at = *pos + head, payload;
    if (TSC_LIKELY(*width <= TSC_BITS_MAX_FIELD)) payload = (tsc_peek(base, len, at) >> 1) >> (63 - *width);
    else payload = tsc_peek_wide(base, len, at, *width);
    *pos = at + *width;
    return payload << ((64 - *lead - *width) & 63);
}

size_t tschunk_prom_count(const void *chunk, size_t size)
{
    if (!chunk) return TSC_ERROR(BAD_PARAMETER);
    if (size < 2) return TSC_ERROR(TRUNCATED);
    const uint8_t *p = (const uint8_t *)chunk;
    return (size_t)p[0] << 8 | p[1];
}

size_t tschunk_prom_iter_init(tschunk_prom_iter *it, const void *chunk, size_t size)
{
    if (!it) return TSC_ERROR(BAD_PARAMETER);
    size_t count = tschunk_prom_count(chunk, size);
    if (tschunk_is_error(count)) return count;
    /* Sample 0 takes at least 9 bytes, every later one at least 2 bits. */
    if (count && (size - 2 < 9 || (uint64_t)(size - 2 - 9) * 8 < (uint64_t)(count - 1) * 2))
        return TSC_ERROR(TRUNCATED);
    memset(it, 0, sizeof(*it));
    it->chunk = (const uint8_t *)chunk;
    it->size = size;
    it->count = (uint32_t)count;
    it->window_width = 64;
    tsc_br_init(&it->in, it->chunk + 2, size - 2);
    return 0;
}

/* Samples 0 and 1 start byte-aligned with varints. */
static size_t step_first(tschunk_prom_iter *it)
{
    const uint8_t *p = it->in.base + (it->in.bit_pos >> 3);
    size_t avail = it->in.byte_len - (size_t)(it->in.bit_pos >> 3);
    uint64_t v;
    size_t n = go_uvarint(p, avail, &v);
    if (n == 0) return fail(it, avail < 10 ? TSCHUNK_ERROR_TRUNCATED : TSCHUNK_ERROR_CORRUPT);
    it->in.bit_pos += n * 8;
    if (it->index == 0) {
        if (avail - n < 8) return fail(it, TSCHUNK_ERROR_TRUNCATED);
        it->ts = tsc_unzigzag(v);
        it->bits = tsc_load64_be(p + n);
        it->in.bit_pos += 64;
    } else {
        it->delta = v;
        it->ts = (int64_t)((uint64_t)it->ts + v);
        unsigned lead = it->window_lead, width = it->window_width, bad = 0;
        it->bits ^= decode_xor(it->in.base, it->in.byte_len, &it->in.bit_pos, &lead, &width, &bad);
        if (bad) return fail(it, TSCHUNK_ERROR_CORRUPT);
        if (tsc_br_overrun(&it->in)) return fail(it, TSCHUNK_ERROR_TRUNCATED);
        it->window_lead = (uint8_t)lead;
        it->window_width = (uint8_t)width;
    }
    it->index++;
    return 0;
}

/*
 * Samples 2.. in a register loop. Reads past the end see zeros; an overrun
 * is reported once, after the loop.
 * @return samples decoded, or an error.
 */
static size_t decode_run(tschunk_prom_iter *restrict it, int64_t *restrict ts_out, uint64_t *restrict val_out,
                         size_t n)
{
    const uint8_t *base = it->in.base;
    const size_t len = it->in.byte_len;
    uint64_t pos = it->in.bit_pos, delta = it->delta, bits = it->bits;
    int64_t ts = it->ts;
    unsigned lead = it->window_lead, width = it->window_width, bad = 0;
    for (size_t k = 0; k < n; k++) {
        delta += decode_dod(base, len, &pos);
        ts = (int64_t)((uint64_t)ts + delta);
        bits ^= decode_xor(base, len, &pos, &lead, &width, &bad);
        ts_out[k] = ts;
        val_out[k] = bits;
    }
    if (TSC_UNLIKELY(bad)) return fail(it, TSCHUNK_ERROR_CORRUPT);
    if (TSC_UNLIKELY(pos > it->in.bit_len)) return fail(it, TSCHUNK_ERROR_TRUNCATED);
    it->in.bit_pos = pos;
    it->delta = delta;
    it->ts = ts;
    it->bits = bits;
    it->window_lead = (uint8_t)lead;
    it->window_width = (uint8_t)width;
    it->index += (uint32_t)n;
    return n;
}

static size_t step(tschunk_prom_iter *it)
{
    if (it->index < 2) return step_first(it);
    int64_t ts;
    uint64_t bits;
    size_t r = decode_run(it, &ts, &bits, 1);
    return tschunk_is_error(r) ? r : 0;
}

size_t tschunk_prom_iter_next_bits(tschunk_prom_iter *it, int64_t *ts, uint64_t *value_bits)
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

size_t tschunk_prom_iter_next(tschunk_prom_iter *it, int64_t *ts, double *value)
{
    uint64_t bits;
    size_t r = tschunk_prom_iter_next_bits(it, ts, &bits);
    if (r == 1 && value) memcpy(value, &bits, sizeof bits);
    return r;
}

size_t tschunk_prom_iter_seek(tschunk_prom_iter *it, int64_t t)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    if (it->index > 0) {
        size_t err = tschunk_prom_iter_init(it, it->chunk, it->size);
        if (err) return err;
    }
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

#define READ_BLOCK 256

size_t tschunk_prom_iter_read(tschunk_prom_iter *restrict it, int64_t *restrict ts, double *restrict values,
                              size_t capacity)
{
    if (TSC_UNLIKELY(it->error)) return TSC_ERROR_CODE(it->error);
    int64_t ts_tmp[READ_BLOCK];
    uint64_t bits_tmp[READ_BLOCK];
    size_t n = 0;
    if (it->pending && capacity) {
        it->pending = 0;
        if (ts) ts[0] = it->ts;
        if (values) memcpy(&values[0], &it->bits, 8);
        n = 1;
    }
    while (n < capacity && it->index < it->count) {
        if (it->index < 2) {
            size_t err = step_first(it);
            if (err) return err;
            if (ts) ts[n] = it->ts;
            if (values) memcpy(&values[n], &it->bits, 8);
            n++;
            continue;
        }
        int direct = ts && values;
        size_t want = it->count - it->index;
        if (want > capacity - n) want = capacity - n;
        if (!direct && want > READ_BLOCK) want = READ_BLOCK;
        size_t got = decode_run(it, direct ? ts + n : ts_tmp,
                                direct ? (uint64_t *)(void *)(values + n) : bits_tmp, want);
        if (TSC_UNLIKELY(tschunk_is_error(got))) return got;
        if (!direct) {
            if (ts) memcpy(ts + n, ts_tmp, got * sizeof *ts);
            if (values) memcpy(values + n, bits_tmp, got * sizeof *values);
        }
        n += got;
    }
    return n;
}

size_t tschunk_prom_decode(const void *chunk, size_t size, int64_t *ts, double *values, size_t capacity)
{
    tschunk_prom_iter it;
    size_t err = tschunk_prom_iter_init(&it, chunk, size);
    if (err) return err;
    if (it.count > capacity) return TSC_ERROR(DST_TOO_SMALL);
    return tschunk_prom_iter_read(&it, ts, values, capacity);
}
