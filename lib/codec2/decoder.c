/*
 * Codec 2 group decoder. Parsing checks every length against the chunk's end
 * (so the header check walks all groups without decoding them); decoding
 * unpacks whole field arrays and runs prefix sums and conversions over them
 * with the kernels of simd.c (fused for DELTA decimals). Damage found while
 * decoding (time going backwards, exceptions out of order, a bad XOR stream)
 * is CORRUPT.
 */
#include "format.h"
#include "../codec/xor.h"

static size_t take_bytes(size_t avail, size_t *pos, size_t bytes)
{
    if (bytes > avail - *pos) return TSC_ERROR(TRUNCATED);
    *pos += bytes;
    return 0;
}

/* Packed fields, whose last byte's unused high bits are zero (README "Codec 2"; RESERVED_BITS otherwise, as codec
 * 1's stream padding). */
static size_t take_packed(const uint8_t *src, size_t avail, size_t *pos, size_t fields, unsigned width)
{
    size_t err = take_bytes(avail, pos, tsc_codec2_packed_bytes(fields, width));
    unsigned used = (unsigned)(fields * width % 8);
    if (err) return err;
    return used && src[*pos - 1] >> used ? TSC_ERROR(RESERVED_BITS) : 0;
}

/* A form code: a width 0..64, or TSC2_TS_PATCHED + 0..62 (*patched set). */
static size_t take_form(const uint8_t *src, size_t avail, size_t *pos, unsigned *width, int *patched)
{
    if (*pos >= avail) return TSC_ERROR(TRUNCATED);
    unsigned form = src[(*pos)++];
    *patched = form >= TSC2_TS_PATCHED;
    *width = *patched ? form - TSC2_TS_PATCHED : form;
    return form > 64 && (!*patched || *width > 62) ? TSC_ERROR(CORRUPT) : 0;
}

/* A PATCHED form's list: uvarint count (1 to the fields), then per patch u8 field index and uvarint high bits,
 * which must fit above the width. The indexes are checked as the patches are applied. */
static size_t parse_patches(const uint8_t *src, size_t avail, size_t *pos, size_t fields, unsigned width,
                            size_t *count, const uint8_t **list)
{
    uint64_t patches, high;
    size_t err = tsc_take_uvarint(src, avail, pos, &patches);
    if (err) return err;
    if (patches == 0 || patches > fields) return TSC_ERROR(CORRUPT);
    *count = (size_t)patches;
    *list = src + *pos;
    for (size_t x = 0; x < *count; x++) {
        if ((err = take_bytes(avail, pos, 1)) || (err = tsc_take_uvarint(src, avail, pos, &high))) return err;
        if (width && high >> (64 - width)) return TSC_ERROR(CORRUPT);
    }
    return 0;
}

static size_t parse_timestamps(const uint8_t *src, size_t avail, size_t n, unsigned flags, tsc_codec2_group *g,
                               size_t *pos)
{
    size_t err = tsc_take_uvarint(src, avail, pos, &g->ts_offset);
    g->ts_scale = 1;
    if (err || n < 2) return err;
    if (*pos >= avail) return TSC_ERROR(TRUNCATED);
    g->ts_grid = (src[*pos] & TSC2_TS_GRID) != 0;
    unsigned form = src[(*pos)++] & ~TSC2_TS_GRID;
    int patched = form >= TSC2_TS_PATCHED;
    g->ts_width = patched ? form - TSC2_TS_PATCHED : form;
    if (form > 64 && !patched) return TSC_ERROR(CORRUPT);
    if ((flags & TSCHUNK_FLAG_TS_SCALED) && (err = tsc_take_uvarint(src, avail, pos, &g->ts_scale))) return err;
    if (g->ts_scale == 0) return TSC_ERROR(CORRUPT);
    if (g->ts_grid && (err = tsc_take_uvarint(src, avail, pos, &g->grid_step))) return err;
    if ((err = tsc_take_uvarint(src, avail, pos, &g->min_delta))) return err;
    if (g->ts_grid) g->min_delta = (uint64_t)tsc_unzigzag(g->min_delta);
    g->ts_packed = src + *pos;
    if ((err = take_packed(src, avail, pos, n - 1, g->ts_width)) || !patched) return err;
    return parse_patches(src, avail, pos, n - 1, g->ts_width, &g->ts_patches, &g->ts_patch_at);
}

