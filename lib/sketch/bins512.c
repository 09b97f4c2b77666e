/*
 * A store's bins in the compact encoding, eight bins a step with AVX-512
 * (F, BW, VBMI, VBMI2: Ice Lake and later, Zen 4 and later), behind runtime
 * dispatch; codec.c's scalar loops are the twins the tests compare byte for
 * byte. A varfloat64 count is x = rotl6(bits(v + 1) - bits(1)) written 7 bits
 * a byte from the top: one multishift spreads the groups of eight counts into
 * their lanes, the last non-zero group of each lane decides its length, and
 * one byte compress packs the lanes' bytes into the output. Counts too long
 * for a lane (9 bytes contiguous, 8 after a delta byte) and index deltas of two
 * bytes or more stop the kernel before their block, which the caller writes
 * the scalar way. Reading goes the other way: in 64 bytes the bytes without
 * continuation bit end the varints, one byte compress lists where, byte
 * permutes pick each lane's bytes and two multiply-adds gather the groups; a
 * record that does not fit ends the run, for the scalar reader to read or
 * refuse (bins_block).
 */
#include "sketch.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt,bmi,bmi2")))
#  define AVX512_INLINE \
      __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt,bmi,bmi2"), always_inline)) static inline

#  define BYTES(b) (UINT64_C(0x0101010101010101) * (b))

/* Within each byte of a lane mask, every bit below the highest set bit set too. */
TSC_INLINE uint64_t smear_down(uint64_t m)
{
    m |= (m >> 1) & BYTES(0x7f);
    m |= (m >> 2) & BYTES(0x3f);
    return m | ((m >> 4) & BYTES(0x0f));
}

AVX512_INLINE __m512i varfloat_x8(__m512d counts)
{
    const __m512i one_bits = _mm512_set1_epi64(INT64_C(0x3ff0000000000000));
    __m512i shifted = _mm512_castpd_si512(_mm512_add_pd(counts, _mm512_set1_pd(1.0)));
    return _mm512_rol_epi64(_mm512_sub_epi64(shifted, one_bits), 6);
}

/*
 * Lanes' bytes (groups, lowest address first) to the output: a lane keeps `always` bytes and every byte
 * up to its last non-zero group, of its first `lanes` lanes; continuation bits go on the kept group bytes
 * that another group follows. The store writes 64 bytes, of which the caller has room for all.
 */
AVX512_INLINE uint8_t *put_lanes(uint8_t *out, __m512i groups, uint64_t group_bytes, uint64_t always,
                                 unsigned lanes)
{
    uint64_t keep = smear_down(_mm512_test_epi8_mask(groups, groups) & group_bytes) | always;
    keep &= lanes >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * lanes)) - 1;
    uint64_t continued = (keep >> 1) & group_bytes & BYTES(0x7f);
    groups = _mm512_mask_mov_epi8(groups, continued, _mm512_or_si512(groups, _mm512_set1_epi8((char)0x80)));
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi8(keep, groups));
    return out + _mm_popcnt_u64(keep);
}

AVX512_INLINE __mmask8 lanes_below(size_t left) { return (__mmask8)(left >= 8 ? 0xff : (1u << left) - 1); }

/* Contiguous counts: lane k is count k's up to 8 bytes (groups 0-7 from bit 57 down to bit 8). */
AVX512 size_t tsc_put_contiguous_avx512(uint8_t **out_p, const double *counts, size_t n)
{
    const __m512i group_at = _mm512_set1_epi64(INT64_C(0x080f161d242b3239));
    uint8_t *out = *out_p;
    size_t k = 0;
    for (; k < n; k += 8) {
        __mmask8 valid = lanes_below(n - k);
        __m512i x = varfloat_x8(_mm512_maskz_loadu_pd(valid, counts + k));
        if (_mm512_test_epi64_mask(x, _mm512_set1_epi64(0xff))) break; /* a 9-byte count */
        __m512i groups = _mm512_and_si512(_mm512_multishift_epi64_epi8(group_at, x), _mm512_set1_epi8(0x7f));
        out = put_lanes(out, groups, ~UINT64_C(0), BYTES(0x01), (unsigned)_mm_popcnt_u32(valid));
    }
    *out_p = out;
    return k < n ? k : n;
}

/*
 * Index deltas and counts over the non-empty bins of counts[0, n), bin k at index first + k: the
 * non-empty ones compressed into the low lanes, lane k is its zigzag delta byte from the bin before
 * (*prev, then lane k - 1) and its count's up to 7 bytes (groups 0-6, bit 57 down to bit 15).
 */
