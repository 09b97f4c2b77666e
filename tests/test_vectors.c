/* Golden chunk vectors: tests/vectors/chunk/ pin codec 1 of format v1 byte for byte, tests/vectors/tsc2/ codec 2. */
#include "test_util.h"

typedef struct {
    wl_series s;
    unsigned char *chunk;
    size_t size;
    unsigned char *encoded; /* what today's encoder writes, when it differs from chunk (else NULL) */
    size_t encoded_size;
} vector;

static int hexval(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

#define VECTOR_MAX_SAMPLES 1024

static void load_vector_in(const char *dir, const char *name, vector *v)
{
    char path[700];
    snprintf(path, sizeof path, "%s/tests/vectors/%s/%s.txt", repo_dir(), dir, name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    memset(v, 0, sizeof *v);
    wl_alloc(&v->s, VECTOR_MAX_SAMPLES, name);
    v->s.n = 0;
    static char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        int encoded = !strncmp(line, "encoded ", 8);
        if (encoded || !strncmp(line, "chunk ", 6)) {
            const char *hex = line + (encoded ? 8 : 6);
            size_t len = strcspn(hex, "\n") / 2;
            unsigned char *bytes = malloc(len + 1);
            for (size_t i = 0; i < len; i++) bytes[i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
            *(encoded ? &v->encoded : &v->chunk) = bytes;
            *(encoded ? &v->encoded_size : &v->size) = len;
            continue;
        }
        long long ts;
        unsigned long long bits;
        cr_assert_lt(v->s.n, VECTOR_MAX_SAMPLES, "%s: too many samples", name);
        cr_assert_eq(sscanf(line, "%lld,0x%llx", &ts, &bits), 2, "%s: bad line %s", name, line);
        v->s.ts[v->s.n] = ts;
        v->s.bits[v->s.n++] = bits;
    }
    fclose(f);
    cr_assert(v->chunk, "%s: no chunk line", name);
}

static void load_vector(const char *name, vector *v) { load_vector_in("chunk", name, v); }

static const char *const names[] = {"empty", "single_stale_marker", "readme_example", "dod_buckets",
                                    "special_values", "constant_int64_max", "gauge_2dp_120", "counter_120",
                                    "window_reset"};

Test(vectors, encoder_writes_exactly_the_golden_bytes)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        vector v;
        load_vector(names[i], &v);
        unsigned char *chunk;
        size_t size = encode_range_codec(&v.s, 0, v.s.n, TSCHUNK_CODEC_GORILLA, &chunk);
        cr_assert_eq(size, v.size, "%s: %zu bytes, golden %zu", names[i], size, v.size);
        cr_assert(memcmp(chunk, v.chunk, size) == 0, "%s: bytes differ from the golden vector", names[i]);
        free(chunk);
        free(v.chunk);
        wl_free(&v.s);
    }
}

Test(vectors, golden_bytes_decode_to_the_samples)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        vector v;
        load_vector(names[i], &v);
        check_chunk(v.chunk, v.size, &v.s, 0, v.s.n);
        tschunk_chunk_info info;
        cr_assert_eq(tschunk_chunk_info_get(v.chunk, v.size, &info), 0);
        cr_assert_eq(info.count, v.s.n);
        cr_assert_eq(info.version, 1);
        cr_assert_eq(info.codec, TSCHUNK_CODEC_GORILLA);
        free(v.chunk);
        wl_free(&v.s);
    }
}

Test(vectors, readme_example_fields)
{
    vector v;
    load_vector("readme_example", &v);
    tschunk_chunk_info info;
    cr_assert_eq(tschunk_chunk_info_get(v.chunk, v.size, &info), 0);
    cr_assert_eq(info.first_ts, 1700000000000);
    cr_assert_eq(info.first_delta, 15000);
    cr_assert_eq(info.value_bytes, 6);
    cr_assert_eq(info.ts_bytes, 2);
    cr_assert_eq(info.flags, 0);
    free(v.chunk);
    wl_free(&v.s);
}

static const char *const tsc2_names[] = {"gauge_2dp_300", "counter_200", "constant_250", "real_doubles_260",
                                         "repeats_140", "special_values_150", "noisy_decimals_130", "gaps_300"};

/*
 * Codec 2: the bytes 0.2.0 wrote decode to each vector's samples, and the
 * encoder writes exactly the vector's bytes: its `encoded` line where a later
 * encoder chooses differently (that line must decode to the samples too).
 */
Test(vectors, codec2_golden_bytes_both_ways)
{
    for (size_t i = 0; i < sizeof tsc2_names / sizeof tsc2_names[0]; i++) {
        vector v;
        load_vector_in("tsc2", tsc2_names[i], &v);
        const unsigned char *want = v.encoded ? v.encoded : v.chunk;
        size_t want_size = v.encoded ? v.encoded_size : v.size;
        unsigned char *chunk;
        size_t size = encode_range_codec(&v.s, 0, v.s.n, TSCHUNK_CODEC_TSC2, &chunk);
        cr_assert_eq(size, want_size, "%s: %zu bytes, golden %zu", tsc2_names[i], size, want_size);
        cr_assert(memcmp(chunk, want, size) == 0, "%s: bytes differ from the golden vector", tsc2_names[i]);
        check_chunk(v.chunk, v.size, &v.s, 0, v.s.n);
        if (v.encoded) check_chunk(v.encoded, v.encoded_size, &v.s, 0, v.s.n);
        free(chunk);
        free(v.chunk);
        free(v.encoded);
        wl_free(&v.s);
    }
}
