/*
 * The XOR value field of chunk format v1 (README "Chunk format v1"), shared by
 * codec 1's value stream and codec 2's XOR groups:
 *   `0`                                  the value equals the previous one
 *   `10` + window bits                   XOR fits the current window
 *   `11` + 5-bit lead + 6-bit (size - 1) + size bits   a new window
 * The window is (lead, trail); 0xff in both means no window is open yet.
 */
#ifndef TSCHUNK_XOR_H
#define TSCHUNK_XOR_H

#include "bitstream.h"

#define TSC_XOR_NO_WINDOW 0xffu
#define TSC_XOR_LEAD_MAX 31u
#define TSC_XOR_WORST_BITS 77u

/*
 * Window reset (metrictank's rule with a measured threshold, README
 * "Format choices"): a value that fits the current window still opens a new
 * one when the window is this many bits or more wider than the value needs.
 * 12 is the greedy break-even (13 + S < 2 + W) and the best mean, but narrowed
 * windows cost high-entropy series (POI-lon +1.1 bits/value); 16 keeps most of
 * the gain (-4.8 of -5.0 bits/value on average) and costs them 0.3 at most.
 */
#define TSC_WINDOW_RESET_BITS 16u

/* Whether x (non-zero) is written in the current window rather than a new one. */
TSC_INLINE int tsc_xor_reuse_window(unsigned lead, unsigned trail, unsigned wlead, unsigned wtrail)
{
    /* TSC_XOR_NO_WINDOW (255) fails the first test, so no separate "open" flag. */
    return lead >= wlead && trail >= wtrail && lead + trail < wlead + wtrail + TSC_WINDOW_RESET_BITS;
}

TSC_INLINE unsigned tsc_xor_clamped_lead(uint64_t x)
{
    unsigned lead = (unsigned)__builtin_clzll(x);
    return lead > TSC_XOR_LEAD_MAX ? TSC_XOR_LEAD_MAX : lead;
}

/* Bits the field for x = value ^ previous costs in window (wlead, wtrail), without writing it. */
TSC_INLINE unsigned tsc_xor_field_bits(uint64_t x, unsigned wlead, unsigned wtrail)
{
    if (x == 0) return 1;
    unsigned lead = tsc_xor_clamped_lead(x), trail = (unsigned)__builtin_ctzll(x);
    if (tsc_xor_reuse_window(lead, trail, wlead, wtrail)) return 2 + 64 - wlead - wtrail;
    return 13 + 64 - lead - trail;
}

/* The same, and the window moved as tsc_xor_put moves it: a stream sized without writing it. */
TSC_INLINE unsigned tsc_xor_size_step(uint64_t x, uint8_t *restrict wlead_io, uint8_t *restrict wtrail_io)
{
    if (x == 0) return 1;
    unsigned lead = tsc_xor_clamped_lead(x), trail = (unsigned)__builtin_ctzll(x);
    if (tsc_xor_reuse_window(lead, trail, *wlead_io, *wtrail_io)) return 2 + 64 - *wlead_io - *wtrail_io;
    *wlead_io = (uint8_t)lead;
    *wtrail_io = (uint8_t)trail;
    return 13 + 64 - lead - trail;
}

/* Write the field for x = value ^ previous and move the window. */
TSC_INLINE void tsc_xor_put(tschunk_bit_writer *restrict w, uint64_t x, uint8_t *restrict wlead_io,
                            uint8_t *restrict wtrail_io)
{
    if (x == 0) {
        tsc_bw_put(w, 0, 1);
        return;
    }
    unsigned lead = tsc_xor_clamped_lead(x), trail = (unsigned)__builtin_ctzll(x);
    unsigned wlead = *wlead_io, wtrail = *wtrail_io;
    if (tsc_xor_reuse_window(lead, trail, wlead, wtrail)) {
        unsigned width = 64 - wlead - wtrail;
        if (TSC_LIKELY(width <= TSC_BITS_MAX_FIELD - 2)) {
            tsc_bw_put(w, (UINT64_C(0x2) << width) | (x >> wtrail), width + 2);
        } else {
            tsc_bw_put_long(w, 0x2, 2, x >> wtrail, width);
        }
        return;
    }
    unsigned size = 64 - lead - trail; /* 1..64 */
    uint64_t head = (UINT64_C(0x3) << 11) | ((uint64_t)lead << 6) | (size - 1);
    if (TSC_LIKELY(size <= TSC_BITS_MAX_FIELD - 13)) {
        tsc_bw_put(w, (head << size) | (x >> trail), 13 + size);
    } else {
        tsc_bw_put(w, head, 13);
        tsc_bw_put64(w, x >> trail, size);
    }
    *wlead_io = (uint8_t)lead;
    *wtrail_io = (uint8_t)trail;
}

/*
 * Read one field at *pos; (lead, width) is the current window, width 0 before
 * any window. Sets *bad for a field no encoder writes (reuse before a window,
 * lead + size > 64). Branches on the field kind: on real data they predict well
 * and cost fewer instructions than computing every case.
 * @return x, to be XORed into the previous value.
 */
TSC_INLINE uint64_t tsc_xor_get_if(const uint8_t *base, size_t byte_len, uint64_t *pos, unsigned *lead,
                                   unsigned *width, unsigned *bad, int checked)
{
    uint64_t win = tsc_peek_if(base, byte_len, *pos, checked);
    if (!(win >> 63)) {
        *pos += 1;
        return 0;
    }
    unsigned head = 2;
    if ((win >> 62) & 1) {
        *lead = (unsigned)(win >> 57) & 31;
        *width = ((unsigned)(win >> 51) & 63) + 1;
        head = 13;
    }
    /* width 0 wraps to a huge value, as does lead + width > 64. */
    *bad |= *lead + *width - 1 > 63;
    uint64_t at = *pos + head, payload;
    if (TSC_LIKELY(*width <= TSC_BITS_MAX_FIELD))
        payload = (tsc_peek_if(base, byte_len, at, checked) >> 1) >> (63 - *width);
    else
        payload = tsc_peek_wide_if(base, byte_len, at, *width, checked);
    *pos = at + *width;
    return payload << ((64 - *lead - *width) & 63);
}

TSC_INLINE uint64_t tsc_xor_get(const uint8_t *base, size_t byte_len, uint64_t *pos, unsigned *lead,
                                unsigned *width, unsigned *bad)
{
    return tsc_xor_get_if(base, byte_len, pos, lead, width, bad, 1);
}

#endif
