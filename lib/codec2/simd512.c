/*
 * Codec 2's fused decode kernels with AVX-512 (F, BW, VBMI: Ice Lake and
 * Sapphire Rapids, Zen 4 and 5), behind runtime dispatch like simd.c's AVX2
 * ones, which they mirror eight lanes at a time: a block of eight packed
 * fields is one 32-byte load and one cross-lane byte permute (vpermb) where
 * AVX2 needs two loads and two in-lane shuffles; the running sum over eight
 * lanes is three shifted adds; the last block loads and stores through masks
 * instead of a zero-padded copy. The bits are the scalar twins' (the tests
 * compare both ISAs with them); div_pow10's proof in simd.c covers the same
 * three operations here.
 */
#include "format.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,avx2,fma")))
#  define AVX512_INLINE __attribute__((target("avx512f,avx512bw,avx512vbmi,avx2,fma"), always_inline)) static inline


/* Where lane k's eight bytes start (field k's first byte) and how far its field sits above bit 0 of them. */
typedef struct {
    __m512i pick, shift, mask;
} wide_plan;

AVX512_INLINE wide_plan wide_plan_of(unsigned width)
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    __m512i bit = _mm512_mul_epu32(lane, _mm512_set1_epi64(width));
    /* each qword's byte 0 (its first byte index, <= 26) copied to its eight bytes, plus 0..7 */
    const __m512i spread_bytes = _mm512_set4_epi64(0x0808080808080808, 0, 0x0808080808080808, 0);
    __m512i first = _mm512_shuffle_epi8(_mm512_srli_epi64(bit, 3), spread_bytes);
    wide_plan p = {_mm512_add_epi8(first, _mm512_set1_epi64(0x0706050403020100)),
                   _mm512_and_si512(bit, _mm512_set1_epi64(7)), _mm512_set1_epi64((INT64_C(1) << width) - 1)};
    return p;
}

/*
 * Eight fields of width <= 30 from the `width` bytes at block: they fill
 * exactly `width` bytes, so 32 bytes hold them all. Lane 7's eight bytes start
 * at byte 7 * width / 8 <= 26, so its picks reach byte 33, in the zeroed upper
 * half, only for bits the mask drops.
 */
AVX512_INLINE __m512i unpack_wide(const wide_plan *p, __m256i block)
{
    __m512i bytes = _mm512_permutexvar_epi8(p->pick, _mm512_zextsi256_si512(block));
    return _mm512_and_si512(_mm512_srlv_epi64(bytes, p->shift), p->mask);
}

AVX512_INLINE __m256i load_block(const uint8_t *at) { return _mm256_loadu_si256((const __m256i *)(const void *)at); }

/* The last block: only the bytes below avail are read (masked-off bytes never fault). */
AVX512_INLINE __m256i load_block_tail(const uint8_t *src, size_t avail, size_t at)
{
    size_t left = at < avail ? avail - at : 0;
    __mmask64 inside = left >= 32 ? (__mmask64)UINT32_MAX : ((__mmask64)1 << left) - 1;
    return _mm512_castsi512_si256(_mm512_maskz_loadu_epi8(inside, src + (at < avail ? at : 0)));
}

/* The lanes of the last block that hold one of the `left` fields still to write. */
static inline __mmask8 tail_lanes(size_t left) { return (__mmask8)(left >= 8 ? 0xffu : (1u << left) - 1u); }

/* Whole blocks of eight below n whose 32-byte loads stay inside avail. */
static inline size_t wide_blocks(size_t n, size_t avail, unsigned width)
{
    size_t blocks = n / 8, inside = avail < 32 ? 0 : width ? (avail - 32) / width + 1 : blocks;
    return blocks < inside ? blocks : inside;
}

/* x[i] = sum of fields[0..i] + (i + 1) * add: the eight lanes' own running sum, three shifted adds. */
AVX512_INLINE __m512i prefix_wide(__m512i fields, __m512i adds)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i x = _mm512_add_epi64(fields, adds);
    x = _mm512_add_epi64(x, _mm512_alignr_epi64(x, zero, 7));
    x = _mm512_add_epi64(x, _mm512_alignr_epi64(x, zero, 6));
    return _mm512_add_epi64(x, _mm512_alignr_epi64(x, zero, 4));
}

/* Lane 7 in every lane: a running sum's carry into the next eight. */
AVX512_INLINE __m512i top_wide(__m512i x) { return _mm512_permutexvar_epi64(_mm512_set1_epi64(7), x); }

/* x[i] = last[7] + sum of fields[0..i] + (i + 1) * add. */
AVX512_INLINE __m512i sum_wide(__m512i fields, __m512i adds, __m512i last)
{
    return _mm512_add_epi64(prefix_wide(fields, adds), top_wide(last));
}

/* Lanes that went back: now[i] < now[i - 1] as int64, now[-1] = last[7]. */
AVX512_INLINE __mmask8 went_back(__m512i now, __m512i last)
{
    return _mm512_cmpgt_epi64_mask(_mm512_alignr_epi64(now, last, 7), now);
}

/* ------------------------------------------------------------------ timestamps */

AVX512_INLINE __m512i timestamp_wide(__m512i fields, const int grid, __m512i *base, __m512i step8, __m512i adds,
                                     __m512i last)
{
    if (!grid) return sum_wide(fields, adds, last);
    __m512i now = _mm512_add_epi64(*base, fields);
    *base = _mm512_add_epi64(*base, step8);
    return now;
}

AVX512_INLINE int timestamps_wide(const uint8_t *src, size_t avail, size_t n, unsigned width, const int grid,
                                  const int check, uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out)
{
    const wide_plan p = wide_plan_of(width);
    const __m512i adds = _mm512_set1_epi64((int64_t)add), step8 = _mm512_set1_epi64((int64_t)(8 * add));
    __m512i base = _mm512_set_epi64((int64_t)(start + 8 * add), (int64_t)(start + 7 * add), (int64_t)(start + 6 * add),
                                    (int64_t)(start + 5 * add), (int64_t)(start + 4 * add), (int64_t)(start + 3 * add),
                                    (int64_t)(start + 2 * add), (int64_t)(start + add));
    __m512i last = _mm512_set1_epi64((int64_t)(grid ? prev0 : start)), now;
    __mmask8 back = 0;
    size_t blocks = wide_blocks(n, avail, width), i = 8 * blocks, at = width * blocks;
    const uint8_t *in = src;
    for (uint64_t *o = out; blocks; blocks--, in += width, o += 8) {
        now = timestamp_wide(unpack_wide(&p, load_block(in)), grid, &base, step8, adds, last);
        if (check) back |= went_back(now, last);
        _mm512_storeu_si512(o, now);
        last = now;
    }
    for (; i < n; i += 8, at += width) {
        __mmask8 store = tail_lanes(n - i);
        now = timestamp_wide(unpack_wide(&p, load_block_tail(src, avail, at)), grid, &base, step8, adds, last);
        if (check) back |= went_back(now, last) & store;
        _mm512_mask_storeu_epi64(out + i, store, now);
        last = now;
    }
    return back != 0;
}

