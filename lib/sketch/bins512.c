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
 * the scalar way.
 */
#include "sketch.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt")))
#  define AVX512_INLINE \
      __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt"), always_inline)) static inline

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
        __m512i index = _mm512_maskz_compress_epi64(occupied, _mm512_add_epi64(_mm512_set1_epi64(first + (int64_t)k), lane));
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

#else
typedef int tsc_sketch_no_avx512; /* ISO C wants a declaration in every translation unit */
#endif
