/*
 * DDSketch index mappings, with sketches-java's formulas (README
 * "DDSketch"), so that indexes and values agree bit for bit with the
 * reference on the logarithmic mapping (cubic: within an ulp of cbrt, see
 * logInverse below).
 */
#include <float.h>
#include <math.h>

#include "sketch.h"

#ifdef TSC_HAVE_AVX2
#  include <immintrin.h>
#endif

#define SIGNIFICAND_MASK UINT64_C(0x000fffffffffffff)
#define EXPONENT_MASK UINT64_C(0x7ff0000000000000)
#define JAVA_MATH_E 2.718281828459045 /* Math.E, 0x4005bf0a8b145769 */


static double exponent_of(uint64_t b) { return (double)((int64_t)((b & EXPONENT_MASK) >> 52) - 1023); }
static double significand_plus_one(uint64_t b) { return tsc_double_of((b & SIGNIFICAND_MASK) | tsc_bits_of(1.0)); }

/* 2^exponent (1 + s). Exponents beyond the double range (hostile decoded
 * mappings) saturate to infinity or zero instead of wrapping. */
static double build_double(double exponent, double significand_plus_one)
{
    if (!(exponent <= 1023)) return exponent > 1023 ? INFINITY : NAN;
    if (!(exponent >= -1022)) return 0;
    return tsc_double_of(((uint64_t)((int64_t)exponent + 1023) << 52 & EXPONENT_MASK) |
                     (tsc_bits_of(significand_plus_one) & SIGNIFICAND_MASK));
}

/* Cubic and quartic polynomial coefficients (sketches-java). */
static const double CUBIC_A = 6.0 / 35.0, CUBIC_B = -3.0 / 5.0, CUBIC_C = 10.0 / 7.0;
static const double QUARTIC_A = -2.0 / 25.0, QUARTIC_B = 8.0 / 25.0, QUARTIC_C = -17.0 / 25.0,
                    QUARTIC_D = 36.0 / 25.0;

/* How much less than the logarithm the approximation pulls values apart. */
static double correcting_factor(tschunk_mapping_kind kind)
{
    switch (kind) {
    case TSCHUNK_MAPPING_LINEAR: return 1 / log(2);
    case TSCHUNK_MAPPING_QUADRATIC: return 3 / (4 * log(2));
    case TSCHUNK_MAPPING_CUBIC: return 1 / (CUBIC_C * log(2));
    case TSCHUNK_MAPPING_QUARTIC: return 1 / (QUARTIC_D * log(2));
    default: return 1;
    }
}

static double base_log(tschunk_mapping_kind kind) { return kind == TSCHUNK_MAPPING_LOGARITHMIC ? log(JAVA_MATH_E) : log(2); }

/* The approximate logarithm L (base e or 2). */
static double approx_log(tschunk_mapping_kind kind, double v)
{
    uint64_t b = tsc_bits_of(v);
    double e = exponent_of(b), s1 = significand_plus_one(b), s = s1 - 1;
    switch (kind) {
    case TSCHUNK_MAPPING_LOGARITHMIC: return log(v);
    case TSCHUNK_MAPPING_LINEAR: return e + s1;
    case TSCHUNK_MAPPING_QUADRATIC: return e - (s1 - 5) * (s1 - 1) * (1.0 / 3.0);
    case TSCHUNK_MAPPING_CUBIC: return ((CUBIC_A * s + CUBIC_B) * s + CUBIC_C) * s + e;
    default: return (((QUARTIC_A * s + QUARTIC_B) * s + QUARTIC_C) * s + QUARTIC_D) * s + e;
    }
}

/* Cardano's formula. glibc's cbrt can be one ulp off Java's, which at x == E
 * gives 1 + s slightly below 1 and a value 2x too large: clamp into [1, 2). */
