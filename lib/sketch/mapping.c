/*
 * DDSketch index mappings, with sketches-java's formulas (README
 * "DDSketch"), so that indexes and values agree bit for bit with the
 * reference on the logarithmic mapping (cubic: within an ulp of cbrt, see
 * logInverse below).
 */
#include <float.h>
#include <math.h>

#include "sketch.h"

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

/*
 * pow(b, x) for b = e or 2. Far past the double range the answer is 0 or infinity whatever pow's
 * rounding (b^-1100 is below half the least subnormal, b^1100 above the largest double), and that is
 * where the index limits' exponents usually are: two pow calls fewer a sketch created or decoded.
 */
static double pow_limit(double b, double x)
{
    if (x < -1100) return 0;
    if (x > 1100) return INFINITY;
    return pow(b, x);
}

size_t tsc_mapping_compute(tsc_mapping *m, tschunk_mapping_kind kind, double gamma, double index_offset)
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
    m->min_indexable = fmax(pow_limit(b, ((double)INT32_MIN - m->norm_offset) / m->multiplier - l1 + 1),
                            DBL_MIN * (1 + ra) / (1 - ra));
    m->max_indexable = fmin(pow_limit(b, ((double)INT32_MAX - m->norm_offset) / m->multiplier - l1 - 1),
                            DBL_MAX / (1 + ra));
    return 0;
}

/*
 * The mappings of the usual accuracies, each as tsc_mapping_compute builds it from the gamma and offset
 * that tsc_mapping_gamma_for gives (generated by scripts/mapping-memo.c, checked against both by
 * tests/test_sketch.c): creating a sketch or decoding one with such a mapping skips log1p and pow,
 * about 40 ns of a 0.3 us decode.
 */
typedef struct {
    double relative_accuracy; /* as asked for */
    tsc_mapping mapping;
} memo_entry;

static const memo_entry MEMO[TSCHUNK_MAPPING_QUARTIC + 1][TSC_MEMO_ACCURACIES] = {
#include "mapping_memo.h"
};

const tsc_mapping *tsc_mapping_memo(tschunk_mapping_kind kind, size_t k, double *relative_accuracy)
{
    *relative_accuracy = MEMO[kind][k].relative_accuracy;
    return &MEMO[kind][k].mapping;
}

size_t tsc_mapping_from_gamma(tsc_mapping *m, tschunk_mapping_kind kind, double gamma, double index_offset)
{
    for (size_t k = 0; (unsigned)kind <= TSCHUNK_MAPPING_QUARTIC && k < TSC_MEMO_ACCURACIES; k++) {
        const tsc_mapping *memo = &MEMO[kind][k].mapping;
        if (tsc_bits_of(memo->gamma) == tsc_bits_of(gamma) &&
            tsc_bits_of(memo->index_offset) == tsc_bits_of(index_offset)) {
            *m = *memo;
            return 0;
        }
    }
    return tsc_mapping_compute(m, kind, gamma, index_offset);
}

void tsc_mapping_gamma_for(tschunk_mapping_kind kind, double relative_accuracy, double *gamma, double *index_offset)
{
    double ratio = (1 + relative_accuracy) / (1 - relative_accuracy);
    double cf = correcting_factor(kind);
    *gamma = kind == TSCHUNK_MAPPING_LOGARITHMIC ? ratio : pow(ratio, 1 / cf);
    /* The linear mapping's index 0 sits at L = 1 (its L(1) is 1): Java stores that offset. */
    *index_offset = kind == TSCHUNK_MAPPING_LINEAR ? 1 / log1p(2 * relative_accuracy / (1 - relative_accuracy)) : 0;
}

size_t tsc_mapping_from_accuracy(tsc_mapping *m, tschunk_mapping_kind kind, double relative_accuracy)
{
    if (!(relative_accuracy > 0 && relative_accuracy < 1)) return TSC_ERROR(BAD_PARAMETER);
    for (size_t k = 0; (unsigned)kind <= TSCHUNK_MAPPING_QUARTIC && k < TSC_MEMO_ACCURACIES; k++) {
        if (tsc_bits_of(MEMO[kind][k].relative_accuracy) == tsc_bits_of(relative_accuracy)) {
            *m = MEMO[kind][k].mapping;
            return 0;
        }
    }
    double gamma, offset;
    tsc_mapping_gamma_for(kind, relative_accuracy, &gamma, &offset);
    return tsc_mapping_compute(m, kind, gamma, offset);
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

