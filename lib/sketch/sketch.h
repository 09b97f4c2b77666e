/* Internal: DDSketch mapping, stores and sketch layout shared by the sketch files. */
#ifndef TSCHUNK_SKETCH_INTERNAL_H
#define TSCHUNK_SKETCH_INTERNAL_H

#include <math.h>

#include "../common/common.h"

/* Exact zero test, +0.0 or -0.0 (-Wfloat-equal forbids ==; fpclassify costs ~10 instructions):
 * every bit but the sign is zero. */
TSC_INLINE int tsc_is_zero(double v) { return (tsc_bits_of(v) << 1) == 0; }

/* index(v) = trunc_floor(L(v) * multiplier + norm_offset); value(i) = L^-1((i - norm_offset) / multiplier) (1 + ra). */
typedef struct {
    tschunk_mapping_kind kind;
    double gamma, index_offset;     /* as constructed or decoded: what the mapping block carries */
    double multiplier, norm_offset;
    double relative_accuracy;
    double min_indexable, max_indexable;
} tsc_mapping;

size_t tsc_mapping_from_accuracy(tsc_mapping *m, tschunk_mapping_kind kind, double relative_accuracy);
size_t tsc_mapping_from_gamma(tsc_mapping *m, tschunk_mapping_kind kind, double gamma, double index_offset);
int32_t tsc_mapping_index(const tsc_mapping *m, double value);
double tsc_mapping_value(const tsc_mapping *m, int32_t index);
int tsc_mapping_equal(const tsc_mapping *a, const tsc_mapping *b);

/* Dense window of max_bins counts; bins outside [min_index, max_index] are zero. */
typedef struct {
    double *counts;
    int64_t offset;            /* index of counts[0] */
    int64_t min_index, max_index; /* non-empty range; min > max when empty */
} tsc_store;

struct tschunk_sketch {
    tsc_mapping mapping;
    tsc_store pos, neg;
    double zero_count;
    double count, sum, sum_compensation, min, max;
    uint32_t exact;
    uint32_t max_bins;
    uint32_t collapse_highest;
    tschunk_allocator allocator;
};

void tsc_store_add(tschunk_sketch *s, tsc_store *st, int64_t index, double count);
/* Quantile without the clamp to the exact [min, max] (sketches-java's plain DDSketch). */
size_t tsc_sketch_quantile_unclamped(const tschunk_sketch *s, double q, double *value);
/* Add to the exact statistics: count, Kahan-compensated sum, min, max. */
void tsc_sketch_accept_stats(tschunk_sketch *s, double value, double weight);

#endif
