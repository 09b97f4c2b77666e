/*
 * Codec 2's data-parallel kernels, each an AVX2 version behind runtime
 * dispatch (__builtin_cpu_supports, no state kept) and a scalar twin that the
 * tests compare it with. Encoder: the min/max range check that picks packed
 * widths, timestamp deltas with their range, the reading of a group as
 * decimals, the repeat count. Decoder: unpacking of fields (byte shuffles up
 * to 30 bits, gathers above), running sums and grids of timestamps (alone,
 * or fused with the unpacking and the order check), constant-step fills, and
 * the conversion of decimals back to doubles (alone, after a running sum, or
 * fused with the unpacking, with or without the running sum). The AVX2 versions give
 * the scalar C's bits exactly: where they compute k / 10^e without a division
 * (div_pow10, which needs FMA), the comment there proves the result equal.
 */
#include "format.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>

TSC_INLINE int avx2_here(void) { return tsc_avx2_here(); }

TSC_INLINE int avx2_fma_here(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

#ifdef TSC_HAVE_AVX2
/*
 * k / b rounded to nearest, for integers |k| <= 2^51 and b = 10^e, e <= 15,
 * in three FMA-unit operations instead of a division (~4x the throughput).
 * With y = RN(1/b): q = RN(k*y) is within 2 ulps of k/b; r = k - q*b is then
 * exact, because q*b is a multiple of 2^(ex(q)+e) with ex(q)+e < 0 (q < 2^51/b)
 * and |r| <= 2 ulp(q) * b, so r / 2^(ex(q)+e) <= 2 * 5^e < 2^53; and q + r*y
 * differs from k/b by |r| |y - 1/b| <= 2^-52 ulp(q), while k/b is never a
 * rounding midpoint and lies at least ulp(q) / (4 * 5^e) > 2^-37 ulp(q) from one
 * (k - m*b is a nonzero multiple of 2^(ex(q)-2+e) for a midpoint m). So the
 * final rounding of fma(r, y, q) is that of k / b: the same bits as the division.
 */
__attribute__((target("avx2,fma"))) static inline __m256d div_pow10(__m256d k, __m256d b, __m256d y)
{
    __m256d q = _mm256_mul_pd(k, y);
    __m256d r = _mm256_fnmadd_pd(q, b, k);
    return _mm256_fmadd_pd(r, y, q);
}
#endif

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

#ifdef TSC_HAVE_AVX2
/* Four lanes of compare-and-blend (AVX2 has no 64-bit min/max), then the lanes folded. Four vectors a
 * step, each with its own minimum and maximum: one pair's compare-and-blend chain took 4-5 cycles a
 * vector. */
__attribute__((target("avx2"))) static inline void fold_min_max(__m256i *lo, __m256i *hi, __m256i x)
{
    *lo = _mm256_blendv_epi8(*lo, x, _mm256_cmpgt_epi64(*lo, x));
    *hi = _mm256_blendv_epi8(*hi, x, _mm256_cmpgt_epi64(x, *hi));
}

/* Chain (lo2, hi2) folded into (lo, hi): minimum with minimum, maximum with maximum. */
__attribute__((target("avx2"))) static inline void join_min_max(__m256i *lo, __m256i *hi, __m256i lo2, __m256i hi2)
{
    *lo = _mm256_blendv_epi8(*lo, lo2, _mm256_cmpgt_epi64(*lo, lo2));
    *hi = _mm256_blendv_epi8(*hi, hi2, _mm256_cmpgt_epi64(hi2, *hi));
}

__attribute__((target("avx2"))) static void range_avx2(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
    __m256i lo0 = _mm256_set1_epi64x(INT64_MAX), hi0 = _mm256_set1_epi64x(INT64_MIN);
    __m256i lo1 = lo0, hi1 = hi0, lo2 = lo0, hi2 = hi0, lo3 = lo0, hi3 = hi0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i x0, x1, x2, x3;
        memcpy(&x0, v + i, sizeof x0);
        memcpy(&x1, v + i + 4, sizeof x1);
        memcpy(&x2, v + i + 8, sizeof x2);
        memcpy(&x3, v + i + 12, sizeof x3);
        fold_min_max(&lo0, &hi0, x0);
        fold_min_max(&lo1, &hi1, x1);
        fold_min_max(&lo2, &hi2, x2);
        fold_min_max(&lo3, &hi3, x3);
    }
    for (; i + 4 <= n; i += 4) {
        __m256i x;
        memcpy(&x, v + i, sizeof x);
        fold_min_max(&lo0, &hi0, x);
    }
    join_min_max(&lo0, &hi0, lo1, hi1);
    join_min_max(&lo2, &hi2, lo3, hi3);
    join_min_max(&lo0, &hi0, lo2, hi2);
    int64_t lanes_lo[4], lanes_hi[4], tail_lo, tail_hi;
    memcpy(lanes_lo, &lo0, sizeof lo0);
    memcpy(lanes_hi, &hi0, sizeof hi0);
    tsc_codec2_range_i64_scalar(v + i, n - i, &tail_lo, &tail_hi);
    for (int k = 0; k < 4; k++) {
        tail_lo = lanes_lo[k] < tail_lo ? lanes_lo[k] : tail_lo;
        tail_hi = lanes_hi[k] > tail_hi ? lanes_hi[k] : tail_hi;
    }
    *min = tail_lo;
    *max = tail_hi;
}
#endif

int tsc_codec2_range_i64_simd(unsigned isa, const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_range_i64_avx512(v, n, min, max);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_here()) {
        range_avx2(v, n, min, max);
        return 1;
    }
#endif
    (void)isa, (void)v, (void)n, (void)min, (void)max;
    return 0;
}

void tsc_codec2_range_i64(const int64_t *v, size_t n, int64_t *min, int64_t *max)
{
    if (!tsc_codec2_range_i64_simd(TSC_SIMD_BEST, v, n, min, max)) tsc_codec2_range_i64_scalar(v, n, min, max);
}

/* ------------------------------------------------------------------ timestamp deltas */

void tsc_codec2_deltas_scalar(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min,
                              uint64_t *max)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t delta = (uint64_t)ts[i] - (uint64_t)(i ? ts[i - 1] : prev);
        deltas[i] = delta;
        lo = delta < lo ? delta : lo;
        hi = delta > hi ? delta : hi;
    }
    *min = lo;
    *max = hi;
}

#ifdef TSC_HAVE_AVX2
/* Deltas of neighbouring loads; unsigned order through signed compares of the deltas with their top bit flipped. */
__attribute__((target("avx2"))) static void deltas_avx2(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas,
                                                         uint64_t *min, uint64_t *max)
{
    const __m256i flip = _mm256_set1_epi64x(INT64_MIN);
    __m256i lo[2], hi[2]; /* two chains, as range_avx2 */
    for (int c = 0; c < 2; c++) lo[c] = _mm256_set1_epi64x(INT64_MAX), hi[c] = _mm256_set1_epi64x(INT64_MIN);
    uint64_t tail_lo, tail_hi;
    tsc_codec2_deltas_scalar(ts, 1, prev, deltas, &tail_lo, &tail_hi);
    size_t i = 1;
    for (; i + 8 <= n; i += 8) {
        __m256i delta[2];
        for (int c = 0; c < 2; c++) {
            __m256i now, before;
            memcpy(&now, ts + i + 4 * c, sizeof now);
            memcpy(&before, ts + i + 4 * c - 1, sizeof before);
            delta[c] = _mm256_sub_epi64(now, before);
            memcpy(deltas + i + 4 * c, &delta[c], sizeof delta[c]);
        }
        fold_min_max(&lo[0], &hi[0], _mm256_xor_si256(delta[0], flip));
        fold_min_max(&lo[1], &hi[1], _mm256_xor_si256(delta[1], flip));
    }
    if (i + 4 <= n) {
        __m256i now, before;
        memcpy(&now, ts + i, sizeof now);
        memcpy(&before, ts + i - 1, sizeof before);
        __m256i delta = _mm256_sub_epi64(now, before);
        memcpy(deltas + i, &delta, sizeof delta);
        fold_min_max(&lo[0], &hi[0], _mm256_xor_si256(delta, flip));
        i += 4;
    }
    join_min_max(&lo[0], &hi[0], lo[1], hi[1]);
    uint64_t lanes_lo[4], lanes_hi[4], rest_lo, rest_hi;
    memcpy(lanes_lo, &lo[0], sizeof lo[0]);
    memcpy(lanes_hi, &hi[0], sizeof hi[0]);
    tsc_codec2_deltas_scalar(ts + i, n - i, ts[i - 1], deltas + i, &rest_lo, &rest_hi);
    tail_lo = rest_lo < tail_lo ? rest_lo : tail_lo;
    tail_hi = rest_hi > tail_hi ? rest_hi : tail_hi;
    for (int k = 0; k < 4; k++) {
        uint64_t lane_lo = lanes_lo[k] ^ (UINT64_C(1) << 63), lane_hi = lanes_hi[k] ^ (UINT64_C(1) << 63);
        tail_lo = lane_lo < tail_lo ? lane_lo : tail_lo;
        tail_hi = lane_hi > tail_hi ? lane_hi : tail_hi;
    }
    *min = tail_lo;
    *max = tail_hi;
}
#endif

int tsc_codec2_deltas_simd(unsigned isa, const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min,
                           uint64_t *max)
{
#ifdef TSC_HAVE_AVX2
    if (n && isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_deltas_avx512(ts, n, prev, deltas, min, max);
        return 1;
    }
    if (n && isa != TSC_SIMD_AVX512 && avx2_here()) {
        deltas_avx2(ts, n, prev, deltas, min, max);
        return 1;
    }
#endif
    (void)isa, (void)ts, (void)n, (void)prev, (void)deltas, (void)min, (void)max;
    return 0;
}

void tsc_codec2_deltas(const int64_t *ts, size_t n, int64_t prev, uint64_t *deltas, uint64_t *min, uint64_t *max)
{
    if (!tsc_codec2_deltas_simd(TSC_SIMD_BEST, ts, n, prev, deltas, min, max))
        tsc_codec2_deltas_scalar(ts, n, prev, deltas, min, max);
}

/* ------------------------------------------------------------------ decimal reading */

void tsc_codec2_read_block_scalar(const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k,
                                  int64_t *diff)
{
    for (size_t i = 0; i < n; i++) {
        int reading = tsc_codec2_read(bits[i], e, as_float, &k[i], &diff[i]);
        if (reading == TSC2_FAR && diff[i] == 0) diff[i] = INT64_MIN; /* out of range: no k */
    }
}

#ifdef TSC_HAVE_AVX2
__attribute__((target("avx2,fma"))) static void read_block_avx2(const uint64_t *bits, size_t n, unsigned e,
                                                                 int as_float, int64_t *k, int64_t *diff)
{
    const __m256d scale = _mm256_set1_pd(tsc_codec2_pow10[e]), magic = _mm256_set1_pd(TSC2_MAGIC);
    const __m256d inverse = _mm256_set1_pd(tsc_codec2_pow10_inverse[e]);
    const __m256d lo = _mm256_set1_pd(-0x1p51), hi = _mm256_set1_pd(0x1p51);
    const __m256i magic_bits = _mm256_set1_epi64x(TSC2_MAGIC_BITS), far = _mm256_set1_epi64x(INT64_MIN);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i b;
        memcpy(&b, bits + i, sizeof b);
        __m256d x = _mm256_mul_pd(_mm256_castsi256_pd(b), scale);
        __m256d in_range = _mm256_and_pd(_mm256_cmp_pd(x, lo, _CMP_GT_OQ), _mm256_cmp_pd(x, hi, _CMP_LT_OQ));
        __m256d rounded = _mm256_add_pd(x, magic);
        __m256d kd = _mm256_sub_pd(rounded, magic);
        __m256i ki = _mm256_sub_epi64(_mm256_castpd_si256(rounded), magic_bits);
        __m256d back = div_pow10(kd, scale, inverse);
        if (as_float) back = _mm256_cvtps_pd(_mm256_cvtpd_ps(back));
        __m256i d = _mm256_sub_epi64(b, _mm256_castpd_si256(back));
        __m256i ok = _mm256_castpd_si256(in_range);
        ki = _mm256_and_si256(ki, ok);
        d = _mm256_blendv_epi8(far, d, ok);
        memcpy(k + i, &ki, sizeof ki);
        memcpy(diff + i, &d, sizeof d);
    }
    tsc_codec2_read_block_scalar(bits + i, n - i, e, as_float, k + i, diff + i);
}
#endif