/*
 * The index byte of the next entry of a patch or exception list, whose
 * indexes increase and stay below limit (bits in `flags` are not index);
 * advances *x. @return the index, or -1 (CORRUPT).
 */
TSC_INLINE int next_index(const uint8_t **x, unsigned flags, size_t limit, int *last)
{
    int at = (int)(*(*x)++ & ~flags);
    if (at >= (int)limit || at <= *last) return -1;
    *last = at;
    return at;
}

/* PATCHED fields: each patch ORs its high bits above the packed low ones. */
static size_t apply_patches(const uint8_t *list, size_t patches, unsigned width, size_t fields, uint64_t *restrict out)
{
    int last = -1;
    for (size_t p = 0; p < patches; p++) {
        int at = next_index(&list, 0, fields, &last);
        if (at < 0) return TSC_ERROR(CORRUPT);
        uint64_t high = 0;
        list += tsc_get_uvarint(list, 10, &high);
        out[at] |= high << width;
    }
    return 0;
}

/* PATCHED decimal fields' list: u8 count (1..fields), u8 high width (1..64 - width), the indexes, the high bits. */
static size_t parse_decimal_patches(const uint8_t *src, size_t avail, size_t *pos, size_t fields, tsc_codec2_group *g)
{
    if (avail - *pos < 2) return TSC_ERROR(TRUNCATED);
    g->dec_patches = src[*pos];
    g->dec_high_width = src[*pos + 1];
    *pos += 2;
    if (g->dec_patches == 0 || g->dec_patches > fields || g->dec_high_width == 0 ||
        g->dec_high_width > 64 - g->dec_width)
        return TSC_ERROR(CORRUPT);
    g->dec_patch_at = src + *pos;
    size_t err = take_bytes(avail, pos, g->dec_patches);
    g->dec_highs = src + *pos;
    return err ? err : take_packed(src, avail, pos, g->dec_patches, g->dec_high_width);
}

TSC_INLINE size_t parse_decimal(const uint8_t *src, size_t avail, size_t n, tsc_codec2_group *g, size_t *pos)
{
    size_t err = tsc_take_uvarint(src, avail, pos, &g->dec_base);
    if (err) return err;
    int delta = (g->mode & TSC2_DECIMAL_DELTA) != 0;
    if (delta && (err = tsc_take_uvarint(src, avail, pos, &g->dec_min_step))) return err;
    if (delta && n < 2) return TSC_ERROR(CORRUPT);
    int patched;
    if ((err = take_form(src, avail, pos, &g->dec_width, &patched))) return err;
    g->payload = src + *pos;
    size_t fields = delta ? n - 1 : n;
    if ((err = take_packed(src, avail, pos, fields, g->dec_width))) return err;
    if (patched && (err = parse_decimal_patches(src, avail, pos, fields, g))) return err;
    uint64_t exceptions;
    if ((err = tsc_take_uvarint(src, avail, pos, &exceptions))) return err;
    if (exceptions > n) return TSC_ERROR(CORRUPT);
    g->exceptions = (size_t)exceptions;
    g->exception_at = src + *pos;
    for (size_t x = 0; x < g->exceptions; x++) {
        if (*pos >= avail) return TSC_ERROR(TRUNCATED);
        uint8_t at = src[(*pos)++];
        uint64_t correction;
        err = at & TSC2_EXCEPTION_RAW ? take_bytes(avail, pos, 8) : tsc_take_uvarint(src, avail, pos, &correction);
        if (err) return err;
    }
    return 0;
}

