/*
 * Roaring portable-format validator on arbitrary bytes. Whatever it accepts is
 * handed to CRoaring, which must read it as a bitmap of the validated
 * cardinality and maximum, and whose own serialization of it must pass the
 * validator and read back as an equal bitmap. tschunk's own reader
 * (segment/bitmap.c) must read the same values from it, and its writer must
 * write, from those values, CRoaring's bytes for them added one by one and
 * run-optimized.
 */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "segment/bitmap.h"
#include "segment/roaring_check.h"

/* Our reader's runs of data against roaring's values of r; then our writer against roaring's bytes. */
static void compare_ours(const uint8_t *data, size_t size, const roaring_bitmap_t *r, uint64_t cardinality)
{
    enum { MAX_VALUES = 1 << 20 }; /* a few run containers declare millions: compared by run only */
    tsc_bitmap_iter it;
    tsc_bitmap_iter_init(&it, data);
    roaring_uint32_iterator_t theirs;
    roaring_init_iterator(r, &theirs);
    tsc_run run, *runs = malloc((4 * size + 1) * sizeof *runs); /* a bitset's byte holds 4 runs at most */
    size_t n = 0;
    if (!runs) __builtin_trap();
    while (tsc_bitmap_next_run(&it, &run)) {
        if (!theirs.has_value || theirs.current_value != run.first) __builtin_trap();
        if (!roaring_move_uint32_iterator_equalorlarger(&theirs, run.last) || theirs.current_value != run.last)
            __builtin_trap();
        if (!roaring_bitmap_contains_range(r, run.first, (uint64_t)run.last + 1)) __builtin_trap();
        roaring_advance_uint32_iterator(&theirs);
        if (n && runs[n - 1].last + 1 == run.first) runs[n - 1].last = run.last; /* arrays: a run a value */
        else runs[n++] = run;
    }
    if (theirs.has_value) __builtin_trap();
    if (cardinality <= MAX_VALUES) {
        uint32_t *values = malloc((cardinality + 1) * sizeof *values);
        roaring_bitmap_t *added = roaring_bitmap_create();
        if (!values || !added) __builtin_trap();
        roaring_bitmap_to_uint32_array(r, values);
        roaring_bitmap_add_many(added, cardinality, values);
        roaring_bitmap_run_optimize(added);
        size_t want = roaring_bitmap_portable_size_in_bytes(added);
        char *bytes = malloc(want), *ours = malloc(want);
        if (!bytes || !ours || roaring_bitmap_portable_serialize(added, bytes) != want) __builtin_trap();
        if (tsc_bitmap_size(runs, n) != want || tsc_bitmap_write((uint8_t *)ours, runs, n) != want ||
            memcmp(ours, bytes, want))
            __builtin_trap();
        free(ours);
        free(bytes);
        roaring_bitmap_free(added);
        free(values);
    }
    free(runs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsc_roaring_summary sum;
    if (tsc_roaring_check(data, size, &sum)) return 0;
    if (sum.bytes > size) __builtin_trap();
    roaring_bitmap_t *r = roaring_bitmap_portable_deserialize_safe((const char *)data, sum.bytes);
    if (!r || roaring_bitmap_get_cardinality(r) != sum.cardinality) __builtin_trap();
    if (sum.cardinality && roaring_bitmap_maximum(r) != sum.max_value) __builtin_trap();
    size_t again_size = roaring_bitmap_portable_size_in_bytes(r);
    char *again = malloc(again_size ? again_size : 1);
    if (!again || roaring_bitmap_portable_serialize(r, again) != again_size) __builtin_trap();
    /* Roaring writes its canonical form (e.g. the no-run cookie when no container is a run), which
     * may differ from an accepted input; it must hold the same bitmap. */
    tsc_roaring_summary again_sum;
    if (tsc_roaring_check(again, again_size, &again_sum) || again_sum.bytes != again_size ||
        again_sum.cardinality != sum.cardinality || again_sum.max_value != sum.max_value)
        __builtin_trap();
    roaring_bitmap_t *r2 = roaring_bitmap_portable_deserialize_safe(again, again_size);
    if (!r2 || !roaring_bitmap_equals(r, r2)) __builtin_trap();
    compare_ours(data, sum.bytes, r, sum.cardinality);
    roaring_bitmap_free(r2);
    free(again);
    roaring_bitmap_free(r);
    return 0;
}