AVX512 static int grid_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int check, uint64_t prev0,
                              uint64_t start, uint64_t add, uint64_t *out)
{
    return check ? timestamps_wide(src, avail, n, width, 1, 1, prev0, start, add, out)
                 : timestamps_wide(src, avail, n, width, 1, 0, prev0, start, add, out);
}

AVX512 static int sums_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int check, uint64_t start,
                              uint64_t add, uint64_t *out)
{
    return check ? timestamps_wide(src, avail, n, width, 0, 1, start, start, add, out)
                 : timestamps_wide(src, avail, n, width, 0, 0, start, start, add, out);
}

int tsc_codec2_timestamps_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int grid, int check,
                                 uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out)
{
    return grid ? grid_avx512(src, avail, n, width, check, prev0, start, add, out)
                : sums_avx512(src, avail, n, width, check, start, add, out);
}

/* ------------------------------------------------------------------ decimals */

typedef struct {
    __m512d scale, inverse, magic;
} wide_decimal;

/* The kernels' `as_float` (a constant the compiler folds): float64 values, float32 ones, or e = 0 (integers). */
enum { WIDE_DOUBLES, WIDE_FLOATS, WIDE_INTEGERS };

/* The reading a kernel is compiled for. */
static inline int wide_reading(unsigned e, int as_float)
{
    return as_float ? WIDE_FLOATS : e ? WIDE_DOUBLES : WIDE_INTEGERS;
}

/*
 * Eight k + TSC2_MAGIC_BITS, |k| < 2^51, to their values' bits (simd.c's div_pow10, eight lanes). With e = 0 the
 * division by 1 gives k itself, exactly, so integers (counters) skip its three operations.
 */
AVX512_INLINE __m512d decimal_wide(__m512i biased, const wide_decimal *c, const int as_float)
{
    __m512d k = _mm512_sub_pd(_mm512_castsi512_pd(biased), c->magic);
    if (as_float == WIDE_INTEGERS) return k;
    __m512d q = _mm512_mul_pd(k, c->inverse);
    __m512d r = _mm512_fnmadd_pd(q, c->scale, k);
    __m512d v = _mm512_fmadd_pd(r, c->inverse, q);
    return as_float == WIDE_FLOATS ? _mm512_cvtps_pd(_mm512_cvtpd_ps(v)) : v;
}

/*
 * A PATCHED group's high bits added to the fields of the block of eight from `first`: the patches from *next
 * on that fall in it (indexes increasing, values shifted in place), one masked add each. Tried and dropped:
 * the block's patches spread to their lanes without a branch, by a load and an expand (twice as slow on this
 * Zen 5: the expand, and the load of the freshly stored values), or by an expanding load (slower still).
 */
AVX512_INLINE __m512i patch_block(__m512i fields, size_t first, const tsc_codec2_patches *patches, size_t *next)
{
    while (*next < patches->count && patches->at[*next] < first + 8) {
        __mmask8 lane = (__mmask8)(1u << (patches->at[*next] - first));
        fields = _mm512_mask_add_epi64(fields, lane, fields, _mm512_set1_epi64((int64_t)patches->add[*next]));
        ++*next;
    }
    return fields;
}

/*
 * delta: k[i] = k[i-1] + add + field, k[-1] = start; else k = add + field. k is carried biased by TSC2_MAGIC_BITS.
 * patches (NULL: none): a PATCHED group's high bits, added to their fields first.
 */
AVX512_INLINE void decimals_wide(const uint8_t *src, size_t avail, size_t n, unsigned width, const int delta,
                                 uint64_t start, uint64_t add, unsigned e, const int as_float,
                                 const tsc_codec2_patches *patches, uint64_t *bits)
{
    size_t next = 0;
    const wide_decimal c = {_mm512_set1_pd(tsc_codec2_pow10[e]), _mm512_set1_pd(tsc_codec2_pow10_inverse[e]),
                            _mm512_set1_pd(TSC2_MAGIC)};
    const wide_plan p = wide_plan_of(width);
    const __m512i adds = _mm512_set1_epi64((int64_t)(add + (delta ? 0 : (uint64_t)TSC2_MAGIC_BITS)));
    __m512i last = _mm512_set1_epi64((int64_t)(start + (uint64_t)TSC2_MAGIC_BITS)), fields;
    size_t blocks = wide_blocks(n, avail, width), i = 8 * blocks, at = width * blocks;
    const uint8_t *in = src;
    uint64_t *o = bits;
    for (; blocks >= 2; blocks -= 2, in += 2 * width, o += 16) {
        /* Two blocks a step, their own sums first: the running sum's chain (a permute and an add) is one
         * carry-in for sixteen fields instead of eight. */
        __m512i low = unpack_wide(&p, load_block(in)), high = unpack_wide(&p, load_block(in + width));
        if (patches) {
            low = patch_block(low, (size_t)(o - bits), patches, &next);
            high = patch_block(high, (size_t)(o - bits) + 8, patches, &next);
        }
        if (delta) {
            __m512i own_low = prefix_wide(low, adds), own_high = prefix_wide(high, adds), carry = top_wide(last);
            own_high = _mm512_add_epi64(own_high, top_wide(own_low));
            low = _mm512_add_epi64(own_low, carry);
            high = last = _mm512_add_epi64(own_high, carry);
        } else {
            low = _mm512_add_epi64(low, adds);
            high = _mm512_add_epi64(high, adds);
        }
        _mm512_storeu_pd(o, decimal_wide(low, &c, as_float));
        _mm512_storeu_pd(o + 8, decimal_wide(high, &c, as_float));
    }
    for (; blocks; blocks--, in += width, o += 8) {
        fields = unpack_wide(&p, load_block(in));
        if (patches) fields = patch_block(fields, (size_t)(o - bits), patches, &next);
        last = delta ? sum_wide(fields, adds, last) : _mm512_add_epi64(fields, adds);
        _mm512_storeu_pd(o, decimal_wide(last, &c, as_float));
    }
    for (; i < n; i += 8, at += width) {
        fields = unpack_wide(&p, load_block_tail(src, avail, at));
        if (patches) fields = patch_block(fields, i, patches, &next);
        last = delta ? sum_wide(fields, adds, last) : _mm512_add_epi64(fields, adds);
        _mm512_mask_storeu_pd(bits + i, tail_lanes(n - i), decimal_wide(last, &c, as_float));
    }
}