static size_t parse_split(const uint8_t *src, size_t avail, size_t n, tsc_codec2_group *g, size_t *pos)
{
    if (avail - *pos < 2) return TSC_ERROR(TRUNCATED);
    g->left_bits = src[(*pos)++];
    g->dict_size = src[(*pos)++];
    memset(g->dict, 0, sizeof g->dict); /* codes past dict_size read an entry before they are refused */
    if (g->left_bits < 1 || g->left_bits > TSC2_SPLIT_MAX_LEFT || g->dict_size < 1 || g->dict_size > TSC2_SPLIT_DICT)
        return TSC_ERROR(CORRUPT);
    size_t err;
    for (unsigned d = 0; d < g->dict_size; d++) {
        if ((err = tsc_take_uvarint(src, avail, pos, &g->dict[d]))) return err;
        if (g->dict[d] >> g->left_bits) return TSC_ERROR(CORRUPT);
    }
    g->codes = src + *pos;
    if ((err = take_packed(src, avail, pos, n, tsc_codec2_width(g->dict_size - 1)))) return err;
    g->rights = src + *pos;
    if ((err = take_packed(src, avail, pos, n, 64 - g->left_bits))) return err;
    uint64_t exceptions, left;
    if ((err = tsc_take_uvarint(src, avail, pos, &exceptions))) return err;
    if (exceptions > n) return TSC_ERROR(CORRUPT);
    g->exceptions = (size_t)exceptions;
    g->exception_at = src + *pos;
    for (size_t x = 0; x < g->exceptions; x++) {
        if ((err = take_bytes(avail, pos, 1)) || (err = tsc_take_uvarint(src, avail, pos, &left))) return err;
        if (left >> g->left_bits) return TSC_ERROR(CORRUPT);
    }
    return 0;
}

static size_t parse_values(const uint8_t *src, size_t avail, size_t n, tsc_codec2_group *g, size_t *pos)
{
    if (*pos >= avail) return TSC_ERROR(TRUNCATED);
    g->mode = src[(*pos)++];
    g->payload = src + *pos;
    switch (g->mode & 3) {
    case TSC2_PLAIN:
        if (g->mode == TSC2_RAW) return take_bytes(avail, pos, 8 * n);
        if (g->mode == TSC2_CONST) return take_bytes(avail, pos, 8);
        if (g->mode == TSC2_SPLIT) return parse_split(src, avail, n, g, pos);
        return g->mode == (TSC2_CONST | TSC2_CONST_REPEAT) ? 0 : TSC_ERROR(RESERVED_BITS);
    case TSC2_MASKED: {
        size_t mask_bytes = (n + 7) / 8, repeats = 0;
        if (mask_bytes > avail - *pos) return TSC_ERROR(TRUNCATED);
        g->mask = src + *pos;
        for (size_t i = 0; i < mask_bytes; i += 8) {
            uint64_t word = 0;
            if (mask_bytes - i >= 8) word = tsc_load64_le(g->mask + i);
            else
                for (size_t b = i; b < mask_bytes; b++) word |= (uint64_t)g->mask[b] << (8 * (b - i));
            repeats += tsc_popcount64(word);
        }
        if (n % 8 && g->mask[mask_bytes - 1] >> (n % 8)) return TSC_ERROR(RESERVED_BITS);
        if (repeats >= n) return TSC_ERROR(CORRUPT);
        *pos += mask_bytes;
        g->kept = n - repeats;
        return parse_decimal(src, avail, g->kept, g, pos);
    }
    case TSC2_DECIMAL:
        /* Every exponent the 4 bits hold is defined. */
        g->kept = n;
        return parse_decimal(src, avail, n, g, pos);
    default: {
        if (g->mode != TSC2_XOR) return TSC_ERROR(RESERVED_BITS);
        uint64_t bytes;
        size_t err = tsc_take_uvarint(src, avail, pos, &bytes);
        if (err) return err;
        if (bytes > avail - *pos) return TSC_ERROR(TRUNCATED);
        if (bytes < (n + 7) / 8) return TSC_ERROR(CORRUPT); /* a field is at least one bit */
        g->payload = src + *pos;
        g->payload_bytes = (size_t)bytes;
        *pos += (size_t)bytes;
        return 0;
    }
    }
}

size_t tsc_codec2_parse_group(const uint8_t *src, size_t avail, size_t n, unsigned flags, tsc_codec2_group *g)
{
    memset(g, 0, offsetof(tsc_codec2_group, dict));
    size_t pos = 0, err;
    if (!(flags & TSCHUNK_FLAG_TS_CONST) && (err = parse_timestamps(src, avail, n, flags, g, &pos))) return err;
    g->ts_bytes = pos;
    if (!(flags & TSCHUNK_FLAG_VAL_CONST) && (err = parse_values(src, avail, n, g, &pos))) return err;
    g->size = pos;
    return 0;
}