int tsc_codec2_read_block_simd(unsigned isa, const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k,
                               int64_t *diff)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_read_block_avx512(bits, n, e, as_float, k, diff);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_fma_here()) {
        read_block_avx2(bits, n, e, as_float, k, diff);
        return 1;
    }
#endif
    (void)isa, (void)bits, (void)n, (void)e, (void)as_float, (void)k, (void)diff;
    return 0;
}

void tsc_codec2_read_block(const uint64_t *bits, size_t n, unsigned e, int as_float, int64_t *k, int64_t *diff)
{
    if (!tsc_codec2_read_block_simd(TSC_SIMD_BEST, bits, n, e, as_float, k, diff))
        tsc_codec2_read_block_scalar(bits, n, e, as_float, k, diff);
}

/* ------------------------------------------------------------------ a value's smallest exponent */

#ifdef TSC_HAVE_AVX2
/*
 * The sixteen readings of one value, four exponents a vector, with read_block's arithmetic (so the same
 * k and bits as tsc_codec2_read): a bit per exponent for "exact" and for "near within
 * TSC2_SEARCH_NEAR_ULPS", kept up to the first exponent past TSC2_SEARCH_MAX_K (exponent 0 always, as the
 * scalar loop tries it first whatever the magnitude); the first exact one wins, else the first near one.
 */
__attribute__((target("avx2,fma"))) static int smallest_exponent_avx2(uint64_t bits, int as_float)
{
    _Static_assert(TSC2_MAX_EXPONENT == 15, "four vectors of four exponents");
    const __m256d magic = _mm256_set1_pd(TSC2_MAGIC), lo = _mm256_set1_pd(-0x1p51), hi = _mm256_set1_pd(0x1p51);
    const __m256d limit = _mm256_set1_pd(TSC2_SEARCH_MAX_K);
    const __m256i b = _mm256_set1_epi64x((long long)bits), near_hi = _mm256_set1_epi64x(TSC2_SEARCH_NEAR_ULPS + 1);
    const __m256i near_lo = _mm256_set1_epi64x(-TSC2_SEARCH_NEAR_ULPS - 1), zero = _mm256_setzero_si256();
    const __m256d v = _mm256_castsi256_pd(b);
    const __m256d magnitude = _mm256_set1_pd(tsc_double_of(bits & ~(UINT64_C(1) << 63)));
    unsigned exact = 0, near = 0, tried = 1;
    for (unsigned e = 0; e <= TSC2_MAX_EXPONENT; e += 4) {
        __m256d scale = _mm256_loadu_pd(tsc_codec2_pow10 + e), inverse = _mm256_loadu_pd(tsc_codec2_pow10_inverse + e);
        __m256d x = _mm256_mul_pd(v, scale);
        __m256d in_range = _mm256_and_pd(_mm256_cmp_pd(x, lo, _CMP_GT_OQ), _mm256_cmp_pd(x, hi, _CMP_LT_OQ));
        __m256d kd = _mm256_sub_pd(_mm256_add_pd(x, magic), magic);
        __m256d back = div_pow10(kd, scale, inverse);
        if (as_float) back = _mm256_cvtps_pd(_mm256_cvtpd_ps(back));
        __m256i d = _mm256_sub_epi64(b, _mm256_castpd_si256(back));
        __m256i is_exact = _mm256_cmpeq_epi64(d, zero);
        __m256i is_near = _mm256_andnot_si256(is_exact, _mm256_and_si256(_mm256_cmpgt_epi64(d, near_lo),
                                                                            _mm256_cmpgt_epi64(near_hi, d)));
        unsigned ok = (unsigned)_mm256_movemask_pd(in_range);
        exact |= (ok & (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(is_exact))) << e;
        near |= (ok & (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(is_near))) << e;
        tried |= (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_mul_pd(magnitude, scale), limit, _CMP_LT_OQ)) << e;
    }
    unsigned upto = (unsigned)__builtin_ctz(~tried); /* the scalar loop stops at the first exponent past the limit */
    unsigned kept = (1u << upto) - 1; /* upto <= 16 */
    exact &= kept;
    near &= kept;
    return exact ? __builtin_ctz(exact) : near ? __builtin_ctz(near) : -1;
}
#endif

int tsc_codec2_smallest_exponent_simd(uint64_t bits, int as_float, int *exponent)
{
#ifdef TSC_HAVE_AVX2
    if (avx2_fma_here()) {
        *exponent = smallest_exponent_avx2(bits, as_float);
        return 1;
    }
#endif
    (void)bits, (void)as_float, (void)exponent;
    return 0;
}

/* ------------------------------------------------------------------ decimals back to doubles */

void tsc_codec2_decimals_to_bits_scalar(uint64_t base, const uint64_t *fields, size_t n, unsigned e, int as_float,
                                        uint64_t *bits)
{
    for (size_t i = 0; i < n; i++) bits[i] = tsc_codec2_decimal_bits((int64_t)(base + fields[i]), e, as_float);
}

void tsc_codec2_decimal_sums_to_bits_scalar(uint64_t start, uint64_t step, const uint64_t *fields, size_t n,
                                            unsigned e, int as_float, uint64_t *bits)
{
    uint64_t k = start;
    for (size_t i = 0; i < n; i++) {
        k += step + fields[i];
        bits[i] = tsc_codec2_decimal_bits((int64_t)k, e, as_float);
    }
}

#ifdef TSC_HAVE_AVX2
typedef struct {
    __m256d scale, inverse, magic;
    __m256i magic_bits;
    int as_float;
} decimal_consts;

__attribute__((target("avx2,fma"))) static inline decimal_consts decimal_consts_of(unsigned e, int as_float)
{
    decimal_consts c = {_mm256_set1_pd(tsc_codec2_pow10[e]), _mm256_set1_pd(tsc_codec2_pow10_inverse[e]),
                        _mm256_set1_pd(TSC2_MAGIC),
                        _mm256_set1_epi64x(TSC2_MAGIC_BITS), as_float};
    return c;
}

/* The fused kernels' `as_float` (a constant the compiler folds): float64 values, float32 ones, or e = 0, integers
 * (counters), which skip the division. */
enum { LANES_DOUBLES, LANES_FLOATS, LANES_INTEGERS };

/* Four k + TSC2_MAGIC_BITS, |k| < 2^51, to their values' bits: the bits of TSC2_MAGIC + k, so minus TSC2_MAGIC
 * is k exactly. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256d
biased_decimal_lanes(__m256i biased, const decimal_consts *c, const int as_float)
{
    __m256d k = _mm256_sub_pd(_mm256_castsi256_pd(biased), c->magic);
    if (as_float == LANES_INTEGERS) return k; /* e = 0: k / 1 is k, exactly */
    __m256d v = div_pow10(k, c->scale, c->inverse);
    return as_float == LANES_FLOATS ? _mm256_cvtps_pd(_mm256_cvtpd_ps(v)) : v;
}

/* Four k with |k| < 2^51 (the caller's bound) to their values' bits: k converts exactly through TSC2_MAGIC. */
__attribute__((target("avx2,fma"))) static inline __m256d decimal_lanes(__m256i k, const decimal_consts *c)
{
    __m256d kd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(k, c->magic_bits)), c->magic);
    __m256d v = div_pow10(kd, c->scale, c->inverse);
    return c->as_float ? _mm256_cvtps_pd(_mm256_cvtpd_ps(v)) : v;
}

__attribute__((target("avx2,fma"))) static void decimals_avx2(uint64_t base, const uint64_t *fields, size_t n,
                                                               unsigned e, int as_float, uint64_t *bits)
{
    const decimal_consts c = decimal_consts_of(e, as_float);
    const __m256i bases = _mm256_set1_epi64x((int64_t)base);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i k;
        memcpy(&k, fields + i, sizeof k);
        __m256d v = decimal_lanes(_mm256_add_epi64(k, bases), &c);
        memcpy(bits + i, &v, sizeof v);
    }
    tsc_codec2_decimals_to_bits_scalar(base, fields + i, n - i, e, as_float, bits + i);
}

/* x[i] = sum of fields[0..i] + (i + 1) * steps: the four lanes' own running sum, without a carry-in. */
__attribute__((target("avx2"))) static inline __m256i prefix_lanes(__m256i fields, __m256i steps)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i x = _mm256_add_epi64(fields, steps);
    x = _mm256_add_epi64(x, _mm256_blend_epi32(_mm256_permute4x64_epi64(x, _MM_SHUFFLE(2, 1, 0, 0)), zero, 0x03));
    return _mm256_add_epi64(x, _mm256_permute2x128_si256(x, x, 0x08));
}

/* Lane 3 in every lane: a running sum's carry into the next four. */
__attribute__((target("avx2"))) static inline __m256i top_lane(__m256i x)
{
    return _mm256_permute4x64_epi64(x, _MM_SHUFFLE(3, 3, 3, 3));
}

/* k of four lanes: the previous k (last's top lane) plus the running sum of step + field. */
__attribute__((target("avx2"))) static inline __m256i sum_lanes(__m256i fields, __m256i steps, __m256i last)
{
    return _mm256_add_epi64(prefix_lanes(fields, steps), top_lane(last));
}

#endif

int tsc_codec2_decimals_to_bits_simd(uint64_t base, const uint64_t *fields, size_t n, unsigned e, int as_float,
                                     uint64_t *bits)
{
#ifdef TSC_HAVE_AVX2
    if (avx2_fma_here()) {
        decimals_avx2(base, fields, n, e, as_float, bits);
        return 1;
    }
#endif
    (void)base, (void)fields, (void)n, (void)e, (void)as_float, (void)bits;
    return 0;
}


/* ------------------------------------------------------------------ running sums (timestamps, decimal deltas) */

int tsc_codec2_running_sum_scalar(uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out)
{
    uint64_t prev = start;
    int back = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t now = prev + add + in[i];
        back |= (int64_t)now < (int64_t)prev;
        out[i] = prev = now;
    }
    return back;
}

int tsc_codec2_grid_scalar(uint64_t prev0, uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out)
{
    uint64_t prev = prev0, base = start;
    int back = 0;
    for (size_t i = 0; i < n; i++) {
        base += add;
        uint64_t now = base + in[i];
        back |= (int64_t)now < (int64_t)prev;
        out[i] = prev = now;
    }
    return back;
}

#ifdef TSC_HAVE_AVX2
/* Lanes moved up by one, lane 0 taking `below`'s top lane (the sample before these four). */
__attribute__((target("avx2"))) static inline __m256i lanes_before(__m256i v, __m256i below)
{
    __m256i up = _mm256_permute4x64_epi64(v, _MM_SHUFFLE(2, 1, 0, 0));
    return _mm256_blend_epi32(up, _mm256_permute4x64_epi64(below, _MM_SHUFFLE(3, 3, 3, 3)), 0x03);
}

