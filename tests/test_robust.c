/* Untrusted bytes: truncations, bit flips, hostile headers. Run under ASan by make asan. */
#include "test_util.h"

/* Decode everything every API offers; must end in an error or in samples, never crash. */
static size_t decode_all(const unsigned char *buf, size_t size)
{
    tschunk_chunk_info info;
    size_t r = tschunk_chunk_info_get(buf, size, &info);
    if (tschunk_is_error(r)) {
        cr_assert_eq(tschunk_validate(buf, size), r);
        return r;
    }
    tschunk_iter it;
    cr_assert_eq(tschunk_iter_init(&it, buf, size), 0);
    size_t n = 0;
    int64_t ts, prev = INT64_MIN;
    double v;
    while ((r = tschunk_iter_next(&it, &ts, &v)) == 1) {
        cr_assert_geq(ts, prev, "decoded timestamps must not go backwards");
        prev = ts;
        n++;
        cr_assert_leq(n, info.count);
    }
    size_t result = tschunk_is_error(r) ? r : n;
    if (tschunk_iter_init(&it, buf, size) == 0) {
        tschunk_iter_seek(&it, prev);
        int64_t tsa[64];
        double va[64];
        while ((r = tschunk_iter_read(&it, tsa, va, 64)) > 0 && !tschunk_is_error(r)) {}
    }
    return result;
}

static unsigned char *sample_chunk(int kind, size_t n, size_t *size)
{
    wl_series s;
    wl_synthetic(&s, kind, n, 77);
    unsigned char *chunk;
    *size = encode_range(&s, 0, n, &chunk);
    wl_free(&s);
    return chunk;
}

Test(robust, every_truncation_is_an_error)
{
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        size_t size;
        unsigned char *chunk = sample_chunk(kind, 120, &size);
        for (size_t len = 0; len < size; len++) {
            unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees over-reads */
            memcpy(copy, chunk, len);
            size_t r = decode_all(copy, len);
            cr_assert(tschunk_is_error(r), "kind %d: truncated at %zu of %zu decoded cleanly", kind, len, size);
            free(copy);
        }
        free(chunk);
    }
}

Test(robust, every_bit_flip_is_an_error_or_samples, .timeout = 60)
{
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        size_t size;
        unsigned char *chunk = sample_chunk(kind, 120, &size);
        unsigned char *copy = malloc(size);
        size_t errors = 0;
        for (size_t bit = 0; bit < size * 8; bit++) {
            memcpy(copy, chunk, size);
            copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
            size_t r = decode_all(copy, size);
            errors += tschunk_is_error(r);
        }
        cr_log_info("kind %d: %zu of %zu bit flips detected as errors", kind, errors, size * 8);
        free(copy);
        free(chunk);
    }
}

Test(robust, huge_declared_count_is_refused_before_work)
{
    /* Header claims 65535 samples with 1-byte streams. */
    const unsigned char bad[] = {0xc1, 0x01, 0xff, 0xff, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x01, 0x00, 0x00};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(bad, sizeof bad)), TSCHUNK_ERROR_CORRUPT);
    /* Counts past the limit are refused whatever follows. */
    const unsigned char over[] = {0xc1, 0x01, 0x80, 0x80, 0x04};
    cr_assert_eq(tschunk_get_error_code(tschunk_validate(over, sizeof over)), TSCHUNK_ERROR_CORRUPT);
}

Test(robust, header_checks_name_the_problem)
{
    size_t size;
    unsigned char *chunk = sample_chunk(WL_GAUGE_2DP, 50, &size);
    unsigned char *copy = malloc(size);
    struct { size_t at; unsigned char val; tschunk_error_code want; } cases[] = {
        {0, 'T', TSCHUNK_ERROR_BAD_MAGIC},
        {0, 0xc2, TSCHUNK_ERROR_BAD_VERSION},
        {0, 0xc0, TSCHUNK_ERROR_BAD_VERSION},
        {1, 0x03, TSCHUNK_ERROR_BAD_CODEC},
        {1, 0x41, TSCHUNK_ERROR_RESERVED_BITS},
        {1, 0x81, TSCHUNK_ERROR_RESERVED_BITS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(copy, chunk, size);
        copy[cases[i].at] = cases[i].val;
        cr_assert_eq(tschunk_get_error_code(tschunk_validate(copy, size)), cases[i].want, "case %zu", i);
    }
    /* A set padding bit at the end of the chunk is caught when iteration ends. */
    memcpy(copy, chunk, size);
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(copy, size, &info), 0);
    copy[size - 1] |= 1;
    size_t r = decode_all(copy, size);
    cr_assert(tschunk_is_error(r) || (copy[size - 1] & 1), "flip of the last bit");
    free(copy);
    free(chunk);
}

#define REFUSED(expr)                                                                                                  \
    do {                                                                                                               \
        size_t r_ = (expr);                                                                                            \
        cr_assert(tschunk_is_error(r_) && tschunk_get_error_code(r_) == TSCHUNK_ERROR_BAD_PARAMETER, "%s: %zu", #expr, \
                  r_);                                                                                                 \
    } while (0)

/* tschunk.h's rule: every entry point but the per-value calls (appends, iterators' next, single sketch adds) refuses
 * a NULL it cannot use with BAD_PARAMETER, or does nothing when it returns nothing. Four sketch calls once
 * dereferenced it (0.29.2). */
