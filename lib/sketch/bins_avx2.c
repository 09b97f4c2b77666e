/*
 * A store's bins in the compact encoding read four at a time with AVX2 and BMI2, for the CPUs without
 * AVX-512 (bins512.c); the pext kernel (codec.c) reads what a block of four cannot take, and the tests
 * hold both to the one-at-a-time reader. In 32 bytes the bytes without continuation bit end the varints:
 * two pdeps split the ends of the index deltas from those of the counts, so that one test finds whether
 * every delta is one byte (neighbouring bins: the usual case), and each count's eight bytes, loaded at
 * its start, are gathered in a lane (bytes past its end cleared from the lane's own bytes, two
 * multiply-adds for the groups). The next block's start is known from the mask alone, before the lanes.
 */
#include "sketch.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#  define AVX2_INLINE __attribute__((target("avx2,bmi,bmi2,popcnt"), always_inline)) static inline

/* Four counts from their r = rotr6(x): double(r + bits(1)) - 1, as codec.c's count_of_r. */
AVX2_INLINE __m256d counts_of_r_x4(__m256i r)
{
    __m256i bits = _mm256_add_epi64(r, _mm256_set1_epi64x(INT64_C(0x3ff0000000000000)));
    return _mm256_sub_pd(_mm256_castsi256_pd(bits), _mm256_set1_pd(1.0));
}

/*
 * Four counts, lane k the eight bytes from count k's first on: each a varfloat64 of at most 8 bytes (so
 * finite and >= 0). x's groups run from the first byte down, the bytes past the first without
 * continuation bit cleared; r = rotr6(x) is x >> 6, x's low 8 bits being zero. *too_long: the lanes with
 * no end in their eight bytes (a 9-byte count), which are not counts.
 */
AVX2_INLINE __m256d counts_x4(__m256i bytes, int *too_long)
{
    const __m256i one = _mm256_set1_epi64x(1);
    __m256i ends = _mm256_andnot_si256(bytes, _mm256_set1_epi8((char)0x80));
    __m256i through_end = _mm256_xor_si256(ends, _mm256_sub_epi64(ends, one));
    __m256i groups = _mm256_and_si256(_mm256_and_si256(bytes, through_end), _mm256_set1_epi8(0x7f));
    *too_long = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(ends, _mm256_setzero_si256())));
    __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi16(0x0180), groups);   /* 128 b0 + b1 */
    __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x00014000));  /* 2^14 pair0 + pair1 */
    /* groups 0-3 (the low 28 bits) to r's bits 30-57, groups 4-7 (bits 32-59) to bits 2-29 */
    return counts_of_r_x4(
        _mm256_or_si256(_mm256_srli_epi64(_mm256_slli_epi64(quads, 36), 6), _mm256_srli_epi64(quads, 30)));
}

/* For each mask of non-empty lanes, the 32-bit lanes that move those 64-bit lanes to the low ones, in order. */
static const int32_t COMPACT[16][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}, {2, 3, 0, 1, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7},
    {4, 5, 0, 1, 2, 3, 6, 7}, {0, 1, 4, 5, 2, 3, 6, 7}, {2, 3, 4, 5, 0, 1, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7},
    {6, 7, 0, 1, 2, 3, 4, 5}, {0, 1, 6, 7, 2, 3, 4, 5}, {2, 3, 6, 7, 0, 1, 4, 5}, {0, 1, 2, 3, 6, 7, 4, 5},
    {4, 5, 6, 7, 0, 1, 2, 3}, {0, 1, 4, 5, 6, 7, 2, 3}, {2, 3, 4, 5, 6, 7, 0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}};

/* The eight bytes from q, of which those from end on read as zero (near the input's end, the eight before
 * it shifted: no byte past it is read). */
AVX2_INLINE uint64_t load_up_to(const uint8_t *q, const uint8_t *end, int near_end)
{
    if (!near_end) return tsc_load64_le(q);
    const uint8_t *from = end - q >= 8 ? q : end - 8;
    return tsc_load64_le(from) >> ((uint64_t)(q - from) * 8);
}

/* Where the blocks stand: the next record, its count, the index before it, records taken, bins written. */
typedef struct {
    const uint8_t *record, *count;
    int64_t index;
    size_t taken, kept;
} block_state;

/* Four bins written, the empty ones left out with no branch, as the scalar kernel does. */
AVX2_INLINE void put_four(block_state *st, __m256d block, int64_t index0, int64_t index1, int64_t index2,
                          int64_t index3, int64_t *indices, double *counts)
{
    size_t kept = st->kept;
    unsigned occupied = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(block, _mm256_setzero_pd(), _CMP_NEQ_UQ));
    __m256i to_low = _mm256_loadu_si256((const __m256i *)(const void *)COMPACT[occupied]);
    _mm256_storeu_pd(counts + kept, _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(block), to_low)));
    indices[kept] = index0;
    kept += occupied & 1;
    indices[kept] = index1;
    kept += occupied >> 1 & 1;
    indices[kept] = index2;
    kept += occupied >> 2 & 1;
    indices[kept] = index3;
    st->kept = kept + (occupied >> 3);
}

/* Four one-byte counts (bytes below 0x80) from b's low lanes: r = rotr6(byte << 57) = byte << 51. */
AVX2_INLINE __m256d one_byte_counts(__m128i b)
{
    return counts_of_r_x4(_mm256_slli_epi64(_mm256_cvtepu8_epi64(b), 51));
}

/* Eight contiguous counts of one byte each (ends' low 8 bits set), st->record's first 8 bytes: a chunk
 * summary's usual run, which a block of four took longer over than the pext loop. */
