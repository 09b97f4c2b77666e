/*
 * Roaring portable-format validator on arbitrary bytes. Whatever it accepts is
 * handed to CRoaring, which must read it as a bitmap of the validated
 * cardinality and maximum, and whose own serialization of it must pass the
 * validator and read back as an equal bitmap.
 */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "segment/roaring_check.h"

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
    roaring_bitmap_free(r2);
    free(again);
    roaring_bitmap_free(r);
    return 0;
}
