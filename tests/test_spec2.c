/*
 * README "Codec 2", read by a second decoder written from the README's tables alone (fields one bit at a time,
 * nothing shared with lib/), as tests/test_spec.c does for codec 1: the golden chunks, the chunks the library
 * writes, and every truncation and single-bit flip of the golden chunks must read the same through both.
 */
#include "spec_util.h"

static size_t spec2_series_agrees(const wl_series *s, size_t per_chunk)
{
    return spec_series_agrees(spec2_decode, TSCHUNK_CODEC_TSC2, s, per_chunk);
}

static const char *const golden2[] = {"constant_250", "counter_200", "gaps_300", "gauge_2dp_300",
                                      "noisy_decimals_130", "real_doubles_260", "repeats_140", "special_values_150"};

/* A golden codec-2 vector: its chunk line and samples. */
Test(spec2, the_readme_decoder_reads_the_golden_chunks)
{
    for (size_t g = 0; g < sizeof golden2 / sizeof golden2[0]; g++) {
        cr_assert(spec_reads_golden(spec2_decode, "tsc2", golden2[g], "chunk "), "%s: no chunk line", golden2[g]);
        spec_reads_golden(spec2_decode, "tsc2", golden2[g], "encoded "); /* today's bytes, where they differ */
    }
}

/* Chunks of every synthetic shape, and of a mix of special values, float32 readings, decimals and time jumps. */
Test(spec2, the_readme_decoder_reads_what_the_library_writes, .timeout = 60)
{
    size_t chunks = spec_synthetic_agrees(spec2_decode, TSCHUNK_CODEC_TSC2, 11, 300);
    uint64_t rng = 20261203;
    wl_series mix;
    wl_alloc(&mix, 40000, "mix");
    int64_t t = INT64_MIN + 5;
    for (size_t i = 0; i < mix.n; i++) {
        uint64_t r = wl_rng(&rng);
        t += (int64_t)(r % 11 == 0 ? wl_rng(&rng) % 1000000000 : r % 11 == 1 ? 0 : (r >> 8) % 40);
        mix.ts[i] = t;
        unsigned pick = (unsigned)((r >> 20) % 8);
        mix.bits[i] = pick == 0 ? wl_rng(&rng) : pick == 1 ? 0x7ff0000000000002 : pick == 2 && i ? mix.bits[i - 1]
                    : pick == 3 ? wl_bits((double)(float)((double)(r % 100000) / 7))
                    : pick == 4 ? wl_bits((double)((r >> 30) % 1000000) / 1000)
                                : wl_bits((double)(int64_t)(i * 3 + (r >> 40) % 5));
    }
    chunks += spec2_series_agrees(&mix, 1000);
    wl_free(&mix);
    cr_assert_gt(chunks, 100);
}

/* Every truncation and single-bit flip of the golden chunks: refused alike, or read alike. */
Test(spec2, damaged_chunks_are_refused_alike, .timeout = 300)
{
    size_t read_both = spec_goldens_damage_agree(spec2_decode, "tsc2", golden2, sizeof golden2 / sizeof golden2[0]);
    /* A TS_SCALED chunk, which no golden chunk is (steps of whole seconds in ms, then jittered ones: scale 1 there,
     * one flip from the refused 0): its scales read alike too. */
    wl_series scaled;
    wl_alloc(&scaled, 300, "scaled");
    uint64_t rng = 5;
    for (size_t i = 0; i < scaled.n; i++) {
        int64_t jitter = i >= 200 ? (int64_t)(wl_rng(&rng) % 7) : 0;
        scaled.ts[i] = (i ? scaled.ts[i - 1] : 1700000000000) + 1000 * (int64_t)(10 + wl_rng(&rng) % 50) + jitter;
        scaled.bits[i] = wl_bits((double)(wl_rng(&rng) % 1000) / 10);
    }
    unsigned char *encoded;
    size_t size = encode_range_codec(&scaled, 0, scaled.n, TSCHUNK_CODEC_TSC2, &encoded);
    cr_assert(encoded[1] & 0x80, "TS_SCALED");
    read_both += spec_damage_agrees(spec2_decode, encoded, size, "scaled");
    free(encoded);
    wl_free(&scaled);
    cr_assert_gt(read_both, 100);
}

/* Real data takes the forms in combinations the synthetic shapes do not (float32 readings masked, SPLIT, XOR,
 * patched decimals, scaled grids): the shipped file always, the shared datasets when ../shared is there. */
Test(spec2, the_readme_decoder_reads_the_datasets, .timeout = 300)
{
    char path[700];
    snprintf(path, sizeof path, "%s/tests/data/nab_ambient_temperature_system_failure.csv.gz", repo_dir());
    wl_series s[8];
    cr_assert_eq(wl_load_dataset(path, s, 1), 1, "cannot read %s", path);
    cr_assert_gt(spec2_series_agrees(&s[0], 120) + spec2_series_agrees(&s[0], 1024), 60);
    wl_free(&s[0]);
    static char paths[64][512];
    char dir[600];
    snprintf(dir, sizeof dir, "%s/../shared/datasets", repo_dir());
    size_t files = wl_list_datasets(dir, paths, 64), samples = 0;
    if (files == 0) fprintf(stderr, "no datasets at %s: the README decoder read the shipped file only\n", dir);
    for (size_t i = 0; i < files; i++) {
        size_t k = wl_load_dataset(paths[i], s, 8);
        cr_assert_gt(k, 0, "cannot load %s", paths[i]);
        for (size_t j = 0; j < k; j++) {
            spec2_series_agrees(&s[j], 1024);
            samples += s[j].n;
            wl_free(&s[j]);
        }
    }
    cr_assert(files == 0 || samples > 1000000, "%zu samples in %zu files", samples, files);
}