static double cubic_inverse(double x)
{
    const double A = CUBIC_A, B = CUBIC_B, C = CUBIC_C;
    double exponent = floor(x);
    double d0 = B * B - 3 * A * C;
    double d1 = 2 * B * B * B - 9 * A * B * C - 27 * A * A * (x - exponent);
    double p = cbrt((d1 - sqrt(d1 * d1 - 4 * d0 * d0 * d0)) / 2);
    double s1 = -(B + p + d0 / p) / (3 * A) + 1;
    if (tsc_is_zero(x - exponent) || s1 < 1) s1 = 1;
    if (s1 >= 2) s1 = nextafter(2, 1);
    return build_double(exponent, s1);
}

/* Ferrari's method, as sketches-java. */
static double quartic_inverse(double x)
{
    const double A = QUARTIC_A, B = QUARTIC_B, C = QUARTIC_C, D = QUARTIC_D;
    double exponent = floor(x), e = exponent - x;
    double alpha = -(3 * B * B) / (8 * A * A) + C / A;
    double beta = (B * B * B) / (8 * A * A * A) - (B * C) / (2 * A * A) + D / A;
    double gamma = -(3 * B * B * B * B) / (256 * A * A * A * A) + (C * B * B) / (16 * A * A * A) -
                   (B * D) / (4 * A * A) + e / A;
    double p = -(alpha * alpha) / 12 - gamma;
    double q = -(alpha * alpha * alpha) / 108 + (alpha * gamma) / 3 - (beta * beta) / 8;
    double r = -q / 2 + sqrt((q * q) / 4 + (p * p * p) / 27);
    double u = cbrt(r);
    double y = -(5 * alpha) / 6 + u - p / (3 * u);
    double w = sqrt(alpha + 2 * y);
    double s = -B / (4 * A) + (w - sqrt(-(3 * alpha + 2 * y + (2 * beta) / w))) / 2;
    return build_double(exponent, tsc_is_zero(x - exponent) ? 1 : s + 1);
}

static double approx_log_inverse(tschunk_mapping_kind kind, double x)
{
    switch (kind) {
    case TSCHUNK_MAPPING_LOGARITHMIC: return exp(x);
    case TSCHUNK_MAPPING_LINEAR: {
        double exponent = floor(x - 1);
        return build_double(exponent, x - exponent);
    }
    case TSCHUNK_MAPPING_QUADRATIC: {
        double exponent = floor(x);
        return build_double(exponent, 3 - sqrt(4 - 3 * (x - exponent)));
    }
    case TSCHUNK_MAPPING_CUBIC: return cubic_inverse(x);
    default: return quartic_inverse(x);
    }
}

size_t tsc_mapping_from_gamma(tsc_mapping *m, tschunk_mapping_kind kind, double gamma, double index_offset)
{
    if ((unsigned)kind > TSCHUNK_MAPPING_QUARTIC || !(gamma > 1) || !isfinite(gamma) || !isfinite(index_offset))
        return TSC_ERROR(BAD_PARAMETER);
    memset(m, 0, sizeof(*m));
    m->kind = kind;
    m->gamma = gamma;
    m->index_offset = index_offset;
    double base = base_log(kind), cf = correcting_factor(kind);
    m->multiplier = base / log1p(gamma - 1);
    m->norm_offset = index_offset - approx_log(kind, 1.0) * m->multiplier;
    double g = kind == TSCHUNK_MAPPING_LOGARITHMIC ? gamma : pow(gamma, cf);
    m->relative_accuracy = (g - 1) / (g + 1);
    double ra = m->relative_accuracy, b = kind == TSCHUNK_MAPPING_LOGARITHMIC ? JAVA_MATH_E : 2.0;
    double l1 = approx_log(kind, 1.0);
    m->min_indexable = fmax(pow(b, ((double)INT32_MIN - m->norm_offset) / m->multiplier - l1 + 1),
                            DBL_MIN * (1 + ra) / (1 - ra));
    m->max_indexable = fmin(pow(b, ((double)INT32_MAX - m->norm_offset) / m->multiplier - l1 - 1),
                            DBL_MAX / (1 + ra));
    return 0;
}

