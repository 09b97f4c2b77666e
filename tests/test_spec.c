/*
 * README "Chunk format v1", codec 1, read by a second decoder written from the README's tables alone: one bit at a
 * time, no table, nothing shared with lib/. It must read the golden chunks to their samples, read every chunk the
 * library writes as the library reads it, and accept exactly the damaged chunks the library accepts, with the same
 * samples: what the README says and what the library does are the same format.
 */
#include "spec_util.h"

/* The library and this decoder on the same bytes (spec_util.h). */
static int spec_agrees(const uint8_t *chunk, size_t size, const char *what, size_t at)
{
    return spec_agrees_with(spec_decode, chunk, size, what, at);
}

static const char *const golden[] = {"empty", "single_stale_marker", "readme_example", "dod_buckets",
                                     "special_values", "constant_int64_max", "gauge_2dp_120", "counter_120",
                                     "window_reset"};

Test(spec, the_readme_decoder_reads_the_golden_chunks)
{
    for (size_t g = 0; g < sizeof golden / sizeof golden[0]; g++)
        cr_assert(spec_reads_golden(spec_decode, "chunk", golden[g], "chunk "), "%s: no chunk line", golden[g]);
}

/* Chunks of every synthetic shape and of a mix of special values, time jumps and repeats, 1 to 4,096 samples. */
Test(spec, the_readme_decoder_reads_what_the_library_writes, .timeout = 60)
{
    size_t chunks = spec_synthetic_agrees(spec_decode, TSCHUNK_CODEC_GORILLA, 7, 200);
    uint64_t rng = 20261203;
    wl_series mix;
    wl_alloc(&mix, 30000, "mix");
    int64_t t = INT64_MIN + 5;
    for (size_t i = 0; i < mix.n; i++) {
        uint64_t r = wl_rng(&rng);
        t += (int64_t)(r % 11 == 0 ? wl_rng(&rng) % 1000000000 : r % 11 == 1 ? 0 : r % 40);
        mix.ts[i] = t;
        mix.bits[i] = r % 5 == 0 ? wl_rng(&rng) : r % 5 == 1 ? 0x7ff0000000000002 : r % 5 == 2 && i ? mix.bits[i - 1]
                    : r % 5 == 3 ? UINT64_C(0x8000000000000000) >> (r % 64) : wl_bits((double)(r % 1000) / 100);
    }
    chunks += spec_series_agrees(spec_decode, TSCHUNK_CODEC_GORILLA, &mix, 300);
    wl_free(&mix);
    cr_assert_gt(chunks, 200);
}

/* Every truncation and every single-bit flip of the golden chunks: the README's decoder refuses exactly what the
 * library refuses, and reads the rest to the library's samples. */
Test(spec, damaged_chunks_are_refused_alike, .timeout = 120)
{
    size_t read_both = spec_goldens_damage_agree(spec_decode, "chunk", golden, sizeof golden / sizeof golden[0]);
    cr_assert_gt(read_both, 100); /* many flips land in values and still read: those were compared sample by sample */
}

/* Rules no flip of the golden chunks reaches: two samples without TS_CONST (an empty timestamp stream), flags on a
 * chunk of one sample, a count past 65,535 (65,535 reads), a 10-byte uvarint past 64 bits. Both decoders agree. */
Test(spec, header_rules_are_kept_alike)
{
    wl_series s;
    wl_alloc(&s, 2, "two");
    s.ts[0] = 1000, s.ts[1] = 2000, s.bits[0] = wl_bits(1.5), s.bits[1] = wl_bits(2.5);
    unsigned char *chunk;
    size_t size = encode_range_codec(&s, 0, 2, TSCHUNK_CODEC_GORILLA, &chunk);
    cr_assert(chunk[1] & 0x10, "two samples: TS_CONST");
    cr_assert(spec_agrees(chunk, size, "two", 0));
    uint8_t no_ts_const[64];
    size_t at = 2 + 1 + 2 + 8 + 2; /* magic, flags, count, ts0 (2 bytes), value, delta (2 bytes) */
    cr_assert_lt(size + 1, sizeof no_ts_const);
    memcpy(no_ts_const, chunk, at);
    no_ts_const[1] &= 0xef;
    no_ts_const[at] = 0; /* an empty timestamp stream */
    memcpy(no_ts_const + at + 1, chunk + at, size - at);
    cr_assert_not(spec_agrees(no_ts_const, size + 1, "two without TS_CONST", 0));
    free(chunk);
    size = encode_range_codec(&s, 0, 1, TSCHUNK_CODEC_GORILLA, &chunk);
    chunk[1] |= 0x20;
    cr_assert_not(spec_agrees(chunk, size, "one sample with VAL_CONST", 0));
    free(chunk);
    /* Constant chunks (TS_CONST and VAL_CONST: header only) of 65,535 samples, the most, and of 65,536. */
    uint8_t most[] = {0xc1, 0x31, 0xff, 0xff, 0x03, 0x02, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0x0a};
    cr_assert(spec_agrees(most, sizeof most, "count 65,535", 0));
    uint8_t too_many[] = {0xc1, 0x31, 0x80, 0x80, 0x04, 0x02, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0x0a};
    cr_assert_not(spec_agrees(too_many, sizeof too_many, "count 65,536", 0));
    const uint8_t wide[] = {0xc1, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
                            0, 0, 0, 0, 0, 0, 0, 0};
    cr_assert_not(spec_agrees(wide, sizeof wide, "ts0 past 64 bits", 0));
    wl_free(&s);
}

/* The shipped file and, when ../shared is there, every shared dataset, at 1,024-sample chunks. */
Test(spec, the_readme_decoder_reads_the_datasets, .timeout = 300)
{
    char dir[400];
    static char paths[64][512];
    wl_series s[8];
    snprintf(dir, sizeof dir, "%s/../shared/datasets", repo_dir());
    size_t files = wl_list_datasets(dir, paths, 63), samples = 0;
    snprintf(paths[files++], sizeof paths[0], "%.400s/tests/data/nab_ambient_temperature_system_failure.csv.gz",
             repo_dir());
    for (size_t i = 0; i < files; i++) {
        size_t k = wl_load_dataset(paths[i], s, 8);
        cr_assert_gt(k, 0, "cannot load %s", paths[i]);
        for (size_t j = 0; j < k; j++) {
            spec_series_agrees(spec_decode, TSCHUNK_CODEC_GORILLA, &s[j], 1024);
            samples += s[j].n;
            wl_free(&s[j]);
        }
    }
    cr_assert_geq(samples, 7267);
}