/*
 * decimals_wide for a block, its packing and reading made constants (six copies the compiler specializes); FOR
 * takes start as its base. patches: NULL (a constant where the caller passes it) or a PATCHED group's.
 */
AVX512_INLINE void decimals_of(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta, uint64_t start,
                               uint64_t add, unsigned e, int as_float, const tsc_codec2_patches *patches,
                               uint64_t *bits)
{
    int reading = wide_reading(e, as_float);
    if (delta && reading == WIDE_FLOATS)
        decimals_wide(src, avail, n, width, 1, start, add, e, WIDE_FLOATS, patches, bits);
    else if (delta && reading == WIDE_INTEGERS)
        decimals_wide(src, avail, n, width, 1, start, add, e, WIDE_INTEGERS, patches, bits);
    else if (delta) decimals_wide(src, avail, n, width, 1, start, add, e, WIDE_DOUBLES, patches, bits);
    else if (reading == WIDE_FLOATS)
        decimals_wide(src, avail, n, width, 0, start, start, e, WIDE_FLOATS, patches, bits);
    else if (reading == WIDE_INTEGERS)
        decimals_wide(src, avail, n, width, 0, start, start, e, WIDE_INTEGERS, patches, bits);
    else decimals_wide(src, avail, n, width, 0, start, start, e, WIDE_DOUBLES, patches, bits);
}

/* PATCHED groups: the same kernels with the patches' high bits added in place. */
AVX512 void tsc_codec2_patched_decimals_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta,
                                               uint64_t start, uint64_t add, unsigned e, int as_float,
                                               const tsc_codec2_patches *patches, uint64_t *bits)
{
    decimals_of(src, avail, n, width, delta, start, add, e, as_float, patches, bits);
}

AVX512 void tsc_codec2_decimals_avx512(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta,
                                       uint64_t start, uint64_t add, unsigned e, int as_float, uint64_t *bits)
{
    decimals_of(src, avail, n, width, delta, start, add, e, as_float, NULL, bits);
}

/* ------------------------------------------------------------------ SPLIT planning */

/* Lanes (of 32 words) whose index has bit j set: the upper member of every pair j apart. */
static inline uint32_t upper_lanes(unsigned j)
{
    return j == 1 ? 0xaaaaaaaau : j == 2 ? 0xccccccccu : j == 4 ? 0xf0f0f0f0u : j == 8 ? 0xff00ff00u : 0xffff0000u;
}

/* Word i ^ j of x, for j = 1..16: a rotate or a fixed shuffle (latency 1-3), not a general permute. */
AVX512_INLINE __m512i partners(__m512i x, unsigned j)
{
    switch (j) {
    case 1: return _mm512_rol_epi32(x, 16);
    case 2: return _mm512_shuffle_epi32(x, _MM_PERM_CDAB);
    case 4: return _mm512_shuffle_epi32(x, _MM_PERM_BADC);
    case 8: return _mm512_shuffle_i64x2(x, x, _MM_SHUFFLE(2, 3, 0, 1));
    default: return _mm512_shuffle_i64x2(x, x, _MM_SHUFFLE(1, 0, 3, 2));
    }
}

/* One bitonic step for pairs j < 32 apart, inside each register; pairs sort down where bit k of the index is set. */
AVX512_INLINE void sort_within(__m512i a[4], unsigned j, unsigned k)
{
    for (unsigned r = 0; r < 4; r++) {
        uint32_t down = k < 32 ? upper_lanes(k) : ((32 * r) & k) ? UINT32_MAX : 0;
        __m512i partner = partners(a[r], j);
        a[r] = _mm512_mask_max_epu16(_mm512_min_epu16(a[r], partner), _cvtu32_mask32(upper_lanes(j) ^ down), a[r],
                                     partner);
    }
}

/* One bitonic step for pairs 32 or 64 apart: whole registers. */
AVX512_INLINE void sort_across(__m512i a[4], unsigned j, unsigned k)
{
    unsigned apart = j / 32;
    for (unsigned r = 0; r < 4; r++) {
        if (r & apart) continue;
        __m512i low = _mm512_min_epu16(a[r], a[r + apart]), high = _mm512_max_epu16(a[r], a[r + apart]);
        int down = ((32 * r) & k) != 0;
        a[r] = down ? high : low;
        a[r + apart] = down ? low : high;
    }
}

/* The top 16 bits of eight values at i (0xffff past n: sorted last, so the first n words are the values'). */
AVX512_INLINE __m128i tops_of(const uint64_t *bits, size_t n, size_t i)
{
    __mmask8 inside = tail_lanes(i < n ? n - i : 0);
    __m512i v = _mm512_mask_loadu_epi64(_mm512_set1_epi64(-1), inside, bits + (i < n ? i : 0));
    return _mm512_cvtepi64_epi16(_mm512_srli_epi64(v, 48));
}