AVX512 size_t tsc_put_sparse_avx512(uint8_t **out_p, const double *counts, size_t n, int64_t first, int64_t *prev)
{
    const __m512i group_at = _mm512_set1_epi64(INT64_C(0x0f161d242b323900));
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    uint8_t *out = *out_p;
    int64_t before = *prev;
    size_t k = 0;
    for (; k < n; k += 8) {
        __m512d block = _mm512_maskz_loadu_pd(lanes_below(n - k), counts + k);
        __mmask8 occupied = _mm512_cmp_pd_mask(block, _mm512_setzero_pd(), _CMP_NEQ_UQ);
        if (!occupied) continue;
        unsigned taken = (unsigned)_mm_popcnt_u32(occupied);
        __mmask8 used = lanes_below(taken);
        __m512i block_index = _mm512_add_epi64(_mm512_set1_epi64(first + (int64_t)k), lane);
        __m512i index = _mm512_maskz_compress_epi64(occupied, block_index);
        __m512i delta = _mm512_sub_epi64(index, _mm512_alignr_epi64(index, _mm512_set1_epi64(before), 7));
        __m512i zigzag = _mm512_xor_si512(_mm512_slli_epi64(delta, 1), _mm512_srai_epi64(delta, 63));
        __m512i x = varfloat_x8(_mm512_maskz_compress_pd(occupied, block));
        if (_mm512_mask_cmpge_epu64_mask(used, zigzag, _mm512_set1_epi64(0x80)) |
            _mm512_mask_test_epi64_mask(used, x, _mm512_set1_epi64(0x7fff)))
            break;
        __m512i groups = _mm512_and_si512(_mm512_multishift_epi64_epi8(group_at, x), _mm512_set1_epi8(0x7f));
        groups = _mm512_mask_mov_epi8(groups, BYTES(0x01), zigzag);
        out = put_lanes(out, groups, BYTES(0xfe), BYTES(0x03), taken);
        before = first + (int64_t)k + (31 - __builtin_clz(occupied));
    }
    *out_p = out;
    *prev = before;
    return k < n ? k : n;
}

/* Each qword's byte 0 copied to its eight bytes. */
AVX512_INLINE __m512i spread_byte0(__m512i v)
{
    return _mm512_shuffle_epi8(v, _mm512_set4_epi64(0x0808080808080808, 0, 0x0808080808080808, 0));
}

/* Lane k: the eight bytes of window from byte start_k on (indices wrap at 64), those from length_k on
 * zeroed, continuation bits cleared. */
AVX512_INLINE __m512i varint_bytes(__m512i window, __m512i start, __m512i length)
{
    const __m512i byte_of_lane = _mm512_set1_epi64(0x0706050403020100);
    __m512i picked = _mm512_permutexvar_epi8(_mm512_add_epi8(spread_byte0(start), byte_of_lane), window);
    __mmask64 kept = _mm512_cmplt_epu8_mask(byte_of_lane, spread_byte0(length));
    return _mm512_maskz_mov_epi8(kept, _mm512_and_si512(picked, _mm512_set1_epi8(0x7f)));
}

/* Up to eight 7-bit groups a lane, first byte the least significant (uvarint): the value. */
AVX512_INLINE __m512i groups_little(__m512i b)
{
    __m512i pairs = _mm512_maddubs_epi16(_mm512_set1_epi16(-32767), b); /* bytes 0x01 0x80: b0 + 128 b1 */
    __m512i quads = _mm512_madd_epi16(pairs, _mm512_set1_epi32(0x40000001));       /* + 2^14 (b2 + 128 b3) */
    return _mm512_or_si512(_mm512_and_si512(quads, _mm512_set1_epi64(0xffffffff)),
                           _mm512_slli_epi64(_mm512_srli_epi64(quads, 32), 28));
}

/* Up to eight 7-bit groups a lane, first byte the most significant (varfloat64): x, whose top 56 bits
 * they are. */
AVX512_INLINE __m512i groups_big(__m512i b)
{
    __m512i pairs = _mm512_maddubs_epi16(_mm512_set1_epi16(0x0180), b);            /* 128 b0 + b1 */
    __m512i quads = _mm512_madd_epi16(pairs, _mm512_set1_epi32(0x00014000));       /* 2^14 pair0 + pair1 */
    return _mm512_or_si512(_mm512_slli_epi64(quads, 36), _mm512_slli_epi64(_mm512_srli_epi64(quads, 32), 8));
}

/* Where a block's records end and how they stand: see bins_block. */
typedef struct {
    unsigned take;       /* records taken */
    size_t bytes;        /* the bytes they take */
    __m512i count_start; /* per lane */
    __m512i count_length;
    __mmask8 bad; /* lanes that do not fit a lane's eight bytes */
} block_plan;