size_t tsc_mapping_from_accuracy(tsc_mapping *m, tschunk_mapping_kind kind, double relative_accuracy)
{
    if (!(relative_accuracy > 0 && relative_accuracy < 1)) return TSC_ERROR(BAD_PARAMETER);
    double ratio = (1 + relative_accuracy) / (1 - relative_accuracy);
    double cf = correcting_factor(kind);
    double gamma = kind == TSCHUNK_MAPPING_LOGARITHMIC ? ratio : pow(ratio, 1 / cf);
    /* The linear mapping's index 0 sits at L = 1 (its L(1) is 1): Java stores that offset. */
    double offset = kind == TSCHUNK_MAPPING_LINEAR ? 1 / log1p(2 * relative_accuracy / (1 - relative_accuracy)) : 0;
    return tsc_mapping_from_gamma(m, kind, gamma, offset);
}

int32_t tsc_mapping_index(const tsc_mapping *m, double value)
{
    double x = approx_log(m->kind, value) * m->multiplier + m->norm_offset;
    /* Values within [min_indexable, max_indexable] stay inside int32; saturate anything else. */
    if (!(x < (double)INT32_MAX)) return x > 0 ? INT32_MAX : 0;
    if (!(x > (double)INT32_MIN + 1)) return INT32_MIN;
    return x >= 0 ? (int32_t)x : (int32_t)x - 1; /* not floor: an exact negative integer k gives k - 1 */
}

double tsc_mapping_value(const tsc_mapping *m, int32_t index)
{
    return approx_log_inverse(m->kind, ((double)index - m->norm_offset) / m->multiplier) * (1 + m->relative_accuracy);
}

int tsc_mapping_equal(const tsc_mapping *a, const tsc_mapping *b)
{
    return a->kind == b->kind && tsc_bits_of(a->gamma) == tsc_bits_of(b->gamma) &&
           tsc_bits_of(a->index_offset) == tsc_bits_of(b->index_offset);
}

/*
 * Cubic indices of a group of values for the summary push (lib/sketch/summary.c), with ok[i] = 1 where
 * the value's magnitude is one the mapping indexes (tsc_sketch_add_fast's test; NaN fails it); the other
 * values go the general way. The AVX2 form gives tsc_cubic_index's bits: separate multiplies and adds,
 * as the scalar C (ISO C: no contraction) and sketches-java compute them.
 */
/* The scalar twin (and the AVX2 form's tail). @return 1 when every value is positive and indexable, and
 * then range holds the least and the greatest index. */
int tsc_cubic_indices_scalar(const tsc_mapping *m, const uint64_t *bits, size_t n, int32_t *index, uint8_t *ok,
                             int32_t range[2])
{
    int all_positive = 1;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        double magnitude = fabs(tsc_double_of(bits[i]));
        ok[i] = magnitude > m->min_indexable && magnitude <= m->max_indexable;
        index[i] = ok[i] ? (int32_t)tsc_cubic_index(m, magnitude) : 0;
        all_positive &= ok[i] && bits[i] >> 63 == 0;
        if (index[i] < lo) lo = index[i];
        if (index[i] > hi) hi = index[i];
    }
    range[0] = lo;
    range[1] = hi;
    return all_positive;
}

