/*
 * Two decoders written from the README's format sections alone, codec 1 ("Chunk format v1") and codec 2 ("Codec
 * 2"): fields read one bit at a time, nothing shared with lib/. tests/test_spec.c and tests/test_spec2.c hold them
 * against the library on golden, library-written and damaged chunks, fuzz/fuzz_spec_decode.c on arbitrary bytes.
 * No Criterion here, so that the fuzz harness can include it.
 */
#ifndef TSCHUNK_SPEC_DECODERS_H
#define TSCHUNK_SPEC_DECODERS_H

#include <stdint.h>
#include <string.h>

#define SPEC_MAX 65536 /* one more than a chunk may hold */
#define SPEC2_GROUP 128

/* A README decoder: @return the sample count, -1 for a chunk the README does not allow, -2 for another codec. */
typedef long (*spec_decode_fn)(const uint8_t *chunk, size_t size, int64_t *ts, uint64_t *bits, size_t capacity);

/* LEB128 as README "Chunk format v1" defines it: canonical (no trailing zero group), at most 10 bytes, within 64
 * bits. */
static inline int spec_uvarint(const uint8_t *p, size_t size, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (*pos >= size) return -1;
        uint8_t b = p[(*pos)++];
        if (i == 9 && b > 1) return -1;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (i > 0 && b == 0) return -1;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* ---- codec 1 ---- */

typedef struct {
    const uint8_t *bytes;
    size_t size, bit; /* bit: the next bit to read, from the stream's first byte's 0x80 bit */
} spec_stream;

static inline int spec_bits(spec_stream *s, unsigned n, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        if (s->bit >= 8 * s->size) return -1;
        v = v << 1 | ((s->bytes[s->bit / 8] >> (7 - s->bit % 8)) & 1u);
        s->bit++;
    }
    *out = v;
    return 0;
}

/* "The unused low bits of a stream's last byte are zero; a stream holds no further byte." */
static inline int spec_stream_ends(const spec_stream *s)
{
    if ((s->bit + 7) / 8 != s->size) return -1;
    for (size_t b = s->bit; b % 8; b++)
        if ((s->bytes[b / 8] >> (7 - b % 8)) & 1u) return -1;
    return 0;
}

static inline int64_t spec_signed(uint64_t payload, unsigned bits)
{
    uint64_t sign = UINT64_C(1) << (bits - 1);
    return (int64_t)((payload ^ sign) - sign);
}

/* One delta of delta from the README's bucket table. */
static inline int spec_dod(spec_stream *s, int64_t *dod)
{
    static const unsigned payload_bits[5] = {5, 8, 11, 20, 64};
    uint64_t bit, payload;
    unsigned ones = 0;
    while (ones < 5) {
        if (spec_bits(s, 1, &bit)) return -1;
        if (!bit) break;
        ones++;
    }
    if (ones == 0) {
        *dod = 0;
        return 0;
    }
    unsigned n = payload_bits[ones - 1];
    if (spec_bits(s, n, &payload)) return -1;
    *dod = n == 64 ? (int64_t)payload : spec_signed(payload, n);
    return 0;
}

/* One XOR from the README's value table; *lead / *trail: the window, lead 64 while unset. */
static inline int spec_xor(spec_stream *s, unsigned *lead, unsigned *trail, uint64_t *x)
{
    uint64_t control, payload, l, s_minus_1;
    if (spec_bits(s, 1, &control)) return -1;
    if (!control) {
        *x = 0;
        return 0;
    }
    if (spec_bits(s, 1, &control)) return -1;
    if (!control) {
        if (*lead == 64) return -1; /* no window yet */
        if (spec_bits(s, 64 - *lead - *trail, &payload)) return -1;
        *x = payload << *trail;
        return 0;
    }
    if (spec_bits(s, 5, &l) || spec_bits(s, 6, &s_minus_1)) return -1;
    unsigned significant = (unsigned)s_minus_1 + 1;
    if (l + significant > 64) return -1;
    *lead = (unsigned)l;
    *trail = 64 - *lead - significant;
    if (spec_bits(s, significant, &payload)) return -1;
    *x = payload << *trail;
    return 0;
}

/* The README's header table, then the two streams. @return the sample count, -1 for a chunk the README does not
 * allow, -2 for another codec (not this decoder's). */