AVX512_INLINE __m512i tops_register(const uint64_t *bits, size_t n, size_t i)
{
    __m256i low = _mm256_inserti128_si256(_mm256_castsi128_si256(tops_of(bits, n, i)), tops_of(bits, n, i + 8), 1);
    __m256i high = _mm256_inserti128_si256(_mm256_castsi128_si256(tops_of(bits, n, i + 16)),
                                           tops_of(bits, n, i + 24), 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

/*
 * sorted_tops with a bitonic network over 128 words in four registers (28 steps of a shuffle, a min and a
 * masked max each): no data-dependent branch or memory chain, where the counting sort's increments of one
 * counter wait on each other through memory.
 */
AVX512 void tsc_codec2_sorted_tops_avx512(const uint64_t *bits, size_t n, uint16_t *out)
{
    _Static_assert(TSC2_GROUP == 128, "four registers of 32 words");
    __m512i a[4];
    for (unsigned r = 0; r < 4; r++) a[r] = tops_register(bits, n, 32 * r);
    /* Written out (k = 2, 4, ... 128; j = k / 2 down to 1) so that every mask and index is a constant and the
     * four registers stay registers. */
    sort_within(a, 1, 2);
    sort_within(a, 2, 4), sort_within(a, 1, 4);
    sort_within(a, 4, 8), sort_within(a, 2, 8), sort_within(a, 1, 8);
    sort_within(a, 8, 16), sort_within(a, 4, 16), sort_within(a, 2, 16);
    sort_within(a, 1, 16);
    sort_within(a, 16, 32), sort_within(a, 8, 32), sort_within(a, 4, 32);
    sort_within(a, 2, 32), sort_within(a, 1, 32);
    sort_across(a, 32, 64), sort_within(a, 16, 64), sort_within(a, 8, 64);
    sort_within(a, 4, 64), sort_within(a, 2, 64), sort_within(a, 1, 64);
    sort_across(a, 64, 128), sort_across(a, 32, 128), sort_within(a, 16, 128);
    sort_within(a, 8, 128), sort_within(a, 4, 128), sort_within(a, 2, 128);
    sort_within(a, 1, 128);
    for (unsigned r = 0; r < 4; r++) {
        size_t i = 32 * r, left = i < n ? n - i : 0;
        __mmask32 store = _cvtu32_mask32(left >= 32 ? UINT32_MAX : (UINT32_C(1) << left) - 1);
        _mm512_mask_storeu_epi16(out + (i < n ? i : 0), store, a[r]);
    }
}

/* Lanes of a block of eight from `from` below `left` values. */
static inline __mmask8 lanes_from(size_t left, size_t from) { return left > from ? tail_lanes(left - from) : 0; }

/* The left parts (at most 16 bits: right_bits >= 48) of the 32 values from bits (lanes past `left` zero) as
 * 16-bit lanes: four loads, shifts and narrowing moves. */
AVX512_INLINE __m512i left_parts32(const uint64_t *bits, size_t left, __m128i shift)
{
    __m128i part[4];
#pragma GCC unroll 4 /* the parts kept in registers */
    for (size_t k = 0; k < 4; k++)
        part[k] = _mm512_cvtepi64_epi16(_mm512_srl_epi64(_mm512_maskz_loadu_epi64(lanes_from(left, 8 * k),
                                                                                    bits + 8 * k), shift));
    __m256i low = _mm256_inserti128_si256(_mm256_castsi128_si256(part[0]), part[1], 1);
    __m256i high = _mm256_inserti128_si256(_mm256_castsi128_si256(part[2]), part[3], 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

/*
 * split_codes, 32 values a step: their left parts in 16-bit lanes compared with the entries (left parts of at
 * most 16 bits: TSC2_SPLIT_MAX_LEFT), the codes set by lane masks and widened eight at a time; the misses'
 * positions compressed into exception_at per eight (up to 8 bytes stored past the last: room for n + 8).
 */
AVX512 size_t tsc_codec2_split_codes_avx512(const uint64_t *bits, size_t n, unsigned right_bits,
                                            const uint64_t *dict, unsigned dict_size, uint64_t *codes,
                                            uint64_t *rights, uint8_t *exception_at)
{
    __m512i entry[TSC2_SPLIT_DICT];
    __mmask32 usable[TSC2_SPLIT_DICT];
#pragma GCC unroll 8 /* the entries kept in registers (left_part_counts) */
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) {
        entry[d] = _mm512_set1_epi16((short)(uint16_t)(d < dict_size ? dict[d] : 0));
        usable[d] = d < dict_size ? ~(__mmask32)0 : 0;
    }
    const __m512i right_mask = _mm512_set1_epi64((int64_t)((UINT64_C(1) << right_bits) - 1));
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m128i shift = _mm_cvtsi32_si128((int)right_bits);
    size_t exceptions = 0;
    for (size_t i = 0; i < n; i += 32) {
        __mmask32 inside = n - i >= 32 ? ~(__mmask32)0 : (__mmask32)((UINT32_C(1) << (n - i)) - 1), hit = 0;
        __m512i left = left_parts32(bits + i, n - i, shift), code = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) {
            __mmask32 equal = _mm512_mask_cmpeq_epi16_mask(inside & usable[d], left, entry[d]);
            code = _mm512_mask_mov_epi16(code, equal, _mm512_set1_epi16((short)d));
            hit |= equal;
        }
        __mmask32 missing = inside & ~hit;
        for (size_t k = 0; k < 32; k += 8, code = _mm512_alignr_epi64(_mm512_setzero_si512(), code, 2)) {
            __mmask8 lanes = lanes_from(n - i, k), miss = (__mmask8)(missing >> k);
            __m512i v = _mm512_maskz_loadu_epi64(lanes, bits + i + k);
            __m512i at = _mm512_add_epi64(lane, _mm512_set1_epi64((int64_t)(i + k)));
            _mm512_mask_storeu_epi64(codes + i + k, lanes, _mm512_cvtepu16_epi64(_mm512_castsi512_si128(code)));
            _mm512_mask_storeu_epi64(rights + i + k, lanes, _mm512_and_si512(v, right_mask));
            if (!missing) continue; /* most blocks: every left part in the dictionary */
            _mm_storel_epi64((__m128i *)(void *)(exception_at + exceptions),
                             _mm512_cvtepi64_epi8(_mm512_maskz_compress_epi64(miss, at)));
            exceptions += (size_t)__builtin_popcount(miss);
        }
    }
    return exceptions;
}

/* ---- the encoder's group planning: AVX-512 has 64-bit min and max, compares into masks and masked loads, so
 * these take one instruction where simd.c's AVX2 twins take a compare and a blend, and no scalar tail. */

/* Lanes outside `inside` read as `fill`. */
AVX512_INLINE __m512i load_lanes(const void *at, __mmask8 inside, __m512i fill)
{
    return _mm512_mask_loadu_epi64(fill, inside, at);
}

AVX512 void tsc_codec2_range_i64_avx512(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
    const __m512i top = _mm512_set1_epi64(INT64_MAX), bottom = _mm512_set1_epi64(INT64_MIN);
    __m512i lo[2] = {top, top}, hi[2] = {bottom, bottom}; /* two chains, as range_avx2 */
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int c = 0; c < 2; c++) {
            __m512i x = _mm512_loadu_si512((const void *)(v + i + 8 * c));
            lo[c] = _mm512_min_epi64(lo[c], x);
            hi[c] = _mm512_max_epi64(hi[c], x);
        }
    for (; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        lo[0] = _mm512_min_epi64(lo[0], load_lanes(v + i, inside, top));
        hi[0] = _mm512_max_epi64(hi[0], load_lanes(v + i, inside, bottom));
    }
    *min = _mm512_reduce_min_epi64(_mm512_min_epi64(lo[0], lo[1]));
    *max = _mm512_reduce_max_epi64(_mm512_max_epi64(hi[0], hi[1]));
}

/* Each lane's predecessor: the lane below, lane 0's the top lane of the block before (`last`). */
AVX512_INLINE __m512i lanes_before512(__m512i now, __m512i last) { return _mm512_alignr_epi64(now, last, 7); }

AVX512 void tsc_codec2_deltas_avx512(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min,
                                     uint64_t *max)
{
    __m512i lo = _mm512_set1_epi64(-1), hi = _mm512_setzero_si512(), last = _mm512_set1_epi64(prev);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i now = _mm512_maskz_loadu_epi64(inside, ts + i);
        __m512i delta = _mm512_sub_epi64(now, lanes_before512(now, last));
        _mm512_mask_storeu_epi64(deltas + i, inside, delta);
        lo = _mm512_mask_min_epu64(lo, inside, lo, delta);
        hi = _mm512_mask_max_epu64(hi, inside, hi, delta);
        last = now;
    }
    *min = (uint64_t)_mm512_reduce_min_epu64(lo);
    *max = (uint64_t)_mm512_reduce_max_epu64(hi);
}