/* Four lanes a step: an in-register prefix sum (shifts by one and two lanes) plus the carry of the lanes before. */
__attribute__((target("avx2"))) static int running_sum_avx2(uint64_t start, uint64_t add, const uint64_t *in,
                                                             size_t n, uint64_t *out)
{
    const __m256i adds = _mm256_set1_epi64x((int64_t)add);
    __m256i last = _mm256_set1_epi64x((int64_t)start), back = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i x;
        memcpy(&x, in + i, sizeof x);
        __m256i now = sum_lanes(x, adds, last);
        back = _mm256_or_si256(back, _mm256_cmpgt_epi64(lanes_before(now, last), now));
        memcpy(out + i, &now, sizeof now);
        last = now;
    }
    uint64_t prev[4];
    memcpy(prev, &last, sizeof prev);
    int rest = tsc_codec2_running_sum_scalar(prev[3], add, in + i, n - i, out + i);
    return rest | !_mm256_testz_si256(back, back);
}

__attribute__((target("avx2"))) static int grid_avx2(uint64_t prev0, uint64_t start, uint64_t add,
                                                      const uint64_t *in, size_t n, uint64_t *out)
{
    const __m256i step4 = _mm256_set1_epi64x((int64_t)(4 * add));
    __m256i base = _mm256_set_epi64x((int64_t)(start + 4 * add), (int64_t)(start + 3 * add),
                                     (int64_t)(start + 2 * add), (int64_t)(start + add));
    __m256i last = _mm256_set1_epi64x((int64_t)prev0), back = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i x;
        memcpy(&x, in + i, sizeof x);
        __m256i now = _mm256_add_epi64(base, x);
        back = _mm256_or_si256(back, _mm256_cmpgt_epi64(lanes_before(now, last), now));
        memcpy(out + i, &now, sizeof now);
        last = now;
        base = _mm256_add_epi64(base, step4);
    }
    uint64_t prev[4];
    memcpy(prev, &last, sizeof prev);
    /* The rest continue the grid from sample i, whose base is start + i * add. */
    int rest = tsc_codec2_grid_scalar(prev[3], start + (uint64_t)i * add, add, in + i, n - i, out + i);
    return rest | !_mm256_testz_si256(back, back);
}
#endif

int tsc_codec2_running_sum_simd(uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out, int *back)
{
#ifdef TSC_HAVE_AVX2
    if (avx2_here()) {
        *back = running_sum_avx2(start, add, in, n, out);
        return 1;
    }
#endif
    (void)start, (void)add, (void)in, (void)n, (void)out, (void)back;
    return 0;
}

int tsc_codec2_running_sum(uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out)
{
    int back;
    return tsc_codec2_running_sum_simd(start, add, in, n, out, &back) ? back
                                                                        : tsc_codec2_running_sum_scalar(start, add, in, n, out);
}

int tsc_codec2_grid_simd(uint64_t prev0, uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out,
                         int *back)
{
#ifdef TSC_HAVE_AVX2
    if (avx2_here()) {
        *back = grid_avx2(prev0, start, add, in, n, out);
        return 1;
    }
#endif
    (void)prev0, (void)start, (void)add, (void)in, (void)n, (void)out, (void)back;
    return 0;
}

int tsc_codec2_grid(uint64_t prev0, uint64_t start, uint64_t add, const uint64_t *in, size_t n, uint64_t *out)
{
    int back;
    return tsc_codec2_grid_simd(prev0, start, add, in, n, out, &back) ? back
                                                                       : tsc_codec2_grid_scalar(prev0, start, add, in, n, out);
}

/* ------------------------------------------------------------------ the open group's raw samples */

/* Compiled for AVX2 too (static: see left_part_counts_loops), for CPUs without the AVX-512 kernel. */
TSC2_AVX2_CLONES
static void deinterleave_loop(const uint8_t *raw, size_t n, int64_t *restrict ts, uint64_t *restrict bits)
{
    for (size_t i = 0; i < n; i++) {
        ts[i] = (int64_t)tsc_load64_le(raw + 16 * i);
        bits[i] = tsc_load64_le(raw + 16 * i + 8);
    }
}

void tsc_codec2_deinterleave_scalar(const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits)
{
    deinterleave_loop(raw, n, ts, bits);
}

int tsc_codec2_deinterleave_simd(unsigned isa, const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_deinterleave_avx512(raw, n, ts, bits);
        return 1;
    }
#endif
    (void)isa, (void)raw, (void)n, (void)ts, (void)bits;
    return 0;
}

void tsc_codec2_deinterleave(const uint8_t *raw, size_t n, int64_t *ts, uint64_t *bits)
{
    if (!tsc_codec2_deinterleave_simd(TSC_SIMD_BEST, raw, n, ts, bits))
        tsc_codec2_deinterleave_scalar(raw, n, ts, bits);
}

/*
 * Where each value of a mask byte comes from: value k is kept[j + source[k]],
 * j the byte's first kept value not yet used, -1 the value before it (a repeat
 * before any of the byte's own). source[7] + 1 is the kept values the byte
 * uses. Compile-time constants: value k's offset is k minus the repeats among
 * bits 0..k.
 */
#define REPEATS_UP_TO(m, k) (int8_t)((k) - POPCOUNT8((m) & ((2u << (k)) - 1u)))
#define POPCOUNT8(x)                                                                                        \
    (((x) & 1u) + ((x) >> 1 & 1u) + ((x) >> 2 & 1u) + ((x) >> 3 & 1u) + ((x) >> 4 & 1u) + ((x) >> 5 & 1u) +    \
     ((x) >> 6 & 1u) + ((x) >> 7 & 1u))
#define SOURCES(m)                                                                                              \
    {REPEATS_UP_TO(m, 0), REPEATS_UP_TO(m, 1), REPEATS_UP_TO(m, 2), REPEATS_UP_TO(m, 3),                       \
     REPEATS_UP_TO(m, 4), REPEATS_UP_TO(m, 5), REPEATS_UP_TO(m, 6), REPEATS_UP_TO(m, 7)}
#define SOURCES4(m) SOURCES(m), SOURCES((m) + 1u), SOURCES((m) + 2u), SOURCES((m) + 3u)
#define SOURCES16(m) SOURCES4(m), SOURCES4((m) + 4u), SOURCES4((m) + 8u), SOURCES4((m) + 12u)
#define SOURCES64(m) SOURCES16(m), SOURCES16((m) + 16u), SOURCES16((m) + 32u), SOURCES16((m) + 48u)
const int8_t tsc_codec2_mask_sources[256][8] = {SOURCES64(0u), SOURCES64(64u), SOURCES64(128u), SOURCES64(192u)};

/* MASKED values, eight at a time through the table, with no branch on the repeats, which come in no pattern a
 * predictor learns. Every index stays below kept_count: the parse counted it from the mask. */
void tsc_codec2_expand_masked_scalar(const uint8_t *mask, const uint64_t *kept, size_t kept_count, size_t n,
                                     uint64_t *restrict bits)
{
    size_t i = 0;
    ptrdiff_t j = 0;
    for (; i + 8 <= n; i += 8) {
        const int8_t *source = tsc_codec2_mask_sources[mask[i >> 3]];
        for (int k = 0; k < 8; k++) bits[i + k] = kept[j + source[k]];
        j += source[7] + 1;
    }
    tsc_codec2_expand_masked_tail(mask, kept - 1, i, (size_t)j, n, bits);
    (void)kept_count;
}

#ifdef TSC_HAVE_AVX2
/*
 * A mask nibble's four values as doubleword picks from the window of four kept values the AVX2 twin loads:
 * kept[j - 1 .. j + 2], or kept[j .. j + 3] for a nibble without repeats (value k then is kept[j + k]), j the
 * nibble's first kept value not yet used; the sources of a low nibble are the table's first four.
 */
#define NIBBLE_WORD(q, k) (REPEATS_UP_TO(q, k) + 1 - ((q) == 0u))
#define NIBBLE_WORDS(q, k) 2 * NIBBLE_WORD(q, k), 2 * NIBBLE_WORD(q, k) + 1
#define NIBBLE_PICKS(q) {NIBBLE_WORDS(q, 0), NIBBLE_WORDS(q, 1), NIBBLE_WORDS(q, 2), NIBBLE_WORDS(q, 3)}
#define NIBBLE_PICKS4(q) NIBBLE_PICKS(q), NIBBLE_PICKS((q) + 1u), NIBBLE_PICKS((q) + 2u), NIBBLE_PICKS((q) + 3u)
static const int32_t nibble_picks[16][8] = {NIBBLE_PICKS4(0u), NIBBLE_PICKS4(4u), NIBBLE_PICKS4(8u),
                                            NIBBLE_PICKS4(12u)};

/* expand_masked, four values a step: one load of the nibble's window (masked at the kept values' end) and
 * one doubleword permute, where the twin loads and stores each value alone. */
__attribute__((target("avx2"))) static void expand_masked_avx2(const uint8_t *mask, const uint64_t *kept,
                                                                size_t kept_count, size_t n, uint64_t *bits)
{
    const uint64_t *from = kept - 1; /* kept[-1 .. kept_count - 1]: kept_count + 1 values */
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    size_t i = 0, j = 0;
    for (; i + 4 <= n; i += 4) {
        unsigned nibble = (mask[i >> 3] >> (i & 4)) & 15u;
        size_t at = j + (nibble == 0), left = kept_count + 1 - at;
        __m256i window, picks;
        if (left >= 4) window = _mm256_loadu_si256((const __m256i *)(const void *)(from + at));
        else window = _mm256_maskload_epi64((const long long *)(const void *)(from + at),
                                            _mm256_cmpgt_epi64(_mm256_set1_epi64x((int64_t)left), lane));
        memcpy(&picks, nibble_picks[nibble], sizeof picks);
        _mm256_storeu_si256((__m256i *)(void *)(bits + i), _mm256_permutevar8x32_epi32(window, picks));
        j += 4u - (unsigned)__builtin_popcount(nibble);
    }
    tsc_codec2_expand_masked_tail(mask, from, i, j, n, bits);
}
#endif

int tsc_codec2_expand_masked_simd(unsigned isa, const uint8_t *mask, const uint64_t *kept, size_t kept_count,
                                  size_t n, uint64_t *bits)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_expand_masked_avx512(mask, kept, kept_count, n, bits);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_here()) {
        expand_masked_avx2(mask, kept, kept_count, n, bits);
        return 1;
    }
#endif
    (void)isa, (void)mask, (void)kept, (void)kept_count, (void)n, (void)bits;
    return 0;
}

void tsc_codec2_expand_masked(const uint8_t *mask, const uint64_t *kept, size_t kept_count, size_t n, uint64_t *bits)
{
    if (!tsc_codec2_expand_masked_simd(TSC_SIMD_BEST, mask, kept, kept_count, n, bits))
        tsc_codec2_expand_masked_scalar(mask, kept, kept_count, n, bits);
}

/* ------------------------------------------------------------------ constant steps and values */

/* Both constant checks compiled for AVX2 too (static: see left_part_counts_loops), for CPUs without the
 * AVX-512 kernels: 4.7% of a 120-sample chunk's bulk append there with 2-lane SSE2 loops. */
TSC2_AVX2_CLONES
static uint64_t odd_deltas_loop(const int64_t *ts, size_t n, int64_t prev, size_t from, uint64_t first_delta)
{
    uint64_t odd = 0;
    size_t i = from;
    if (i == 0 && n) odd = ((uint64_t)ts[i++] - (uint64_t)prev) ^ first_delta;
    for (; i < n; i++) odd |= ((uint64_t)ts[i] - (uint64_t)ts[i - 1]) ^ first_delta; /* vectorized: no select */
    return odd;
}

TSC2_AVX2_CLONES
static uint64_t odd_values_loop(const uint64_t *bits, size_t n, uint64_t first_bits)
{
    uint64_t odd = 0;
    for (size_t i = 0; i < n; i++) odd |= bits[i] ^ first_bits;
    return odd;
}

