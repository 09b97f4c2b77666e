/*
 * The portable-format validator against CRoaring itself: every blob roaring
 * writes is accepted with the right cardinality, maximum and length; every
 * truncation is refused; and a bit-flipped blob is accepted only when roaring
 * reads it back as a bitmap of the validated cardinality that survives its own
 * serialization. And the blobs tschunk writes and reads itself (bitmap.c)
 * against roaring's: the same bytes, the same values.
 */
#include <roaring/roaring.h>

#include "test_util.h"
#include "segment/bitmap.h"
#include "segment/roaring_check.h"

static uint64_t rng_state = 42;

static uint32_t rng32(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Arrays, bitsets and (after run_optimize) runs, over a few 64 Ki blocks. */
static roaring_bitmap_t *random_bitmap(int shape)
{
    roaring_bitmap_t *r = roaring_bitmap_create();
    uint32_t blocks = 1 + rng32() % 5;
    for (uint32_t b = 0; b < blocks; b++) {
        uint32_t base = (rng32() % 64) << 16;
        switch ((shape + (int)b) % 3) {
        case 0: for (int i = 0; i < 50; i++) roaring_bitmap_add(r, base | (rng32() & 0xffff)); break;
        case 1: for (int i = 0; i < 6000; i++) roaring_bitmap_add(r, base | (rng32() & 0xffff)); break;
        default: roaring_bitmap_add_range_closed(r, base + rng32() % 1000, base + 1000 + rng32() % 30000); break;
        }
    }
    if (shape & 1) roaring_bitmap_run_optimize(r);
    return r;
}

static size_t serialize(const roaring_bitmap_t *r, char **out)
{
    size_t size = roaring_bitmap_portable_size_in_bytes(r);
    *out = malloc(size);
    cr_assert_not_null(*out);
    cr_assert_eq(roaring_bitmap_portable_serialize(r, *out), size);
    return size;
}

Test(roaring, accepts_what_roaring_writes)
{
    for (int shape = 0; shape < 40; shape++) {
        roaring_bitmap_t *r = shape == 0 ? roaring_bitmap_create() : random_bitmap(shape);
        char *blob;
        size_t size = serialize(r, &blob);
        tsc_roaring_summary sum;
        cr_assert_eq(tsc_roaring_check(blob, size, &sum), 0, "shape %d", shape);
        cr_assert_eq(sum.bytes, size);
        cr_assert_eq(sum.cardinality, roaring_bitmap_get_cardinality(r));
        cr_assert_eq(sum.max_value, shape == 0 ? 0 : roaring_bitmap_maximum(r));
        for (size_t cut = 0; cut < size; cut++)
            cr_assert(tschunk_is_error(tsc_roaring_check(blob, cut, NULL)), "shape %d cut %zu", shape, cut);
        free(blob);
        roaring_bitmap_free(r);
    }
}

/* What the validator accepts, roaring must hold as a sound bitmap. */
static void assert_sound(const char *blob, size_t size, const tsc_roaring_summary *sum)
{
    roaring_bitmap_t *r = roaring_bitmap_portable_deserialize_safe(blob, size);
    cr_assert_not_null(r);
    cr_assert_eq(roaring_bitmap_get_cardinality(r), sum->cardinality);
    char *again;
    size_t again_size = serialize(r, &again);
    /* Roaring's canonical form (no-run cookie when no run is left) may differ from the input. */
    roaring_bitmap_t *r2 = roaring_bitmap_portable_deserialize_safe(again, again_size);
    cr_assert(r2 && roaring_bitmap_equals(r, r2));
    tsc_roaring_summary again_sum;
    cr_assert_eq(tsc_roaring_check(again, again_size, &again_sum), 0);
    cr_assert_eq(again_sum.cardinality, sum->cardinality);
    roaring_bitmap_free(r2);
    free(again);
    roaring_bitmap_free(r);
}

Test(roaring, bit_flips_are_refused_or_sound)
{
    size_t accepted = 0, refused = 0;
    for (int shape = 1; shape < 9; shape++) {
        roaring_bitmap_t *r = random_bitmap(shape);
        /* Keep the blobs small enough to flip every bit of the first 2 KiB. */
        char *blob;
        size_t size = serialize(r, &blob);
        size_t limit = size < 2048 ? size : 2048;
        for (size_t bit = 0; bit < 8 * limit; bit++) {
            blob[bit / 8] = (char)(blob[bit / 8] ^ (1 << (bit % 8)));
            tsc_roaring_summary sum;
            if (tsc_roaring_check(blob, size, &sum) == 0) {
                assert_sound(blob, size, &sum);
                accepted++;
            } else {
                refused++;
            }
            blob[bit / 8] = (char)(blob[bit / 8] ^ (1 << (bit % 8)));
        }
        free(blob);
        roaring_bitmap_free(r);
    }
    cr_assert_gt(refused, 0);
    cr_assert_gt(accepted, 0); /* flipped array values that stay sorted are sound bitmaps */
}

Test(roaring, crafted_blobs_are_refused)
{
    /* No-run cookie, one array container with key 0, cardinality 2. */
    uint8_t ok[] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 16, 0, 0, 0, 5, 0, 9, 0};
    cr_assert_eq(tsc_roaring_check(ok, sizeof ok, NULL), 0);
    uint8_t b[sizeof ok];
#define REFUSED_WITH(byte, value, code)                                                             \
    do {                                                                                            \
        memcpy(b, ok, sizeof ok);                                                                   \
        b[byte] = (value);                                                                          \
        cr_assert_eq(tsc_roaring_check(b, sizeof b, NULL), TSC_ERROR(code), "byte %d", (int)(byte)); \
    } while (0)
    REFUSED_WITH(0, 0x3b, TRUNCATED);     /* the run cookie: the bytes now declare a 256-run container */
    REFUSED_WITH(1, 0x31, BAD_MAGIC);     /* not a cookie */
    REFUSED_WITH(6, 1, CORRUPT);          /* 65,537 containers */
    REFUSED_WITH(10, 2, TRUNCATED);       /* cardinality 3: the array runs past the end */
    REFUSED_WITH(12, 17, CORRUPT);        /* offset not where the container is */
    REFUSED_WITH(18, 5, CORRUPT);         /* values not strictly increasing */
    /* Cardinality 1: a valid 18-byte blob followed by other data. */
    memcpy(b, ok, sizeof ok);
    b[10] = 0;
    tsc_roaring_summary sum;
    cr_assert_eq(tsc_roaring_check(b, sizeof b, &sum), 0);
    cr_assert_eq(sum.bytes, 18);
    cr_assert_eq(sum.cardinality, 1);
    cr_assert_eq(sum.max_value, 5);
    /* Two containers with keys out of order. */
    uint8_t keys[] = {0x3a, 0x30, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 24, 0, 0, 0, 26, 0, 0, 0, 1, 0, 2, 0};
    cr_assert_eq(tsc_roaring_check(keys, sizeof keys, NULL), TSC_ERROR(CORRUPT));
    keys[8] = 3;
    keys[12] = 5;
    cr_assert_eq(tsc_roaring_check(keys, sizeof keys, NULL), 0);
    /* Run cookie, one run container (no offsets below 4 containers): runs must not overlap. */
    uint8_t runs[] = {0x3b, 0x30, 0, 0, 1, 0, 0, 4, 0, 2, 0, 10, 0, 2, 0, 12, 0, 1, 0};
    cr_assert_eq(tsc_roaring_check(runs, sizeof runs, NULL), TSC_ERROR(CORRUPT)); /* 10..12 then 12..13 */
    runs[15] = 13;
    cr_assert_eq(tsc_roaring_check(runs, sizeof runs, NULL), 0);
    runs[7] = 5; /* declared cardinality 6 against 5 real values */
    cr_assert_eq(tsc_roaring_check(runs, sizeof runs, NULL), TSC_ERROR(CORRUPT));
    runs[7] = 4;
    runs[15] = 0xff;
    runs[16] = 0xff; /* a run past 65535 */
    cr_assert_eq(tsc_roaring_check(runs, sizeof runs, NULL), TSC_ERROR(CORRUPT));
#undef REFUSED_WITH
}