AVX512 size_t tsc_codec2_repeats_avx512(const uint64_t *bits, size_t n, uint64_t prev)
{
    size_t repeats = 0;
    __m512i last = _mm512_set1_epi64((int64_t)prev);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i now = _mm512_maskz_loadu_epi64(inside, bits + i);
        repeats += (size_t)__builtin_popcount(_mm512_mask_cmpeq_epi64_mask(inside, now, lanes_before512(now, last)));
        last = now;
    }
    return repeats;
}

/* goes_back, eight timestamps a step: a compare with the ones before them into a mask, or'ed. */
AVX512 int tsc_codec2_goes_back_avx512(const int64_t *ts, size_t n, int64_t prev)
{
    __mmask8 back = 0;
    __m512i last = _mm512_set1_epi64(prev);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i now = _mm512_maskz_loadu_epi64(inside, ts + i);
        back |= _mm512_mask_cmpgt_epi64_mask(inside, lanes_before512(now, last), now);
        last = now;
    }
    return back != 0;
}

/* repeat_mask, eight values a step: one compare with the values before them into a mask, and the others
 * compressed into kept (compressed in a register and stored through a lane mask: nothing past them). */
AVX512 size_t tsc_codec2_repeat_mask_avx512(const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask,
                                            uint64_t *kept)
{
    size_t nkept = 0;
    uint64_t words[TSC2_GROUP / 64] = {0};
    __m512i last = _mm512_set1_epi64((int64_t)prev);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i now = _mm512_maskz_loadu_epi64(inside, bits + i);
        __mmask8 repeat = _mm512_mask_cmpeq_epi64_mask(inside, now, lanes_before512(now, last));
        __mmask8 fresh = (__mmask8)(inside & ~repeat);
        words[i / 64] |= (uint64_t)repeat << (i % 64);
        _mm512_mask_storeu_epi64(kept + nkept, (__mmask8)((1u << __builtin_popcount(fresh)) - 1u),
                                 _mm512_maskz_compress_epi64(fresh, now));
        nkept += (size_t)__builtin_popcount(fresh);
        last = now;
    }
    for (size_t w = 0; w < TSC2_GROUP / 64; w++) mask[w] = words[w];
    return nkept;
}

/* left_part_counts, 32 values a step: their left parts in 16-bit lanes compared with the eight candidates into
 * lane masks, counted and ORed, where the twin narrows each compare to bytes (a candidate past 16 bits, unused,
 * is equal to none). Left parts of at most 16 bits only (TSC2_SPLIT_MAX_LEFT): the dispatcher checks. */
AVX512 void tsc_codec2_left_part_counts_avx512(const uint64_t *bits, size_t n, unsigned right_bits,
                                               const uint64_t *candidates, size_t *counts, uint64_t *outside)
{
    __m512i candidate[TSC2_SPLIT_DICT];
    __mmask32 usable[TSC2_SPLIT_DICT];
    size_t count[TSC2_SPLIT_DICT];
    uint64_t words[TSC2_GROUP / 64] = {0};
    const __m128i shift = _mm_cvtsi32_si128((int)right_bits);
#pragma GCC unroll 8 /* the candidates kept in registers: without it they went through the stack */
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) {
        candidate[d] = _mm512_set1_epi16((short)(uint16_t)candidates[d]);
        usable[d] = candidates[d] <= UINT16_MAX ? ~(__mmask32)0 : 0;
        count[d] = 0;
    }
    for (size_t i = 0; i < n; i += 32) {
        __mmask32 inside = n - i >= 32 ? ~(__mmask32)0 : (__mmask32)((UINT32_C(1) << (n - i)) - 1), hit = 0;
        __m512i left = left_parts32(bits + i, n - i, shift);
#pragma GCC unroll 8
        for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) {
            __mmask32 equal = _mm512_mask_cmpeq_epi16_mask(inside & usable[d], left, candidate[d]);
            count[d] += (size_t)__builtin_popcount(equal);
            hit |= equal;
        }
        words[i / 64] |= (uint64_t)(inside & ~hit) << (i % 64);
    }
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) counts[d] = count[d];
    for (size_t w = 0; w < TSC2_GROUP / 64; w++) outside[w] = words[w];
}

/* split_patches, eight fields a step: one compare into a lane mask, the wide lanes' indexes and high bits
 * compressed into at and high (stored through a lane mask: nothing past them), where the scalar twin's branch
 * on each field mispredicts at every spike. */