Test(robust, null_pointers_are_refused_outside_the_per_value_calls)
{
    int64_t ts[4] = {1, 2, 3, 4};
    double v[4] = {1, 2, 3, 4};
    uint8_t buf[512];
    size_t n = 0;
    tschunk_encoder enc;
    tschunk_iter it;
    tschunk_prom_iter pit;
    REFUSED(tschunk_encoder_init(NULL, buf, sizeof buf, NULL));
    REFUSED(tschunk_encoder_init(&enc, NULL, sizeof buf, NULL));
    REFUSED(tschunk_encode(NULL, sizeof buf, ts, v, 4, NULL));
    REFUSED(tschunk_encode(buf, sizeof buf, NULL, v, 4, NULL));
    REFUSED(tschunk_encode(buf, sizeof buf, ts, NULL, 4, NULL));
    REFUSED(tschunk_append_many(NULL, ts, v, 4, &n));
    REFUSED(tschunk_encoder_finish(NULL));
    REFUSED(tschunk_encoder_restart(NULL, buf, sizeof buf));
    REFUSED(tschunk_encoder_snapshot(NULL, buf, sizeof buf));
    REFUSED(tschunk_encoder_set_summary(NULL, NULL));
    REFUSED(tschunk_encoder_write_summary(NULL, buf, sizeof buf));
    REFUSED(tschunk_decode(NULL, 10, ts, v, 4));
    REFUSED(tschunk_decode_chunks(NULL, NULL, 3, ts, v, 4));
    REFUSED(tschunk_validate(NULL, 10));
    REFUSED(tschunk_chunk_info_get(NULL, 10, NULL));
    REFUSED(tschunk_iter_init(NULL, buf, 10));
    REFUSED(tschunk_iter_init(&it, NULL, 10));
    REFUSED(tschunk_prom_encoder_init(NULL, buf, sizeof buf, NULL));
    REFUSED(tschunk_prom_encode(NULL, sizeof buf, ts, v, 4, NULL));
    REFUSED(tschunk_prom_encode(buf, sizeof buf, NULL, v, 4, NULL));
    REFUSED(tschunk_prom_encode(buf, sizeof buf, ts, NULL, 4, NULL));
    REFUSED(tschunk_prom_append_many(NULL, ts, v, 4, &n));
    REFUSED(tschunk_prom_encoder_finish(NULL));
    REFUSED(tschunk_prom_decode(NULL, 10, ts, v, 4));
    REFUSED(tschunk_prom_count(NULL, 10));
    REFUSED(tschunk_prom_decode_chunks(NULL, NULL, 3, ts, v, 4));
    REFUSED(tschunk_prom_iter_init(NULL, buf, 10));
    REFUSED(tschunk_prom_iter_init(&pit, NULL, 10));
    REFUSED(tschunk_prom_to_native(NULL, 10, buf, sizeof buf));
    REFUSED(tschunk_prom_to_native(buf, 10, NULL, sizeof buf));
    REFUSED(tschunk_native_to_prom(NULL, 10, buf, sizeof buf));
    REFUSED(tschunk_sketch_create(NULL, NULL));
    REFUSED(tschunk_sketch_create_mapping(NULL, TSCHUNK_MAPPING_CUBIC, 1.02, 0, NULL));
    REFUSED(tschunk_sketch_add_many(NULL, v, 4));
    REFUSED(tschunk_sketch_merge(NULL, NULL));
    REFUSED(tschunk_sketch_quantile(NULL, 0.5, NULL));
    REFUSED(tschunk_sketch_encode(NULL, buf, sizeof buf, 0));
    REFUSED(tschunk_sketch_decode_merge(NULL, buf, 10, NULL));
    REFUSED(tschunk_sketch_decode_new(NULL, buf, 10, NULL, NULL));
    REFUSED(tschunk_sketch_bins(NULL, 0, NULL, NULL));
    cr_assert_eq(tschunk_sketch_encode_bound(NULL), 0);
    tschunk_sketch_stats stats;
    memset(&stats, 0xff, sizeof stats);
    tschunk_sketch_get_stats(NULL, &stats);
    cr_assert_eq(stats.count, 0);
    tschunk_sketch_get_stats(NULL, NULL);
    tschunk_sketch_clear(NULL);
    tschunk_sketch_free(NULL);
    REFUSED(tschunk_summary_parse(NULL, 10, NULL));
    REFUSED(tschunk_summary_merge(NULL, NULL, 10));
    REFUSED(tschunk_range_merge(NULL, NULL, 3, 0, 10, NULL));
    REFUSED(tschunk_summary_combine(NULL, NULL, 3, buf, sizeof buf));
    tschunk_segment *seg;
    REFUSED(tschunk_segment_open(NULL, buf, 10, 0, NULL));
    REFUSED(tschunk_segment_open(&seg, NULL, 10, 0, NULL));
    REFUSED(tschunk_segment_verify(NULL, 10, NULL));
    REFUSED(tschunk_segment_writer_create(NULL, "unused.tseg", NULL));
    REFUSED(tschunk_segment_writer_add_series(NULL, 1, "a", 1));
    REFUSED(tschunk_segment_writer_add_chunk(NULL, 1, buf, 10, NULL, 0));
    REFUSED(tschunk_segment_writer_finish(NULL));
    REFUSED(tschunk_segment_delete(NULL, "unused.tseg", 0, 0, 1, NULL));
    REFUSED(tschunk_segment_compact(NULL, "unused.tseg", NULL));
    tschunk_segment_close(NULL);
    tschunk_segment_writer_abort(NULL);
}