/* Sorted distinct values in several containers, in the shapes that decide a container's form: sparse, dense
 * (past 4,096), ranges (across container edges too), every other value (as many runs as values / 2: the tie
 * between run and array), and counts around 4,096. @return how many. */
static size_t random_values(uint32_t *v, size_t cap, int shape)
{
    roaring_bitmap_t *r = roaring_bitmap_create();
    uint32_t blocks = 1 + rng32() % 4;
    for (uint32_t b = 0; b < blocks; b++) {
        uint32_t base = (rng32() % 8) << 16, start = rng32() & 0xffff, len = 1 + rng32() % 3000;
        switch ((shape + (int)b) % 6) {
        case 0: for (int i = 0; i < 50; i++) roaring_bitmap_add(r, base | (rng32() & 0xffff)); break;
        case 1: for (int i = 0; i < 6000; i++) roaring_bitmap_add(r, base | (rng32() & 0xffff)); break;
        case 2: roaring_bitmap_add_range_closed(r, base + start, base + start + 2 * len); break; /* may cross */
        case 3: for (uint32_t i = 0; i < len; i++) roaring_bitmap_add(r, base + start + 2 * i); break;
        case 4: /* pairs: runs of two, 4n == 2c */
            for (uint32_t i = 0; i < len; i++) roaring_bitmap_add_range_closed(r, base + 3 * i, base + 3 * i + 1);
            break;
        default: for (uint32_t i = 0; i < 4090 + rng32() % 12; i++) roaring_bitmap_add(r, base + 16 * i); break;
        }
    }
    size_t n = roaring_bitmap_get_cardinality(r);
    cr_assert(n <= cap);
    roaring_bitmap_to_uint32_array(r, v);
    roaring_bitmap_free(r);
    return n;
}