AVX2_INLINE void eight_small_counts(block_state *st, int64_t step, int64_t *indices, double *counts)
{
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)st->record);
    int64_t at = st->index;
    put_four(st, one_byte_counts(b), at, at + step, at + 2 * step, at + 3 * step, indices, counts);
    at += 4 * step;
    put_four(st, one_byte_counts(_mm_srli_si128(b, 4)), at, at + step, at + 2 * step, at + 3 * step, indices,
             counts);
    st->index = at + 4 * step;
    st->record += 8, st->count += 8;
    st->taken += 8;
}

/*
 * One block of four records from st->record, whose 32 bytes (those past end read as none ending a varint)
 * have their varint ends in ends: taken (returns 1) or left whole (returns 0). A record is a one-byte
 * index delta and a count (has_deltas) or a count alone.
 */
AVX2_INLINE int block(block_state *st, uint64_t ends, const uint8_t *end, int near_end, int has_deltas, int64_t step,
                      size_t n, int64_t *indices, double *counts)
{
    const uint8_t *p = st->record, *count_at = st->count;
    uint64_t count_ends = ends;
    if (!has_deltas && !near_end && (ends & 0xff) == 0xff && n - st->taken >= 8) {
        eight_small_counts(st, step, indices, counts);
        return 1;
    }
    if (has_deltas) {
        count_ends = _pdep_u64(0xaa, ends);
        /* every delta of one byte: each ends where its record starts, at 0 or one past a count's end */
        if (_mm_popcnt_u64(ends) < 8 || (_pdep_u64(0x55, ends) & ~(count_ends << 1 | 1))) return 0;
    } else if (_mm_popcnt_u64(ends) < 4) {
        return 0;
    }
    /* 64-bit positions: 32-bit ones took a zero-extending move each */
    uint64_t end0 = _tzcnt_u64(count_ends), end1 = _tzcnt_u64(count_ends &= count_ends - 1);
    uint64_t end2 = _tzcnt_u64(count_ends &= count_ends - 1), end3 = _tzcnt_u64(count_ends & (count_ends - 1));
    int too_long;
    __m256i lanes = _mm256_set_epi64x((long long)load_up_to(count_at + end2 + 1, end, near_end),
                                      (long long)load_up_to(count_at + end1 + 1, end, near_end),
                                      (long long)load_up_to(count_at + end0 + 1, end, near_end),
                                      (long long)load_up_to(count_at, end, near_end));
    __m256d block = counts_x4(lanes, &too_long);
    if (too_long) return 0;
    int64_t at = st->index, index0 = at, index1 = at + step, index2 = at + 2 * step, index3 = at + 3 * step;
    if (has_deltas) {
        index0 = at + tsc_unzigzag_byte[p[0]];
        index1 = index0 + tsc_unzigzag_byte[p[end0 + 1]];
        index2 = index1 + tsc_unzigzag_byte[p[end1 + 1]];
        index3 = index2 + tsc_unzigzag_byte[p[end2 + 1]];
        st->index = index3;
    } else {
        st->index = at + 4 * step;
    }
    put_four(st, block, index0, index1, index2, index3, indices, counts);
    st->record = p + end3 + 1, st->count = count_at + end3 + 1;
    st->taken += 4;
    return 1;
}

/* The varint ends among the 32 bytes from p; near the end, those of the input's last 32 bytes shifted down,
 * so that nothing past end is read (and bytes past it end nothing). */
AVX2_INLINE uint64_t ends_from(const uint8_t *p, const uint8_t *end, int near_end)
{
    const uint8_t *from = near_end && end - p < 32 ? end - 32 : p;
    uint64_t ends = ~(uint32_t)_mm256_movemask_epi8(_mm256_loadu_si256((const __m256i *)(const void *)from));
    return ends >> (p - from);
}

/*
 * Blocks of four records (sketch.h, tsc_bins_blocks_avx2): while 40 bytes are readable (the 32 the ends are
 * looked for in, and a count's eight from the last record's start), loads of their own; then, in an input of
 * 32 bytes or more, loads that keep to the input (a run's last 40 bytes hold about a tenth of a sketch's
 * bins; read in place, they need no copy).
 */
AVX2_INLINE size_t blocks(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                          int64_t *index, int64_t *indices, double *counts, size_t *written)
{
    block_state st = {src, src + (has_deltas ? 1 : 0), *index, 0, 0};
    const uint8_t *end = src + avail;
    if (avail >= 40)
        while (st.taken + 4 <= n && st.record <= end - 40 &&
               block(&st, ends_from(st.record, end, 0), end, 0, has_deltas, step, n, indices, counts))
            ;
    if (avail >= 32)
        while (st.taken + 4 <= n && st.record < end &&
               block(&st, ends_from(st.record, end, 1), end, 1, has_deltas, step, n, indices, counts))
            ;
    *used = (size_t)(st.record - src);
    *index = st.index;
    *written = st.kept;
    return st.taken;
}

__attribute__((target("avx2,bmi,bmi2,popcnt"))) size_t tsc_bins_blocks_avx2(const uint8_t *src, size_t avail,
                                                                           size_t n, int has_deltas, int64_t step,
                                                                           size_t *used, int64_t *index,
                                                                           int64_t *indices, double *counts,
                                                                           size_t *written)
{
    return has_deltas ? blocks(src, avail, n, 1, step, used, index, indices, counts, written)
                      : blocks(src, avail, n, 0, step, used, index, indices, counts, written);
}

#else
typedef int tsc_sketch_no_avx2_bins; /* ISO C wants a declaration in every translation unit */
#endif