/* ------------------------------------------------------------------ decoding */

/* The lead is stored against the group's own step (GRID) or smallest delta (DELTA). */
static int64_t first_ts_of(const tsc_codec2_group *g, size_t n, int64_t prev_ts)
{
    uint64_t expected = n < 2 ? 0 : g->ts_grid ? g->grid_step : g->min_delta;
    return (int64_t)((uint64_t)prev_ts + (uint64_t)tsc_unzigzag(g->ts_offset) + expected);
}

TSC_INLINE size_t decode_timestamps(const tsc_codec2_group *g, size_t n, const uint8_t *end, int first,
                                    int64_t prev_ts, int64_t *restrict ts)
{
    int64_t t = first_ts_of(g, n, prev_ts);
    unsigned bad = !first && t < prev_ts;
    ts[0] = t;
    if (n < 2) return bad ? TSC_ERROR(CORRUPT) : 0;
    /* A wrap past INT64_MAX is time going backwards too. */
    uint64_t *rest = (uint64_t *)(void *)(ts + 1);
    size_t avail = (size_t)(end - g->ts_packed);
    int back;
    /* grid: out[i] = t + min_offset + (i + 1) * step + field; delta: out[i] = out[i - 1] + min_delta + field */
    uint64_t start = (uint64_t)t + (g->ts_grid ? g->min_delta : 0), add = g->ts_grid ? g->grid_step : g->min_delta;
    if (!g->ts_patches && g->ts_scale == 1 &&
        tsc_codec2_unpack_timestamps_simd(TSC_SIMD_BEST, g->ts_packed, avail, n - 1, g->ts_width, g->ts_grid,
                                          (uint64_t)t, start, add, rest, &back))
        return bad | (unsigned)back ? TSC_ERROR(CORRUPT) : 0;
    uint64_t deltas[TSC2_GROUP];
    tsc_codec2_unpack(g->ts_packed, avail, deltas, n - 1, g->ts_width);
    if (g->ts_patches && apply_patches(g->ts_patch_at, g->ts_patches, g->ts_width, n - 1, deltas))
        return TSC_ERROR(CORRUPT);
    if (g->ts_scale != 1) /* wrapping, as the sums after it: damage shows as time going back, or passes */
        for (size_t i = 0; i + 1 < n; i++) deltas[i] *= g->ts_scale;
    if (g->ts_grid) bad |= (unsigned)tsc_codec2_grid((uint64_t)t, start, add, deltas, n - 1, rest);
    else bad |= (unsigned)tsc_codec2_running_sum(start, add, deltas, n - 1, rest);
    return bad ? TSC_ERROR(CORRUPT) : 0;
}

/*
 * Whether every k of the group is below 2^51 in magnitude, from its fields
 * alone (k[i] = base + i * step + at most i fields of dec_width bits, or base
 * plus one field; patched_reach: a bound of the patches' high bits summed,
 * or 2^51): the SIMD conversion's domain. Groups the encoder writes
 * pass unless their decimals span nearly 2^51; the others convert one by one.
 */
TSC_INLINE int decimals_small(const tsc_codec2_group *g, size_t n, uint64_t patched_reach)
{
    const uint64_t limit = UINT64_C(1) << 51;
    int64_t base = tsc_unzigzag(g->dec_base), step = tsc_unzigzag(g->dec_min_step);
    uint64_t base_reach = base < 0 ? 0 - (uint64_t)base : (uint64_t)base;
    uint64_t step_reach = step < 0 ? 0 - (uint64_t)step : (uint64_t)step;
    if (g->dec_width >= 51 || base_reach >= limit || step_reach >= limit || patched_reach >= limit) return 0;
    uint64_t field_max = (UINT64_C(1) << g->dec_width) - 1;
    uint64_t reach = g->mode & TSC2_DECIMAL_DELTA ? (uint64_t)(n - 1) * (step_reach + field_max) : field_max;
    return base_reach + reach + patched_reach < limit; /* n <= 128 terms under 2^52: no overflow */
}