AVX512 size_t tsc_codec2_split_patches_avx512(uint64_t *fields, size_t m, unsigned width, uint8_t *at,
                                              uint64_t *high)
{
    const __m512i low_mask = _mm512_set1_epi64(width >= 64 ? -1 : (int64_t)((UINT64_C(1) << width) - 1));
    const __m128i shift = _mm_cvtsi32_si128((int)width); /* 64: no high bits, as no field is wider */
    __m512i index = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    size_t patches = 0;
    for (size_t i = 0; i < m; i += 8) {
        __m512i now = _mm512_maskz_loadu_epi64(tail_lanes(m - i), fields + i);
        __mmask8 wide = _mm512_cmpgt_epu64_mask(now, low_mask);
        __mmask8 first = (__mmask8)((1u << __builtin_popcount(wide)) - 1u);
        __m512i high_bits = _mm512_srl_epi64(now, shift);
        _mm512_mask_storeu_epi64(high + patches, first, _mm512_maskz_compress_epi64(wide, high_bits));
        _mm512_mask_cvtepi64_storeu_epi8(at + patches, first, _mm512_maskz_compress_epi64(wide, index));
        _mm512_mask_storeu_epi64(fields + i, wide, _mm512_and_si512(now, low_mask));
        patches += (size_t)__builtin_popcount(wide);
        index = _mm512_add_epi64(index, _mm512_set1_epi64(8));
    }
    return patches;
}

/* exceptions, eight slots a step: lane masks for "not exact" and "NEAR", the exceptions' diffs and tagged
 * indexes compressed into correction and at (stored through a lane mask: nothing past them), their entry
 * bytes summed in lanes. */
AVX512 size_t tsc_codec2_exceptions_avx512(const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at,
                                           size_t *bytes, size_t *first_ok)
{
    /* NEAR (exact included): -TSC2_NEAR_ULPS < diff < TSC2_NEAR_ULPS; a correction of one varint byte (zigzag
     * under 128): -64 <= diff < 64. Both as one unsigned compare of a biased diff. */
    const __m512i near_bias = _mm512_set1_epi64(TSC2_NEAR_ULPS - 1);
    const __m512i near_span = _mm512_set1_epi64(2 * (TSC2_NEAR_ULPS - 1));
    const __m512i short_bias = _mm512_set1_epi64(64), short_span = _mm512_set1_epi64(127);
    const __m512i raw_entry = _mm512_set1_epi64(9), short_entry = _mm512_set1_epi64(2);
    const __m512i long_entry = _mm512_set1_epi64(3);
    __m512i index = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), sum = _mm512_setzero_si512();
    size_t count = 0, first = SIZE_MAX;
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 lanes = tail_lanes(n - i);
        __m512i diff = _mm512_maskz_loadu_epi64(lanes, diffs + i);
        __mmask8 exception = _mm512_test_epi64_mask(diff, diff);
        __mmask8 near = _mm512_mask_cmple_epu64_mask(lanes, _mm512_add_epi64(diff, near_bias), near_span);
        __mmask8 one_byte = _mm512_cmple_epu64_mask(_mm512_add_epi64(diff, short_bias), short_span);
        __m512i near_entry = _mm512_mask_blend_epi64(one_byte, long_entry, short_entry);
        __m512i entry = _mm512_mask_blend_epi64(near, raw_entry, near_entry);
        sum = _mm512_mask_add_epi64(sum, exception, sum, entry);
        __mmask8 kept = (__mmask8)((1u << __builtin_popcount(exception)) - 1u);
        __m512i tagged = _mm512_mask_or_epi64(index, (__mmask8)~near, index, _mm512_set1_epi64(TSC2_EXCEPTION_RAW));
        _mm512_mask_storeu_epi64(correction + count, kept, _mm512_maskz_compress_epi64(exception, diff));
        _mm512_mask_cvtepi64_storeu_epi8(at + count, kept, _mm512_maskz_compress_epi64(exception, tagged));
        if (first == SIZE_MAX && near) first = i + (size_t)__builtin_ctz(near);
        count += (size_t)__builtin_popcount(exception);
        index = _mm512_add_epi64(index, _mm512_set1_epi64(8));
    }
    *bytes += (size_t)_mm512_reduce_add_epi64(sum);
    *first_ok = first;
    return count;
}

/*
 * unpack_run for fields of 31 to 57 bits, eight a step, where the AVX2 run gathers them: a block's eight fields
 * fill exactly `width` bytes (at most 57), read by one masked load; each lane's eight bytes from its field's
 * first one (byte 7 * width / 8 + 7 <= 56 at most) picked by one byte permute, then shifted and masked.
 * @return the fields unpacked (the whole blocks below n).
 */
AVX512 size_t tsc_codec2_unpack_long_avx512(const uint8_t *src, uint64_t *fields, size_t n, unsigned width)
{
    const wide_plan p = wide_plan_of(width);
    const __mmask64 block_bytes = ((__mmask64)1 << width) - 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8, src += width) {
        __m512i bytes = _mm512_permutexvar_epi8(p.pick, _mm512_maskz_loadu_epi8(block_bytes, src));
        _mm512_storeu_si512(fields + i, _mm512_and_si512(_mm512_srlv_epi64(bytes, p.shift), p.mask));
    }
    return i;
}

/* n <= TSC2_GROUP raw samples (time, value: 16 bytes each) into two arrays: per eight samples two loads and
 * two two-register permutes, where the scalar twin moves each word on its own. */
AVX512 void tsc_codec2_deinterleave_avx512(const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits)
{
    const __m512i times = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i values = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    for (size_t i = 0; i < n; i += 8) {
        size_t left = n - i;
        __mmask8 low = (__mmask8)(left >= 4 ? 0xffu : (1u << 2 * left) - 1u);
        __mmask8 high = (__mmask8)(left >= 8 ? 0xffu : left <= 4 ? 0u : (1u << 2 * (left - 4)) - 1u);
        __m512i a = _mm512_maskz_loadu_epi64(low, raw + 16 * i), b = _mm512_maskz_loadu_epi64(high, raw + 16 * i + 64);
        _mm512_mask_storeu_epi64(ts + i, tail_lanes(left), _mm512_permutex2var_epi64(a, times, b));
        _mm512_mask_storeu_epi64(bits + i, tail_lanes(left), _mm512_permutex2var_epi64(a, values, b));
    }
}

/* expand_masked, eight values a step: the mask byte's sources, widened to lanes, pick from the nine values
 * kept[j - 1 .. j + 7] with one two-register permute, where the twin loads and stores each value alone. The
 * loads stop at the kept values' end (masked-off lanes are not read). */
