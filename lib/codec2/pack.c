/*
 * Bit packing of codec-2 fields and the min/max range check that picks their
 * width. Packing keeps a 64-bit accumulator and stores whole 8-byte words;
 * unpacking loads 8 bytes at each field's first byte, so fields up to 57 bits
 * need one load. Loads never pass `avail` (the chunk's end): the last fields
 * go through a zero-padded copy.
 */
#include "format.h"

#if defined(__x86_64__) && defined(__GNUC__)
#  include <immintrin.h>
#  define TSC2_HAVE_AVX2 1
#endif

void tsc_codec2_pack(uint8_t *restrict dst, const uint64_t *restrict fields, size_t n, unsigned width)
{
    if (width == 0) return;
    uint64_t acc = 0;
    unsigned filled = 0;
    for (size_t i = 0; i < n; i++) {
        acc |= fields[i] << filled;
        unsigned total = filled + width;
        if (total >= 64) {
            tsc_store64_le(dst, acc);
            dst += 8;
            acc = filled ? fields[i] >> (64 - filled) : 0;
            total -= 64;
        }
        filled = total;
    }
    for (unsigned b = 0; b < filled; b += 8) *dst++ = (uint8_t)(acc >> b);
}

/* Field i when its 8 (or 9) bytes are all inside the buffer. */
TSC_INLINE uint64_t unpack_one(const uint8_t *src, size_t i, unsigned width, uint64_t mask)
{
    size_t bit = i * width;
    unsigned shift = (unsigned)(bit & 7);
    uint64_t v = tsc_load64_le(src + (bit >> 3)) >> shift;
    if (width + shift > 64) v |= (uint64_t)src[(bit >> 3) + 8] << (64 - shift);
    return v & mask;
}

void tsc_codec2_unpack(const uint8_t *restrict src, size_t avail, uint64_t *restrict fields, size_t n, unsigned width)
{
    if (width == 0) {
        memset(fields, 0, n * sizeof *fields);
        return;
    }
    uint64_t mask = width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
    /* Fields whose loads (up to 9 bytes from their first byte) stay inside avail. */
    size_t fast = avail >= 9 ? ((avail - 9) * 8) / width + 1 : 0;
    if (fast > n) fast = n;
    size_t i = 0;
    if (width <= 57) {
        for (; i < fast; i++) {
            size_t bit = i * width;
            fields[i] = (tsc_load64_le(src + (bit >> 3)) >> (bit & 7)) & mask;
        }
    } else {
        for (; i < fast; i++) fields[i] = unpack_one(src, i, width, mask);
    }
    if (i == n) return;
    uint8_t tail[TSC2_GROUP * 8 + 16] = {0};
    size_t from = (i * width) >> 3, need = tsc_codec2_packed_bytes(n, width) - from;
    memcpy(tail, src + from, need);
    for (; i < n; i++) {
        size_t bit = i * width - from * 8;
        uint64_t v = tsc_load64_le(tail + (bit >> 3)) >> (bit & 7);
        if (width + (bit & 7) > 64) v |= (uint64_t)tail[(bit >> 3) + 8] << (64 - (bit & 7));
        fields[i] = v & mask;
    }
}

void tsc_codec2_range_i64_scalar(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    *min = lo;
    *max = hi;
}

#ifdef TSC2_HAVE_AVX2
/* Four lanes of compare-and-blend (AVX2 has no 64-bit min/max), then the lanes folded. */
__attribute__((target("avx2"))) static void range_avx2(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
    __m256i lo = _mm256_set1_epi64x(INT64_MAX), hi = _mm256_set1_epi64x(INT64_MIN);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i x;
        memcpy(&x, v + i, sizeof x);
        lo = _mm256_blendv_epi8(lo, x, _mm256_cmpgt_epi64(lo, x));
        hi = _mm256_blendv_epi8(hi, x, _mm256_cmpgt_epi64(x, hi));
    }
    int64_t lanes_lo[4], lanes_hi[4], tail_lo, tail_hi;
    memcpy(lanes_lo, &lo, sizeof lo);
    memcpy(lanes_hi, &hi, sizeof hi);
    tsc_codec2_range_i64_scalar(v + i, n - i, &tail_lo, &tail_hi);
    for (int k = 0; k < 4; k++) {
        tail_lo = lanes_lo[k] < tail_lo ? lanes_lo[k] : tail_lo;
        tail_hi = lanes_hi[k] > tail_hi ? lanes_hi[k] : tail_hi;
    }
    *min = tail_lo;
    *max = tail_hi;
}
#endif

int tsc_codec2_range_i64_simd(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
#ifdef TSC2_HAVE_AVX2
    if (__builtin_cpu_supports("avx2")) {
        range_avx2(v, n, min, max);
        return 1;
    }
#endif
    (void)v, (void)n, (void)min, (void)max;
    return 0;
}

void tsc_codec2_range_i64(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
    if (!tsc_codec2_range_i64_simd(v, n, min, max)) tsc_codec2_range_i64_scalar(v, n, min, max);
}