uint64_t tsc_codec2_odd_deltas_scalar(const int64_t *ts, size_t n, int64_t prev, size_t from, uint64_t first_delta)
{
    return odd_deltas_loop(ts, n, prev, from, first_delta);
}

int tsc_codec2_odd_deltas_simd(unsigned isa, const int64_t *ts, size_t n, int64_t prev, size_t from,
                               uint64_t first_delta, uint64_t *odd)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        *odd = tsc_codec2_odd_deltas_avx512(ts, n, prev, from, first_delta);
        return 1;
    }
#endif
    (void)isa, (void)ts, (void)n, (void)prev, (void)from, (void)first_delta, (void)odd;
    return 0;
}

uint64_t tsc_codec2_odd_deltas(const int64_t *ts, size_t n, int64_t prev, size_t from, uint64_t first_delta)
{
    uint64_t odd;
    return tsc_codec2_odd_deltas_simd(TSC_SIMD_BEST, ts, n, prev, from, first_delta, &odd)
               ? odd
               : tsc_codec2_odd_deltas_scalar(ts, n, prev, from, first_delta);
}

uint64_t tsc_codec2_odd_values_scalar(const uint64_t *bits, size_t n, uint64_t first_bits)
{
    return odd_values_loop(bits, n, first_bits);
}

int tsc_codec2_odd_values_simd(unsigned isa, const uint64_t *bits, size_t n, uint64_t first_bits, uint64_t *odd)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        *odd = tsc_codec2_odd_values_avx512(bits, n, first_bits);
        return 1;
    }
#endif
    (void)isa, (void)bits, (void)n, (void)first_bits, (void)odd;
    return 0;
}

uint64_t tsc_codec2_odd_values(const uint64_t *bits, size_t n, uint64_t first_bits)
{
    uint64_t odd;
    return tsc_codec2_odd_values_simd(TSC_SIMD_BEST, bits, n, first_bits, &odd)
               ? odd
               : tsc_codec2_odd_values_scalar(bits, n, first_bits);
}

/* ------------------------------------------------------------------ repeats (MASKED or not) */

size_t tsc_codec2_repeats_scalar(const uint64_t *bits, size_t n, uint64_t prev)
{
    size_t repeats = 0;
    for (size_t i = 0; i < n; i++) {
        repeats += bits[i] == prev;
        prev = bits[i];
    }
    return repeats;
}

#ifdef TSC_HAVE_AVX2
__attribute__((target("avx2"))) static size_t repeats_avx2(const uint64_t *bits, size_t n, uint64_t prev)
{
    __m256i last = _mm256_set1_epi64x((int64_t)prev), equal = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i now;
        memcpy(&now, bits + i, sizeof now);
        /* Each equal lane is -1: subtracting counts it. */
        equal = _mm256_sub_epi64(equal, _mm256_cmpeq_epi64(now, lanes_before(now, last)));
        last = now;
    }
    uint64_t lanes[4];
    memcpy(lanes, &equal, sizeof lanes);
    size_t repeats = (size_t)(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    return repeats + tsc_codec2_repeats_scalar(bits + i, n - i, i ? bits[i - 1] : prev);
}
#endif

int tsc_codec2_repeats_simd(unsigned isa, const uint64_t *bits, size_t n, uint64_t prev, size_t *repeats)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        *repeats = tsc_codec2_repeats_avx512(bits, n, prev);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_here()) {
        *repeats = repeats_avx2(bits, n, prev);
        return 1;
    }
#endif
    (void)isa, (void)bits, (void)n, (void)prev, (void)repeats;
    return 0;
}

size_t tsc_codec2_repeat_mask_scalar(const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask, uint64_t *kept)
{
    size_t nkept = 0;
    for (size_t word = 0; word < TSC2_GROUP / 64; word++) {
        uint64_t repeats = 0;
        for (size_t i = 64 * word; i < n && i < 64 * word + 64; i++) { /* without branches: repeats do not predict */
            uint64_t repeat = bits[i] == prev;
            repeats |= repeat << (i & 63);
            kept[nkept] = bits[i];
            nkept += !repeat;
            prev = bits[i];
        }
        mask[word] = repeats;
    }
    return nkept;
}

#ifdef TSC_HAVE_AVX2
/* The fresh lanes of a nibble moved to its low lanes: for each of the 16 masks, output lane j takes the lane of
 * the mask's (j + 1)-th set bit (doubleword picks; lanes past the set bits are not stored). */
#define NTH_SET(f, j)                                                                                           \
    (POPCOUNT8((f) & 1u) == (j) + 1u   ? 0                                                                     \
     : POPCOUNT8((f) & 3u) == (j) + 1u ? 1                                                                     \
     : POPCOUNT8((f) & 7u) == (j) + 1u ? 2                                                                     \
     : POPCOUNT8(f) == (j) + 1u        ? 3                                                                     \
                                       : 0)
#define COMPRESS_WORDS(f, j) 2 * NTH_SET(f, j), 2 * NTH_SET(f, j) + 1
#define COMPRESS_PICKS(f) {COMPRESS_WORDS(f, 0u), COMPRESS_WORDS(f, 1u), COMPRESS_WORDS(f, 2u), COMPRESS_WORDS(f, 3u)}
#define COMPRESS_PICKS4(f)                                                                                      \
    COMPRESS_PICKS(f), COMPRESS_PICKS((f) + 1u), COMPRESS_PICKS((f) + 2u), COMPRESS_PICKS((f) + 3u)
static const int32_t compress_picks[16][8] = {COMPRESS_PICKS4(0u), COMPRESS_PICKS4(4u), COMPRESS_PICKS4(8u),
                                              COMPRESS_PICKS4(12u)};

/* repeat_mask, four values a step: the repeats as a movemask, the fresh values moved down by one doubleword
 * permute and stored through a mask of their count (nothing past the kept values), where the twin stores
 * every value and counts it. Steps never straddle a mask word (64 is a multiple of 4). */
__attribute__((target("avx2"))) static size_t repeat_mask_avx2(const uint64_t *bits, size_t n, uint64_t prev,
                                                                uint64_t *mask, uint64_t *kept)
{
    static const int64_t first_lanes[8] = {-1, -1, -1, -1, 0, 0, 0, 0}; /* from 4 - c on: lanes 0..c-1 */
    __m256i last = _mm256_set1_epi64x((int64_t)prev);
    size_t nkept = 0, i = 0;
    for (size_t word = 0; word < TSC2_GROUP / 64; word++) {
        uint64_t repeats = 0;
        size_t end = n < 64 * word + 64 ? n : 64 * word + 64;
        for (; i + 4 <= end; i += 4) {
            __m256i now, picks, store;
            memcpy(&now, bits + i, sizeof now);
            __m256i equal = _mm256_cmpeq_epi64(now, lanes_before(now, last));
            unsigned repeat = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(equal)), fresh = ~repeat & 15u;
            size_t count = (size_t)__builtin_popcount(fresh);
            repeats |= (uint64_t)repeat << (i & 63);
            memcpy(&picks, compress_picks[fresh], sizeof picks);
            memcpy(&store, first_lanes + 4 - count, sizeof store);
            _mm256_maskstore_epi64((long long *)(void *)(kept + nkept), store,
                                   _mm256_permutevar8x32_epi32(now, picks));
            nkept += count;
            last = now;
        }
        for (uint64_t before = i ? bits[i - 1] : prev; i < end; before = bits[i++]) { /* the last 1-3 */
            if (bits[i] == before) repeats |= UINT64_C(1) << (i & 63);
            else kept[nkept++] = bits[i];
        }
        mask[word] = repeats;
    }
    return nkept;
}
#endif

size_t tsc_codec2_repeat_mask_simd(unsigned isa, const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask,
                                   uint64_t *kept)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) return tsc_codec2_repeat_mask_avx512(bits, n, prev, mask, kept);
    if (isa != TSC_SIMD_AVX512 && avx2_here()) return repeat_mask_avx2(bits, n, prev, mask, kept);
#endif
    (void)isa, (void)bits, (void)n, (void)prev, (void)mask, (void)kept;
    return SIZE_MAX;
}

size_t tsc_codec2_repeat_mask(const uint64_t *bits, size_t n, uint64_t prev, uint64_t *mask, uint64_t *kept)
{
    size_t nkept = tsc_codec2_repeat_mask_simd(TSC_SIMD_BEST, bits, n, prev, mask, kept);
    return nkept != SIZE_MAX ? nkept : tsc_codec2_repeat_mask_scalar(bits, n, prev, mask, kept);
}

/* Compiled for AVX2 too (a static function: clang's clones of an external one are not linked by its name). */
TSC2_AVX2_CLONES
static void left_part_counts_loops(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *candidates,
                                   size_t *counts, uint64_t *outside)
{
    uint8_t hit[TSC2_GROUP] = {0};
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) {
        size_t count = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned equal = (bits[i] >> right_bits) == candidates[d];
            count += equal;
            hit[i] |= (uint8_t)equal;
        }
        counts[d] = count;
    }
    for (size_t word = 0; word < TSC2_GROUP / 64; word++) outside[word] = 0;
    for (size_t i = 0; i < n; i++) outside[i / 64] |= (uint64_t)!hit[i] << (i % 64);
}

void tsc_codec2_left_part_counts_scalar(const uint64_t *bits, size_t n, unsigned right_bits,
                                        const uint64_t *candidates, size_t *counts, uint64_t *outside)
{
    left_part_counts_loops(bits, n, right_bits, candidates, counts, outside);
}

int tsc_codec2_left_part_counts_simd(unsigned isa, const uint64_t *bits, size_t n, unsigned right_bits,
                                     const uint64_t *candidates, size_t *counts, uint64_t *outside)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && right_bits >= 64 - TSC2_SPLIT_MAX_LEFT && tsc_avx512_here()) {
        tsc_codec2_left_part_counts_avx512(bits, n, right_bits, candidates, counts, outside);
        return 1;
    }
#endif
    (void)isa, (void)bits, (void)n, (void)right_bits, (void)candidates, (void)counts, (void)outside;
    return 0;
}

void tsc_codec2_left_part_counts(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *candidates,
                                 size_t *counts, uint64_t *outside)
{
    if (!tsc_codec2_left_part_counts_simd(TSC_SIMD_BEST, bits, n, right_bits, candidates, counts, outside))
        tsc_codec2_left_part_counts_scalar(bits, n, right_bits, candidates, counts, outside);
}

size_t tsc_codec2_split_patches_scalar(uint64_t *fields, size_t m, unsigned width, uint8_t *at, uint64_t *high)
{
    uint64_t low_mask = width >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
    size_t patches = 0;
    for (size_t i = 0; i < m; i++)
        if (fields[i] > low_mask) {
            at[patches] = (uint8_t)i;
            high[patches++] = fields[i] >> width;
            fields[i] &= low_mask;
        }
    return patches;
}

size_t tsc_codec2_split_patches_simd(unsigned isa, uint64_t *fields, size_t m, unsigned width, uint8_t *at,
                                     uint64_t *high)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) return tsc_codec2_split_patches_avx512(fields, m, width, at, high);
#endif
    (void)isa, (void)fields, (void)m, (void)width, (void)at, (void)high;
    return SIZE_MAX;
}

size_t tsc_codec2_split_patches(uint64_t *fields, size_t m, unsigned width, uint8_t *at, uint64_t *high)
{
    size_t patches = tsc_codec2_split_patches_simd(TSC_SIMD_BEST, fields, m, width, at, high);
    return patches != SIZE_MAX ? patches : tsc_codec2_split_patches_scalar(fields, m, width, at, high);
}

/*
 * Float32 data printed to 16 digits (ETT's) has a NEAR value in four, at random, and a branch on each value
 * cost more than the rest of the decimal plan: the exceptions are found as bits of a mask first (no branch),
 * here `nonzero` (bit j of word j / 64: diffs[j] != 0), then visited one set bit at a time.
 */