static size_t runs_of(const uint32_t *v, size_t n, tsc_run *runs)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[i] == runs[k - 1].last + 1) runs[k - 1].last = v[i];
        else runs[k++] = (tsc_run){v[i], v[i]};
    }
    return k;
}

/* tschunk's blobs (series bitmaps, tombstones): CRoaring's bytes for the values added one by one, then
 * run_optimize. */
Test(roaring, writes_what_roaring_writes)
{
    static uint32_t v[1 << 18];
    static tsc_run runs[1 << 18];
    static uint8_t ours[1 << 20];
    for (int shape = 0; shape < 300; shape++) {
        size_t n = shape ? random_values(v, sizeof v / sizeof *v, shape) : 0;
        roaring_bitmap_t *r = roaring_bitmap_create();
        for (size_t i = 0; i < n; i++) roaring_bitmap_add(r, v[i]);
        roaring_bitmap_run_optimize(r);
        char *theirs;
        size_t size = serialize(r, &theirs);
        size_t k = runs_of(v, n, runs);
        cr_assert_eq(tsc_bitmap_size(runs, k), size, "shape %d", shape);
        cr_assert_eq(tsc_bitmap_write(ours, runs, k), size, "shape %d", shape);
        cr_assert(memcmp(ours, theirs, size) == 0, "shape %d", shape);
        roaring_bitmap_t *back = roaring_bitmap_portable_deserialize_safe((const char *)ours, size);
        cr_assert(back && roaring_bitmap_equals(back, r), "shape %d", shape);
        roaring_bitmap_free(back);
        free(theirs);
        roaring_bitmap_free(r);
    }
}

/* Every blob roaring writes (arrays, bitsets and runs, optimized or not) read back as its values, run by run. */
Test(roaring, reads_what_roaring_writes)
{
    static uint32_t want[1 << 18];
    for (int shape = 0; shape < 300; shape++) {
        roaring_bitmap_t *r = shape == 0 ? roaring_bitmap_create() : random_bitmap(shape);
        if (shape >= 40) { /* the writer's shapes, optimized or not */
            roaring_bitmap_free(r);
            r = roaring_bitmap_create();
            size_t n = random_values(want, sizeof want / sizeof *want, shape);
            roaring_bitmap_add_many(r, n, want);
            if (shape & 1) roaring_bitmap_run_optimize(r);
        }
        char *blob;
        serialize(r, &blob);
        size_t n = roaring_bitmap_get_cardinality(r), got = 0;
        cr_assert(n <= sizeof want / sizeof *want);
        roaring_bitmap_to_uint32_array(r, want);
        tsc_bitmap_iter it;
        tsc_bitmap_iter_init(&it, (const uint8_t *)blob);
        tsc_run run;
        int64_t prev_last = -1;
        while (tsc_bitmap_next_run(&it, &run)) {
            cr_assert(run.first <= run.last && (int64_t)run.first > prev_last, "shape %d: runs out of order", shape);
            prev_last = run.last;
            for (uint64_t x = run.first; x <= run.last; x++, got++)
                cr_assert(got < n && want[got] == x, "shape %d: value %zu", shape, got);
        }
        cr_assert_eq(got, n, "shape %d", shape);
        cr_assert_eq(tsc_bitmap_next_run(&it, &run), 0, "shape %d: the end stays the end", shape);
        free(blob);
        roaring_bitmap_free(r);
    }
}