AVX512 void tsc_codec2_expand_masked_avx512(const uint8_t *mask, const uint64_t *kept, size_t kept_count, size_t n,
                                            uint64_t *bits)
{
    const uint64_t *from = kept - 1; /* kept[-1 .. kept_count - 1]: kept_count + 1 values */
    size_t i = 0, j = 0;
    for (; i + 8 <= n; i += 8) {
        const int8_t *source = tsc_codec2_mask_sources[mask[i >> 3]];
        __m128i offsets = _mm_loadl_epi64((const __m128i *)(const void *)source);
        __m512i pick = _mm512_add_epi64(_mm512_cvtepi8_epi64(offsets), _mm512_set1_epi64(1));
        size_t left = kept_count + 1 - j;
        __m512i low = _mm512_maskz_loadu_epi64(tail_lanes(left), from + j);
        __m512i high = left > 8 ? _mm512_maskz_loadu_epi64(tail_lanes(left - 8), from + j + 8) : _mm512_setzero_si512();
        _mm512_storeu_si512(bits + i, _mm512_permutex2var_epi64(low, pick, high));
        j += (size_t)(source[7] + 1);
    }
    tsc_codec2_expand_masked_tail(mask, from, i, j, n, bits);
}

AVX512 uint64_t tsc_codec2_odd_deltas_avx512(const int64_t *ts, size_t n, int64_t prev, size_t from,
                                             uint64_t first_delta)
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), first = _mm512_set1_epi64((int64_t)first_delta);
    __m512i odd = _mm512_setzero_si512(), last = _mm512_set1_epi64(prev);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i now = _mm512_maskz_loadu_epi64(inside, ts + i);
        __m512i delta = _mm512_sub_epi64(now, lanes_before512(now, last));
        __mmask8 counted = inside & _mm512_cmpge_epu64_mask(_mm512_add_epi64(lane, _mm512_set1_epi64((int64_t)i)),
                                                            _mm512_set1_epi64((int64_t)from));
        odd = _mm512_mask_or_epi64(odd, counted, odd, _mm512_xor_si512(delta, first));
        last = now;
    }
    return (uint64_t)_mm512_reduce_or_epi64(odd);
}

AVX512 uint64_t tsc_codec2_odd_values_avx512(const uint64_t *bits, size_t n, uint64_t first_bits)
{
    const __m512i first = _mm512_set1_epi64((int64_t)first_bits);
    __m512i odd = _mm512_setzero_si512();
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i value = _mm512_maskz_loadu_epi64(inside, bits + i);
        odd = _mm512_mask_or_epi64(odd, inside, odd, _mm512_xor_si512(value, first));
    }
    return (uint64_t)_mm512_reduce_or_epi64(odd);
}

/* simd.c's read_block_avx2 eight lanes at a time (div_pow10's three operations inline). */
AVX512 void tsc_codec2_read_block_avx512(const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k,
                                         int64_t *diff)
{
    const __m512d scale = _mm512_set1_pd(tsc_codec2_pow10[e]), magic = _mm512_set1_pd(TSC2_MAGIC);
    const __m512d inverse = _mm512_set1_pd(tsc_codec2_pow10_inverse[e]);
    const __m512d lo = _mm512_set1_pd(-0x1p51), hi = _mm512_set1_pd(0x1p51);
    const __m512i magic_bits = _mm512_set1_epi64(TSC2_MAGIC_BITS), far = _mm512_set1_epi64(INT64_MIN);
    for (size_t i = 0; i < n; i += 8) {
        __mmask8 inside = tail_lanes(n - i);
        __m512i b = _mm512_maskz_loadu_epi64(inside, bits + i);
        __m512d x = _mm512_mul_pd(_mm512_castsi512_pd(b), scale);
        __mmask8 in_range = _mm512_cmp_pd_mask(x, lo, _CMP_GT_OQ) & _mm512_cmp_pd_mask(x, hi, _CMP_LT_OQ);
        __m512d rounded = _mm512_add_pd(x, magic);
        __m512d kd = _mm512_sub_pd(rounded, magic);
        __m512i ki = _mm512_sub_epi64(_mm512_castpd_si512(rounded), magic_bits);
        __m512d q = _mm512_mul_pd(kd, inverse);
        __m512d back = _mm512_fmadd_pd(_mm512_fnmadd_pd(q, scale, kd), inverse, q);
        if (as_float) back = _mm512_cvtps_pd(_mm512_cvtpd_ps(back));
        __m512i d = _mm512_mask_sub_epi64(far, in_range, b, _mm512_castpd_si512(back));
        _mm512_mask_storeu_epi64(k + i, inside, _mm512_maskz_mov_epi64(in_range, ki));
        _mm512_mask_storeu_epi64(diff + i, inside, d);
    }
}

/* ---- packing */

/*
 * tsc_codec2_pack for 1 <= width <= 16, sixteen fields (two blocks of eight, `width` bytes each) a step:
 * narrowed to 32-bit lanes, then joined pairwise (fields 2k and 2k + 1 in one 64-bit lane, then four in one,
 * then eight in one 128-bit lane: its low `width` bytes are the block), the two blocks' bytes gathered by one
 * byte permute and stored through a byte mask, so nothing is written past the packed bytes. Fields must fit
 * their width, as the scalar twin assumes.
 */
AVX512 void tsc_codec2_pack_narrow_avx512(uint8_t *dst, const uint64_t *fields, size_t n, unsigned width)
{
    const __m512i low32 = _mm512_set1_epi64(0xffffffff), quads = _mm512_set_epi64(0, 0, 6, 4, 0, 0, 2, 0);
    const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m128i by_one = _mm_cvtsi32_si128((int)width), by_two = _mm_cvtsi32_si128((int)(2 * width));
    const __m512i up = _mm512_set1_epi64(4 * width), down = _mm512_set1_epi64(64 - 4 * width);
    /* output byte b < width: block 1's byte b (lane 0); b >= width: block 2's byte b - width (byte 32 on) */
    const __m512i iota = _mm512_set_epi64(0x3f3e3d3c3b3a3938, 0x3736353433323130, 0x2f2e2d2c2b2a2928,
                                          0x2726252423222120, 0x1f1e1d1c1b1a1918, 0x1716151413121110,
                                          0x0f0e0d0c0b0a0908, 0x0706050403020100);
    const __m512i pick = _mm512_mask_add_epi8(iota, _mm512_cmpge_epu8_mask(iota, _mm512_set1_epi8((char)width)), iota,
                                              _mm512_set1_epi8((char)(32 - width)));
    size_t total = tsc_codec2_packed_bytes(n, width);
    for (size_t i = 0, at = 0; i < n; i += 16, at += 2 * width) {
        size_t left = n - i;
        __mmask8 first = tail_lanes(left), second = tail_lanes(left > 8 ? left - 8 : 0);
        __m512i a = _mm512_maskz_loadu_epi64(first, fields + i);
        __m512i b = _mm512_maskz_loadu_epi64(second, fields + (left > 8 ? i + 8 : i));
        __m512i x = _mm512_permutex2var_epi32(a, evens, b); /* the sixteen fields' low halves */
        __m512i pairs = _mm512_or_si512(_mm512_and_si512(x, low32), _mm512_sll_epi64(_mm512_srli_epi64(x, 32), by_one));
        __m512i fours = _mm512_or_si512(pairs, _mm512_sll_epi64(_mm512_shuffle_epi32(pairs, _MM_PERM_DCDC), by_two));
        __m512i halves = _mm512_permutexvar_epi64(quads, fours); /* lanes 0, 1: fields 0-3, 4-7; 4, 5: 8-11, 12-15 */
        __m512i low = _mm512_or_si512(halves, _mm512_shuffle_epi32(_mm512_sllv_epi64(halves, up), _MM_PERM_DCDC));
        __m512i blocks = _mm512_mask_blend_epi64(0x22, low, _mm512_srlv_epi64(halves, down));
        size_t bytes = total - at < 2 * width ? total - at : 2 * width;
        _mm512_mask_storeu_epi8(dst + at, ((__mmask64)1 << bytes) - 1, _mm512_permutexvar_epi8(pick, blocks));
    }
}