TSC_INLINE size_t exceptions_of_mask(const int64_t *diffs, size_t n, const uint64_t *nonzero, int64_t *correction,
                                     uint8_t *at, size_t *bytes, size_t *first_ok)
{
    size_t count = 0, sum = 0, first = SIZE_MAX;
    for (size_t from = 0; from < n; from += 64) {
        size_t slots = n - from < 64 ? n - from : 64;
        uint64_t exact = ~nonzero[from / 64] & (slots == 64 ? ~UINT64_C(0) : (UINT64_C(1) << slots) - 1);
        if (exact && first == SIZE_MAX) first = from + (size_t)__builtin_ctzll(exact);
        for (uint64_t left = nonzero[from / 64]; left; left &= left - 1) {
            size_t i = from + (size_t)__builtin_ctzll(left);
            int64_t diff = diffs[i];
            int near = diff > -TSC2_NEAR_ULPS && diff < TSC2_NEAR_ULPS;
            correction[count] = diff;
            at[count++] = (uint8_t)(i | (near ? 0u : TSC2_EXCEPTION_RAW));
            sum += tsc_codec2_exception_bytes(near ? TSC2_NEAR : TSC2_FAR, diff);
            first = near && i < first ? i : first;
        }
    }
    *bytes += sum;
    *first_ok = first;
    return count;
}

size_t tsc_codec2_exceptions_scalar(const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at, size_t *bytes,
                                    size_t *first_ok)
{
    uint64_t nonzero[TSC2_GROUP / 64] = {0};
    for (size_t from = 0; from < n; from += 64) {
        size_t slots = n - from < 64 ? n - from : 64;
        uint64_t word = 0;
        for (size_t j = 0; j < slots; j++) word |= (uint64_t)(diffs[from + j] != 0) << j;
        nonzero[from / 64] = word;
    }
    return exceptions_of_mask(diffs, n, nonzero, correction, at, bytes, first_ok);
}

#ifdef TSC_HAVE_AVX2
/* The mask four slots a compare, where the scalar twin spends seven instructions a slot on it. */
__attribute__((target("avx2"))) static size_t exceptions_avx2(const int64_t *diffs, size_t n, int64_t *correction,
                                                               uint8_t *at, size_t *bytes, size_t *first_ok)
{
    uint64_t nonzero[TSC2_GROUP / 64] = {0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i zero = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(diffs + i)),
                                          _mm256_setzero_si256());
        unsigned lanes = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(zero)) ^ 0xfu;
        nonzero[i / 64] |= (uint64_t)lanes << (i % 64);
    }
    for (; i < n; i++) nonzero[i / 64] |= (uint64_t)(diffs[i] != 0) << (i % 64);
    return exceptions_of_mask(diffs, n, nonzero, correction, at, bytes, first_ok);
}
#endif

size_t tsc_codec2_exceptions_simd(unsigned isa, const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at,
                                  size_t *bytes, size_t *first_ok)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here())
        return tsc_codec2_exceptions_avx512(diffs, n, correction, at, bytes, first_ok);
    if (isa != TSC_SIMD_AVX512 && avx2_here()) return exceptions_avx2(diffs, n, correction, at, bytes, first_ok);
#endif
    (void)isa, (void)diffs, (void)n, (void)correction, (void)at, (void)bytes, (void)first_ok;
    return SIZE_MAX;
}

size_t tsc_codec2_exceptions(const int64_t *diffs, size_t n, int64_t *correction, uint8_t *at, size_t *bytes,
                             size_t *first_ok)
{
    size_t count = tsc_codec2_exceptions_simd(TSC_SIMD_BEST, diffs, n, correction, at, bytes, first_ok);
    return count != SIZE_MAX ? count : tsc_codec2_exceptions_scalar(diffs, n, correction, at, bytes, first_ok);
}

size_t tsc_codec2_repeats(const uint64_t *bits, size_t n, uint64_t prev)
{
    size_t repeats;
    return tsc_codec2_repeats_simd(TSC_SIMD_BEST, bits, n, prev, &repeats) ? repeats
                                                                           : tsc_codec2_repeats_scalar(bits, n, prev);
}

/* ------------------------------------------------------------------ SPLIT planning */

/*
 * Byte counters (256 of them, summing to at most 255) to the position of each
 * one's first value: eight counters a word, whose prefix sums a multiplication
 * by 0x0101...01 gives (no byte carries into the next while sums stay below
 * 256), plus the words before.
 */
static void first_positions(uint8_t counts[256])
{
    const uint64_t ones = UINT64_C(0x0101010101010101);
    uint64_t before = 0;
    for (unsigned w = 0; w < 256; w += 8) {
        uint64_t word = tsc_load64_le(counts + w), inclusive = word * ones;
        tsc_store64_le(counts + w, inclusive - word + before * ones);
        before += inclusive >> 56;
    }
}

/* The top 16 bits of every value, sorted: two 8-bit counting passes whose
 * histograms are taken in one read of the values, counts and positions in
 * bytes (a group has at most 128 values). */
void tsc_codec2_sorted_tops_scalar(const uint64_t *bits, size_t n, uint16_t *out)
{
    _Static_assert(TSC2_GROUP <= 255, "byte counters");
    uint16_t tops[TSC2_GROUP], by_low[TSC2_GROUP];
    uint8_t low_at[256] = {0}, high_at[256] = {0}; /* counts, then first positions */
    unsigned first = n ? (unsigned)(bits[0] >> 48) : 0, highs_differ = 0;
    for (size_t i = 0; i < n; i++) {
        tops[i] = (uint16_t)(bits[i] >> 48);
        low_at[tops[i] & 0xff]++;
        highs_differ |= (tops[i] ^ first) >> 8;
    }
    first_positions(low_at);
    if (!highs_differ) { /* one high byte (one sign and exponent range): one pass sorts */
        for (size_t i = 0; i < n; i++) out[low_at[tops[i] & 0xff]++] = tops[i];
        return;
    }
    /* Counted apart: mostly one counter, whose increments would form a chain through memory in the loop
     * above (store to load, ~5 cycles each) for the common groups that need no second pass. */
    for (size_t i = 0; i < n; i++) high_at[tops[i] >> 8]++;
    first_positions(high_at);
    for (size_t i = 0; i < n; i++) by_low[low_at[tops[i] & 0xff]++] = tops[i];
    for (size_t i = 0; i < n; i++) out[high_at[by_low[i] >> 8]++] = by_low[i];
}

void tsc_codec2_sorted_tops(const uint64_t *bits, size_t n, uint16_t *out)
{
#ifdef TSC_HAVE_AVX2
    if (tsc_avx512_here()) {
        tsc_codec2_sorted_tops_avx512(bits, n, out);
        return;
    }
#endif
    tsc_codec2_sorted_tops_scalar(bits, n, out);
}

size_t tsc_codec2_split_codes_scalar(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *dict,
                                     unsigned dict_size, uint64_t *codes, uint64_t *rights, uint8_t *exception_at)
{
    /*
     * The dictionary (left parts of at most 16 bits) as eight 16-bit lanes in two words: a value's code is
     * its first equal lane, found without a branch or a scan (SWAR: a lane of left ^ entry is zero; the
     * borrow trick can flag lanes above a zero one, never below, so the lowest flag is right).
     */
    _Static_assert(TSC2_SPLIT_MAX_LEFT <= 16 && TSC2_SPLIT_DICT == 8, "16-bit lanes, eight entries");
    const uint64_t ones = UINT64_C(0x0001000100010001), highs = UINT64_C(0x8000800080008000);
    uint64_t lanes[2] = {0, 0}, used[2] = {0, 0};
    for (unsigned d = 0; d < dict_size; d++) {
        lanes[d / 4] |= dict[d] << (16 * (d % 4));
        used[d / 4] |= UINT64_C(0x8000) << (16 * (d % 4));
    }
    size_t exceptions = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t left = bits[i] >> right_bits, spread = left * ones;
        uint64_t x0 = spread ^ lanes[0], x1 = spread ^ lanes[1];
        uint64_t hit0 = (x0 - ones) & ~x0 & highs & used[0], hit1 = (x1 - ones) & ~x1 & highs & used[1];
        unsigned code = hit0 ? (unsigned)__builtin_ctzll(hit0) / 16
                             : 4 + (unsigned)__builtin_ctzll(hit1 | UINT64_C(1) << 63) / 16;
        unsigned missing = !(hit0 | hit1);
        exception_at[exceptions] = (uint8_t)i;
        exceptions += missing;
        codes[i] = missing ? 0 : code;
        rights[i] = bits[i] & ((UINT64_C(1) << right_bits) - 1);
    }
    return exceptions;
}

#ifdef TSC_HAVE_AVX2
/* The set lanes of a 4-bit mask as bytes, lowest first: a step's exception positions, less the step's first. */
#define LANE_BYTE(m, j) ((uint32_t)NTH_SET(m, j) << (8 * (j)))
#define LANE_BYTES(m) (LANE_BYTE(m, 0u) | LANE_BYTE(m, 1u) | LANE_BYTE(m, 2u) | LANE_BYTE(m, 3u))
#define LANE_BYTES4(m) LANE_BYTES(m), LANE_BYTES((m) + 1u), LANE_BYTES((m) + 2u), LANE_BYTES((m) + 3u)
static const uint32_t lane_bytes[16] = {LANE_BYTES4(0u), LANE_BYTES4(4u), LANE_BYTES4(8u), LANE_BYTES4(12u)};

/*
 * split_codes, four values a step: each left part compared with the eight entries (an unused one is all ones,
 * which no left part of at most TSC2_SPLIT_MAX_LEFT bits equals), the first equal one blended in last; a
 * step's misses appended as four position bytes at once (room for n + 8), where the twin's SWAR lookup takes
 * a value at a time. The last 1-3 values go through the twin.
 */
__attribute__((target("avx2"))) static size_t split_codes_avx2(const uint64_t *bits, size_t n, unsigned right_bits,
                                                                const uint64_t *dict, unsigned dict_size,
                                                                uint64_t *codes, uint64_t *rights,
                                                                uint8_t *exception_at)
{
    __m256i entry[TSC2_SPLIT_DICT];
    for (unsigned d = 0; d < TSC2_SPLIT_DICT; d++) entry[d] = _mm256_set1_epi64x(d < dict_size ? (int64_t)dict[d] : -1);
    const __m128i shift = _mm_cvtsi32_si128((int)right_bits);
    const __m256i right_mask = _mm256_set1_epi64x((int64_t)((UINT64_C(1) << right_bits) - 1));
    const __m256i none = _mm256_set1_epi64x(-1);
    size_t exceptions = 0, i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i v;
        memcpy(&v, bits + i, sizeof v);
        __m256i left = _mm256_srl_epi64(v, shift), code = none;
        for (unsigned d = TSC2_SPLIT_DICT; d-- > 0;)
            code = _mm256_blendv_epi8(code, _mm256_set1_epi64x((int64_t)d), _mm256_cmpeq_epi64(left, entry[d]));
        __m256i missing = _mm256_cmpeq_epi64(code, none), right = _mm256_and_si256(v, right_mask);
        code = _mm256_andnot_si256(missing, code);
        memcpy(codes + i, &code, sizeof code);
        memcpy(rights + i, &right, sizeof right);
        unsigned miss = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(missing));
        uint32_t at = lane_bytes[miss] + (uint32_t)i * UINT32_C(0x01010101); /* i + 3 < 256: no carry */
        memcpy(exception_at + exceptions, &at, sizeof at);
        exceptions += (size_t)__builtin_popcount(miss);
    }
    uint8_t tail_at[4];
    size_t tail = tsc_codec2_split_codes_scalar(bits + i, n - i, right_bits, dict, dict_size, codes + i, rights + i,
                                                tail_at);
    for (size_t x = 0; x < tail; x++) exception_at[exceptions + x] = (uint8_t)(i + tail_at[x]);
    return exceptions + tail;
}
#endif

