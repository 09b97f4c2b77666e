/*
 * What the AVX-512 lane decoders share (lib/prom/lanes512.c for Prometheus
 * XOR chunks, lib/chunk/lanes512.c for codec 1): eight chunks a set of
 * registers, one 64-bit lane each; a bit stream read most significant bit
 * first from windows of 32 bytes fetched at each lane's position; rows of
 * samples (one a lane) transposed into each chunk's place in the caller's
 * arrays. Static inline functions for the kernels' translation units only.
 */
#ifndef TSCHUNK_LANES512_H
#define TSCHUNK_LANES512_H

#include "common.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define TSC_LANES __attribute__((target("avx512f,avx512bw,avx512cd")))
#  define TSC_LANES_INLINE __attribute__((target("avx512f,avx512bw,avx512cd"), always_inline)) static inline

/* Where the lane kernels may run: AVX-512 with the byte permute (tsc_avx512_here) and conflict detection
 * (vplzcntq). */
TSC_INLINE int tsc_lanes_here(void) { return tsc_avx512_here() && __builtin_cpu_supports("avx512cd"); }

/* Each bit from a where mask has it set, else from b (vpternlogq: no mask registers, no blends). */
TSC_LANES_INLINE __m512i tsc_lanes_select(__m512i mask, __m512i a, __m512i b)
{
    return _mm512_ternarylogic_epi64(mask, a, b, 0xca);
}

/* All ones where x is 1, zero where it is 0. */
TSC_LANES_INLINE __m512i tsc_lanes_all_if(__m512i x) { return _mm512_sub_epi64(_mm512_setzero_si512(), x); }

/* The 64 bits at bit `at` (<= 64) of the 128 bits hi:lo (most significant first); 0 past them. */
TSC_LANES_INLINE __m512i tsc_lanes_bits_at(__m512i hi, __m512i lo, __m512i at)
{
    __m512i lo_at = _mm512_sub_epi64(_mm512_set1_epi64(64), at);
    return _mm512_or_si512(_mm512_sllv_epi64(hi, at), _mm512_srlv_epi64(lo, lo_at));
}

/* 32 bytes of each lane's stream, as four big-endian words. */
typedef struct {
    __m512i word[4];
} tsc_lanes_window;

/* The 64 bits at bit `at` (< 192) of a window. */
TSC_LANES_INLINE __m512i tsc_lanes_window_bits(const tsc_lanes_window *w, __m512i at)
{
    /* all ones from bit 64 on, from bit 128 on: the sign of 63 - at, of 127 - at */
    __m512i past0 = _mm512_srai_epi64(_mm512_sub_epi64(_mm512_set1_epi64(63), at), 63);
    __m512i past1 = _mm512_srai_epi64(_mm512_sub_epi64(_mm512_set1_epi64(127), at), 63);
    __m512i hi = tsc_lanes_select(past1, w->word[2], tsc_lanes_select(past0, w->word[1], w->word[0]));
    __m512i lo = tsc_lanes_select(past1, w->word[3], tsc_lanes_select(past0, w->word[2], w->word[1]));
    return tsc_lanes_bits_at(hi, lo, _mm512_and_si512(at, _mm512_set1_epi64(63)));
}

/* 32 bytes at each of two addresses, in the low and high halves. */
TSC_LANES_INLINE __m512i tsc_lanes_load_pair(uint64_t low, uint64_t high)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const void *)(uintptr_t)low)),
                              _mm256_loadu_si256((const void *)(uintptr_t)high), 1);
}

/* The first `bytes` (<= 32) of the 32 at each of two addresses, zeros after; nothing read past them. */
TSC_LANES_INLINE __m512i tsc_lanes_load_pair_part(uint64_t low, uint64_t low_bytes, uint64_t high, uint64_t high_bytes)
{
    __m512i a = _mm512_maskz_loadu_epi8((UINT64_C(1) << low_bytes) - 1, (const void *)(uintptr_t)low);
    __m512i b = _mm512_maskz_loadu_epi8((UINT64_C(1) << high_bytes) - 1, (const void *)(uintptr_t)high);
    return _mm512_inserti64x4(a, _mm512_castsi512_si256(b), 1);
}