static inline long spec_decode(const uint8_t *chunk, size_t size, int64_t *ts, uint64_t *bits, size_t capacity)
{
    size_t pos = 2;
    if (size < 2 || chunk[0] != 0xc1) return -1;
    if ((chunk[1] & 0x0f) != 1) return -2;
    unsigned flags = chunk[1] >> 4, ts_const = flags & 1, val_const = flags & 2;
    uint64_t count, first_ts, first_delta, ts_len;
    if (flags & 0xc) return -1;
    if (spec_uvarint(chunk, size, &pos, &count) || count > 65535 || count > capacity) return -1;
    if (count < 2 && flags) return -1;
    if (count == 2 && !ts_const) return -1;
    if (count == 0) return pos == size ? 0 : -1;
    if (spec_uvarint(chunk, size, &pos, &first_ts) || size - pos < 8) return -1;
    ts[0] = (int64_t)((first_ts >> 1) ^ (0 - (first_ts & 1)));
    bits[0] = 0;
    for (int i = 7; i >= 0; i--) bits[0] = bits[0] << 8 | chunk[pos + (size_t)i];
    pos += 8;
    if (count == 1) return pos == size ? 1 : -1;
    if (spec_uvarint(chunk, size, &pos, &first_delta)) return -1;
    spec_stream times = {chunk + pos, 0, 0}, values;
    if (!ts_const) {
        if (spec_uvarint(chunk, size, &pos, &ts_len) || ts_len > size - pos) return -1;
        times.bytes = chunk + pos;
        times.size = (size_t)ts_len;
        pos += (size_t)ts_len;
    }
    values = (spec_stream){chunk + pos, size - pos, 0};
    if (val_const && pos != size) return -1;
    uint64_t delta = first_delta;
    unsigned lead = 64, trail = 0;
    for (size_t i = 1; i < count; i++) {
        if (i >= 2 && !ts_const) {
            int64_t dod;
            if (spec_dod(&times, &dod)) return -1;
            delta += (uint64_t)dod;
        }
        ts[i] = (int64_t)((uint64_t)ts[i - 1] + delta);
        if (ts[i] < ts[i - 1]) return -1;
        uint64_t x = 0;
        if (!val_const && spec_xor(&values, &lead, &trail, &x)) return -1;
        bits[i] = bits[i - 1] ^ x;
    }
    if (!ts_const && spec_stream_ends(&times)) return -1;
    if (!val_const && spec_stream_ends(&values)) return -1;
    return (long)count;
}

/* ---- codec 2 ---- */

typedef struct {
    const uint8_t *c;
    size_t size, pos;
} spec2_in;

static inline int take_byte(spec2_in *in, uint8_t *b)
{
    if (in->pos >= in->size) return -1;
    *b = in->c[in->pos++];
    return 0;
}

static inline int take_uvarint(spec2_in *in, uint64_t *out) { return spec_uvarint(in->c, in->size, &in->pos, out); }

static inline int64_t unzigzag(uint64_t z) { return (int64_t)((z >> 1) ^ (0 - (z & 1))); }

static inline int take_zigzag(spec2_in *in, int64_t *out)
{
    uint64_t z;
    if (take_uvarint(in, &z)) return -1;
    *out = unzigzag(z);
    return 0;
}

static inline int take_le64(spec2_in *in, uint64_t *out)
{
    if (in->size - in->pos < 8) return -1;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | in->c[in->pos + (size_t)i];
    in->pos += 8;
    *out = v;
    return 0;
}

/* "Packed fields are LSB-first: field i is bits [i*w, (i+1)*w) of the little-endian bit string that starts at the
 * first byte, unused high bits of the last byte zero." */
static inline int take_packed(spec2_in *in, size_t fields, unsigned width, uint64_t *out)
{
    size_t bits = fields * width, bytes = (bits + 7) / 8;
    if (in->size - in->pos < bytes) return -1;
    const uint8_t *p = in->c + in->pos;
    for (size_t i = 0; i < fields; i++) {
        uint64_t v = 0;
        for (unsigned b = 0; b < width; b++) {
            size_t at = i * width + b;
            v |= (uint64_t)((p[at / 8] >> (at % 8)) & 1u) << b;
        }
        out[i] = v;
    }
    for (size_t at = bits; at < 8 * bytes; at++)
        if ((p[at / 8] >> (at % 8)) & 1u) return -1;
    in->pos += bytes;
    return 0;
}

