/*
 * The AVX2 twins of lib/common/lanes512.h's helpers, for lane decoders on CPUs without AVX-512: four chunks
 * a set of 256-bit registers, one 64-bit lane each; a bit stream read most significant bit first from
 * windows of 32 bytes fetched at each lane's position; rows of samples (one a lane) transposed into each
 * chunk's place in the caller's arrays. Static inline functions for the kernels' translation units only.
 */
#ifndef TSCHUNK_LANES_AVX2_H
#define TSCHUNK_LANES_AVX2_H

#include "common.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define TSC_LANES4 __attribute__((target("avx2")))
#  define TSC_LANES4_INLINE __attribute__((target("avx2"), always_inline)) static inline

/* Each lane from a where mask (all ones or all zeros a lane) is set, else from b. */
TSC_LANES4_INLINE __m256i tsc_lanes4_select(__m256i mask, __m256i a, __m256i b)
{
    return _mm256_blendv_epi8(b, a, mask);
}

/* All ones where x is 1, zero where it is 0. */
TSC_LANES4_INLINE __m256i tsc_lanes4_all_if(__m256i x) { return _mm256_sub_epi64(_mm256_setzero_si256(), x); }

/* The 64 bits at bit `at` (<= 64) of the 128 bits hi:lo (most significant first); 0 past them. */
TSC_LANES4_INLINE __m256i tsc_lanes4_bits_at(__m256i hi, __m256i lo, __m256i at)
{
    __m256i lo_at = _mm256_sub_epi64(_mm256_set1_epi64x(64), at);
    return _mm256_or_si256(_mm256_sllv_epi64(hi, at), _mm256_srlv_epi64(lo, lo_at));
}

/* 32 bytes of each lane's stream, as four big-endian words. */
typedef struct {
    __m256i word[4];
} tsc_lanes4_window;

/* The 64 bits at bit `at` (< 192) of a window. */
TSC_LANES4_INLINE __m256i tsc_lanes4_window_bits(const tsc_lanes4_window *w, __m256i at)
{
    __m256i past0 = _mm256_cmpgt_epi64(at, _mm256_set1_epi64x(63));  /* all ones from bit 64 on */
    __m256i past1 = _mm256_cmpgt_epi64(at, _mm256_set1_epi64x(127)); /* from bit 128 on */
    __m256i hi = tsc_lanes4_select(past1, w->word[2], tsc_lanes4_select(past0, w->word[1], w->word[0]));
    __m256i lo = tsc_lanes4_select(past1, w->word[3], tsc_lanes4_select(past0, w->word[2], w->word[1]));
    return tsc_lanes4_bits_at(hi, lo, _mm256_and_si256(at, _mm256_set1_epi64x(63)));
}