/* Field i of fields packed at width <= 64 in `avail` bytes: two loads (a copy near the end), a few patches a group. */
static uint64_t packed_field(const uint8_t *packed, size_t avail, size_t i, unsigned width)
{
    size_t bit = i * width, first = bit / 8;
    unsigned shift = bit % 8;
    uint64_t low, high;
    if (avail - first >= 16) {
        low = tsc_load64_le(packed + first);
        high = tsc_load64_le(packed + first + 8);
    } else {
        uint8_t window[16] = {0};
        memcpy(window, packed + first, avail - first);
        low = tsc_load64_le(window);
        high = tsc_load64_le(window + 8);
    }
    uint64_t word = low >> shift | (shift ? high << (64 - shift) : 0);
    return width < 64 ? word & ((UINT64_C(1) << width) - 1) : word;
}

/*
 * A PATCHED group's patches, their indexes checked (increasing, below the
 * fields) and their high bits shifted in place; *reach: a bound of the
 * magnitude of their sum, each read as an int64 (the sums wrap: a field that
 * wraps below min_step, a counter's reset, is a small negative number), or
 * 2^51 (decimals_small's bound).
 */
static size_t read_patches(const tsc_codec2_group *g, size_t fields, const uint8_t *end, tsc_codec2_patches *patches,
                           uint64_t *reach)
{
    const uint64_t limit = UINT64_C(1) << 51;
    size_t avail = (size_t)(end - g->dec_highs);
    patches->at = g->dec_patch_at;
    patches->count = g->dec_patches;
    *reach = 0;
    int last = -1;
    for (size_t p = 0; p < g->dec_patches; p++) {
        int at = g->dec_patch_at[p];
        if (at <= last) return TSC_ERROR(CORRUPT);
        last = at;
        uint64_t add = packed_field(g->dec_highs, avail, p, g->dec_high_width) << g->dec_width;
        uint64_t magnitude = (int64_t)add < 0 ? 0 - add : add;
        *reach += magnitude < limit ? magnitude : limit; /* at most 128 terms of 2^51: no overflow */
        patches->add[p] = add;
    }
    if (*reach > limit) *reach = limit;
    return (size_t)last < fields ? 0 : TSC_ERROR(CORRUPT);
}

/*
 * PATCHED fields where the fused kernels do not run (no AVX2, fields wider
 * than 30 bits, or k past 2^51): unpacked, the high bits added, summed
 * (DELTA), then converted.
 */
static void patched_passes(const tsc_codec2_group *g, size_t m, const uint8_t *end, int delta, uint64_t start,
                           uint64_t step, int small, const tsc_codec2_patches *patches, uint64_t *restrict bits)
{
    unsigned exponent = g->mode >> 4;
    int as_float = (g->mode & TSC2_DECIMAL_FLOAT32) != 0;
    uint64_t ks[TSC2_GROUP];
    tsc_codec2_patched_ks(g->payload, (size_t)(end - g->payload), m, g->dec_width, delta, start, step, patches, ks);
    if (!small || !tsc_codec2_decimals_to_bits_simd(0, ks, m, exponent, as_float, bits))
        tsc_codec2_decimals_to_bits_scalar(0, ks, m, exponent, as_float, bits);
}

/* A PATCHED DECIMAL block's values (0.20.0): the fused kernel with the patches added in place where it runs. */
static size_t patched_decimals(const tsc_codec2_group *g, size_t n, const uint8_t *end, uint64_t *restrict bits)
{
    uint64_t base = (uint64_t)tsc_unzigzag(g->dec_base), step = (uint64_t)tsc_unzigzag(g->dec_min_step), reach;
    tsc_codec2_patches patches;
    unsigned exponent = g->mode >> 4;
    int as_float = (g->mode & TSC2_DECIMAL_FLOAT32) != 0, delta = (g->mode & TSC2_DECIMAL_DELTA) != 0;
    size_t m = delta ? n - 1 : n;
    if (read_patches(g, m, end, &patches, &reach)) return TSC_ERROR(CORRUPT);
    int small = decimals_small(g, n, reach);
    if (delta) bits[0] = tsc_codec2_decimal_bits((int64_t)base, exponent, as_float);
    uint64_t *out = delta ? bits + 1 : bits;
    if (!small || !tsc_codec2_unpack_patched_decimals_simd(TSC_SIMD_BEST, g->payload, (size_t)(end - g->payload), m,
                                                           g->dec_width, delta, base, step, exponent, as_float,
                                                           &patches, out))
        patched_passes(g, m, end, delta, base, step, small, &patches, out);
    return 0;
}

