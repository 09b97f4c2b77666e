/*
 * README "Codec 2", read by a second decoder written from the README's tables alone (fields one bit at a time,
 * nothing shared with lib/), as tests/test_spec.c does for codec 1: the golden chunks, the chunks the library
 * writes, and every truncation and single-bit flip of the golden chunks must read the same through both.
 */
#include "spec_util.h"

static int spec2_agrees(const uint8_t *chunk, size_t size, const char *what, size_t at)
{
    return spec_agrees_with(spec2_decode, chunk, size, what, at);
}

static size_t spec2_series_agrees(const wl_series *s, size_t per_chunk)
{
    return spec_series_agrees(spec2_decode, TSCHUNK_CODEC_TSC2, s, per_chunk);
}

static const char *const golden2[] = {"constant_250", "counter_200", "gaps_300", "gauge_2dp_300",
                                      "noisy_decimals_130", "real_doubles_260", "repeats_140", "special_values_150"};

/* A golden codec-2 vector: its chunk line (or, with encoded = 1, its `encoded` line when it has one) and samples. */
static size_t load_golden2(const char *name, int encoded, uint8_t *chunk, size_t cap, wl_series *s)
{
    return spec_load_vector("tsc2", name, encoded ? "encoded " : "chunk ", chunk, cap, s);
}

Test(spec2, the_readme_decoder_reads_the_golden_chunks)
{
    static uint8_t chunk[32768];
    static int64_t ts[SPEC_MAX];
    static uint64_t bits[SPEC_MAX];
    for (size_t g = 0; g < sizeof golden2 / sizeof golden2[0]; g++) {
        for (int encoded = 0; encoded < 2; encoded++) {
            wl_series s;
            size_t size = load_golden2(golden2[g], encoded, chunk, sizeof chunk, &s);
            if (size) {
                long n = spec2_decode(chunk, size, ts, bits, SPEC_MAX);
                cr_assert_eq(n, (long)s.n, "%s: %ld samples, golden %zu", golden2[g], n, s.n);
                for (size_t i = 0; i < s.n; i++)
                    cr_assert(ts[i] == s.ts[i] && bits[i] == s.bits[i], "%s: sample %zu", golden2[g], i);
            }
            wl_free(&s);
        }
    }
}

/* Chunks of every synthetic shape, of the mix codec 1's spec test uses, and of the shipped dataset. */
Test(spec2, the_readme_decoder_reads_what_the_library_writes, .timeout = 60)
{
    uint64_t rng = 20261203;
    size_t chunks = 0;
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 20000, 11 + (uint64_t)kind);
        for (size_t start = 0; start < s.n; chunks++) {
            size_t n = 1 + wl_rng(&rng) % (start % 3 ? 300 : 4096);
            if (n > s.n - start) n = s.n - start;
            unsigned char *chunk;
            size_t size = encode_range_codec(&s, start, n, TSCHUNK_CODEC_TSC2, &chunk);
            cr_assert(spec2_agrees(chunk, size, s.name, start));
            free(chunk);
            start += n;
        }
        wl_free(&s);
    }
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
    static uint8_t chunk[32768];
    size_t read_both = 0;
    for (size_t g = 0; g < sizeof golden2 / sizeof golden2[0]; g++) {
        wl_series s;
        size_t size = load_golden2(golden2[g], 0, chunk, sizeof chunk, &s);
        wl_free(&s);
        read_both += spec_damage_agrees(spec2_decode, chunk, size, golden2[g]);
    }
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