/*
 * Packing fields of 8 to 57 bits (pack_wide, pack_long): each field shifted left by its bit offset mod 8, so
 * that its bits sit in bytes 0..7 of its lane from its first output byte on; as fields are at least 8 bits
 * wide, an output byte takes bits from at most two fields. For output bytes 0..63 of a run of fields, the
 * byte (8 * lane + byte) holding the first bit (`first`) and the last bit (`last`), and the output bytes
 * whose last bit is another field's (`two`). The divisions by the width are a product's high half, exact
 * for every bit below 520 and width 17..57.
 */
typedef struct {
    __m512i shifts, first, last;
    __mmask64 two;
} byte_picks;

AVX512_INLINE byte_picks byte_picks_of(unsigned width)
{
    const __m512i lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), w = _mm512_set1_epi16((short)width);
    const __m512i reciprocal = _mm512_set1_epi16((short)((65536 + width - 1) / width));
    __m256i first[2], last[2];
    __mmask32 two[2];
    for (int half = 0; half < 2; half++) {
        __m512i k = _mm512_add_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                                       15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                      _mm512_set1_epi16((short)(32 * half)));
        __m512i bit = _mm512_slli_epi16(k, 3);
        __m512i lo = _mm512_mulhi_epu16(bit, reciprocal);
        __m512i hi = _mm512_mulhi_epu16(_mm512_add_epi16(bit, _mm512_set1_epi16(7)), reciprocal);
        /* the byte in the lane: k less the field's first output byte */
        __m512i lo_at = _mm512_sub_epi16(k, _mm512_srli_epi16(_mm512_mullo_epi16(lo, w), 3));
        __m512i hi_at = _mm512_sub_epi16(k, _mm512_srli_epi16(_mm512_mullo_epi16(hi, w), 3));
        first[half] = _mm512_cvtepi16_epi8(_mm512_add_epi16(_mm512_slli_epi16(lo, 3), lo_at));
        last[half] = _mm512_cvtepi16_epi8(_mm512_add_epi16(_mm512_slli_epi16(hi, 3), hi_at));
        two[half] = _mm512_cmpneq_epi16_mask(hi, lo);
    }
    byte_picks p = {_mm512_and_si512(_mm512_mul_epu32(lanes, _mm512_set1_epi64(width)), _mm512_set1_epi64(7)),
                    _mm512_inserti64x4(_mm512_castsi256_si512(first[0]), first[1], 1),
                    _mm512_inserti64x4(_mm512_castsi256_si512(last[0]), last[1], 1),
                    (__mmask64)two[0] | (__mmask64)two[1] << 32};
    return p;
}

AVX512_INLINE __mmask64 first_bytes(size_t bytes) { return bytes >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << bytes) - 1; }

/* tsc_codec2_pack for 17 <= width <= 32: sixteen fields (2 * width bytes) a step, from two registers by two
 * two-source byte permutes and an or, stored through a byte mask. */
AVX512 void tsc_codec2_pack_wide_avx512(uint8_t *dst, const uint64_t *fields, size_t n, unsigned width)
{
    const byte_picks p = byte_picks_of(width);
    size_t total = tsc_codec2_packed_bytes(n, width);
    for (size_t i = 0, at = 0; i < n; i += 16, at += 2 * width) {
        size_t left = n - i, bytes = total - at < 2 * width ? total - at : 2 * width;
        __m512i a = _mm512_sllv_epi64(_mm512_maskz_loadu_epi64(tail_lanes(left), fields + i), p.shifts);
        __m512i b = _mm512_maskz_loadu_epi64(tail_lanes(left > 8 ? left - 8 : 0), fields + (left > 8 ? i + 8 : i));
        b = _mm512_sllv_epi64(b, p.shifts); /* lane j + 8 starts 8 * width bits on: the same shift */
        __m512i packed = _mm512_permutex2var_epi8(a, p.first, b);
        packed = _mm512_or_si512(packed, _mm512_maskz_permutex2var_epi8(p.two, a, p.last, b));
        _mm512_mask_storeu_epi8(dst + at, first_bytes(bytes), packed);
    }
}

/* tsc_codec2_pack for 33 <= width <= 57: eight fields (`width` bytes) a step, as pack_wide from one
 * register (a field shifted by its bit offset mod 8 still fits its lane: 57 + 7 bits). */
AVX512 void tsc_codec2_pack_long_avx512(uint8_t *dst, const uint64_t *fields, size_t n, unsigned width)
{
    const byte_picks p = byte_picks_of(width);
    size_t total = tsc_codec2_packed_bytes(n, width);
    for (size_t i = 0, at = 0; i < n; i += 8, at += width) {
        size_t bytes = total - at < width ? total - at : width;
        __m512i a = _mm512_sllv_epi64(_mm512_maskz_loadu_epi64(tail_lanes(n - i), fields + i), p.shifts);
        __m512i packed = _mm512_permutexvar_epi8(p.first, a);
        packed = _mm512_or_si512(packed, _mm512_maskz_permutexvar_epi8(p.two, p.last, a));
        _mm512_mask_storeu_epi8(dst + at, first_bytes(bytes), packed);
    }
}

#else
typedef int tsc_codec2_no_avx512; /* ISO C wants a declaration in every translation unit */
#endif
