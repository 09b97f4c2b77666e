/*
 * Bit streams, most significant bit first: the first bit of a stream is the
 * 0x80 bit of its first byte. Unused low bits of the last byte are zero.
 *
 * Writer: the partial byte lives both in memory and in `partial` (its low
 * bits). Writing n bits builds, in one 64-bit register, the completed partial
 * byte, the whole bytes and the remaining high bits of a new partial byte, and
 * stores them with a single unaligned 8-byte store: no per-bit loop. The store
 * reaches up to 7 bytes past the last written byte, so the caller keeps 8
 * bytes of slack behind every stream (bit_limit accounts for it).
 *
 * Reader: one unaligned 8-byte load gives at least 57 valid bits at bit_pos.
 * Near the end of the stream it loads through a zero-filled copy, so it never
 * touches a byte outside [base, base + byte_len). Running past bit_len is
 * detected by the caller comparing bit_pos with bit_len.
 */
#ifndef TSCHUNK_BITSTREAM_H
#define TSCHUNK_BITSTREAM_H

#include "../common/common.h"

/* Largest field a single put or peek handles. */
#define TSC_BITS_MAX_FIELD 57u

TSC_INLINE void tsc_bw_init(tschunk_bit_writer *w, uint8_t *base, uint64_t bit_limit)
{
    w->base = base;
    w->bit_count = 0;
    w->partial = 0;
    w->bit_limit = bit_limit;
}

/*
 * Write the low n bits of v (1 <= n <= 57, v < 2^n). `partial` keeps the
 * partial byte's bits in its low end and is never masked: bits above the
 * `filled` valid ones are shifted out of every store.
 */
TSC_INLINE void tsc_bw_put(tschunk_bit_writer *restrict w, uint64_t v, unsigned n)
{
    unsigned filled = (unsigned)(w->bit_count & 7) + n; /* 1..64 */
    uint64_t acc = (w->partial << n) | v;
    tsc_store64_be(w->base + (w->bit_count >> 3), acc << (64 - filled));
    w->bit_count += n;
    w->partial = acc;
}

/* Write the low n bits of v, 0 <= n <= 64. */
TSC_INLINE void tsc_bw_put64(tschunk_bit_writer *restrict w, uint64_t v, unsigned n)
{
    if (n > TSC_BITS_MAX_FIELD) {
        tsc_bw_put(w, v >> 32, n - 32);
        tsc_bw_put(w, v & 0xffffffffu, 32);
    } else if (n > 0) {
        tsc_bw_put(w, v, n);
    }
}

/*
 * Write `head` (hl bits) then `tail` (tl bits, 1..64): a field longer than
 * one put (hl + tl > TSC_BITS_MAX_FIELD), hl <= 31, tail < 2^tl. The first
 * store takes the partial byte, the head and the tail's top `room` bits; a
 * second, 8 bytes on, the rest of the tail: no second pass through `*w`.
 */
TSC_INLINE void tsc_bw_put_long(tschunk_bit_writer *restrict w, uint64_t head, unsigned hl, uint64_t tail,
                                unsigned tl)
{
    uint64_t count = w->bit_count;
    unsigned room = 64 - (unsigned)(count & 7) - hl; /* 26..63 */
    uint64_t high = w->partial << hl | head;         /* the partial byte's bits and the head, in its low end */
    uint8_t *at = w->base + (count >> 3);
    if (tl > room) {
        unsigned rest = tl - room;
        tsc_store64_be(at, high << room | tail >> rest);
        tsc_store64_be(at + 8, tail << (64 - rest));
    } else {
        tsc_store64_be(at, high << room | tail << (room - tl));
    }
    w->bit_count = count + hl + tl;
    w->partial = tail; /* tl > 25: its low bits hold the new partial byte's */
}

TSC_INLINE size_t tsc_bw_bytes(const tschunk_bit_writer *w) { return (size_t)((w->bit_count + 7) >> 3); }

TSC_INLINE void tsc_br_init(tschunk_bit_reader *r, const uint8_t *base, size_t byte_len)
{
    r->base = base;
    r->byte_len = byte_len;
    r->bit_pos = 0;
    r->bit_len = (uint64_t)byte_len * 8;
}

/* 64 bits starting at bit_pos, first bit in the MSB; at least the top 57 are
 * stream bits (or zero past the end). */
TSC_INLINE uint64_t tsc_br_window(const tschunk_bit_reader *restrict r)
{
    size_t byte = (size_t)(r->bit_pos >> 3);
    uint64_t w;
    if (TSC_LIKELY(byte + 8 <= r->byte_len)) {
        w = tsc_load64_be(r->base + byte);
    } else {
        uint8_t tail[8] = {0};
        if (byte < r->byte_len) memcpy(tail, r->base + byte, r->byte_len - byte);
        w = tsc_load64_be(tail);
    }
    return w << (r->bit_pos & 7);
}

/* Read n bits, 1 <= n <= 57. */
TSC_INLINE uint64_t tsc_br_get(tschunk_bit_reader *restrict r, unsigned n)
{
    uint64_t v = tsc_br_window(r) >> (64 - n);
    r->bit_pos += n;
    return v;
}

/* Read n bits, 0 <= n <= 64. */
TSC_INLINE uint64_t tsc_br_get64(tschunk_bit_reader *restrict r, unsigned n)
{
    if (n > TSC_BITS_MAX_FIELD) {
        uint64_t hi = tsc_br_get(r, n - 32);
        return (hi << 32) | tsc_br_get(r, 32);
    }
    return n ? tsc_br_get(r, n) : 0;
}

TSC_INLINE int tsc_br_overrun(const tschunk_bit_reader *r) { return r->bit_pos > r->bit_len; }

/*
 * Position-based reads for decode loops that keep the position in a
 * register: the 64 bits at bit `pos` of a stream of `byte_len` bytes, first
 * bit in the MSB, at least 57 of them valid (zeros past the end).
 */
__attribute__((noinline, cold, unused)) static uint64_t tsc_peek_tail(const uint8_t *base, size_t byte_len,
                                                                        uint64_t pos)
{
    tschunk_bit_reader r = {base, pos, (uint64_t)byte_len * 8, byte_len};
    return tsc_br_window(&r);
}

TSC_INLINE uint64_t tsc_peek(const uint8_t *base, size_t byte_len, uint64_t pos)
{
    size_t byte = (size_t)(pos >> 3);
    if (TSC_LIKELY(byte + 8 <= byte_len)) return tsc_load64_be(base + byte) << (pos & 7);
    return tsc_peek_tail(base, byte_len, pos);
}

/*
 * tsc_peek, or with checked = 0 a plain load, for decode loops that run
 * unchecked while the stream has 64 bits of room beyond any field they read
 * (a compile-time constant after inlining).
 */
TSC_INLINE uint64_t tsc_peek_if(const uint8_t *base, size_t byte_len, uint64_t pos, int checked)
{
    if (checked) return tsc_peek(base, byte_len, pos);
    return tsc_load64_be(base + (pos >> 3)) << (pos & 7);
}

/* n bits at pos, 32 < n <= 64. */
TSC_INLINE uint64_t tsc_peek_wide_if(const uint8_t *base, size_t byte_len, uint64_t pos, unsigned n, int checked)
{
    uint64_t hi = tsc_peek_if(base, byte_len, pos, checked) >> (64 - (n - 32));
    uint64_t lo = tsc_peek_if(base, byte_len, pos + n - 32, checked) >> 32;
    return hi << 32 | lo;
}


#endif