/* A 4 x 4 transpose of 64-bit elements: out[j] holds element j of in[0..3] (8 shuffles). */
TSC_LANES4_INLINE void tsc_lanes4_transpose(__m256i in0, __m256i in1, __m256i in2, __m256i in3, __m256i *out)
{
    __m256i t0 = _mm256_unpacklo_epi64(in0, in1), t1 = _mm256_unpackhi_epi64(in0, in1);
    __m256i t2 = _mm256_unpacklo_epi64(in2, in3), t3 = _mm256_unpackhi_epi64(in2, in3);
    out[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    out[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    out[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    out[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* Each lane's four words from its 32 bytes (lane k in bytes k), made big-endian: the stream's first bit is
 * their most significant one. */
TSC_LANES4_INLINE void tsc_lanes4_words(__m256i bytes0, __m256i bytes1, __m256i bytes2, __m256i bytes3,
                                        tsc_lanes4_window *w)
{
    const __m256i swap = _mm256_set_epi64x(0x08090a0b0c0d0e0f, 0x0001020304050607, 0x08090a0b0c0d0e0f,
                                           0x0001020304050607);
    tsc_lanes4_transpose(bytes0, bytes1, bytes2, bytes3, w->word);
    for (int k = 0; k < 4; k++) w->word[k] = _mm256_shuffle_epi8(w->word[k], swap);
}

/*
 * Near a stream's end: each lane's bytes from `from` up to its last one (last_byte + 32 bytes from its
 * start), zeros after them, as the scalar loops read past a stream's end. Copies and loads back: rare.
 */
__attribute__((noinline, target("avx2"))) static void tsc_lanes4_fetch_end(__m256i base, __m256i last_byte,
                                                                          __m256i from, tsc_lanes4_window *w)
{
    uint64_t address[4], end[4];
    uint8_t bytes[4][32];
    _mm256_storeu_si256((__m256i *)(void *)address, from);
    _mm256_storeu_si256((__m256i *)(void *)end,
                        _mm256_add_epi64(_mm256_add_epi64(base, last_byte), _mm256_set1_epi64x(32)));
    for (int k = 0; k < 4; k++) {
        uint64_t left = end[k] > address[k] ? end[k] - address[k] : 0;
        memset(bytes[k], 0, sizeof bytes[k]);
        if (left) memcpy(bytes[k], (const void *)(uintptr_t)address[k], left < 32 ? (size_t)left : 32);
    }
    tsc_lanes4_words(_mm256_loadu_si256((const __m256i *)(void *)bytes[0]),
                     _mm256_loadu_si256((const __m256i *)(void *)bytes[1]),
                     _mm256_loadu_si256((const __m256i *)(void *)bytes[2]),
                     _mm256_loadu_si256((const __m256i *)(void *)bytes[3]), w);
}

/*
 * The 32 bytes from each lane's bit position `pos` in the stream at `base`, as four big-endian words, and
 * *at the position's bit within its byte: one 32-byte load a lane, transposed. Where a lane has fewer than
 * 32 bytes from there (its byte past `last_byte`, signed: a stream under 32 bytes has none), those and
 * zeros (tsc_lanes4_fetch_end).
 */
TSC_LANES4_INLINE void tsc_lanes4_fetch(__m256i base, __m256i last_byte, __m256i pos, tsc_lanes4_window *w,
                                        __m256i *at)
{
    __m256i byte = _mm256_srli_epi64(pos, 3), from = _mm256_add_epi64(base, byte);
    *at = _mm256_and_si256(pos, _mm256_set1_epi64x(7));
    if (TSC_UNLIKELY(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(byte, last_byte))))) {
        tsc_lanes4_fetch_end(base, last_byte, from, w);
        return;
    }
    __m128i q0 = _mm256_castsi256_si128(from), q1 = _mm256_extracti128_si256(from, 1);
    tsc_lanes4_words(_mm256_loadu_si256((const __m256i *)(uintptr_t)_mm_cvtsi128_si64(q0)),
                     _mm256_loadu_si256((const __m256i *)(uintptr_t)_mm_extract_epi64(q0, 1)),
                     _mm256_loadu_si256((const __m256i *)(uintptr_t)_mm_cvtsi128_si64(q1)),
                     _mm256_loadu_si256((const __m256i *)(uintptr_t)_mm_extract_epi64(q1, 1)), w);
}

/* `steps` (<= 4) rows of samples (one lane a qword) to each of four lanes' outputs, from sample `done` on. */
TSC_LANES4_INLINE void tsc_lanes4_write_rows(uint64_t *const *ts_out, uint64_t *const *bits_out,
                                             const __m256i *ts_rows, const __m256i *bit_rows, size_t steps,
                                             size_t done)
{
    if (steps == 4) {
        __m256i column[4];
        tsc_lanes4_transpose(ts_rows[0], ts_rows[1], ts_rows[2], ts_rows[3], column);
        for (int k = 0; k < 4; k++) _mm256_storeu_si256((__m256i *)(void *)(ts_out[k] + done), column[k]);
        tsc_lanes4_transpose(bit_rows[0], bit_rows[1], bit_rows[2], bit_rows[3], column);
        for (int k = 0; k < 4; k++) _mm256_storeu_si256((__m256i *)(void *)(bits_out[k] + done), column[k]);
        return;
    }
    for (size_t step = 0; step < steps; step++) {
        uint64_t ts[4], bits[4];
        _mm256_storeu_si256((__m256i *)(void *)ts, ts_rows[step]);
        _mm256_storeu_si256((__m256i *)(void *)bits, bit_rows[step]);
        for (int k = 0; k < 4; k++) {
            ts_out[k][done + step] = ts[k];
            bits_out[k][done + step] = bits[k];
        }
    }
}

/* An eight-lane kernel on lane structs of either format (through a void pointer: a call, not a sample). */
typedef size_t (*tsc_lanes8_fn)(void *lanes, size_t n, int *escaped);

/*
 * Sixteen lanes (lane structs of `lane_size` bytes, at most 128) as two calls of an eight-lane kernel; when
 * the second stops before a 64-bit dod earlier than the first did, the first is run again from a copy to
 * that step (its outputs past it are rewritten later), so that every lane stops before the same step.
 * Escapes are rare: the copy is cheap beside the steps.
 */
TSC_INLINE size_t tsc_lanes16_as_two(void *lanes, size_t lane_size, tsc_lanes8_fn run8, size_t n, int *escaped)
{
    unsigned char first_half[8 * 128];
    memcpy(first_half, lanes, 8 * lane_size);
    int escaped_first, escaped_second;
    size_t steps = run8(lanes, n, &escaped_first);
    size_t second = run8((unsigned char *)lanes + 8 * lane_size, steps, &escaped_second);
    if (second < steps) {
        memcpy(lanes, first_half, 8 * lane_size);
        steps = run8(lanes, second, &escaped_first);
    }
    *escaped = escaped_first || escaped_second;
    return steps;
}

/* A field of four lane structs, one a qword. */
#  define TSC_LANE4_FIELDS(l, field, type)                                                                        \
      _mm256_set_epi64x((type)(l)[3].field, (type)(l)[2].field, (type)(l)[1].field, (type)(l)[0].field)

#endif
#endif