/* DECIMAL fields, then the exceptions over them. */
TSC_INLINE size_t decode_decimal(const tsc_codec2_group *g, size_t n, const uint8_t *end, uint64_t *restrict bits)
{
    uint64_t base = (uint64_t)tsc_unzigzag(g->dec_base);
    unsigned exponent = g->mode >> 4;
    int as_float = (g->mode & TSC2_DECIMAL_FLOAT32) != 0, small = !g->dec_patches && decimals_small(g, n, 0);
    if (g->dec_patches) {
        size_t err = patched_decimals(g, n, end, bits);
        if (err) return err;
    } else if (g->mode & TSC2_DECIMAL_DELTA) {
        uint64_t step = (uint64_t)tsc_unzigzag(g->dec_min_step);
        size_t avail = (size_t)(end - g->payload);
        bits[0] = tsc_codec2_decimal_bits((int64_t)base, exponent, as_float);
        if (!small || !tsc_codec2_unpack_decimal_sums_simd(TSC_SIMD_BEST, g->payload, avail, n - 1, g->dec_width,
                                                           base, step, exponent, as_float, bits + 1))
            tsc_codec2_unpack_decimal_sums_scalar(g->payload, avail, n - 1, g->dec_width, base, step, exponent,
                                                  as_float, bits + 1);
    } else {
        size_t avail = (size_t)(end - g->payload);
        if (!small || !tsc_codec2_unpack_decimals_simd(TSC_SIMD_BEST, g->payload, avail, n, g->dec_width, base,
                                                       exponent, as_float, bits))
            tsc_codec2_unpack_decimals_scalar(g->payload, avail, n, g->dec_width, base, exponent, as_float, bits);
    }
    /* The entries were walked by the parse: their lengths are known good. */
    const uint8_t *x = g->exception_at;
    int last = -1;
    for (size_t e = 0; e < g->exceptions; e++) {
        unsigned raw = *x & TSC2_EXCEPTION_RAW;
        int at = next_index(&x, TSC2_EXCEPTION_RAW, n, &last);
        if (at < 0) return TSC_ERROR(CORRUPT);
        if (raw) {
            bits[at] = tsc_load64_le(x);
            x += 8;
        } else {
            uint64_t correction = 0;
            x += tsc_get_uvarint(x, 10, &correction);
            bits[at] += (uint64_t)tsc_unzigzag(correction);
        }
    }
    return 0;
}

static size_t decode_split(const tsc_codec2_group *g, size_t n, const uint8_t *end, uint64_t *restrict bits)
{
    uint64_t codes[TSC2_GROUP];
    unsigned right_bits = 64 - g->left_bits, code_width = tsc_codec2_width(g->dict_size - 1);
    tsc_codec2_unpack(g->codes, (size_t)(end - g->codes), codes, n, code_width);
    tsc_codec2_unpack(g->rights, (size_t)(end - g->rights), bits, n, right_bits);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad |= codes[i] >= g->dict_size;
        bits[i] |= g->dict[codes[i] & (TSC2_SPLIT_DICT - 1)] << right_bits;
    }
    if (bad) return TSC_ERROR(CORRUPT);
    const uint8_t *x = g->exception_at;
    int last = -1;
    for (size_t e = 0; e < g->exceptions; e++) {
        int at = next_index(&x, 0, n, &last);
        if (at < 0) return TSC_ERROR(CORRUPT);
        uint64_t left = 0;
        x += tsc_get_uvarint(x, 10, &left);
        bits[at] = left << right_bits | (bits[at] & ((UINT64_C(1) << right_bits) - 1));
    }
    return 0;
}

static size_t decode_xor(const tsc_codec2_group *g, size_t n, uint64_t prev, uint64_t *restrict bits)
{
    const uint8_t *base = g->payload;
    size_t len = g->payload_bytes;
    uint64_t pos = 0;
    unsigned lead = 0, width = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        prev ^= tsc_xor_get(base, len, &pos, &lead, &width, &bad);
        bits[i] = prev;
    }
    uint64_t bit_len = (uint64_t)len * 8;
    if (bad || pos > bit_len || bit_len - pos >= 8) return TSC_ERROR(CORRUPT);
    /* The padding bits, the last byte's low ones, are zero as in codec 1's streams. */
    if (pos < bit_len && base[len - 1] & ((1u << (unsigned)(bit_len - pos)) - 1)) return TSC_ERROR(RESERVED_BITS);
    return 0;
}