/*
 * Each lane's four words from its pairs (lanes k and k + 4 in pair k): unpacks and permutes (8 shuffles), the
 * words then made big-endian: the stream's first bit is their most significant one.
 */
TSC_LANES_INLINE void tsc_lanes_words(__m512i pair0, __m512i pair1, __m512i pair2, __m512i pair3, tsc_lanes_window *w)
{
    const __m512i swap = _mm512_set4_epi64(0x08090a0b0c0d0e0f, 0x0001020304050607, 0x08090a0b0c0d0e0f,
                                           0x0001020304050607);
    const __m512i even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    /* words 0 and 2 (low), 1 and 3 (high) of lanes 0, 1 | 4, 5 and of lanes 2, 3 | 6, 7 */
    __m512i low01 = _mm512_unpacklo_epi64(pair0, pair1), high01 = _mm512_unpackhi_epi64(pair0, pair1);
    __m512i low23 = _mm512_unpacklo_epi64(pair2, pair3), high23 = _mm512_unpackhi_epi64(pair2, pair3);
    w->word[0] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(low01, even, low23), swap);
    w->word[1] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(high01, even, high23), swap);
    w->word[2] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(low01, odd, low23), swap);
    w->word[3] = _mm512_shuffle_epi8(_mm512_permutex2var_epi64(high01, odd, high23), swap);
}

/*
 * Near a stream's end: each lane's bytes from `from` up to its last one (last_byte + 32 bytes from its
 * start), zeros after them, as the scalar loops read past a stream's end. A store and loads back: rare.
 */
__attribute__((noinline, target("avx512f,avx512bw,avx512cd"))) static void
tsc_lanes_fetch_end(__m512i base, __m512i last_byte, __m512i from, tsc_lanes_window *w)
{
    uint64_t address[8], left[8];
    __m512i end = _mm512_add_epi64(_mm512_add_epi64(base, last_byte), _mm512_set1_epi64(32));
    __m512i bytes = _mm512_maskz_sub_epi64(_mm512_cmpgt_epu64_mask(end, from), end, from);
    _mm512_storeu_si512(address, from);
    _mm512_storeu_si512(left, _mm512_min_epu64(bytes, _mm512_set1_epi64(32)));
    tsc_lanes_words(tsc_lanes_load_pair_part(address[0], left[0], address[4], left[4]),
                    tsc_lanes_load_pair_part(address[1], left[1], address[5], left[5]),
                    tsc_lanes_load_pair_part(address[2], left[2], address[6], left[6]),
                    tsc_lanes_load_pair_part(address[3], left[3], address[7], left[7]), w);
}

/*
 * The 32 bytes from each lane's bit position `pos` in the stream at `base`, as four big-endian words, and
 * *at the position's bit within its byte: one 32-byte load a lane, transposed (12 shuffles). Where a lane
 * has fewer than 32 bytes from there (its byte past `last_byte`, signed: a stream under 32 bytes has none),
 * those and zeros (tsc_lanes_fetch_end). Gathers took 75 cycles for the four words on Zen 5 (it runs them
 * one after another), the loads and shuffles about 25.
 */
TSC_LANES_INLINE void tsc_lanes_fetch(__m512i base, __m512i last_byte, __m512i pos, tsc_lanes_window *w, __m512i *at)
{
    __m512i byte = _mm512_srli_epi64(pos, 3), from = _mm512_add_epi64(base, byte);
    *at = _mm512_and_si512(pos, _mm512_set1_epi64(7));
    if (TSC_UNLIKELY(_mm512_cmpgt_epi64_mask(byte, last_byte))) {
        tsc_lanes_fetch_end(base, last_byte, from, w);
        return;
    }
    /* The addresses moved to scalar registers by extracts: a store and eight loads back waited for the store. */
    __m128i q0 = _mm512_castsi512_si128(from), q1 = _mm512_extracti32x4_epi32(from, 1);
    __m128i q2 = _mm512_extracti32x4_epi32(from, 2), q3 = _mm512_extracti32x4_epi32(from, 3);
    /* lanes k and k + 4: words 0-3 of each (written out: gcc kept a loop's arrays in memory) */
    tsc_lanes_words(tsc_lanes_load_pair((uint64_t)_mm_cvtsi128_si64(q0), (uint64_t)_mm_cvtsi128_si64(q2)),
                    tsc_lanes_load_pair((uint64_t)_mm_extract_epi64(q0, 1), (uint64_t)_mm_extract_epi64(q2, 1)),
                    tsc_lanes_load_pair((uint64_t)_mm_cvtsi128_si64(q1), (uint64_t)_mm_cvtsi128_si64(q3)),
                    tsc_lanes_load_pair((uint64_t)_mm_extract_epi64(q1, 1), (uint64_t)_mm_extract_epi64(q3, 1)), w);
}