/* A timestamp block's fields: form code c (0-64 packed at c, 65-127 PATCHED at c - 65 with uvarint patches). */
static inline int take_ts_fields(spec2_in *in, unsigned c, size_t fields, uint64_t *out)
{
    if (c <= 64) return take_packed(in, fields, c, out);
    unsigned width = c - 65;
    uint64_t patches, high;
    if (width > 62 || take_packed(in, fields, width, out) || take_uvarint(in, &patches)) return -1;
    if (patches < 1 || patches > fields) return -1;
    int last = -1;
    for (uint64_t p = 0; p < patches; p++) {
        uint8_t at;
        if (take_byte(in, &at) || (int)at <= last || at >= fields || take_uvarint(in, &high)) return -1;
        if (width && high >> (64 - width)) return -1;
        out[at] |= high << width;
        last = at;
    }
    return 0;
}

/* README "Timestamp block" of n samples after prev (the previous sample's time; first: no previous group). */
static inline int take_timestamps(spec2_in *in, size_t n, int scaled, int first_group, int64_t prev, int64_t *ts)
{
    static uint64_t fields[SPEC2_GROUP];
    int64_t lead;
    if (take_zigzag(in, &lead)) return -1;
    uint64_t expected = 0, scale = 1, step = 0, min_delta = 0;
    int64_t min_offset = 0;
    int grid = 0;
    if (n >= 2) {
        uint8_t form;
        if (take_byte(in, &form)) return -1;
        grid = form >> 7;
        if (scaled && (take_uvarint(in, &scale) || scale == 0)) return -1;
        if (grid ? take_uvarint(in, &step) || take_zigzag(in, &min_offset) : take_uvarint(in, &min_delta)) return -1;
        if (take_ts_fields(in, form & 0x7f, n - 1, fields)) return -1;
        expected = grid ? step : min_delta;
    }
    ts[0] = (int64_t)((first_group ? 0 : (uint64_t)prev) + (uint64_t)lead + expected);
    for (size_t i = 1; i < n; i++) {
        uint64_t f = fields[i - 1] * scale;
        ts[i] = grid ? (int64_t)((uint64_t)ts[0] + i * step + (uint64_t)min_offset + f)
                     : (int64_t)((uint64_t)ts[i - 1] + min_delta + f);
    }
    return 0;
}

static inline unsigned width_of(uint64_t v) { return v ? 64u - (unsigned)__builtin_clzll(v) : 0u; }

/* SPLIT: u8 L (1-16), u8 D (1-8), D uvarint left parts (< 2^L), n codes, n right parts, exceptions. */
static inline int take_split(spec2_in *in, size_t n, uint64_t *bits)
{
    static uint64_t codes[SPEC2_GROUP], rights[SPEC2_GROUP];
    uint8_t left_bits, entries;
    uint64_t dict[8], exceptions;
    if (take_byte(in, &left_bits) || take_byte(in, &entries)) return -1;
    if (left_bits < 1 || left_bits > 16 || entries < 1 || entries > 8) return -1;
    for (unsigned d = 0; d < entries; d++)
        if (take_uvarint(in, &dict[d]) || dict[d] >> left_bits) return -1;
    if (take_packed(in, n, width_of(entries - 1u), codes) || take_packed(in, n, 64u - left_bits, rights)) return -1;
    for (size_t i = 0; i < n; i++) {
        if (codes[i] >= entries) return -1; /* an exception's code too */
        bits[i] = dict[codes[i]] << (64 - left_bits) | rights[i];
    }
    if (take_uvarint(in, &exceptions) || exceptions > n) return -1;
    int last = -1;
    for (uint64_t x = 0; x < exceptions; x++) {
        uint8_t at;
        uint64_t left;
        if (take_byte(in, &at) || (int)at <= last || at >= n || take_uvarint(in, &left) || left >> left_bits) return -1;
        bits[at] = left << (64 - left_bits) | rights[at];
        last = at;
    }
    return 0;
}