/* A parsed group's samples (first: the chunk's first group, whose lead is not checked against prev_ts). */
static size_t decode_group(const tsc_codec2_group *g, const tsc_codec2_frame *f, size_t n, const uint8_t *end,
                           int first, int64_t prev_ts, uint64_t prev_bits, int64_t *restrict ts,
                           uint64_t *restrict bits)
{
    /* MASKED's kept values are decoded before the timestamps: the expansion loads them across the kernel's
     * stores, and such a load waits until they reach the cache, which the timestamps' work leaves them time to do
     * (3-6% of the decode of the value-only files with repeats, with AVX2). */
    uint64_t kept[1 + TSC2_GROUP];
    if (!(f->flags & TSCHUNK_FLAG_VAL_CONST) && (g->mode & 3) == TSC2_MASKED) {
        size_t err = decode_decimal(g, g->kept, end, kept + 1);
        if (err) return err;
        kept[0] = prev_bits; /* what a repeat before the first kept value repeats */
    }
    if (f->flags & TSCHUNK_FLAG_TS_CONST) {
        /* The header check kept ts[0] + (count - 1) * delta within int64. */
        uint64_t t = first ? (uint64_t)f->first_ts : (uint64_t)prev_ts + f->delta;
        tsc_codec2_steps(t, f->delta, n, (uint64_t *)(void *)ts);
    } else {
        size_t err = decode_timestamps(g, n, end, first, prev_ts, ts);
        if (err) return err;
    }
    if (f->flags & TSCHUNK_FLAG_VAL_CONST) {
        tsc_codec2_steps(f->value, 0, n, bits);
        return 0;
    }
    switch (g->mode & 3) {
    case TSC2_PLAIN: {
        if (g->mode == TSC2_RAW) {
            for (size_t i = 0; i < n; i++) bits[i] = tsc_load64_le(g->payload + 8 * i);
            return 0;
        }
        if (g->mode == TSC2_SPLIT) return decode_split(g, n, end, bits);
        tsc_codec2_steps(g->mode & TSC2_CONST_REPEAT ? prev_bits : tsc_load64_le(g->payload), 0, n, bits);
        return 0;
    }
    case TSC2_MASKED:
        tsc_codec2_expand_masked(g->mask, kept + 1, g->kept, n, bits);
        return 0;
    case TSC2_DECIMAL: return decode_decimal(g, n, end, bits);
    default: return decode_xor(g, n, prev_bits, bits);
    }
}

/* tsc_codec2_read_group, inline in the whole-chunk loop below. */
TSC_INLINE size_t read_group(const uint8_t *src, size_t size, size_t at, size_t n, const tsc_codec2_frame *f, int first,
                             int last, int64_t prev_ts, uint64_t prev_bits, int64_t *restrict ts,
                             uint64_t *restrict bits)
{
    tsc_codec2_group g;
    size_t err = tsc_codec2_parse_group(src + at, size - at, n, f->flags, &g);
    if (err) return err;
    /* The header parse left the groups unwalked: the last one must end the chunk. */
    if (last && at + g.size != size) return TSC_ERROR(CORRUPT);
    err = decode_group(&g, f, n, src + size, first, prev_ts, prev_bits, ts, bits);
    return err ? err : g.size;
}

size_t tsc_codec2_read_group(const uint8_t *src, size_t size, size_t at, size_t n, const tsc_codec2_frame *f, int first,
                             int last, int64_t prev_ts, uint64_t prev_bits, int64_t *restrict ts,
                             uint64_t *restrict bits)
{
    return read_group(src, size, at, n, f, first, last, prev_ts, prev_bits, ts, bits);
}