/*
 * Eight rows (steps; one lane a qword) stored as eight runs of eight samples, run k at out[k] + done: an 8 x 8
 * transpose in 24 shuffles, written out (gcc kept a loop's arrays in memory, a third of the kernel's time).
 */
TSC_LANES_INLINE void tsc_lanes_store_columns(const __m512i *rows, uint64_t *const *out, size_t done)
{
    const __m512i even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    __m512i t0 = _mm512_unpacklo_epi64(rows[0], rows[1]), t1 = _mm512_unpackhi_epi64(rows[0], rows[1]);
    __m512i t2 = _mm512_unpacklo_epi64(rows[2], rows[3]), t3 = _mm512_unpackhi_epi64(rows[2], rows[3]);
    __m512i t4 = _mm512_unpacklo_epi64(rows[4], rows[5]), t5 = _mm512_unpackhi_epi64(rows[4], rows[5]);
    __m512i t6 = _mm512_unpacklo_epi64(rows[6], rows[7]), t7 = _mm512_unpackhi_epi64(rows[6], rows[7]);
    /* rows 0-3 of lanes 0 and 4 (v04), 2 and 6, 1 and 5, 3 and 7; then the same of rows 4-7 */
    __m512i v04 = _mm512_permutex2var_epi64(t0, even, t2), v26 = _mm512_permutex2var_epi64(t0, odd, t2);
    __m512i v15 = _mm512_permutex2var_epi64(t1, even, t3), v37 = _mm512_permutex2var_epi64(t1, odd, t3);
    __m512i w04 = _mm512_permutex2var_epi64(t4, even, t6), w26 = _mm512_permutex2var_epi64(t4, odd, t6);
    __m512i w15 = _mm512_permutex2var_epi64(t5, even, t7), w37 = _mm512_permutex2var_epi64(t5, odd, t7);
    _mm512_storeu_si512(out[0] + done, _mm512_shuffle_i64x2(v04, w04, 0x44));
    _mm512_storeu_si512(out[4] + done, _mm512_shuffle_i64x2(v04, w04, 0xee));
    _mm512_storeu_si512(out[1] + done, _mm512_shuffle_i64x2(v15, w15, 0x44));
    _mm512_storeu_si512(out[5] + done, _mm512_shuffle_i64x2(v15, w15, 0xee));
    _mm512_storeu_si512(out[2] + done, _mm512_shuffle_i64x2(v26, w26, 0x44));
    _mm512_storeu_si512(out[6] + done, _mm512_shuffle_i64x2(v26, w26, 0xee));
    _mm512_storeu_si512(out[3] + done, _mm512_shuffle_i64x2(v37, w37, 0x44));
    _mm512_storeu_si512(out[7] + done, _mm512_shuffle_i64x2(v37, w37, 0xee));
}

/* `steps` rows of samples (one lane a qword) to each lane's outputs, from sample `done` on. */
TSC_LANES_INLINE void tsc_lanes_write_rows(uint64_t *const *ts_out, uint64_t *const *bits_out, const __m512i *ts_rows,
                                           const __m512i *bit_rows, size_t steps, size_t done)
{
    if (steps == 8) {
        tsc_lanes_store_columns(ts_rows, ts_out, done);
        tsc_lanes_store_columns(bit_rows, bits_out, done);
        return;
    }
    for (size_t step = 0; step < steps; step++) {
        uint64_t ts[8], bits[8];
        _mm512_storeu_si512(ts, ts_rows[step]);
        _mm512_storeu_si512(bits, bit_rows[step]);
        for (int k = 0; k < 8; k++) {
            ts_out[k][done + step] = ts[k];
            bits_out[k][done + step] = bits[k];
        }
    }
}