static const double pow10_of[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* DECIMAL's fields for m values (MASKED: the values not masked), from the mode's bits 2-7. */
static inline int take_decimals(spec2_in *in, uint8_t mode, size_t m, uint64_t *bits)
{
    static uint64_t fields[SPEC2_GROUP], highs[SPEC2_GROUP];
    int delta = mode >> 2 & 1, as_float = mode >> 3 & 1;
    unsigned e = mode >> 4;
    int64_t base, min_step = 0;
    uint8_t c;
    if (take_zigzag(in, &base) || (delta && take_zigzag(in, &min_step)) || take_byte(in, &c) || c >= 128) return -1;
    size_t count = delta ? m - 1 : m;
    if (delta && m < 2) return -1;
    unsigned width = c <= 64 ? c : c - 65u;
    if (take_packed(in, count, width, fields)) return -1;
    if (c > 64) {
        uint8_t patches, high_width, at[SPEC2_GROUP];
        if (take_byte(in, &patches) || take_byte(in, &high_width)) return -1;
        if (patches < 1 || patches > count || high_width < 1 || high_width > 64 - width) return -1;
        for (unsigned p = 0; p < patches; p++)
            if (take_byte(in, &at[p]) || at[p] >= count || (p && at[p] <= at[p - 1])) return -1;
        if (take_packed(in, patches, high_width, highs)) return -1;
        for (unsigned p = 0; p < patches; p++) fields[at[p]] |= highs[p] << width;
    }
    uint64_t k = (uint64_t)base;
    for (size_t i = 0; i < m; i++) {
        if (i) k = delta ? k + (uint64_t)min_step + fields[i - 1] : (uint64_t)base + fields[i];
        else if (!delta) k = (uint64_t)base + fields[0];
        double v = (double)(int64_t)k / pow10_of[e];
        if (as_float) v = (double)(float)v;
        memcpy(&bits[i], &v, 8);
    }
    uint64_t exceptions;
    if (take_uvarint(in, &exceptions) || exceptions > m) return -1;
    int last = -1;
    for (uint64_t x = 0; x < exceptions; x++) {
        uint8_t at;
        if (take_byte(in, &at)) return -1;
        int index = at & 0x7f;
        if (index <= last || (size_t)index >= m) return -1;
        int64_t diff = 0;
        if (at & 0x80 ? take_le64(in, &bits[index]) : take_zigzag(in, &diff)) return -1;
        if (!(at & 0x80)) bits[index] += (uint64_t)diff;
        last = index;
    }
    return 0;
}

/* Codec 1's XOR field (README "Chunk format v1", values), bits read most significant first. */
static inline int take_xor(spec2_in *in, size_t *bit, size_t end, unsigned *lead, unsigned *trail, uint64_t *x)
{
    uint64_t v = 0;
    const uint8_t *p = in->c + in->pos;
#define BITS(n, out)                                                                                                   \
    do {                                                                                                               \
        v = 0;                                                                                                         \
        for (unsigned b_ = 0; b_ < (n); b_++) {                                                                        \
            if (*bit >= 8 * end) return -1;                                                                            \
            v = v << 1 | ((p[*bit / 8] >> (7 - *bit % 8)) & 1u);                                                       \
            ++*bit;                                                                                                    \
        }                                                                                                              \
        (out) = v;                                                                                                     \
    } while (0)
    uint64_t control, l, size_minus_1, payload;
    BITS(1, control);
    if (!control) {
        *x = 0;
        return 0;
    }
    BITS(1, control);
    if (!control) {
        if (*lead == 64) return -1;
        BITS(64 - *lead - *trail, payload);
        *x = payload << *trail;
        return 0;
    }
    BITS(5, l);
    BITS(6, size_minus_1);
    if (l + size_minus_1 + 1 > 64) return -1;
    *lead = (unsigned)l;
    *trail = 64 - *lead - (unsigned)size_minus_1 - 1;
    BITS(size_minus_1 + 1, payload);
    *x = payload << *trail;
    return 0;
#undef BITS
}

static inline int take_xor_block(spec2_in *in, size_t n, uint64_t prev, uint64_t *bits)
{
    uint64_t bytes;
    if (take_uvarint(in, &bytes) || bytes > in->size - in->pos) return -1;
    size_t bit = 0;
    unsigned lead = 64, trail = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        if (take_xor(in, &bit, (size_t)bytes, &lead, &trail, &x)) return -1;
        bits[i] = (i ? bits[i - 1] : prev) ^ x;
    }
    if ((bit + 7) / 8 != bytes) return -1; /* "at most 7 padding bits" */
    for (size_t b = bit; b % 8; b++)
        if ((in->c[in->pos + b / 8] >> (7 - b % 8)) & 1u) return -1;
    in->pos += (size_t)bytes;
    return 0;
}