size_t tsc_codec2_split_codes_simd(unsigned isa, const uint64_t *bits, size_t n, unsigned right_bits,
                                   const uint64_t *dict, unsigned dict_size, uint64_t *codes, uint64_t *rights,
                                   uint8_t *exception_at)
{
#ifdef TSC_HAVE_AVX2
    if (right_bits >= 64 - TSC2_SPLIT_MAX_LEFT) { /* left parts in 16-bit lanes (AVX-512), never all ones */
        if (isa != TSC_SIMD_AVX2 && tsc_avx512_here())
            return tsc_codec2_split_codes_avx512(bits, n, right_bits, dict, dict_size, codes, rights, exception_at);
        if (isa != TSC_SIMD_AVX512 && avx2_here())
            return split_codes_avx2(bits, n, right_bits, dict, dict_size, codes, rights, exception_at);
    }
#endif
    (void)isa, (void)bits, (void)n, (void)right_bits, (void)dict, (void)dict_size, (void)codes, (void)rights;
    (void)exception_at;
    return SIZE_MAX;
}

size_t tsc_codec2_split_codes(const uint64_t *bits, size_t n, unsigned right_bits, const uint64_t *dict,
                              unsigned dict_size, uint64_t *codes, uint64_t *rights, uint8_t *exception_at)
{
    size_t exceptions =
        tsc_codec2_split_codes_simd(TSC_SIMD_BEST, bits, n, right_bits, dict, dict_size, codes, rights, exception_at);
    return exceptions != SIZE_MAX
               ? exceptions
               : tsc_codec2_split_codes_scalar(bits, n, right_bits, dict, dict_size, codes, rights, exception_at);
}

/* ------------------------------------------------------------------ time going back */

int tsc_codec2_goes_back_scalar(const int64_t *ts, size_t n, int64_t prev)
{
    int back = 0;
    for (size_t i = 0; i < n; i++) {
        back |= ts[i] < prev;
        prev = ts[i];
    }
    return back;
}

#ifdef TSC_HAVE_AVX2
__attribute__((target("avx2"))) static int goes_back_avx2(const int64_t *ts, size_t n, int64_t prev)
{
    if (n == 0) return 0;
    __m256i back = _mm256_setzero_si256();
    int first = ts[0] < prev;
    size_t i = 1;
    for (; i + 4 <= n; i += 4) {
        __m256i now, before;
        memcpy(&now, ts + i, sizeof now);
        memcpy(&before, ts + i - 1, sizeof before);
        back = _mm256_or_si256(back, _mm256_cmpgt_epi64(before, now));
    }
    return first | !_mm256_testz_si256(back, back) | tsc_codec2_goes_back_scalar(ts + i, n - i, ts[i - 1]);
}
#endif

int tsc_codec2_goes_back_simd(unsigned isa, const int64_t *ts, size_t n, int64_t prev, int *back)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        *back = tsc_codec2_goes_back_avx512(ts, n, prev);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_here()) {
        *back = goes_back_avx2(ts, n, prev);
        return 1;
    }
#endif
    (void)isa, (void)ts, (void)n, (void)prev, (void)back;
    return 0;
}

int tsc_codec2_goes_back(const int64_t *ts, size_t n, int64_t prev)
{
    int back;
    return tsc_codec2_goes_back_simd(TSC_SIMD_BEST, ts, n, prev, &back) ? back
                                                                         : tsc_codec2_goes_back_scalar(ts, n, prev);
}

/* ------------------------------------------------------------------ constant steps (TS_CONST chunks) */

void tsc_codec2_steps_scalar(uint64_t start, uint64_t step, size_t n, uint64_t *out)
{
    for (size_t i = 0; i < n; i++, start += step) out[i] = start;
}

#ifdef TSC_HAVE_AVX2
__attribute__((target("avx2"))) static void steps_avx2(uint64_t start, uint64_t step, size_t n, uint64_t *out)
{
    __m256i now = _mm256_set_epi64x((int64_t)(start + 3 * step), (int64_t)(start + 2 * step), (int64_t)(start + step),
                                    (int64_t)start);
    const __m256i step4 = _mm256_set1_epi64x((int64_t)(4 * step));
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        memcpy(out + i, &now, sizeof now);
        now = _mm256_add_epi64(now, step4);
    }
    tsc_codec2_steps_scalar(start + i * step, step, n - i, out + i);
}
#endif

int tsc_codec2_steps_simd(uint64_t start, uint64_t step, size_t n, uint64_t *out)
{
#ifdef TSC_HAVE_AVX2
    if (avx2_here()) {
        steps_avx2(start, step, n, out);
        return 1;
    }
#endif
    (void)start, (void)step, (void)n, (void)out;
    return 0;
}

void tsc_codec2_steps(uint64_t start, uint64_t step, size_t n, uint64_t *out)
{
    if (!tsc_codec2_steps_simd(start, step, n, out)) tsc_codec2_steps_scalar(start, step, n, out);
}

/* ------------------------------------------------------------------ unpacking */

void tsc_codec2_unpack_run_scalar(const uint8_t *src, size_t avail, uint64_t *fields, size_t n, unsigned width)
{
    (void)avail;
    uint64_t mask = (UINT64_C(1) << width) - 1;
    for (size_t i = 0; i < n; i++) {
        size_t bit = i * width;
        fields[i] = (tsc_load64_le(src + (bit >> 3)) >> (bit & 7)) & mask;
    }
}

#ifdef TSC_HAVE_AVX2
/*
 * Widths 1..30 without gathers: eight fields span exactly `width` bytes, in two
 * blocks of four whose bit phases are the same for every eight. Each block is
 * a 16-byte load copied to both halves, a byte shuffle that gives every lane
 * the bytes from its field's first one, a per-lane shift and a mask. Bytes
 * past the 16 (shuffle indices wrap) only reach bits above the field's 30 + 7.
 */
#define SHUFFLE_MAX_WIDTH 30u

__attribute__((target("avx2"))) static void block_lanes(unsigned start, unsigned width, __m256i *pick, __m256i *shift)
{
    __m256i bit = _mm256_add_epi64(_mm256_set1_epi64x(start % 8),
                                   _mm256_mul_epu32(_mm256_set_epi64x(3, 2, 1, 0), _mm256_set1_epi64x(width)));
    __m256i first_byte = _mm256_srli_epi64(bit, 3);
    __m256i spread = _mm256_shuffle_epi8(first_byte, _mm256_set_epi64x(0x0808080808080808, 0, 0x0808080808080808, 0));
    *pick = _mm256_add_epi8(spread, _mm256_set1_epi64x(0x0706050403020100));
    *shift = _mm256_and_si256(bit, _mm256_set1_epi64x(7));
}

/* Eight fields by byte shuffle: where each lane's bytes start and how far to shift them. */
typedef struct {
    __m256i pick_a, shift_a, pick_b, shift_b, mask;
    size_t second; /* the byte where fields 4..7 start */
} shuffle_plan;

__attribute__((target("avx2"))) static inline shuffle_plan shuffle_plan_of(unsigned width)
{
    shuffle_plan p;
    block_lanes(0, width, &p.pick_a, &p.shift_a);
    block_lanes(4 * width, width, &p.pick_b, &p.shift_b);
    p.mask = _mm256_set1_epi64x((INT64_C(1) << width) - 1);
    p.second = 4 * width / 8;
    return p;
}

__attribute__((target("avx2"))) static inline void unpack_eight_bytes(const shuffle_plan *p, __m128i first,
                                                                       __m128i second, __m256i *a, __m256i *b)
{
    __m256i x = _mm256_broadcastsi128_si256(first), y = _mm256_broadcastsi128_si256(second);
    *a = _mm256_and_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(x, p->pick_a), p->shift_a), p->mask);
    *b = _mm256_and_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(y, p->pick_b), p->shift_b), p->mask);
}

__attribute__((target("avx2"))) static inline void unpack_eight(const shuffle_plan *p, const uint8_t *block,
                                                                 __m256i *a, __m256i *b)
{
    unpack_eight_bytes(p, _mm_loadu_si128((const __m128i *)(const void *)block),
                       _mm_loadu_si128((const __m128i *)(const void *)(block + p->second)), a, b);
}