/*
 * Where the lanes' outputs crowd into a few L1 sets, rows go to a stage of 64 steps a lane first, then to
 * each lane's outputs 512 bytes at a time. Written straight out, a block of rows stores one 64-byte line
 * to every lane's two outputs at once, and where those sit a multiple of 4 KiB apart (a list of 512- or
 * 1,024-sample chunks decoded into one array, whose timestamps and values arrays start at the same page
 * offset, as two large mallocs do) all 32 lines fall in one L1 set of 12 ways: 1,024-sample codec-1 chunks
 * decoded 40% slower so. Elsewhere the stage's copy costs more than it saves (8-12% on 120-sample chunks).
 */
#  define TSC_LANE_STAGE_STEPS 64
typedef struct {
    uint64_t ts[16][TSC_LANE_STAGE_STEPS], bits[16][TSC_LANE_STAGE_STEPS];
    uint64_t *ts_row[16], *bits_row[16]; /* where write_rows puts each lane's samples */
} tsc_lane_stage;

TSC_INLINE void tsc_lane_stage_init(tsc_lane_stage *stage, int lanes)
{
    for (int k = 0; k < lanes; k++) {
        stage->ts_row[k] = stage->ts[k];
        stage->bits_row[k] = stage->bits[k];
    }
}

/* Whether more than 8 of the lanes' 2 x `lanes` outputs start in one of the L1's 64 sets (of 64-byte lines,
 * 4 KiB a way): they move in step, so they stay so. */
TSC_INLINE int tsc_lane_outputs_crowded(uint64_t *const *ts_out, uint64_t *const *bits_out, int lanes)
{
    uint8_t in_set[64] = {0};
    for (int k = 0; k < lanes; k++) {
        if (++in_set[((uintptr_t)ts_out[k] >> 6) & 63] > 8) return 1;
        if (++in_set[((uintptr_t)bits_out[k] >> 6) & 63] > 8) return 1;
    }
    return 0;
}

/* n (<= 64) samples from a stage row to an output: whole lines, then the rest through a mask. */
TSC_LANES_INLINE void tsc_lane_stage_copy(uint64_t *out, const uint64_t *row, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_si512(out + i, _mm512_loadu_si512(row + i));
    if (i < n) {
        __mmask8 rest = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_epi64(out + i, rest, _mm512_maskz_loadu_epi64(rest, row + i));
    }
}

/* The `staged` steps of each lane to its outputs from sample `at` on. */
TSC_LANES_INLINE void tsc_lane_stage_flush(const tsc_lane_stage *stage, int lanes, uint64_t *const *ts_out,
                                           uint64_t *const *bits_out, size_t at, size_t staged)
{
    for (int k = 0; k < lanes; k++) {
        tsc_lane_stage_copy(ts_out[k] + at, stage->ts[k], staged);
        tsc_lane_stage_copy(bits_out[k] + at, stage->bits[k], staged);
    }
}

/* Each lane's outputs, taken once a call (both kernels' lane structs name them ts_out and bits_out). */
#  define TSC_LANE_OUTPUTS(l, count, ts, bits)                                                                    \
      for (int lane_ = 0; lane_ < (count); lane_++) {                                                           \
          (ts)[lane_] = (uint64_t *)(void *)(l)[lane_].ts_out;                                                  \
          (bits)[lane_] = (l)[lane_].bits_out;                                                                  \
      }

/* Each lane's outputs moved past the `done` steps a kernel call wrote. */
#  define TSC_LANE_ADVANCE(l, count, done)                                                                        \
      for (int lane_ = 0; lane_ < (count); lane_++) {                                                           \
          (l)[lane_].ts_out += (done);                                                                          \
          (l)[lane_].bits_out += (done);                                                                        \
      }

/* A field of eight lane structs, one a qword. */
#  define TSC_LANE_FIELDS(l, field, type)                                                                         \
      _mm512_set_epi64((type)(l)[7].field, (type)(l)[6].field, (type)(l)[5].field, (type)(l)[4].field,          \
                       (type)(l)[3].field, (type)(l)[2].field, (type)(l)[1].field, (type)(l)[0].field)

#endif
#endif