size_t tsc_codec2_decode_chunk(const uint8_t *src, size_t size, const tschunk_chunk_info *info, size_t at,
                               int64_t *restrict ts, uint64_t *restrict bits)
{
    const tsc_codec2_frame f = {info->flags, info->first_ts, info->first_delta, info->first_bits};
    int64_t prev_ts = 0;
    uint64_t prev_bits = 0;
    for (uint32_t done = 0; done < info->count;) {
        size_t n = info->count - done < TSC2_GROUP ? info->count - done : TSC2_GROUP;
        size_t r = read_group(src, size, at, n, &f, done == 0, done + n == info->count, prev_ts, prev_bits, ts + done,
                              bits + done);
        if (tsc_is_error(r)) return r;
        at += r;
        done += (uint32_t)n;
        /* Nothing read back after the last group: a load from the kernels' masked stores waits for them to reach
         * the cache (2-3% of a 120-sample chunk's decode). */
        if (done == info->count) break;
        prev_ts = ts[done - 1];
        prev_bits = bits[done - 1];
    }
    return info->count;
}

/* VAL_CONST's value: 8 bytes, or with VAL_SHORT the uvarint of its bits reversed, shorter than 8 bytes (one
 * way to write each value). */
static size_t parse_constant_value(const uint8_t *src, size_t size, size_t *pos, tschunk_chunk_info *info)
{
    if (info->flags & TSCHUNK_FLAG_VAL_SHORT) {
        uint64_t reversed;
        size_t start = *pos, err = tsc_take_uvarint(src, size, pos, &reversed);
        if (err) return err;
        if (*pos - start >= 8) return TSC_ERROR(CORRUPT);
        info->first_bits = tsc_codec2_reverse64(reversed);
        return 0;
    }
    if (size - *pos < 8) return TSC_ERROR(TRUNCATED);
    info->first_bits = tsc_load64_le(src + *pos);
    *pos += 8;
    return 0;
}

/* The TS_CONST and VAL_CONST fields of the header (the header parse has refused unknown flags: codec 2 knows
 * all four). */
static size_t parse_frame(const uint8_t *src, size_t size, size_t *pos, tschunk_chunk_info *info)
{
    if (info->flags && info->count < 2) return TSC_ERROR(CORRUPT);
    if ((info->flags & TSCHUNK_FLAG_VAL_SHORT) && !(info->flags & TSCHUNK_FLAG_VAL_CONST)) return TSC_ERROR(CORRUPT);
    /* Scaled timestamp blocks, or none: not both. */
    if ((info->flags & TSCHUNK_FLAG_TS_SCALED) && (info->flags & TSCHUNK_FLAG_TS_CONST)) return TSC_ERROR(CORRUPT);
    size_t err, start = *pos;
    if (info->flags & TSCHUNK_FLAG_TS_CONST) {
        uint64_t zz;
        if ((err = tsc_take_uvarint(src, size, pos, &zz)) || (err = tsc_take_uvarint(src, size, pos, &info->first_delta)))
            return err;
        info->first_ts = tsc_unzigzag(zz);
        /* The last timestamp, ts[0] + (count - 1) * delta, must be an int64 (time never wraps). */
        uint64_t room = (uint64_t)INT64_MAX - (uint64_t)info->first_ts;
        if (info->first_delta && (info->count - 1) > room / info->first_delta) return TSC_ERROR(CORRUPT);
        info->ts_header_bytes = *pos - start;
    }
    return info->flags & TSCHUNK_FLAG_VAL_CONST ? parse_constant_value(src, size, pos, info) : 0;
}

size_t tsc_codec2_parse_chunk(const uint8_t *src, size_t size, size_t *pos, tschunk_chunk_info *info, int walk)
{
    size_t err = parse_frame(src, size, pos, info);
    if (err) return err;
    info->header_bytes = *pos;
    if (!walk) return 0;
    size_t at = *pos;
    for (uint32_t done = 0; done < info->count;) {
        size_t n = info->count - done < TSC2_GROUP ? info->count - done : TSC2_GROUP;
        tsc_codec2_group g;
        if ((err = tsc_codec2_parse_group(src + at, size - at, n, info->flags, &g))) return err;
        if (done == 0 && !(info->flags & TSCHUNK_FLAG_TS_CONST)) info->first_ts = first_ts_of(&g, n, 0);
        info->ts_bytes += g.ts_bytes;
        info->value_bytes += g.size - g.ts_bytes;
        at += g.size;
        done += (uint32_t)n;
    }
    return at == size ? 0 : TSC_ERROR(CORRUPT);
}