/* Byte shuffle controls: from window_shuffle + past, bytes move down by past (0..16) and the top past are zeros. */
static const uint8_t window_shuffle[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                           0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                           0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

/*
 * The 16 bytes from src + at, zeros from avail on (avail >= 16), near the stream's end: its last 16 bytes
 * shuffled down. (0.27.0 copied them into a zero-padded buffer and loaded from it: each load waited for the
 * copy's stores to reach the cache, about a seventh of a 120-sample chunk's AVX2 decode.)
 */
__attribute__((target("avx2"))) static inline __m128i bytes_within(const uint8_t *src, size_t avail, size_t at)
{
    if (at + 16 <= avail) return _mm_loadu_si128((const __m128i *)(const void *)(src + at));
    size_t past = at < avail ? 16 - (avail - at) : 16;
    __m128i last = _mm_loadu_si128((const __m128i *)(const void *)(src + avail - 16));
    return _mm_shuffle_epi8(last, _mm_loadu_si128((const __m128i *)(const void *)(window_shuffle + past)));
}

/* A stream of fewer than 16 bytes, copied with zeros after it (the block's loads reach at + second + 16 <= 46). */
static inline const uint8_t *short_stream_block(const uint8_t *src, size_t avail, size_t at, uint8_t pad[64])
{
    memset(pad, 0, 64);
    memcpy(pad, src, avail);
    return pad + (at < avail ? at : avail);
}

/* unpack_eight of the eight fields at src + at, where its loads would reach past avail: the fields inside avail
 * unpack as tsc_codec2_unpack gives them, the lanes past the caller's n are not used. */
__attribute__((target("avx2"), always_inline)) static inline void unpack_eight_near_end(const shuffle_plan *p,
                                                                                       const uint8_t *src,
                                                                                       size_t avail, size_t at,
                                                                                       __m256i *a, __m256i *b)
{
    if (avail >= 16) {
        unpack_eight_bytes(p, bytes_within(src, avail, at), bytes_within(src, avail, at + p->second), a, b);
        return;
    }
    uint8_t pad[64];
    unpack_eight(p, short_stream_block(src, avail, at, pad), a, b);
}

/* The lanes of a block of eight that hold one of the `left` fields still to write: the masked stores' masks. */
__attribute__((target("avx2"))) static inline void tail_masks(size_t left, __m256i *a, __m256i *b)
{
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    __m256i count = _mm256_set1_epi64x((int64_t)(left < 8 ? left : 8));
    *a = _mm256_cmpgt_epi64(count, lane);
    *b = _mm256_cmpgt_epi64(count, _mm256_add_epi64(lane, _mm256_set1_epi64x(4)));
}

/* Width 0: every field is 0 and takes no byte of the stream; the kernels unpack them from here instead. */
static const uint8_t zero_fields[32];

static inline const uint8_t *fields_at(const uint8_t *src, size_t *avail, unsigned width)
{
    if (width) return src;
    *avail = sizeof zero_fields;
    return zero_fields;
}

/* How many blocks of eight from src's start are whole (below n) and load inside avail: the fast loops' count. */
static inline size_t safe_blocks(size_t n, size_t avail, unsigned width, size_t second)
{
    size_t blocks = n / 8, inside = avail < second + 16 ? 0 : width ? (avail - second - 16) / width + 1 : blocks;
    return blocks < inside ? blocks : inside;
}

__attribute__((target("avx2"))) static size_t unpack_shuffle_avx2(const uint8_t *src, size_t avail, uint64_t *fields,
                                                                   size_t n, unsigned width)
{
    const shuffle_plan p = shuffle_plan_of(width);
    size_t i = 0, at = 0; /* eight fields start at byte i * width / 8 */
    for (; i + 8 <= n && at + p.second + 16 <= avail; i += 8, at += width) {
        __m256i a, b;
        unpack_eight(&p, src + at, &a, &b);
        memcpy(fields + i, &a, sizeof a);
        memcpy(fields + i + 4, &b, sizeof b);
    }
    return i;
}

/*
 * Widths 31..57 without gathers: four fields from `first_bit` on (first_bit + 4 * width <= 232) lie in the
 * 32 bytes loaded at their first byte. Lane k's field starts in doubleword d = bit / 32 and ends before
 * doubleword d + 3: two doubleword permutes give each lane d, d + 1 (as one word) and d + 2, shifted together.
 */
typedef struct {
    __m256i low, high, shift;
} long_plan;

__attribute__((target("avx2"))) static long_plan long_plan_of(unsigned width, unsigned first_bit)
{
    int32_t low[8], high[8];
    int64_t shift[4];
    for (unsigned k = 0; k < 4; k++) {
        unsigned bit = first_bit + k * width, word = bit / 32;
        low[2 * k] = (int32_t)word, low[2 * k + 1] = (int32_t)word + 1;
        high[2 * k] = high[2 * k + 1] = (int32_t)word + 2; /* its copy in the upper half is shifted out */
        shift[k] = bit % 32;
    }
    long_plan p;
    memcpy(&p.low, low, sizeof low);
    memcpy(&p.high, high, sizeof high);
    memcpy(&p.shift, shift, sizeof shift);
    return p;
}

__attribute__((target("avx2"), always_inline)) static inline __m256i long_lanes(const uint8_t *at, const long_plan *p,
                                                                               __m256i mask)
{
    __m256i words = _mm256_loadu_si256((const __m256i *)(const void *)at);
    __m256i low = _mm256_permutevar8x32_epi32(words, p->low), high = _mm256_permutevar8x32_epi32(words, p->high);
    __m256i up = _mm256_sub_epi64(_mm256_set1_epi64x(64), p->shift); /* 64 when the field starts the word: 0 */
    return _mm256_and_si256(_mm256_or_si256(_mm256_srlv_epi64(low, p->shift), _mm256_sllv_epi64(high, up)), mask);
}

/* Eight fields a step (they fill `width` bytes): fields 4..7 from the byte where they start. @return how many. */
__attribute__((target("avx2"))) static size_t unpack_long_avx2(const uint8_t *src, size_t avail, uint64_t *fields,
                                                                size_t n, unsigned width)
{
    const size_t second = 4 * width / 8;
    const long_plan a = long_plan_of(width, 0), b = long_plan_of(width, 4 * width % 8);
    const __m256i mask = _mm256_set1_epi64x((INT64_C(1) << width) - 1);
    size_t i = 0, at = 0;
    for (; i + 8 <= n && at + second + 32 <= avail; i += 8, at += width) {
        __m256i low = long_lanes(src + at, &a, mask), high = long_lanes(src + at + second, &b, mask);
        memcpy(fields + i, &low, sizeof low);
        memcpy(fields + i + 4, &high, sizeof high);
    }
    return i;
}

/* Four fields a step: one gather of the 8 bytes at each field's first byte, then a per-lane shift. */
__attribute__((target("avx2"))) static void unpack_run_avx2(const uint8_t *src, size_t avail, uint64_t *fields,
                                                             size_t n, unsigned width)
{
    size_t i = width <= SHUFFLE_MAX_WIDTH ? unpack_shuffle_avx2(src, avail, fields, n, width)
               : width <= 57           ? unpack_long_avx2(src, avail, fields, n, width)
                                       : 0;
    const __m256i mask = _mm256_set1_epi64x((INT64_C(1) << width) - 1), seven = _mm256_set1_epi64x(7);
    const __m256i step = _mm256_set1_epi64x(4 * (int64_t)width);
    const int64_t at = (int64_t)(i * width);
    __m256i bit = _mm256_set_epi64x(at + 3 * (int64_t)width, at + 2 * (int64_t)width, at + (int64_t)width, at);
    for (; i + 4 <= n; i += 4) {
        __m256i words = _mm256_i64gather_epi64((const long long *)(const void *)src, _mm256_srli_epi64(bit, 3), 1);
        __m256i v = _mm256_and_si256(_mm256_srlv_epi64(words, _mm256_and_si256(bit, seven)), mask);
        memcpy(fields + i, &v, sizeof v);
        bit = _mm256_add_epi64(bit, step);
    }
    for (; i < n; i++) {
        size_t first = i * width;
        fields[i] = (tsc_load64_le(src + (first >> 3)) >> (first & 7)) & ((UINT64_C(1) << width) - 1);
    }
}
#endif

#ifdef TSC_HAVE_AVX2
/* Four k + TSC2_MAGIC_BITS: the running sum after last (delta, a constant the compiler folds), or base + field. */
__attribute__((target("avx2"), always_inline)) static inline __m256i biased_k_lanes(__m256i fields, const int delta,
                                                                                    __m256i add, __m256i last)
{
    return delta ? sum_lanes(fields, add, last) : _mm256_add_epi64(fields, add);
}

/*
 * A decimal block from its packed fields to values' bits in one pass: each four
 * fields unpacked by byte shuffle go through the running sum (delta: k[i] =
 * k[i-1] + add + field, k[-1] = start) or onto the base (k = add + field) and the
 * conversion without being stored. The last block (127 fields a full DELTA
 * group) goes the same way through unpack_eight_near_end. Needs width <= 30 (0: no bytes)
 * and every |k| < 2^51.
 */
/*
 * A PATCHED group's high bits added to the block of eight fields from `first` (a: the first four, b: the
 * rest): the patches from *next on that fall in it (indexes increasing), each in registers, its lane picked
 * by a mask (a patch array in memory read back as vectors would wait on the scalar stores).
 */
__attribute__((target("avx2"), always_inline)) static inline void patch_lanes(__m256i *a, __m256i *b, size_t first,
                                                                              const tsc_codec2_patches *patches,
                                                                              size_t *next)
{
    static const int64_t lane_mask[8][4] = {{-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1},
                                            {-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1}};
    while (*next < patches->count && patches->at[*next] < first + 8) {
        size_t lane = patches->at[*next] - first;
        __m256i mask, add = _mm256_set1_epi64x((int64_t)patches->add[*next]);
        memcpy(&mask, lane_mask[lane], sizeof mask);
        add = _mm256_and_si256(add, mask);
        if (lane < 4) *a = _mm256_add_epi64(*a, add);
        else *b = _mm256_add_epi64(*b, add);
        ++*next;
    }
}

__attribute__((target("avx2,fma"), always_inline)) static inline void
unpack_decimals_lanes(const uint8_t *src, size_t avail, size_t n, unsigned width, const int delta, uint64_t start,
                      uint64_t add, unsigned e, const int as_float, const tsc_codec2_patches *patches, uint64_t *bits)
{
    size_t next = 0;
    const decimal_consts c = decimal_consts_of(e, as_float);
    const shuffle_plan p = shuffle_plan_of(width);
    /* k is carried as k + TSC2_MAGIC_BITS (mod 2^64): the conversion's bias comes for free. */
    const __m256i adds = _mm256_set1_epi64x((int64_t)(add + (delta ? 0 : (uint64_t)TSC2_MAGIC_BITS)));
    __m256i last = _mm256_set1_epi64x((int64_t)(start + (uint64_t)TSC2_MAGIC_BITS)), a, b;
    size_t blocks = safe_blocks(n, avail, width, p.second), i = 8 * blocks, at = width * blocks;
    const uint8_t *in = src;
    for (uint64_t *o = bits; blocks; blocks--, in += width, o += 8) { /* one counter: a short loop's control costs */
        unpack_eight(&p, in, &a, &b);
        if (patches) patch_lanes(&a, &b, (size_t)(o - bits), patches, &next); /* PATCHED (NULL: none) */
        __m256i k_a, k_b;
        if (delta) { /* the eight lanes' own sums first: the running sum's chain is one carry-in for eight */
            __m256i own_a = prefix_lanes(a, adds), own_b = prefix_lanes(b, adds), carry = top_lane(last);
            own_b = _mm256_add_epi64(own_b, top_lane(own_a));
            k_a = _mm256_add_epi64(own_a, carry);
            k_b = last = _mm256_add_epi64(own_b, carry);
        } else {
            k_a = _mm256_add_epi64(a, adds);
            k_b = _mm256_add_epi64(b, adds);
        }
        __m256d v = biased_decimal_lanes(k_a, &c, as_float);
        memcpy(o, &v, sizeof v);
        v = biased_decimal_lanes(k_b, &c, as_float);
        memcpy(o + 4, &v, sizeof v);
    }
    for (; i < n; i += 8, at += width) {
        __m256i store_a, store_b;
        tail_masks(n - i, &store_a, &store_b);
        unpack_eight_near_end(&p, src, avail, at, &a, &b);
        if (patches) patch_lanes(&a, &b, i, patches, &next);
        last = biased_k_lanes(a, delta, adds, last);
        _mm256_maskstore_pd((double *)(void *)(bits + i), store_a, biased_decimal_lanes(last, &c, as_float));
        last = biased_k_lanes(b, delta, adds, last);
        _mm256_maskstore_pd((double *)(void *)(bits + i + 4), store_b, biased_decimal_lanes(last, &c, as_float));
    }
}

__attribute__((target("avx2,fma"))) static void unpack_decimal_sums_avx2(const uint8_t *src, size_t avail, size_t n,
                                                                          unsigned width, uint64_t start, uint64_t step,
                                                                          unsigned e, int as_float, uint64_t *bits)
{
    if (as_float) unpack_decimals_lanes(src, avail, n, width, 1, start, step, e, LANES_FLOATS, NULL, bits);
    else if (e == 0) unpack_decimals_lanes(src, avail, n, width, 1, start, step, e, LANES_INTEGERS, NULL, bits);
    else unpack_decimals_lanes(src, avail, n, width, 1, start, step, e, LANES_DOUBLES, NULL, bits);
}

__attribute__((target("avx2,fma"))) static void unpack_decimals_avx2(const uint8_t *src, size_t avail, size_t n,
                                                                      unsigned width, uint64_t base, unsigned e,
                                                                      int as_float, uint64_t *bits)
{
    if (as_float) unpack_decimals_lanes(src, avail, n, width, 0, base, base, e, LANES_FLOATS, NULL, bits);
    else if (e == 0) unpack_decimals_lanes(src, avail, n, width, 0, base, base, e, LANES_INTEGERS, NULL, bits);
    else unpack_decimals_lanes(src, avail, n, width, 0, base, base, e, LANES_DOUBLES, NULL, bits);
}

/* PATCHED groups, both packings: the lanes above with the patches' high bits added in place. */
__attribute__((target("avx2,fma"))) static void patched_decimals_avx2(const uint8_t *src, size_t avail, size_t n,
                                                                       unsigned width, int delta, uint64_t start,
                                                                       uint64_t add, unsigned e, int as_float,
                                                                       const tsc_codec2_patches *patches,
                                                                       uint64_t *bits)
{
    if (delta && as_float) unpack_decimals_lanes(src, avail, n, width, 1, start, add, e, LANES_FLOATS, patches, bits);
    else if (delta) unpack_decimals_lanes(src, avail, n, width, 1, start, add, e, LANES_DOUBLES, patches, bits);
    else if (as_float) unpack_decimals_lanes(src, avail, n, width, 0, start, start, e, LANES_FLOATS, patches, bits);
    else unpack_decimals_lanes(src, avail, n, width, 0, start, start, e, LANES_DOUBLES, patches, bits);
}
#endif

/* Both decimal dispatchers: delta and start/add as tsc_codec2_decimals_avx512 takes them. */
static int decimals_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width, int delta,
                         uint64_t start, uint64_t add, unsigned e, int as_float, uint64_t *bits)
{
#ifdef TSC_HAVE_AVX2
    if (width > SHUFFLE_MAX_WIDTH || n > TSC2_GROUP) return 0;
    src = fields_at(src, &avail, width);
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_decimals_avx512(src, avail, n, width, delta, start, add, e, as_float, bits);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_fma_here()) {
        if (delta) unpack_decimal_sums_avx2(src, avail, n, width, start, add, e, as_float, bits);
        else unpack_decimals_avx2(src, avail, n, width, start, e, as_float, bits);
        return 1;
    }