/* The bytes of the first `records` (>= 1) records of `varints` varints each, from the terminator mask. */
AVX512_INLINE size_t records_bytes(uint64_t terminators, unsigned varints, unsigned records)
{
    return _tzcnt_u64(_pdep_u64(UINT64_C(1) << (varints * records - 1), terminators)) + 1;
}

/*
 * The first `want` (1-8) records from byte `offset` of window, `terminators` its bytes without
 * continuation bit from there on (bit 0: byte offset), records of `varints` (1 or 2) varints each: with
 * every varint of at most 8 bytes, each ends at a terminator, so record k ends at terminator
 * varints * (k + 1) - 1. Their length comes from the mask alone, so that the next block need not wait
 * for the lanes; a lane that turns out not to fit (a longer varint) is in bad, and the caller takes fewer.
 */
AVX512_INLINE block_plan plan_block(uint64_t terminators, unsigned offset, unsigned want, unsigned varints,
                                    __m512i *delta_start, __m512i *delta_length)
{
    const __m512i iota = _mm512_set_epi64(0x3f3e3d3c3b3a3938, 0x3736353433323130, 0x2f2e2d2c2b2a2928,
                                          0x2726252423222120, 0x1f1e1d1c1b1a1918, 0x1716151413121110,
                                          0x0f0e0d0c0b0a0908, 0x0706050403020100);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i one = _mm512_set1_epi64(1), eight = _mm512_set1_epi64(8);
    block_plan p;
    unsigned complete = (unsigned)_mm_popcnt_u64(terminators) / varints;
    p.take = complete < want ? complete : want;
    p.bytes = p.take ? records_bytes(terminators, varints, p.take) : 0;
    /* Keep it here, ahead of the lanes: gcc sinks it past the check of the lanes otherwise, and the
     * reader got a third slower. */
    __asm__("" : "+r"(p.bytes));
    /* byte t: where terminator t is, from the window's start */
    __m512i end_at = _mm512_maskz_compress_epi8(terminators, _mm512_add_epi8(iota, _mm512_set1_epi8((char)offset)));
    __m512i last = varints == 2 ? _mm512_or_si512(_mm512_add_epi64(lane, lane), one) : lane;
    __m512i count_end = _mm512_maskz_permutexvar_epi8(BYTES(0x01), last, end_at);
    __m512i start = _mm512_alignr_epi64(_mm512_add_epi64(count_end, one), _mm512_set1_epi64(offset), 7);
    p.count_start = start;
    if (varints == 2) {
        __m512i delta_end = _mm512_maskz_permutexvar_epi8(BYTES(0x01), _mm512_add_epi64(lane, lane), end_at);
        *delta_start = start;
        *delta_length = _mm512_sub_epi64(_mm512_add_epi64(delta_end, one), start);
        p.count_start = _mm512_add_epi64(delta_end, one);
    }
    p.count_length = _mm512_sub_epi64(_mm512_add_epi64(count_end, one), p.count_start);
    p.bad = _mm512_cmpgt_epu64_mask(p.count_length, eight);
    if (varints == 2) p.bad |= _mm512_cmpgt_epu64_mask(*delta_length, eight);
    return p;
}

/* Lanes' counts: varfloat64 x (at most 8 bytes, so finite and >= 0) decoded. */
AVX512_INLINE __m512d counts_of(__m512i window, const block_plan *p)
{
    __m512i x = groups_big(varint_bytes(window, p->count_start, p->count_length));
    __m512i bits = _mm512_add_epi64(_mm512_ror_epi64(x, 6), _mm512_set1_epi64(INT64_C(0x3ff0000000000000)));
    return _mm512_sub_pd(_mm512_castsi512_pd(bits), _mm512_set1_pd(1.0));
}

/*
 * One block of up to `want` (1-8) records from byte `offset` of window (terminators as for plan_block):
 * index deltas and counts (has_deltas; *index the bin before) or counts alone (*index the first's bin,
 * step apart). It stops before a record it cannot take: a varint longer than 8 bytes or past the
 * window, a delta or an index outside what read_bin_run allows. The bins taken are written (eight lanes
 * of room); *index is updated, the bytes taken returned in *used; returns the records taken.
 */