#ifdef TSC_HAVE_AVX2
__attribute__((target("avx2"))) static int cubic_indices_avx2(const tsc_mapping *m, const uint64_t *bits, size_t n,
                                                              int32_t *index, uint8_t *ok, int32_t range[2])
{
    const __m256i magnitude_bits = _mm256_set1_epi64x(INT64_C(0x7fffffffffffffff));
    const __m256i significand = _mm256_set1_epi64x((int64_t)SIGNIFICAND_MASK), one_bits = _mm256_set1_epi64x(INT64_C(0x3ff0000000000000));
    const __m256i two52_bits = _mm256_set1_epi64x(INT64_C(0x4330000000000000));
    const __m256i even_lanes = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256d lo = _mm256_set1_pd(m->min_indexable), hi = _mm256_set1_pd(m->max_indexable);
    const __m256d multiplier = _mm256_set1_pd(m->multiplier), norm_offset = _mm256_set1_pd(m->norm_offset);
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd(), bias = _mm256_set1_pd(0x1p52 + 1023);
    const __m256d a = _mm256_set1_pd(6.0 / 35.0), b = _mm256_set1_pd(-3.0 / 5.0), c = _mm256_set1_pd(10.0 / 7.0);
    __m128i least = _mm_set1_epi32(INT32_MAX), greatest = _mm_set1_epi32(INT32_MIN);
    __m256d usable = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)); /* lanes so far positive and indexable */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i raw = _mm256_loadu_si256((const __m256i *)(const void *)(bits + i)), mb = _mm256_and_si256(raw, magnitude_bits);
        __m256d magnitude = _mm256_castsi256_pd(mb);
        __m256d in_range = _mm256_and_pd(_mm256_cmp_pd(magnitude, lo, _CMP_GT_OQ), _mm256_cmp_pd(magnitude, hi, _CMP_LE_OQ));
        usable = _mm256_and_pd(usable, _mm256_andnot_pd(_mm256_castsi256_pd(raw), in_range)); /* sign bit clear */
        /* the biased exponent as a double: 2^52 + e read from its bits, less 2^52 + 1023 (exact) */
        __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(mb, 52), two52_bits)), bias);
        __m256d s = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(mb, significand), one_bits)), one);
        __m256d x = _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(a, s), b), s), c), s), e);
        x = _mm256_add_pd(_mm256_mul_pd(x, multiplier), norm_offset);
        /* (int)x, less 1 below zero: the all-ones compare lanes narrowed to 32 bits are that -1 */
        __m128i truncated = _mm256_cvttpd_epi32(x);
        __m256i below = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(_mm256_cmp_pd(x, zero, _CMP_LT_OQ)), even_lanes);
        __m128i idx = _mm_add_epi32(truncated, _mm256_castsi256_si128(below));
        idx = _mm_and_si128(idx, _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(in_range), even_lanes)));
        _mm_storeu_si128((__m128i *)(void *)(index + i), idx);
        least = _mm_min_epi32(least, idx);
        greatest = _mm_max_epi32(greatest, idx);
        uint32_t mask = (uint32_t)_mm256_movemask_pd(in_range); /* one bit a lane, spread to one byte a lane */
        uint32_t flags = (mask & 1) | (mask & 2) << 7 | (mask & 4) << 14 | (mask & 8) << 21;
        memcpy(ok + i, &flags, 4); /* x86-64: little-endian */
    }
    int32_t lanes_lo[4], lanes_hi[4], tail[2];
    _mm_storeu_si128((__m128i *)(void *)lanes_lo, least);
    _mm_storeu_si128((__m128i *)(void *)lanes_hi, greatest);
    int all_positive = _mm256_movemask_pd(usable) == 0xf;
    all_positive &= tsc_cubic_indices_scalar(m, bits + i, n - i, index + i, ok + i, tail);
    range[0] = tail[0], range[1] = tail[1];
    for (int k = 0; k < 4; k++) {
        if (lanes_lo[k] < range[0]) range[0] = lanes_lo[k];
        if (lanes_hi[k] > range[1]) range[1] = lanes_hi[k];
    }
    return all_positive;
}
#endif

int tsc_cubic_indices(const tsc_mapping *m, const uint64_t *bits, size_t n, int32_t *index, uint8_t *ok,
                      int32_t range[2])
{
#ifdef TSC_HAVE_AVX2
    if (tsc_avx2_here()) return cubic_indices_avx2(m, bits, n, index, ok, range);
#endif
    return tsc_cubic_indices_scalar(m, bits, n, index, ok, range);
}
