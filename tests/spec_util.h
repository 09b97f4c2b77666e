/* What tests/test_spec.c and tests/test_spec2.c share: a decoder written from the README is held against the
 * library on the same bytes. Only the plumbing is shared; each decoder reads its fields on its own. */
#ifndef TSCHUNK_SPEC_UTIL_H
#define TSCHUNK_SPEC_UTIL_H

#include "test_util.h"
#include "spec_decoders.h"

/* The library and a README decoder on the same bytes: both refuse, or both give the same samples. Another codec's
 * chunk is not compared. @return 1 when both read it. */
static inline int spec_agrees_with(spec_decode_fn decode, const uint8_t *chunk, size_t size, const char *what,
                                   size_t at)
{
    static int64_t spec_ts[SPEC_MAX], lib_ts[SPEC_MAX];
    static uint64_t spec_bits[SPEC_MAX];
    static double lib_values[SPEC_MAX];
    long n = decode(chunk, size, spec_ts, spec_bits, SPEC_MAX);
    if (n == -2) return 0;
    size_t got = tschunk_decode(chunk, size, lib_ts, lib_values, SPEC_MAX);
    int lib_ok = !tschunk_is_error(got);
    cr_assert_eq(n >= 0, lib_ok, "%s (%zu): README decoder %s, library %s", what, at,
                 n >= 0 ? "reads it" : "refuses it", lib_ok ? "reads it" : tschunk_error_name(got));
    if (n < 0) return 0;
    cr_assert_eq((size_t)n, got, "%s (%zu): %ld samples against %zu", what, at, n, got);
    for (long i = 0; i < n; i++) {
        uint64_t lib_bits;
        memcpy(&lib_bits, &lib_values[i], 8);
        cr_assert(spec_ts[i] == lib_ts[i], "%s (%zu): timestamp %ld: %lld against %lld", what, at, i,
                  (long long)spec_ts[i], (long long)lib_ts[i]);
        cr_assert(spec_bits[i] == lib_bits, "%s (%zu): value %ld: %016llx against %016llx", what, at, i,
                  (unsigned long long)spec_bits[i], (unsigned long long)lib_bits);
    }
    return 1;
}

/* Every truncation and single-bit flip of a chunk through spec_agrees_with. @return how many both read. */
static inline size_t spec_damage_agrees(spec_decode_fn decode, const uint8_t *chunk, size_t size, const char *what)
{
    static uint8_t damaged[65536];
    size_t read_both = 0;
    cr_assert_leq(size, sizeof damaged);
    for (size_t cut = 0; cut < size; cut++) read_both += (size_t)spec_agrees_with(decode, chunk, cut, what, cut);
    for (size_t bit = 0; bit < 8 * size; bit++) {
        memcpy(damaged, chunk, size);
        damaged[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        read_both += (size_t)spec_agrees_with(decode, damaged, size, what, bit);
    }
    return read_both;
}

/* A series cut into chunks of per_chunk samples, each written by the library with `codec` and held against the
 * README decoder. @return the chunks. */
static inline size_t spec_series_agrees(spec_decode_fn decode, uint32_t codec, const wl_series *s, size_t per_chunk)
{
    size_t chunks = 0;
    for (size_t start = 0; start < s->n; start += per_chunk, chunks++) {
        size_t n = s->n - start < per_chunk ? s->n - start : per_chunk;
        unsigned char *chunk;
        size_t size = encode_range_codec(s, start, n, codec, &chunk);
        cr_assert(spec_agrees_with(decode, chunk, size, s->name, start));
        free(chunk);
    }
    return chunks;
}

static inline int spec_hexdigit(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* A golden vector tests/vectors/DIR/NAME.txt: the bytes of its line starting with `prefix` ("chunk " or "encoded ";
 * 0 when it has none) and its samples. */
static inline size_t spec_load_vector(const char *dir, const char *name, const char *prefix, uint8_t *chunk,
                                      size_t cap, wl_series *s)
{
    char path[700];
    snprintf(path, sizeof path, "%s/tests/vectors/%s/%s.txt", repo_dir(), dir, name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    wl_alloc(s, 4096, name);
    s->n = 0;
    size_t size = 0;
    static char line[65536];
    while (fgets(line, sizeof line, f)) {
        long long t;
        unsigned long long b;
        if (!strncmp(line, prefix, strlen(prefix))) {
            for (const char *h = line + strlen(prefix); h[0] != '\n' && h[0] && h[1]; h += 2) {
                cr_assert_lt(size, cap);
                chunk[size++] = (uint8_t)(spec_hexdigit(h[0]) << 4 | spec_hexdigit(h[1]));
            }
        } else if (line[0] != '#' && sscanf(line, "%lld,0x%llx", &t, &b) == 2) {
            cr_assert_lt(s->n, 4096);
            s->ts[s->n] = t;
            s->bits[s->n++] = b;
        }
    }
    fclose(f);
    return size;
}

/* A golden vector read by the README decoder alone: its samples, bit for bit. @return 0 when the vector has no line
 * with that prefix (an `encoded` line is optional), else 1. */
static inline int spec_reads_golden(spec_decode_fn decode, const char *dir, const char *name, const char *prefix)
{
    static uint8_t chunk[32768];
    static int64_t ts[SPEC_MAX];
    static uint64_t bits[SPEC_MAX];
    wl_series s;
    size_t size = spec_load_vector(dir, name, prefix, chunk, sizeof chunk, &s);
    if (size) {
        long n = decode(chunk, size, ts, bits, SPEC_MAX);
        cr_assert_eq(n, (long)s.n, "%s: %ld samples, golden %zu", name, n, s.n);
        for (size_t i = 0; i < s.n; i++)
            cr_assert(ts[i] == s.ts[i] && bits[i] == s.bits[i], "%s: sample %zu", name, i);
    }
    wl_free(&s);
    return size != 0;
}

/* Every truncation and single-bit flip of each golden chunk of tests/vectors/<dir>/ (spec_damage_agrees).
 * @return how many damaged chunks both read. */
static inline size_t spec_goldens_damage_agree(spec_decode_fn decode, const char *dir, const char *const *names,
                                               size_t n)
{
    static uint8_t chunk[32768];
    size_t read_both = 0;
    for (size_t g = 0; g < n; g++) {
        wl_series s;
        size_t size = spec_load_vector(dir, names[g], "chunk ", chunk, sizeof chunk, &s);
        wl_free(&s);
        read_both += spec_damage_agrees(decode, chunk, size, names[g]);
    }
    return read_both;
}

/* Every synthetic shape (20,000 samples each) cut into chunks of 1 to `small` samples, one in three up to 4,096,
 * each written with `codec` and held against the README decoder. @return the chunks. */
static inline size_t spec_synthetic_agrees(spec_decode_fn decode, uint32_t codec, uint64_t seed, size_t small)
{
    uint64_t rng = 20261203;
    size_t chunks = 0;
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        wl_series s;
        wl_synthetic(&s, kind, 20000, seed + (uint64_t)kind);
        for (size_t start = 0; start < s.n; chunks++) {
            size_t n = 1 + wl_rng(&rng) % (start % 3 ? small : 4096);
            if (n > s.n - start) n = s.n - start;
            unsigned char *chunk;
            size_t size = encode_range_codec(&s, start, n, codec, &chunk);
            cr_assert(spec_agrees_with(decode, chunk, size, s.name, start));
            free(chunk);
            start += n;
        }
        wl_free(&s);
    }
    return chunks;
}

#endif