AVX512_INLINE unsigned bins_block(__m512i window, uint64_t terminators, unsigned offset, unsigned want, int has_deltas,
                                  __m512i steps, int64_t step, size_t *used, int64_t *index, int64_t *indices,
                                  double *counts)
{
    const __m512i one = _mm512_set1_epi64(1), zero = _mm512_setzero_si512();
    unsigned varints = has_deltas ? 2 : 1;
    __m512i delta_start = zero, delta_length = zero;
    block_plan p = plan_block(terminators, offset, want, varints, &delta_start, &delta_length);
    *used = 0;
    if (!p.take) return 0;
    int64_t before = *index;
    __m512i at, sum = steps;
    if (has_deltas) {
        /* Deltas of one byte each (bins close together: the usual case) are the bytes at the starts. */
        __m512i zigzag = (_mm512_cmpneq_epi64_mask(delta_length, one) & lanes_below(p.take)) == 0
                             ? _mm512_maskz_permutexvar_epi8(BYTES(0x01), delta_start, window)
                             : groups_little(varint_bytes(window, delta_start, delta_length));
        __m512i delta = _mm512_xor_si512(_mm512_srli_epi64(zigzag, 1),
                                         _mm512_sub_epi64(zero, _mm512_and_si512(zigzag, one)));
        /* read_bin_run refuses deltas beyond -2^32 and 2^32 - 2. Below, the index leaves int32 anyway;
         * above, not always: 2^32 - 1 takes INT32_MIN to INT32_MAX. */
        p.bad |= _mm512_cmpgt_epi64_mask(delta, _mm512_set1_epi64(INT32_MAX * INT64_C(2)));
        sum = delta; /* running sum of the deltas: independent of *index */
        sum = _mm512_add_epi64(sum, _mm512_alignr_epi64(sum, zero, 7));
        sum = _mm512_add_epi64(sum, _mm512_alignr_epi64(sum, zero, 6));
        sum = _mm512_add_epi64(sum, _mm512_alignr_epi64(sum, zero, 4));
    }
    at = _mm512_add_epi64(sum, _mm512_set1_epi64(before));
    p.bad |= _mm512_cmplt_epi64_mask(at, _mm512_set1_epi64(INT32_MIN)) |
             _mm512_cmpgt_epi64_mask(at, _mm512_set1_epi64(INT32_MAX));
    unsigned fit = (unsigned)__builtin_ctz(p.bad | 0x100u);
    if (TSC_UNLIKELY(fit < p.take)) {
        if (!fit) return 0;
        p.take = fit;
        p.bytes = records_bytes(terminators, varints, fit);
    }
    /* Empty bins too: compressing them out put the lanes' counts on the next block's path (a third
     * slower), and the commit skips them. */
    _mm512_storeu_si512(indices, at);
    _mm512_storeu_pd(counts, counts_of(window, &p));
    if (has_deltas) *index = before + _mm_cvtsi128_si64(_mm512_castsi512_si128(
                                  _mm512_permutexvar_epi64(_mm512_set1_epi64(p.take - 1), sum)));
    else *index = before + (int64_t)p.take * step;
    *used = p.bytes;
    return p.take;
}

/*
 * The blocks of one form, from src[0, avail): see tsc_get_bins_avx512. A window of 64 bytes serves as
 * many blocks of contiguous counts as it holds whole (about five of one or two bytes a bin), so that
 * only one load and one mask a window wait for the position before them: twice as fast.
 */
AVX512_INLINE size_t bins_run(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                              int64_t *index, int64_t *indices, double *counts)
{
    __m512i steps = _mm512_set_epi64(7 * step, 6 * step, 5 * step, 4 * step, 3 * step, 2 * step, step, 0);
    size_t pos = 0, taken = 0;
    int64_t at = *index; /* in a register: through index, every store of a bin would reload it */
    while (taken < n) {
        size_t left = avail - pos;
        uint64_t readable = left >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << left) - 1;
        __m512i window = _mm512_maskz_loadu_epi8(readable, src + pos);
        uint64_t terminators = ~(uint64_t)_mm512_movepi8_mask(window) & readable;
        unsigned offset = 0;
        for (;;) {
            size_t bytes;
            unsigned want = n - taken < 8 ? (unsigned)(n - taken) : 8;
            unsigned take = bins_block(window, terminators >> offset, offset, want, has_deltas, steps, step, &bytes,
                                       &at, indices + taken, counts + taken);
            offset += (unsigned)bytes;
            taken += take;
            /* Index deltas and counts take one block a window: 8% faster on the POISSON sketch
             * (three bytes a bin) than serving two or three from one. */
            if (has_deltas || take < want || taken == n || offset >= 64) break;
        }
        if (!offset) break; /* not one record: the scalar reader's turn */
        pos += offset;
    }
    *used = pos;
    *index = at;
    return taken;
}

/* One loop for each form (a test of the form inside the one loop made it a fifth slower). */
AVX512 size_t tsc_get_bins_avx512(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step,
                                  size_t *used, int64_t *index, int64_t *indices, double *counts)
{
    return has_deltas ? bins_run(src, avail, n, 1, step, used, index, indices, counts)
                      : bins_run(src, avail, n, 0, step, used, index, indices, counts);
}

#else
typedef int tsc_sketch_no_avx512; /* ISO C wants a declaration in every translation unit */
#endif