/* README "Value block" of n samples; prev: the previous group's last value (0 for the first). */
static inline int take_values(spec2_in *in, size_t n, uint64_t prev, uint64_t *bits)
{
    static uint64_t kept[SPEC2_GROUP];
    uint8_t mode;
    if (take_byte(in, &mode)) return -1;
    switch (mode & 3) {
    case 0:
        if (mode == 0x00) {
            for (size_t i = 0; i < n; i++)
                if (take_le64(in, &bits[i])) return -1;
            return 0;
        }
        if (mode == 0x04 || mode == 0x0c) {
            uint64_t v = prev;
            if (mode == 0x04 && take_le64(in, &v)) return -1;
            for (size_t i = 0; i < n; i++) bits[i] = v;
            return 0;
        }
        return mode == 0x10 ? take_split(in, n, bits) : -1;
    case 1: {
        size_t mask_bytes = (n + 7) / 8, m = 0;
        if (in->size - in->pos < mask_bytes) return -1;
        const uint8_t *mask = in->c + in->pos;
        for (size_t i = 0; i < 8 * mask_bytes; i++) {
            int repeat = (mask[i / 8] >> (i % 8)) & 1;
            if (i >= n && repeat) return -1;
            m += i < n && !repeat;
        }
        in->pos += mask_bytes;
        if (m < 1 || take_decimals(in, mode, m, kept)) return -1;
        for (size_t i = 0, j = 0; i < n; i++)
            bits[i] = (mask[i / 8] >> (i % 8)) & 1 ? (i ? bits[i - 1] : prev) : kept[j++];
        return 0;
    }
    case 2:
        return take_decimals(in, mode, n, bits);
    default:
        return mode == 0x03 ? take_xor_block(in, n, prev, bits) : -1;
    }
}

static inline uint64_t reverse_bits(uint64_t v)
{
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) r |= (v >> i & 1) << (63 - i);
    return r;
}

/* README "Codec 2": the header, then the groups. @return the sample count, -1 for a chunk the README does not allow,
 * -2 for another codec. */
static inline long spec2_decode(const uint8_t *chunk, size_t size, int64_t *ts, uint64_t *bits, size_t capacity)
{
    spec2_in in = {chunk, size, 2};
    if (size < 2 || chunk[0] != 0xc1) return -1;
    if ((chunk[1] & 0x0f) != 2) return -2;
    unsigned flags = chunk[1] >> 4;
    int ts_const = flags & 1, val_const = flags & 2, val_short = flags & 4, ts_scaled = flags & 8;
    uint64_t count, delta = 0, value = 0;
    int64_t first = 0;
    if (take_uvarint(&in, &count) || count > 65535 || count > capacity) return -1;
    if ((count < 2 && flags) || (val_short && !val_const) || (ts_scaled && ts_const)) return -1;
    if (ts_const) {
        if (take_zigzag(&in, &first) || take_uvarint(&in, &delta)) return -1;
        uint64_t room = (uint64_t)INT64_MAX - (uint64_t)first; /* INT64_MAX - first, exactly */
        if (delta && (count - 1) > room / delta) return -1;
        for (uint64_t i = 0; i < count; i++) ts[i] = (int64_t)((uint64_t)first + i * delta);
    }
    if (val_const && !val_short && take_le64(&in, &value)) return -1;
    if (val_const && val_short) {
        size_t at = in.pos;
        if (take_uvarint(&in, &value) || in.pos - at >= 8) return -1;
        value = reverse_bits(value);
    }
    for (size_t done = 0; done < count;) {
        size_t n = count - done < SPEC2_GROUP ? (size_t)(count - done) : SPEC2_GROUP;
        if (!ts_const && take_timestamps(&in, n, ts_scaled, done == 0, done ? ts[done - 1] : 0, ts + done)) return -1;
        if (val_const) {
            for (size_t i = 0; i < n; i++) bits[done + i] = value;
        } else if (take_values(&in, n, done ? bits[done - 1] : 0, bits + done)) {
            return -1;
        }
        done += n;
    }
    for (size_t i = 1; i < count; i++)
        if (ts[i] < ts[i - 1]) return -1;
    return in.pos == size ? (long)count : -1;
}

#endif