#endif
    (void)isa, (void)src, (void)avail, (void)n, (void)width, (void)delta, (void)start, (void)add, (void)e;
    (void)as_float, (void)bits;
    return 0;
}

/* PATCHED decimal fields (0.20.0): as decimals_simd, with the patches' high bits added to their fields first. */
int tsc_codec2_unpack_patched_decimals_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                            int delta, uint64_t start, uint64_t add, unsigned e, int as_float,
                                            const tsc_codec2_patches *patches, uint64_t *bits)
{
#ifdef TSC_HAVE_AVX2
    if (width > SHUFFLE_MAX_WIDTH || n > TSC2_GROUP) return 0;
    src = fields_at(src, &avail, width);
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here()) {
        tsc_codec2_patched_decimals_avx512(src, avail, n, width, delta, start, add, e, as_float, patches, bits);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_fma_here()) {
        patched_decimals_avx2(src, avail, n, width, delta, start, add, e, as_float, patches, bits);
        return 1;
    }
    return 0;
#else
    (void)isa, (void)src, (void)avail, (void)n, (void)width, (void)delta, (void)start, (void)add, (void)e;
    (void)as_float, (void)patches, (void)bits;
    return 0;
#endif
}

void tsc_codec2_patched_ks(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta, uint64_t start,
                           uint64_t add, const tsc_codec2_patches *patches, uint64_t *ks)
{
    uint64_t k = start;
    tsc_codec2_unpack(src, avail, ks, n, width);
    for (size_t p = 0; p < patches->count; p++) ks[patches->at[p]] += patches->add[p];
    for (size_t i = 0; i < n; i++) {
        k = delta ? k + add + ks[i] : start + ks[i];
        ks[i] = k;
    }
}

/* Its scalar twin: the k in passes, every value through the exact division. */
void tsc_codec2_unpack_patched_decimals_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, int delta,
                                               uint64_t start, uint64_t add, unsigned e, int as_float,
                                               const tsc_codec2_patches *patches, uint64_t *bits)
{
    uint64_t ks[TSC2_GROUP];
    tsc_codec2_patched_ks(src, avail, n, width, delta, start, add, patches, ks);
    tsc_codec2_decimals_to_bits_scalar(0, ks, n, e, as_float, bits);
}

int tsc_codec2_unpack_decimal_sums_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                        uint64_t start, uint64_t step, unsigned e, int as_float, uint64_t *bits)
{
    return decimals_simd(isa, src, avail, n, width, 1, start, step, e, as_float, bits);
}

#ifdef TSC_HAVE_AVX2
/* Four timestamps: on the grid (a constant the compiler folds) or the running sum after last. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
timestamp_lanes(__m256i fields, const int grid, __m256i *base, __m256i step4, __m256i adds, __m256i last)
{
    if (!grid) return sum_lanes(fields, adds, last);
    __m256i now = _mm256_add_epi64(*base, fields);
    *base = _mm256_add_epi64(*base, step4);
    return now;
}

/*
 * A timestamp block from its packed fields to timestamps in one pass, as
 * unpack_decimal_sums does for values, the order check included (only on the
 * lanes below n in the last block) unless check is 0. Widths 1..30.
 */
__attribute__((target("avx2"), always_inline)) static inline int
unpack_timestamps_lanes(const uint8_t *src, size_t avail, size_t n, unsigned width, const int grid, const int check,
                        uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out)
{
    const shuffle_plan p = shuffle_plan_of(width);
    const __m256i adds = _mm256_set1_epi64x((int64_t)add), step4 = _mm256_set1_epi64x((int64_t)(4 * add));
    __m256i base = _mm256_set_epi64x((int64_t)(start + 4 * add), (int64_t)(start + 3 * add),
                                     (int64_t)(start + 2 * add), (int64_t)(start + add));
    __m256i back = _mm256_setzero_si256(), last = _mm256_set1_epi64x((int64_t)(grid ? prev0 : start)), a, b, now;
    size_t blocks = safe_blocks(n, avail, width, p.second), i = 8 * blocks, at = width * blocks;
    const uint8_t *in = src;
    for (uint64_t *o = out; blocks; blocks--, in += width, o += 8) {
        unpack_eight(&p, in, &a, &b);
        now = timestamp_lanes(a, grid, &base, step4, adds, last);
        if (check) back = _mm256_or_si256(back, _mm256_cmpgt_epi64(lanes_before(now, last), now));
        memcpy(o, &now, sizeof now);
        last = now;
        now = timestamp_lanes(b, grid, &base, step4, adds, last);
        if (check) back = _mm256_or_si256(back, _mm256_cmpgt_epi64(lanes_before(now, last), now));
        memcpy(o + 4, &now, sizeof now);
        last = now;
    }
    for (; i < n; i += 8, at += width) {
        __m256i store_a, store_b;
        tail_masks(n - i, &store_a, &store_b);
        unpack_eight_near_end(&p, src, avail, at, &a, &b);
        now = timestamp_lanes(a, grid, &base, step4, adds, last);
        __m256i went_back = _mm256_cmpgt_epi64(lanes_before(now, last), now);
        if (check) back = _mm256_or_si256(back, _mm256_and_si256(went_back, store_a));
        _mm256_maskstore_epi64((long long *)(void *)(out + i), store_a, now);
        last = now;
        now = timestamp_lanes(b, grid, &base, step4, adds, last);
        went_back = _mm256_cmpgt_epi64(lanes_before(now, last), now);
        if (check) back = _mm256_or_si256(back, _mm256_and_si256(went_back, store_b));
        _mm256_maskstore_epi64((long long *)(void *)(out + i + 4), store_b, now);
        last = now;
    }
    return !_mm256_testz_si256(back, back);
}

__attribute__((target("avx2"))) static int unpack_grid_avx2(const uint8_t *src, size_t avail, size_t n,
                                                             unsigned width, uint64_t prev0, uint64_t start,
                                                             uint64_t add, int check, uint64_t *out)
{
    return check ? unpack_timestamps_lanes(src, avail, n, width, 1, 1, prev0, start, add, out)
                 : unpack_timestamps_lanes(src, avail, n, width, 1, 0, prev0, start, add, out);
}

__attribute__((target("avx2"))) static int unpack_sums_avx2(const uint8_t *src, size_t avail, size_t n,
                                                             unsigned width, uint64_t start, uint64_t add,
                                                             int check, uint64_t *out)
{
    return check ? unpack_timestamps_lanes(src, avail, n, width, 0, 1, start, start, add, out)
                 : unpack_timestamps_lanes(src, avail, n, width, 0, 0, start, start, add, out);
}
#endif

#ifdef TSC_HAVE_AVX2
/*
 * Whether a block's timestamps cannot go back but where they cross INT64_MAX:
 * every step of the sum is add + field >= 0; every step of the grid after the
 * first is add + field - previous field > 0 when add >= 2^width. The 128 steps
 * at most, each under 2^54 + 2^30, add up to less than 2^62, so they cross
 * INT64_MAX at most once, and the ends show it: no lane needs its order check.
 */
static int rises_by_construction(unsigned width, int grid, uint64_t add)
{
    return add < (UINT64_C(1) << 54) && (!grid || add >= (UINT64_C(1) << width));
}
#endif

int tsc_codec2_unpack_timestamps_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                      int grid, uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out, int *back)
{
#ifdef TSC_HAVE_AVX2
    if (width > SHUFFLE_MAX_WIDTH || n > TSC2_GROUP) return 0;
    src = fields_at(src, &avail, width);
    int check = !rises_by_construction(width, grid, add);
    if (isa != TSC_SIMD_AVX2 && tsc_avx512_here())
        *back = tsc_codec2_timestamps_avx512(src, avail, n, width, grid, check, prev0, start, add, out);
    else if (isa != TSC_SIMD_AVX512 && avx2_here())
        *back = grid ? unpack_grid_avx2(src, avail, n, width, prev0, start, add, check, out)
                     : unpack_sums_avx2(src, avail, n, width, start, add, check, out);
    else
        return 0;
    if (!check && n) *back = (int64_t)out[0] < (int64_t)(grid ? prev0 : start) || (int64_t)out[n - 1] < (int64_t)out[0];
    return 1;
#else
    (void)isa, (void)src, (void)avail, (void)n, (void)width, (void)grid, (void)prev0, (void)start, (void)add;
    (void)out, (void)back;
    return 0;
#endif
}

int tsc_codec2_unpack_timestamps_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, int grid,
                                        uint64_t prev0, uint64_t start, uint64_t add, uint64_t *out)
{
    uint64_t fields[TSC2_GROUP];
    tsc_codec2_unpack(src, avail, fields, n, width);
    return grid ? tsc_codec2_grid_scalar(prev0, start, add, fields, n, out)
                : tsc_codec2_running_sum_scalar(start, add, fields, n, out);
}

int tsc_codec2_unpack_decimals_simd(unsigned isa, const uint8_t *src, size_t avail, size_t n, unsigned width,
                                    uint64_t base, unsigned e, int as_float, uint64_t *bits)
{
    return decimals_simd(isa, src, avail, n, width, 0, base, base, e, as_float, bits);
}

void tsc_codec2_unpack_decimals_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, uint64_t base,
                                       unsigned e, int as_float, uint64_t *bits)
{
    uint64_t fields[TSC2_GROUP];
    tsc_codec2_unpack(src, avail, fields, n, width);
    tsc_codec2_decimals_to_bits_scalar(base, fields, n, e, as_float, bits);
}

void tsc_codec2_unpack_decimal_sums_scalar(const uint8_t *src, size_t avail, size_t n, unsigned width, uint64_t start,
                                           uint64_t step, unsigned e, int as_float, uint64_t *bits)
{
    uint64_t fields[TSC2_GROUP];
    tsc_codec2_unpack(src, avail, fields, n, width);
    tsc_codec2_decimal_sums_to_bits_scalar(start, step, fields, n, e, as_float, bits);
}

int tsc_codec2_unpack_run_simd(unsigned isa, const uint8_t *src, size_t avail, uint64_t *fields, size_t n,
                               unsigned width)
{
#ifdef TSC_HAVE_AVX2
    if (isa != TSC_SIMD_AVX2 && width > SHUFFLE_MAX_WIDTH && width <= 57 && tsc_avx512_here()) { /* SPLIT's rights */
        size_t i = tsc_codec2_unpack_long_avx512(src, fields, n, width), skip = i * width / 8;
        tsc_codec2_unpack_run_scalar(src + skip, avail - skip, fields + i, n - i, width);
        return 1;
    }
    if (isa != TSC_SIMD_AVX512 && avx2_here()) {
        unpack_run_avx2(src, avail, fields, n, width);
        return 1;
    }
#endif
    (void)isa, (void)src, (void)avail, (void)fields, (void)n, (void)width;
    return 0;
}

void tsc_codec2_unpack_run(const uint8_t *src, size_t avail, uint64_t *fields, size_t n, unsigned width)
{
    if (!tsc_codec2_unpack_run_simd(TSC_SIMD_BEST, src, avail, fields, n, width))
        tsc_codec2_unpack_run_scalar(src, avail, fields, n, width);
}
