/* DDSketch against the golden vectors of sketches-java and sketches-go (tests/vectors/ddsketch/). */
#include <dirent.h>
#include <float.h>
#include <math.h>

#include "test_util.h"
#include "sketch/sketch.h"

#define MAXV 1100
#define MAXBINS 2600
#define MAXHEX 60000

typedef struct {
    char name[128], producer[8], kind[16], store[24];
    uint64_t ra, gamma, offset, effective_ra;
    int deterministic, nvalues, has_values;
    uint64_t values[MAXV], weights[MAXV];
    int weighted;
    char encoded[MAXHEX], encoded_omit[MAXHEX], exact_encoded[MAXHEX];
    char stats[4][20];
    char quantiles[9][20], exact_quantiles[9][20], decoded_quantiles[9][20];
    uint64_t decoded_zero;
    int nbins;
    char bin_sign[MAXBINS];
    int32_t bin_index[MAXBINS];
    uint64_t bin_count[MAXBINS];
} vec;

static void read_words(char *rest, char out[][20], int n)
{
    for (int i = 0; i < n; i++) {
        char *tok = strtok(i == 0 ? rest : NULL, " \n");
        snprintf(out[i], 20, "%s", tok ? tok : "null");
    }
}

static void load(const char *path, vec *v)
{
    memset(v, 0, sizeof *v);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    static char line[MAXHEX + 64];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *sp = strchr(line, ' ');
        char *rest = sp ? sp + 1 : line + strlen(line);
        if (!strncmp(line, "name ", 5)) snprintf(v->name, sizeof v->name, "%s", rest);
        else if (!strncmp(line, "producer ", 9)) snprintf(v->producer, sizeof v->producer, "%s", rest);
        else if (!strncmp(line, "mapping ", 8)) {
            unsigned long long a, b, c, d;
            char kind[16];
            cr_assert_eq(sscanf(rest, "%15s %llx %llx %llx %llx", kind, &a, &b, &c, &d), 5);
            snprintf(v->kind, sizeof v->kind, "%s", kind);
            v->ra = a; v->gamma = b; v->offset = c; v->effective_ra = d;
        } else if (!strncmp(line, "store ", 6)) snprintf(v->store, sizeof v->store, "%s", rest);
        else if (!strncmp(line, "deterministic ", 14)) v->deterministic = atoi(rest);
        else if (!strncmp(line, "values ", 7)) v->has_values = 1;
        else if (!strncmp(line, "v ", 2)) {
            unsigned long long a, b;
            int n = sscanf(rest, "%llx %llx", &a, &b);
            cr_assert(v->nvalues < MAXV);
            v->values[v->nvalues] = a;
            if (n == 2) { v->weights[v->nvalues] = b; v->weighted = 1; }
            v->nvalues++;
        } else if (!strncmp(line, "encoded ", 8)) snprintf(v->encoded, MAXHEX, "%s", rest);
        else if (!strncmp(line, "encoded_omit ", 13)) snprintf(v->encoded_omit, MAXHEX, "%s", rest);
        else if (!strncmp(line, "exact_encoded ", 14)) snprintf(v->exact_encoded, MAXHEX, "%s", rest);
        else if (!strncmp(line, "exact_stats ", 12)) read_words(rest, v->stats, 4);
        else if (!strncmp(line, "quantiles ", 10)) read_words(rest, v->quantiles, 9);
        else if (!strncmp(line, "exact_quantiles ", 16)) read_words(rest, v->exact_quantiles, 9);
        else if (!strncmp(line, "decoded_quantiles_java ", 23)) read_words(rest, v->decoded_quantiles, 9);
        else if (!strncmp(line, "decoded_zero ", 13)) v->decoded_zero = strtoull(rest, NULL, 16);
        else if (!strncmp(line, "dbin ", 5)) {
            char sign;
            int idx;
            unsigned long long c;
            cr_assert_eq(sscanf(rest, "%c %d %llx", &sign, &idx, &c), 3);
            cr_assert(v->nbins < MAXBINS);
            v->bin_sign[v->nbins] = sign;
            v->bin_index[v->nbins] = idx;
            v->bin_count[v->nbins++] = c;
        }
    }
    fclose(f);
}

static size_t unhex(const char *hex, unsigned char *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        out[i] = (unsigned char)b;
    }
    return n;
}

static void tohex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = 0;
}

static tschunk_mapping_kind kind_of(const vec *v)
{
    return !strcmp(v->kind, "cubic") ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC;
}

static const double qs[9] = {0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1};

/* Logarithmic: bit-exact. Cubic: 1e-12 relative (glibc's cbrt is an ulp away from Java's, spec 3.3). */
static void check_quantile(const vec *v, const char *what, double q, double got, const char *want_hex)
{
    if (!strcmp(want_hex, "null")) return;
    double want = wl_double(strtoull(want_hex, NULL, 16));
    if (kind_of(v) == TSCHUNK_MAPPING_LOGARITHMIC) {
        cr_assert_eq(wl_bits(got), wl_bits(want), "%s %s q=%g: %.17g, Java %.17g", v->name, what, q, got, want);
    } else {
        double rel = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);
        cr_assert_leq(rel, 1e-12, "%s %s q=%g: %.17g, Java %.17g", v->name, what, q, got, want);
    }
}

static tschunk_sketch *sketch_of(const vec *v, uint32_t bins_only)
{
    tschunk_sketch_options o = {kind_of(v), wl_double(v->ra), 1u << 16, 0, {NULL, NULL, NULL}, bins_only};
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    /* Unweighted inputs go through tschunk_sketch_add, whose cubic fast path the vectors then check. */
    for (int i = 0; i < v->nvalues; i++) {
        size_t r = v->weighted ? tschunk_sketch_add_weighted(s, wl_double(v->values[i]), wl_double(v->weights[i]))
                               : tschunk_sketch_add(s, wl_double(v->values[i]));
        cr_assert_eq(r, 0, "%s value %d", v->name, i);
    }
    return s;
}

typedef struct {
    const vec *v;
    int negative, seen;
} bin_check;

static void visit_bin(void *ctx, int32_t index, double count)
{
    bin_check *c = ctx;
    const vec *v = c->v;
    int k = 0, match = -1;
    for (int i = 0; i < v->nbins; i++) {
        if ((v->bin_sign[i] == '-') != c->negative) continue;
        if (k++ == c->seen) { match = i; break; }
    }
    cr_assert_neq(match, -1, "%s: extra bin %d", v->name, index);
    cr_assert_eq(v->bin_index[match], index, "%s: bin index", v->name);
    cr_assert_eq(v->bin_count[match], wl_bits(count), "%s: bin %d count %.17g", v->name, index, count);
    c->seen++;
}

static int count_bins(const vec *v, int negative)
{
    int n = 0;
    for (int i = 0; i < v->nbins; i++) n += (v->bin_sign[i] == '-') == negative;
    return n;
}

static size_t for_each_vector(void (*fn)(const vec *))
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/tests/vectors/ddsketch", repo_dir());
    DIR *d = opendir(dir);
    cr_assert(d, "%s", dir);
    static vec v;
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".txt")) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        load(path, &v);
        fn(&v);
        n++;
    }
    closedir(d);
    return n;
}

static void mapping_matches(const vec *v)
{
    if (strcmp(v->producer, "java")) return;
    tsc_mapping m;
    cr_assert_eq(tsc_mapping_from_accuracy(&m, kind_of(v), wl_double(v->ra)), 0);
    cr_assert_eq(wl_bits(m.gamma), v->gamma, "%s: gamma %016llx", v->name, (unsigned long long)wl_bits(m.gamma));
    cr_assert_eq(wl_bits(m.index_offset), v->offset, "%s: offset", v->name);
    cr_assert_eq(wl_bits(m.relative_accuracy), v->effective_ra, "%s: relative accuracy %016llx", v->name,
                 (unsigned long long)wl_bits(m.relative_accuracy));
}

static int same_mapping(const tsc_mapping *a, const tsc_mapping *b)
{
    return a->kind == b->kind && wl_bits(a->gamma) == wl_bits(b->gamma) &&
           wl_bits(a->index_offset) == wl_bits(b->index_offset) && wl_bits(a->multiplier) == wl_bits(b->multiplier) &&
           wl_bits(a->norm_offset) == wl_bits(b->norm_offset) &&
           wl_bits(a->relative_accuracy) == wl_bits(b->relative_accuracy) &&
           wl_bits(a->min_indexable) == wl_bits(b->min_indexable) &&
           wl_bits(a->max_indexable) == wl_bits(b->max_indexable);
}

/* Every memo entry is bit for bit what the formulas compute for its accuracy, both lookups find it, and
 * a gamma one ulp away (not in the memo) is computed. */
Test(sketch, mapping_memo_equals_computed)
{
    int hits = 0;
    for (int kind = TSCHUNK_MAPPING_LOGARITHMIC; kind <= TSCHUNK_MAPPING_QUARTIC; kind++) {
        for (size_t k = 0; k < TSC_MEMO_ACCURACIES; k++) {
            double ra, gamma, offset;
            const tsc_mapping *memo = tsc_mapping_memo((tschunk_mapping_kind)kind, k, &ra);
            tsc_mapping computed, found;
            tsc_mapping_gamma_for((tschunk_mapping_kind)kind, ra, &gamma, &offset);
            cr_assert_eq(tsc_mapping_compute(&computed, (tschunk_mapping_kind)kind, gamma, offset), 0);
            cr_assert(same_mapping(memo, &computed), "kind %d, accuracy %g: memo differs from the formulas", kind, ra);
            cr_assert_eq(tsc_mapping_from_accuracy(&found, (tschunk_mapping_kind)kind, ra), 0);
            cr_assert(same_mapping(&found, memo));
            cr_assert_eq(tsc_mapping_from_gamma(&found, (tschunk_mapping_kind)kind, gamma, offset), 0);
            cr_assert(same_mapping(&found, memo));
            double near = nextafter(gamma, 2);
            cr_assert_eq(tsc_mapping_from_gamma(&found, (tschunk_mapping_kind)kind, near, offset), 0);
            cr_assert_eq(tsc_mapping_compute(&computed, (tschunk_mapping_kind)kind, near, offset), 0);
            cr_assert(same_mapping(&found, &computed));
            cr_assert_neq(wl_bits(found.multiplier), wl_bits(memo->multiplier));
            hits++;
        }
    }
    cr_assert_eq(hits, 5 * TSC_MEMO_ACCURACIES);
    tsc_mapping m;
    cr_assert_neq(tsc_mapping_from_gamma(&m, (tschunk_mapping_kind)5, 1.02, 0), 0); /* no sixth kind */
    cr_assert_neq(tsc_mapping_from_accuracy(&m, (tschunk_mapping_kind)5, 0.01), 0);
}

/* Every mapping, the three that no reference vector uses (linear, quadratic, quartic) too: a value's bin
 * answers it within the mapping's relative accuracy (the inverse of each approximate logarithm, which only
 * quantiles reach), and bins never go down as values go up, over the whole indexable range. */
Test(sketch, every_mapping_keeps_its_relative_accuracy)
{
    const double accuracies[] = {0.001, 0.01, 0.02, 0.05, 0.1};
    uint64_t rng = 29;
    for (int kind = TSCHUNK_MAPPING_LOGARITHMIC; kind <= TSCHUNK_MAPPING_QUARTIC; kind++) {
        for (size_t a = 0; a < sizeof accuracies / sizeof accuracies[0]; a++) {
            tsc_mapping m;
            cr_assert_eq(tsc_mapping_from_accuracy(&m, (tschunk_mapping_kind)kind, accuracies[a]), 0);
            double lo = log(m.min_indexable), hi = log(m.max_indexable), previous = 0;
            int32_t previous_index = INT32_MIN;
            const int n = 20000;
            for (int k = 0; k <= n; k++) { /* log-uniform, in order; the ends exactly */
                double v = k == 0 ? m.min_indexable : k == n ? m.max_indexable
                                                              : exp(lo + (hi - lo) * (k - 1 + wl_uniform(&rng)) / n);
                int32_t index = tsc_mapping_index(&m, v);
                double answer = tsc_mapping_value(&m, index);
                cr_assert_leq(fabs(answer - v), m.relative_accuracy * v * (1 + 1e-9),
                              "kind %d, accuracy %g: %a answered by %a (bin %d)", kind, accuracies[a], v, answer,
                              (int)index);
                cr_assert(v < previous || index >= previous_index, "kind %d: bin %d after %d for a larger value",
                          kind, (int)index, (int)previous_index);
                previous = v, previous_index = index;
            }
        }
    }
}

/* The SSE2 and AVX2 occupied-bin masks against their scalar twin: every length, +-0 empty, anything else
 * occupied. */
Test(sketch, occupied_mask_matches_scalar)
{
    uint64_t rng = 11;
    double counts[64];
    for (int round = 0; round < 2000; round++) {
        for (int k = 0; k < 64; k++) {
            uint64_t r = wl_rng(&rng);
            counts[k] = r % 3 == 0 ? 0.0 : r % 3 == 1 ? -0.0 : (double)(r % 5) * 0.5; /* r % 5 == 0: empty too */
        }
        unsigned n = (unsigned)(round % 65);
        uint64_t want = tsc_occupied_mask_scalar(counts, n), got = tsc_occupied_mask(counts, n);
        cr_assert_eq(got, want, "n %u", n);
        if (tsc_avx2_here()) cr_assert_eq(tsc_occupied_mask_avx2(counts, n), want, "AVX2, n %u", n);
        for (unsigned k = 0; k < n; k++)
            cr_assert_eq((want >> k) & 1, (uint64_t)(counts[k] > 0), "scalar mask, bin %u", k);
        if (n < 64) cr_assert_eq(want >> n, 0);
    }
}

/*
 * The AVX-512 bin writers against the scalar twins, byte for byte, on sketches that take every branch:
 * dense and sparse stores, both signs, counts of 1 to 9 bytes (integer and fractional weights, tiny and
 * huge), index deltas of one byte and more, runs of every length, and buffers from too small to roomy.
 */
static tschunk_sketch *random_sketch(uint64_t *rng, int round)
{
    tschunk_sketch_options o = {round & 1 ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC, 0.01,
                                round & 2 ? 128u : 0u, 0, {0, 0, 0}, 0};
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    /* Two rounds in 16 hold more bins than the decoder's bin log, so that its committing pass parses again. */
    int big = (round & 15) == 9 || (round & 15) == 13;
    int n = big ? 2500 + (int)(wl_rng(rng) % 1000) : (int)(wl_rng(rng) % 400);
    int spread = big ? 4 : (int)(wl_rng(rng) % 4), weights = (int)(wl_rng(rng) % 4);
    for (int i = 0; i < n; i++) {
        uint64_t r = wl_rng(rng);
        double u = wl_uniform(rng);
        double v = spread == 0 ? 1 + (double)(r % 20)               /* near bins: contiguous */
                 : spread == 1 ? exp(u * 20) - 0.5                  /* far apart: deltas of 2 bytes */
                 : spread == 2 ? (r & 1 ? -1 : 1) * exp(u * 8)      /* both signs */
                 : spread == 4 ? (r % 8 ? 1 : -1) * exp(u * 30)     /* over a thousand bins */
                 : 1 + u * 3;
        double w = weights == 0 ? 1 : weights == 1 ? 0.1 + u : weights == 2 ? (double)(1 + r % 100000)
                 : r % 3 == 0 ? 1e-300 : r % 3 == 1 ? 1e15 : 1;
        cr_assert(!tschunk_is_error(tschunk_sketch_add_weighted(s, v, w)));
    }
    return s;
}

Test(sketch, bin_kernels_match_scalar)
{
    if (!tsc_sketch_simd_here()) cr_log_info("no AVX-512 VBMI2 here: its writer not compared");
    if (!tsc_pext_here()) cr_log_info("no BMI2 here: the pdep writer not compared");
    int writers[] = {tsc_sketch_simd_here() ? TSC_PUT_AVX512 : TSC_PUT_SCALAR,
                     tsc_pext_here() ? TSC_PUT_PDEP : TSC_PUT_SCALAR};
    uint64_t rng = 29;
    static unsigned char want[1 << 15], got[1 << 15];
    int compared = 0;
    for (int round = 0; round < 3000; round++) {
        tschunk_sketch *s = random_sketch(&rng, round);
        unsigned flags = (round & 4 ? TSCHUNK_SKETCH_SPARSE : 0) | (round & 8 ? TSCHUNK_SKETCH_EXACT_STATS : 0);
        size_t full = tsc_sketch_encode_isa(s, want, sizeof want, flags, TSC_PUT_SCALAR);
        cr_assert(!tschunk_is_error(full));
        /* capacities: exact (the kernels' 64 bytes of slack absent), a little more, and roomy */
        size_t caps[] = {full, full + 40, full + 200, sizeof got};
        for (int c = 0; c < 4; c++) {
            size_t cap = caps[c] < sizeof got ? caps[c] : sizeof got;
            size_t a = tsc_sketch_encode_isa(s, want, cap, flags, TSC_PUT_SCALAR);
            cr_assert_eq(a, full, "round %d cap %zu", round, cap);
            for (int w = 0; w < 2; w++) {
                size_t b = tsc_sketch_encode_isa(s, got, cap, flags, writers[w]);
                cr_assert(a == b && !memcmp(want, got, a), "round %d cap %zu writer %d: bytes differ", round, cap,
                          writers[w]);
                compared++;
            }
        }
        for (int w = 0; w < 2 && full > 0; w++) { /* one byte short: every writer refuses */
            size_t b = tsc_sketch_encode_isa(s, got, full - 1, flags, writers[w]);
            cr_assert_eq(tschunk_get_error_code(b), TSCHUNK_ERROR_DST_TOO_SMALL, "round %d", round);
        }
        tschunk_sketch_free(s);
    }
    cr_log_info("%d encodings compared", compared);
}

/* Decodes bytes into a sketch like s (merged into a copy of base when given) with the given bin reader
 * (TSC_BINS_*); the result's encoding (or the error) into out. */
static size_t decode_with(const tschunk_sketch *like, const unsigned char *bytes, size_t n, int reader,
                          const unsigned char *base, size_t base_n, unsigned char *out, size_t cap, size_t *err_at)
{
    tschunk_sketch *t;
    const tsc_mapping *m = &like->mapping;
    cr_assert_eq(tschunk_sketch_create_mapping(&t, m->kind, m->gamma, m->index_offset, NULL), 0);
    if (base) cr_assert_eq(tschunk_sketch_decode_merge(t, base, base_n, NULL), 0);
    *err_at = 0;
    size_t r = tsc_sketch_decode_merge_isa(t, bytes, n, err_at, reader);
    if (!tschunk_is_error(r)) r = tschunk_sketch_encode(t, out, cap, TSCHUNK_SKETCH_EXACT_STATS);
    tschunk_sketch_free(t);
    return r;
}

/* The one-at-a-time reader and each bin kernel here (the scalar one; pext's, AVX2's and AVX-512's where the CPU
 * has them)
 * on bytes, merged into a new sketch like `like` (holding base's bins first, when given): the same error at the
 * same offset (returns 1), or the same sketch (returns 0). */
static int readers_agree_on(const tschunk_sketch *like, const unsigned char *bytes, size_t n,
                            const unsigned char *base, size_t base_n, const char *label)
{
    static unsigned char want[1 << 15], got[1 << 15];
    size_t at_a, at_b;
    size_t a = decode_with(like, bytes, n, TSC_BINS_ONE_AT_A_TIME, base, base_n, want, sizeof want, &at_a);
    for (int reader = TSC_BINS_AVX512; reader <= TSC_BINS_AVX2_KERNEL; reader++) {
        if (!tsc_sketch_reader_runs_here(reader)) continue;
        size_t b = decode_with(like, bytes, n, reader, base, base_n, got, sizeof got, &at_b);
        cr_assert_eq(tschunk_get_error_code(a), tschunk_get_error_code(b), "%s (reader %d)", label, reader);
        if (!tschunk_is_error(a))
            cr_assert(a == b && !memcmp(want, got, a), "%s (reader %d): sketches differ", label, reader);
        else
            cr_assert_eq(at_a, at_b, "%s (reader %d): error offsets", label, reader);
    }
    return tschunk_is_error(a) ? 1 : 0;
}

/*
 * The bin kernels against the one-at-a-time reader: the same sketch from every encoding random_sketch makes
 * (and merged into a sketch that is not empty), the same error at the same offset from every truncation
 * and from bit flips.
 */
Test(sketch, bin_kernels_read_as_one_at_a_time, .timeout = 60)
{
    if (!tsc_sketch_simd_here()) cr_log_info("no AVX-512 VBMI2 here: the scalar kernel alone compared");
    uint64_t rng = 31;
    static unsigned char enc[1 << 15], base[1 << 15];
    size_t compared = 0, errors = 0;
    for (int round = 0; round < 600; round++) {
        tschunk_sketch *s = random_sketch(&rng, round);
        unsigned flags = round & 4 ? TSCHUNK_SKETCH_SPARSE : 0;
        size_t n = tschunk_sketch_encode(s, enc, sizeof enc, flags);
        cr_assert(!tschunk_is_error(n));
        size_t base_n = 0;
        if (round & 8) { /* merge into another sketch's bins */
            tschunk_sketch *b = random_sketch(&rng, round);
            base_n = tschunk_sketch_encode(b, base, sizeof base, 0);
            tschunk_sketch_free(b);
        }
        for (int trial = 0; trial < 40; trial++) {
            size_t len = n;
            unsigned char saved = 0;
            size_t flip = 0;
            if (trial > 0 && trial % 2 == 0) len = wl_rng(&rng) % (n + 1); /* a truncation */
            if (trial % 2 == 1) {                                          /* a bit flip */
                flip = wl_rng(&rng) % n;
                saved = enc[flip];
                enc[flip] ^= (unsigned char)(1u << (wl_rng(&rng) % 8));
            }
            char label[48];
            snprintf(label, sizeof label, "round %d trial %d", round, trial);
            errors += (size_t)readers_agree_on(s, enc, len, base_n ? base : NULL, base_n, label);
            if (trial % 2 == 1) enc[flip] = saved;
            compared++;
        }
        tschunk_sketch_free(s);
    }
    cr_log_info("%zu decodes compared, %zu of them errors", compared, errors);
}

static size_t put_test_uvarint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) p[n++] = (unsigned char)(v | 0x80);
    p[n++] = (unsigned char)v;
    return n;
}

/* A signed varint (zigzag), as index deltas and contiguous runs' starts and steps are written. */
static size_t put_test_varint(unsigned char *p, int64_t v)
{
    return put_test_uvarint(p, (uint64_t)v << 1 ^ (uint64_t)(v >> 63));
}

/* Every one-byte index delta (-64 to 63), in both orders: canonical streams hold rising indices only, so the
 * kernels' reading of the falling ones is checked here. */
Test(sketch, bin_kernels_read_every_one_byte_delta)
{
    tschunk_sketch *like;
    cr_assert_eq(tschunk_sketch_create(&like, NULL), 0);
    for (int order = 0; order < 2; order++) {
        unsigned char bytes[512];
        size_t n = 0;
        bytes[n++] = 0x05; /* positive store, index deltas and counts */
        n += put_test_uvarint(bytes + n, 129);
        n += put_test_uvarint(bytes + n, 2000); /* the first bin at 1000 */
        bytes[n++] = 0x02;                      /* count 1 */
        for (int k = 0; k < 128; k++) {
            bytes[n++] = (unsigned char)(order ? 127 - k : k); /* zigzag: 0, -1, 1, -2, ... */
            bytes[n++] = (unsigned char)(1 + k % 100);
        }
        cr_assert_eq(readers_agree_on(like, bytes, n, NULL, 0, order ? "falling" : "rising"), 0);
    }
    tschunk_sketch_free(like);
}

/* Index deltas and indices at and past the limits read_bin_run sets (|delta| <= 2 * 2^31, int32
 * indices), at every lane of a block, in both forms: every reader takes or refuses the same bins, at the
 * same offset. */
Test(sketch, bin_kernels_limits_as_one_at_a_time)
{
    const int64_t firsts[] = {INT32_MAX - 12, INT32_MIN + 12, INT32_MAX, INT32_MIN, 0, INT32_MAX * INT64_C(2),
                              INT32_MIN * INT64_C(2), INT32_MIN * INT64_C(2) - 1, INT32_MAX * INT64_C(2) + 1};
    const int64_t steps[] = {1, -1, 3, -3, INT32_MAX * INT64_C(2), INT32_MIN * INT64_C(2), INT32_MAX * INT64_C(2) + 1};
    char label[64];
    int errors = 0, cases = 0;
    tschunk_sketch *like;
    cr_assert_eq(tschunk_sketch_create(&like, NULL), 0);
    for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++)
        for (size_t st = 0; st < sizeof steps / sizeof *steps; st++)
            for (int big_at = -1; big_at < 12; big_at++) { /* one long delta among the small ones */
                unsigned char bytes[512];
                size_t n = 0;
                bytes[n++] = 0x05; /* positive store, index deltas and counts */
                /* runs of 32 bins and more go to the AVX-512 kernel, of 64 and more to the AVX2 blocks */
                n += put_test_uvarint(bytes + n, 72);
                for (int k = 0; k < 72; k++) {
                    int64_t d = k == 0 ? firsts[f] : k == big_at ? steps[st] : (steps[st] > 0 ? 1 : -1);
                    n += put_test_varint(bytes + n, d);
                    bytes[n++] = (unsigned char)(k & 0x7f); /* a count of k's varfloat: byte k */
                }
                snprintf(label, sizeof label, "first %zu step %zu big %d", f, st, big_at);
                errors += readers_agree_on(like, bytes, n, NULL, 0, label);
                cases++;
            }
    /* contiguous counts from a first index, a step apart: the last bins cross the limits */
    const int64_t starts[] = {INT32_MAX - 12, INT32_MIN + 12, INT32_MAX - 50, INT32_MIN + 50, INT32_MAX, INT32_MIN,
                              0, -5};
    const int64_t strides[] = {1, -1, 2, -2, 0, INT32_MAX, INT32_MIN};
    for (size_t f = 0; f < sizeof starts / sizeof *starts; f++)
        for (size_t st = 0; st < sizeof strides / sizeof *strides; st++)
            for (int nbins = 1; nbins <= 90; nbins += 3) {
                unsigned char bytes[512];
                size_t n = 0;
                bytes[n++] = 0x0d; /* positive store, contiguous counts */
                n += put_test_uvarint(bytes + n, (uint64_t)nbins);
                n += put_test_varint(bytes + n, starts[f]);
                n += put_test_varint(bytes + n, strides[st]);
                for (int k = 0; k < nbins; k++) bytes[n++] = (unsigned char)(k % 3 ? k % 100 : 0); /* empties too */
                snprintf(label, sizeof label, "start %zu step %zu n %d", f, st, nbins);
                errors += readers_agree_on(like, bytes, n, NULL, 0, label);
                cases++;
            }
    tschunk_sketch_free(like);
    cr_log_info("%d streams compared, %d refused", cases, errors);
    cr_assert(errors > 0 && errors < cases);
}

typedef struct {
    int64_t index[4096];
    double count[4096];
    size_t n;
} visited_bins;

static void collect_bin(void *ctx, int32_t index, double count)
{
    visited_bins *v = ctx;
    cr_assert_lt(v->n, 4096);
    v->index[v->n] = index;
    v->count[v->n++] = count;
}

static size_t get_test_uvarint(const unsigned char *p, size_t *at)
{
    size_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        unsigned char b = p[(*at)++];
        v |= (size_t)(b & 0x7f) << shift;
        if (b < 0x80) return v;
    }
}

/* The AVX-512 kernel with the scalar one's signature (written: every bin it takes, empty or not). */
static size_t avx512_kernel(const uint8_t *src, size_t avail, size_t n, int has_deltas, int64_t step, size_t *used,
                            int64_t *index, int64_t *indices, double *counts, size_t *written)
{
    *written = tsc_get_bins_avx512(src, avail, n, has_deltas, step, used, index, indices, counts);
    return *written;
}

typedef size_t (*bin_kernel)(const uint8_t *, size_t, size_t, int, int64_t, size_t *, int64_t *, int64_t *, double *,
                             size_t *);

/*
 * A kernel takes every bin of a canonical stream (counts and deltas of at most 8 bytes; for the scalar, pext
 * and AVX2 kernels, deltas of one byte), in both forms, many blocks to a 64-byte window: the bins the
 * sketch holds, exactly. (The one-at-a-time reader reads what a kernel leaves, so the comparisons above cannot
 * see it leaving too much.)
 */
static void kernel_takes_every_canonical_bin(bin_kernel kernel, int one_byte_deltas, int skips_empty)
{
    uint64_t rng = 37;
    static unsigned char enc[(1 << 15) + 16];
    static int64_t indices[4096 + 8];
    static double counts[4096 + 8];
    static visited_bins want;
    int forms[2] = {0, 0};
    for (int round = 0; round < 400; round++) {
        tschunk_sketch *s;
        cr_assert_eq(tschunk_sketch_create(&s, NULL), 0);
        /* kernels of one-byte deltas: bins close together, as index deltas (sparse) or contiguous counts */
        int dense = one_byte_deltas || (round & 1), n = 1 + (int)(wl_rng(&rng) % (dense ? 3000 : 300));
        for (int i = 0; i < n; i++) {
            double u = wl_uniform(&rng);
            double v = dense ? 1 + u * 5 : exp(u * 40), w = (double)(1 + wl_rng(&rng) % 1000);
            cr_assert(!tschunk_is_error(tschunk_sketch_add_weighted(s, v, w)));
        }
        unsigned sparse = one_byte_deltas && (round & 1) ? TSCHUNK_SKETCH_SPARSE : 0;
        size_t bytes = tschunk_sketch_encode(s, enc, sizeof enc - 16, TSCHUNK_SKETCH_OMIT_MAPPING | sparse);
        memset(enc + bytes, 0x80, 16); /* continued bytes past the end: not a count a kernel may finish */
        want.n = 0;
        tschunk_sketch_bins(s, 0, collect_bin, &want);
        size_t at = 1, got_n, used, written;
        unsigned form = enc[0] >> 2;
        cr_assert(enc[0] == 0x05 || enc[0] == 0x0d, "round %d: flag %02x", round, enc[0]);
        size_t bins = get_test_uvarint(enc, &at);
        int64_t index = 0, step = 1;
        if (form == 3) {
            size_t z = get_test_uvarint(enc, &at);
            index = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
            cr_assert_eq(get_test_uvarint(enc, &at), 2); /* step 1, zigzag */
        }
        size_t avail = bytes - at + (one_byte_deltas ? 9 : 0);
        got_n = kernel(enc + at, avail, bins, form == 1, step, &used, &index, indices, counts, &written);
        cr_assert_eq(got_n, bins, "round %d: %zu of %zu bins taken (form %u)", round, got_n, bins, form);
        cr_assert_eq(at + used, bytes, "round %d", round);
        size_t j = 0;
        for (size_t k = 0; k < written; k++) {
            if (form == 3 && !skips_empty)
                cr_assert_eq(indices[k], want.index[0] + (int64_t)k, "round %d bin %zu", round, k);
            if (counts[k] == 0) continue;
            cr_assert(j < want.n && indices[k] == want.index[j] && counts[k] == want.count[j], "round %d bin %zu",
                      round, k);
            j++;
        }
        cr_assert_eq(j, want.n, "round %d", round);
        if (skips_empty) cr_assert_eq(written, want.n, "round %d: the kernel writes no empty bin", round);
        forms[form == 3]++;
        tschunk_sketch_free(s);
    }
    cr_log_info("%d streams of index deltas, %d of contiguous counts", forms[0], forms[1]);
    cr_assert(forms[0] > 50 && forms[1] > 50);
}

Test(sketch, avx512_kernel_takes_every_canonical_bin)
{
    if (!tsc_sketch_simd_here()) {
        cr_log_info("no AVX-512 VBMI2 here: nothing to check");
        return;
    }
    kernel_takes_every_canonical_bin(avx512_kernel, 0, 0);
}

Test(sketch, scalar_kernel_takes_every_canonical_bin) { kernel_takes_every_canonical_bin(tsc_get_bins_scalar, 1, 1); }

Test(sketch, pext_kernel_takes_every_canonical_bin)
{
    if (!tsc_pext_here()) {
        cr_log_info("no BMI2 here: nothing to check");
        return;
    }
    kernel_takes_every_canonical_bin(tsc_get_bins_pext, 1, 1);
}

Test(sketch, avx2_kernel_takes_every_canonical_bin)
{
    if (!tsc_sketch_reader_runs_here(TSC_BINS_AVX2_KERNEL)) {
        cr_log_info("no AVX2 and BMI2 here: nothing to check");
        return;
    }
    kernel_takes_every_canonical_bin(tsc_get_bins_avx2, 1, 1);
}

/*
 * No kernel takes a byte past the input it is given, nor a record past the count asked, whatever lies beyond:
 * streams of records of every length (one-byte deltas, counts of 1 to 9 bytes, runs of one length and mixed),
 * cut at every length up to 64 and at steps of a 64th beyond, in a buffer whose bytes past the cut would
 * complete more records, about half of its records asked. (0.32.0: the AVX2 kernel's loop once let
 * the scalar records after a block run past the bound the input's end sets, hidden from the comparisons
 * above by the blocks that read the input's last bytes.)
 */
Test(sketch, bin_kernels_keep_within_the_input)
{
    bin_kernel kernels[4] = {tsc_get_bins_scalar, tsc_get_bins_pext, tsc_get_bins_avx2, avx512_kernel};
    int runs[4] = {1, tsc_sketch_reader_runs_here(TSC_BINS_PEXT_KERNEL),
                   tsc_sketch_reader_runs_here(TSC_BINS_AVX2_KERNEL), tsc_sketch_reader_runs_here(TSC_BINS_AVX512)};
    static unsigned char bytes[2048];
    static int64_t indices[256 + 8];
    static double counts[256 + 8];
    uint64_t rng = 43;
    size_t checked = 0;
    for (int shape = 0; shape < 12; shape++) { /* 0-8: counts of shape + 1 bytes; else mixed */
        for (int has_deltas = 0; has_deltas < 2; has_deltas++) {
            size_t len = 0, records = 200;
            for (size_t r = 0; r < records; r++) {
                int count_bytes = shape < 9 ? shape + 1 : 1 + (int)(wl_rng(&rng) % 9);
                if (has_deltas) bytes[len++] = 0x02; /* +1 */
                for (int b = 0; b < count_bytes - 1; b++) bytes[len++] = (unsigned char)(0x80 | (wl_rng(&rng) & 0x7f));
                /* a last byte: 7 bits of a varint, or a 9-byte count's 8 (its value kept finite) */
                bytes[len++] = (unsigned char)(count_bytes == 9 ? wl_rng(&rng) & 0x0f : wl_rng(&rng) & 0x7f);
            }
            for (size_t avail = 0; avail <= len; avail += 1 + avail / 64) {
                for (int k = 0; k < 4; k++) {
                    if (!runs[k]) continue;
                    size_t used = 0, written = 0;
                    int64_t index = 0;
                    /* fewer records asked than the buffer holds, and not a multiple of 4 or 8 */
                    size_t want = records / 2 + 3;
                    size_t got = kernels[k](bytes, avail, want, has_deltas, 1, &used, &index, indices, counts,
                                            &written);
                    cr_assert(used <= avail && got <= want && written <= got,
                              "kernel %d shape %d deltas %d: %zu bins, %zu bytes of %zu", k, shape, has_deltas, got,
                              used, avail);
                    checked++;
                }
            }
        }
    }
    cr_log_info("%zu cuts checked", checked);
}

/* The mapping's index limits skip pow past +-1100 (lib/sketch/mapping.c, pow_limit): there pow itself
 * gives 0 and infinity for both bases, and, being monotonic, beyond. */
/* A run of contiguous counts from index start, a step apart (empty bins at both ends and inside when
 * empty_ends), as one block of the positive store. */
static size_t put_contiguous_block(unsigned char *p, int nbins, int64_t start, int64_t step, int empty_ends)
{
    size_t n = 0;
    p[n++] = 0x0d; /* positive store, contiguous counts */
    n += put_test_uvarint(p + n, (uint64_t)nbins);
    n += put_test_varint(p + n, start);
    n += put_test_varint(p + n, step);
    for (int k = 0; k < nbins; k++)
        p[n++] = (unsigned char)(empty_ends && (k < 2 || k >= nbins - 2 || k % 5 == 0) ? 0 : 1 + k % 100);
    return n;
}

/*
 * Bins of one store in several blocks, each block's indices below or around the one before (a stream may
 * order its blocks so), and deltas that turn back within a block: the commit adds a stretch of the bin log at a
 * time from the range of its first and last bins, and the bins past that range, and empty bins at its ends
 * (the AVX-512 kernel logs empty bins), must leave the same sketch as one bin at a time.
 */
Test(sketch, bins_out_of_index_order_read_as_one_at_a_time)
{
    tschunk_sketch *like, *b;
    cr_assert_eq(tschunk_sketch_create(&like, NULL), 0);
    cr_assert_eq(tschunk_sketch_create(&b, NULL), 0);
    for (int i = 1; i <= 50; i++) tschunk_sketch_add(b, 3.0 * i); /* bins for the merged-into case */
    static unsigned char base[1 << 12];
    size_t base_n = tschunk_sketch_encode(b, base, sizeof base, 0);
    const int sizes[] = {3, 20, 40, 70, 100};
    const int64_t second_starts[] = {-200, 0, 30, 60, 95, 400};
    int cases = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t c = 0; c < sizeof second_starts / sizeof *second_starts; c++)
            for (int form = 0; form < 8; form++) {
                unsigned char bytes[1024];
                /* the first block up from 100, or down from 250 (its empty end then above every other bin) */
                size_t n = put_contiguous_block(bytes, sizes[a], form & 4 ? 250 : 100, form & 4 ? -1 : 1, form & 1);
                if (form & 2) { /* index deltas: up by one, then back by ten, the counts never empty */
                    bytes[n++] = 0x05;
                    n += put_test_uvarint(bytes + n, (uint64_t)sizes[a]);
                    for (int k = 0; k < sizes[a]; k++) {
                        int64_t d = k == 0 ? second_starts[c] : k % 7 == 6 ? -10 : 1;
                        n += put_test_varint(bytes + n, d);
                        bytes[n++] = (unsigned char)(1 + k % 50);
                    }
                } else {
                    n += put_contiguous_block(bytes + n, sizes[a], second_starts[c], 1, form & 1);
                }
                char label[64];
                snprintf(label, sizeof label, "size %d second %zu form %d", sizes[a], c, form);
                cr_assert_eq(readers_agree_on(like, bytes, n, NULL, 0, label), 0, "%s: refused", label);
                cr_assert_eq(readers_agree_on(like, bytes, n, base, base_n, label), 0, "%s: refused", label);
                cases++;
            }
    cr_log_info("%d streams compared", cases);
    tschunk_sketch_free(like);
    tschunk_sketch_free(b);
}

Test(sketch, index_limits_skip_only_what_pow_rounds_away)
{
    const double bases[] = {2.718281828459045 /* Java's Math.E */, 2.0};
    for (int b = 0; b < 2; b++) {
        for (double x = -1100; x > -1e300; x *= 7) cr_assert(tsc_bits_of(pow(bases[b], x)) == 0, "b %d x %g", b, x);
        for (double x = 1100; x < 1e300; x *= 7) cr_assert(isinf(pow(bases[b], x)) && pow(bases[b], x) > 0);
    }
}

/*
 * decode_new gives the sketch decode_merge gives into a new sketch of the stream's mapping, wherever the
 * mapping block stands, and a second mapping that differs is CORRUPT at its offset. (Reading a stream
 * whose mapping comes first straight into the new sketch, in one pass with no log, was tried in 0.11.0:
 * 12% slower; likeliest, not confirmed, the adds reading the kernel's lanes right after its stores.)
 */
Test(sketch, decode_new_equals_decode_merge_into_a_new_sketch)
{
    uint64_t rng = 41;
    static unsigned char enc[1 << 15], moved[1 << 15], want[1 << 15], got[1 << 15];
    for (int round = 0; round < 300; round++) {
        tschunk_sketch *s = random_sketch(&rng, round), *x, *y;
        unsigned flags = (round & 4 ? TSCHUNK_SKETCH_SPARSE : 0) | (round & 8 ? TSCHUNK_SKETCH_EXACT_STATS : 0);
        size_t n = tschunk_sketch_encode(s, enc, sizeof enc, flags);
        size_t bare = tschunk_sketch_encode(s, moved, sizeof moved, flags | TSCHUNK_SKETCH_OMIT_MAPPING);
        /* the same stream with its mapping block last: the block starts where the two encodings part
         * (its flag's type differs from any other block's) */
        size_t mapping_at = 0;
        while (mapping_at < bare && enc[mapping_at] == moved[mapping_at]) mapping_at++;
        cr_assert_eq(enc[mapping_at] & 3, 2);
        memcpy(moved + bare, enc + mapping_at, 17);
        const unsigned char *streams[2] = {enc, moved};
        size_t sizes[2] = {n, bare + 17};
        for (int k = 0; k < 2; k++) {
            const tsc_mapping *m = &s->mapping;
            cr_assert_eq(tschunk_sketch_decode_new(&x, streams[k], sizes[k], NULL, NULL), 0, "round %d form %d", round,
                         k);
            cr_assert_eq(tschunk_sketch_create_mapping(&y, m->kind, m->gamma, m->index_offset, NULL), 0);
            cr_assert_eq(tschunk_sketch_decode_merge(y, streams[k], sizes[k], NULL), 0);
            size_t a = tschunk_sketch_encode(y, want, sizeof want, TSCHUNK_SKETCH_EXACT_STATS);
            size_t b = tschunk_sketch_encode(x, got, sizeof got, TSCHUNK_SKETCH_EXACT_STATS);
            cr_assert(a == b && !memcmp(want, got, a), "round %d form %d: sketches differ", round, k);
            tschunk_sketch_free(x);
            tschunk_sketch_free(y);
        }
        /* a second mapping block, one bit of gamma off, after the stream */
        memcpy(moved, enc, n);
        memcpy(moved + n, enc + mapping_at, 17);
        moved[n + 1] ^= 1;
        size_t at = 0;
        x = NULL;
        cr_assert_eq(tschunk_get_error_code(tschunk_sketch_decode_new(&x, moved, n + 17, NULL, &at)),
                     TSCHUNK_ERROR_CORRUPT, "round %d", round);
        cr_assert(x == NULL && at == n, "round %d: offset %zu", round, at);
        tschunk_sketch_free(s);
    }
}

Test(sketch, mappings_match_sketches_java)
{
    cr_assert_eq(for_each_vector(mapping_matches), 240);
}

static size_t encoded_checked;

/* A bins-only sketch of the same values is sketches-java's plain DDSketch: its bytes, with or without the
 * exact-statistics flag (it has none to write), its count and its quantiles, unclamped. */
static void plain_sketch_matches(const vec *v, unsigned flags, int same_store_semantics)
{
    static unsigned char buf[MAXHEX];
    static char hex[2 * MAXHEX];
    tschunk_sketch *s = sketch_of(v, 1);
    for (int exact_flag = 0; exact_flag < 2; exact_flag++) {
        size_t n = tschunk_sketch_encode(s, buf, sizeof buf, flags | (exact_flag ? TSCHUNK_SKETCH_EXACT_STATS : 0));
        cr_assert(!tschunk_is_error(n));
        tohex(buf, n, hex);
        cr_assert_str_eq(hex, v->encoded, "%s: bins-only bytes differ from sketches-java's plain ones", v->name);
    }
    for (int i = 0; i < 9 && same_store_semantics; i++) {
        double got;
        if (tschunk_sketch_quantile(s, qs[i], &got) == 0)
            check_quantile(v, "bins-only quantile", qs[i], got, v->quantiles[i]);
    }
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    cr_assert_eq(st.exact, 0, "%s", v->name);
    cr_assert_eq(wl_bits(st.count), strtoull(v->stats[0], NULL, 16), "%s: bins-only count", v->name);
    tschunk_sketch_free(s);
}

static void encoding_matches(const vec *v)
{
    int dense = !strcmp(v->store, "dense"), sparse = !strcmp(v->store, "sparse");
    if (strcmp(v->producer, "java") || !(dense || sparse) || !v->has_values) return;
    tschunk_sketch *s = sketch_of(v, 0);
    static unsigned char buf[MAXHEX];
    static char hex[2 * MAXHEX];
    unsigned flags = sparse ? TSCHUNK_SKETCH_SPARSE : 0;
    size_t n = tschunk_sketch_encode(s, buf, sizeof buf, flags);
    cr_assert(!tschunk_is_error(n));
    cr_assert_leq(n, tschunk_sketch_encode_bound(s));
    tohex(buf, n, hex);
    cr_assert_str_eq(hex, v->encoded, "%s: bytes differ from sketches-java", v->name);
    n = tschunk_sketch_encode(s, buf, sizeof buf, flags | TSCHUNK_SKETCH_OMIT_MAPPING);
    tohex(buf, n, hex);
    cr_assert_str_eq(hex, v->encoded_omit, "%s: omit-mapping bytes", v->name);
    n = tschunk_sketch_encode(s, buf, sizeof buf, flags | TSCHUNK_SKETCH_EXACT_STATS);
    tohex(buf, n, hex);
    cr_assert_str_eq(hex, v->exact_encoded, "%s: exact-statistics bytes", v->name);
    /* Exactly enough room gives the same bytes and writes nothing past them (the encoder stores 8 bytes
     * at a time while it has room, and writes the sparse form before it knows the dense one wins). */
    static unsigned char exact[MAXHEX + 16];
    memset(exact, 0xa5, sizeof exact);
    cr_assert_eq(tschunk_sketch_encode(s, exact, n, flags | TSCHUNK_SKETCH_EXACT_STATS), n);
    cr_assert(!memcmp(exact, buf, n), "%s: bytes differ with an exact-size buffer", v->name);
    for (size_t i = n; i < n + 16 && i < sizeof exact; i++) cr_assert_eq(exact[i], 0xa5, "%s: byte %zu past the end", v->name, i);
    /* One byte short is refused. */
    if (n > 0) cr_assert_eq(tschunk_get_error_code(tschunk_sketch_encode(s, buf, n - 1, flags | TSCHUNK_SKETCH_EXACT_STATS)),
                 TSCHUNK_ERROR_DST_TOO_SMALL);
    /* tschunk's store is dense in memory; sketches-java's SparseStore totals its bins with
     * DoubleStream.sum (compensated), which moves the rank for non-integer weights. The bytes
     * and bins are still identical (checked above); its quantiles are compared only unweighted. */
    int same_store_semantics = dense || !v->weighted;
    for (int i = 0; i < 9 && same_store_semantics; i++) {
        double got;
        if (tsc_sketch_quantile_unclamped(s, qs[i], &got) == 0) check_quantile(v, "quantile", qs[i], got, v->quantiles[i]);
        if (tschunk_sketch_quantile(s, qs[i], &got) == 0) check_quantile(v, "exact quantile", qs[i], got, v->exact_quantiles[i]);
    }
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    cr_assert_eq(wl_bits(st.count), strtoull(v->stats[0], NULL, 16), "%s: count", v->name);
    cr_assert_eq(wl_bits(st.sum), strtoull(v->stats[1], NULL, 16), "%s: sum", v->name);
    tschunk_sketch_free(s);
    plain_sketch_matches(v, flags, same_store_semantics);
    encoded_checked++;
}

Test(sketch, encoder_writes_sketches_java_bytes_and_quantiles)
{
    encoded_checked = 0;
    for_each_vector(encoding_matches);
    /* 80 Java dense and sparse vectors, less the 10 whose 100,000-value inputs are not copied. */
    cr_assert_eq(encoded_checked, 70, "%zu vectors encoded", encoded_checked);
}

static size_t decoded_checked;

static void decoding_matches(const vec *v)
{
    static unsigned char buf[MAXHEX];
    size_t n = unhex(v->encoded, buf), at = 0;
    tschunk_sketch *s;
    size_t r = tschunk_sketch_decode_new(&s, buf, n, &(tschunk_sketch_options){0, 0, 1u << 16, 0, {0, 0, 0}, 0}, &at);
    cr_assert_eq(r, 0, "%s: %s at byte %zu", v->name, tschunk_error_name(r), at);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    cr_assert_eq(wl_bits(st.zero_count), v->decoded_zero, "%s: zero count", v->name);
    for (int neg = 0; neg < 2; neg++) {
        bin_check c = {v, neg, 0};
        tschunk_sketch_bins(s, neg, visit_bin, &c);
        cr_assert_eq(c.seen, count_bins(v, neg), "%s: number of bins", v->name);
    }
    for (int i = 0; i < 9; i++) {
        double got;
        if (tsc_sketch_quantile_unclamped(s, qs[i], &got) == 0)
            check_quantile(v, "decoded quantile", qs[i], got, v->decoded_quantiles[i]);
    }
    tschunk_sketch_free(s);
    /* The exact-statistics stream gives the exact count, sum, min and max. */
    n = unhex(v->exact_encoded, buf);
    cr_assert_eq(tschunk_sketch_decode_new(&s, buf, n, NULL, NULL), 0, "%s: exact stream", v->name);
    tschunk_sketch_get_stats(s, &st);
    cr_assert(st.exact);
    cr_assert_eq(wl_bits(st.count), strtoull(v->stats[0], NULL, 16), "%s: exact count", v->name);
    if (strcmp(v->stats[1], "null")) cr_assert_eq(wl_bits(st.sum), strtoull(v->stats[1], NULL, 16), "%s: exact sum", v->name);
    if (st.count > 0) {
        cr_assert_eq(wl_bits(st.min), strtoull(v->stats[2], NULL, 16), "%s: exact min", v->name);
        cr_assert_eq(wl_bits(st.max), strtoull(v->stats[3], NULL, 16), "%s: exact max", v->name);
    }
    tschunk_sketch_free(s);
    decoded_checked++;
}

Test(sketch, decoder_reads_every_java_and_go_stream, .timeout = 60)
{
    decoded_checked = 0;
    for_each_vector(decoding_matches);
    cr_assert_eq(decoded_checked, 240);
}

/* ---- behaviour beyond the vectors ----------------------------------------------------------- */

static const char *const LOG001 = "02fd4a815abf52f03f0000000000000000"; /* logarithmic 0.01 mapping block */

static size_t decode_hex_into(tschunk_sketch *s, const char *hex, size_t *at)
{
    static unsigned char buf[4096];
    size_t n = unhex(hex, buf);
    return tschunk_sketch_decode_merge(s, buf, n, at);
}

static tschunk_sketch *log001(void)
{
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, NULL), 0); /* default: logarithmic 0.01 */
    return s;
}

Test(sketch, decoder_edge_cases_of_the_spec)
{
    struct { const char *after_mapping; tschunk_error_code want; } cases[] = {
        {"", TSCHUNK_OK},                      /* empty stream into a sketch with a mapping */
        {"0802", TSCHUNK_ERROR_CORRUPT},       /* unknown feature flag */
        {"0002", TSCHUNK_ERROR_CORRUPT},
        {"050244", TSCHUNK_ERROR_TRUNCATED},   /* store truncated, count missing */
        {"0502440288", TSCHUNK_ERROR_TRUNCATED},
        {"01014402", TSCHUNK_ERROR_CORRUPT},   /* store subflag 0 */
        {"110501000002", TSCHUNK_ERROR_CORRUPT}, /* store subflag 4 */
        {"05010002ff", TSCHUNK_ERROR_CORRUPT}, /* trailing 0xff */
        {"1600", TSCHUNK_ERROR_CORRUPT},       /* mapping subflag 5 */
        {"05010082808080808080808030", TSCHUNK_ERROR_CORRUPT}, /* count -1 */
        {"050180808080100" "2", TSCHUNK_ERROR_CORRUPT}, /* index 2^31 */
        {"0501feffffffffffffffff02", TSCHUNK_ERROR_CORRUPT}, /* index 2^63 - 1 */
        {"04020403", TSCHUNK_OK},             /* zero count twice: 3 */
        {"0501000205010004", TSCHUNK_OK},     /* bin 0 twice: 4 */
        {"0d0300040204" "06", TSCHUNK_OK},    /* contiguous, delta 2 */
        {"0d030a01020406", TSCHUNK_OK},       /* contiguous, delta -1 */
        {"0903" "0a0303", TSCHUNK_OK},        /* index deltas 5, -2, -2 */
        {"050100e7ffffffffffffff80", TSCHUNK_OK}, /* 9-byte count 2^52 - 2 */
        {"05ffffffffffffffff7f", TSCHUNK_ERROR_TRUNCATED}, /* absurd bin count */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tschunk_sketch *s = log001();
        char hex[256];
        snprintf(hex, sizeof hex, "%s%s", LOG001, cases[i].after_mapping);
        size_t at = 0, r = decode_hex_into(s, hex, &at);
        cr_assert_eq((int)tschunk_get_error_code(r), (int)cases[i].want, "case %zu (%s): %s at %zu", i,
                     cases[i].after_mapping, tschunk_error_name(r), at);
        tschunk_sketch_free(s);
    }
    /* Spot checks of what decoded. */
    tschunk_sketch *s = log001();
    cr_assert_eq(decode_hex_into(s, "0d030a01020406", NULL), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    cr_assert_eq(st.count, 11);
    cr_assert(!st.exact, "bins without COUNT give derived statistics");
    tschunk_sketch_free(s);
}

Test(sketch, failed_decode_changes_nothing_and_names_the_offset)
{
    tschunk_sketch *s = log001();
    for (int i = 1; i < 100; i++) tschunk_sketch_add(s, i * 1.5);
    unsigned char before[4096], after[4096];
    size_t n1 = tschunk_sketch_encode(s, before, sizeof before, TSCHUNK_SKETCH_EXACT_STATS);
    char hex[256];
    snprintf(hex, sizeof hex, "%s05020002" "0a02" "05", LOG001); /* a good bin, then a truncated block */
    size_t at = 0;
    cr_assert_eq(tschunk_get_error_code(decode_hex_into(s, hex, &at)), TSCHUNK_ERROR_TRUNCATED);
    cr_assert_eq(at, 24, "offset of the missing byte (block flag at 23), got %zu", at);
    size_t n2 = tschunk_sketch_encode(s, after, sizeof after, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert(n1 == n2 && memcmp(before, after, n1) == 0, "a failed decode changed the sketch");
    /* A different mapping is refused, not mis-merged. */
    cr_assert_eq(tschunk_get_error_code(decode_hex_into(s, "022a7839052fa7f03f000000000000000005010002", NULL)),
                 TSCHUNK_ERROR_NOT_MERGEABLE);
    tschunk_sketch_free(s);
}

Test(sketch, untrackable_values_are_refused_and_change_nothing)
{
    tschunk_sketch *s = log001();
    const double bad[] = {NAN, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add(s, bad[i])), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add_weighted(s, 1, -1)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add_weighted(s, 1, NAN)), TSCHUNK_ERROR_UNTRACKABLE);
    double q;
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_quantile(s, 0.5, &q)), TSCHUNK_ERROR_STAGE);
    /* Zero, -0.0 and subnormals go to the zero bucket. */
    cr_assert_eq(tschunk_sketch_add(s, 0.0), 0);
    cr_assert_eq(tschunk_sketch_add(s, -0.0), 0);
    cr_assert_eq(tschunk_sketch_add(s, 1e-310), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    cr_assert_eq(st.zero_count, 3);
    cr_assert_eq(st.count, 3);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_quantile(s, 1.5, &q)), TSCHUNK_ERROR_BAD_PARAMETER);
    tschunk_sketch_free(s);
}

/* A mapping whose index offset puts INT32_MAX (or INT32_MIN) inside the double range: the indexable range ends
 * there (computed with pow, not its far-away shortcut), values past the top are refused, values under the bottom go
 * to the zero bucket, and what is kept answers within the relative accuracy. */
Test(sketch, index_offset_near_int32_limits_bounds_the_indexable_range)
{
    const double gamma = 1.02, multiplier = 1 / log(gamma), ra = (gamma - 1) / (gamma + 1);
    tschunk_sketch *high, *low;
    cr_assert_eq(tschunk_sketch_create_mapping(&high, TSCHUNK_MAPPING_LOGARITHMIC, gamma, 2147483647.0 - 1000, NULL), 0);
    cr_assert_eq(tschunk_sketch_create_mapping(&low, TSCHUNK_MAPPING_LOGARITHMIC, gamma, -2147483648.0 + 1000, NULL), 0);
    /* sketches-java's limits: one index inside the int range's ends (1.5e8 and 6.8e-9 here). */
    double top = exp(1000 / multiplier - 1), bottom = exp(-1000 / multiplier + 1);
    cr_assert_eq(tschunk_sketch_add(high, top * 0.99), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add(high, top * 1.01)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add(high, -top * 1.01)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_sketch_add(low, bottom * 1.01), 0);
    cr_assert_eq(tschunk_sketch_add(low, bottom * 0.99), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(low, &st);
    cr_assert(st.count == 2 && st.zero_count == 1, "count %g, zero count %g", st.count, st.zero_count);
    double q;
    cr_assert_eq(tschunk_sketch_quantile(high, 0.5, &q), 0);
    cr_assert(fabs(q - top * 0.99) <= ra * top * 0.99, "%.17g against %.17g", q, top * 0.99);
    cr_assert_eq(tschunk_sketch_quantile(low, 1, &q), 0);
    cr_assert(fabs(q - bottom * 1.01) <= ra * bottom * 1.01, "%.17g against %.17g", q, bottom * 1.01);
    /* The range the stats report is the one the adds keep (0.49.6). */
    tschunk_sketch_get_stats(high, &st);
    cr_assert(st.max_indexable >= top * 0.99 && st.max_indexable < top * 1.01, "%.17g", st.max_indexable);
    tschunk_sketch_get_stats(low, &st);
    cr_assert(st.min_indexable >= bottom * 0.99 && st.min_indexable < bottom * 1.01, "%.17g", st.min_indexable);
    tschunk_sketch_free(high);
    tschunk_sketch_free(low);
}

/* A fine accuracy narrows the indexable range (the int32 indices span fewer octaves), as in the reference
 * libraries; tschunk_sketch_stats says where it ends, and the adds keep to it exactly: at min_indexable a value
 * counts as zero, above it it gets a bin; at max_indexable it gets a bin, above it it is refused. */
Test(sketch, stats_give_the_indexable_range)
{
    const struct {
        tschunk_mapping_kind kind;
        double accuracy;
    } cases[] = {{TSCHUNK_MAPPING_LOGARITHMIC, 0.01}, {TSCHUNK_MAPPING_CUBIC, 0.01}, {TSCHUNK_MAPPING_CUBIC, 1e-9},
                 {TSCHUNK_MAPPING_LOGARITHMIC, 1e-9}, {TSCHUNK_MAPPING_LINEAR, 1e-6}, {TSCHUNK_MAPPING_QUARTIC, 0.05}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tschunk_sketch *s;
        tschunk_sketch_options o = {cases[i].kind, cases[i].accuracy, 0, 0, {0, 0, 0}, 0};
        cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
        tschunk_sketch_stats st;
        tschunk_sketch_get_stats(s, &st);
        double lo = st.min_indexable, hi = st.max_indexable;
        cr_assert(lo > 0 && lo < 1 && hi > 1 && isfinite(hi), "case %zu: [%g, %g]", i, lo, hi);
        if (cases[i].accuracy >= 0.01) cr_assert(lo < 3e-308 && hi > 1e308, "case %zu: [%g, %g]", i, lo, hi);
        if (cases[i].accuracy <= 1e-9) cr_assert(lo > 1e-9 && hi < 1e9, "case %zu: [%g, %g] is not narrower", i, lo, hi);
        cr_assert_eq(tschunk_sketch_add(s, lo), 0);
        cr_assert_eq(tschunk_sketch_add(s, nextafter(lo, 1)), 0);
        cr_assert_eq(tschunk_sketch_add(s, -hi), 0);
        cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add(s, nextafter(hi, INFINITY))),
                     TSCHUNK_ERROR_UNTRACKABLE);
        tschunk_sketch_get_stats(s, &st);
        cr_assert(st.count == 3 && st.zero_count == 1 && st.positive_bins == 1 && st.negative_bins == 1,
                  "case %zu: count %g zero %g bins %u/%u", i, st.count, st.zero_count, st.positive_bins,
                  st.negative_bins);
        tschunk_sketch_free(s);
    }
}

/* Counts past 2^53 round in the running sum: the rank q * (count - 1) of q = 1 can equal the whole count, which
 * no bin's running sum exceeds; the answer is then the largest bin's value, not 0. */
Test(sketch, top_quantile_of_counts_past_2_53_is_the_largest_bin)
{
    tschunk_sketch *s = log001();
    cr_assert_eq(tschunk_sketch_add_weighted(s, 2, 1e17), 0);
    cr_assert_eq(tschunk_sketch_add_weighted(s, 1000, 1), 0);
    double q;
    cr_assert_eq(tschunk_sketch_quantile(s, 1, &q), 0);
    cr_assert(fabs(q - 1000) <= 0.01 * 1000, "%.17g", q);
    tschunk_sketch_free(s);
}

/* Found by fuzz_sketch_roundtrip: huge trackable values overflow the exact sum to -inf; the stream is
 * still what Java writes, and it must decode. */
Test(sketch, overflowed_sum_round_trips)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.025, 0, 0, {0, 0, 0}, 0};
    tschunk_sketch *s, *back;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    cr_assert_eq(tschunk_sketch_add(s, -1.6e308), 0);
    cr_assert_eq(tschunk_sketch_add(s, -1.6e308), 0);
    static unsigned char buf[4096], again[4096];
    size_t n = tschunk_sketch_encode(s, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert(!tschunk_is_error(n));
    cr_assert_eq(tschunk_sketch_decode_new(&back, buf, n, &o, NULL), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(back, &st);
    cr_assert(isinf(st.sum) && st.sum < 0);
    cr_assert_eq(st.count, 2);
    cr_assert_eq(tschunk_sketch_encode(back, again, sizeof again, TSCHUNK_SKETCH_EXACT_STATS), n);
    cr_assert_arr_eq(again, buf, n);
    tschunk_sketch_free(s);
    tschunk_sketch_free(back);
}

/* Counts stay finite: the compact encoding holds finite counts only (our decoder refuses others), so a weight, a
 * merge or a decoded stream that would take a count past DBL_MAX is refused and changes nothing (two weights of
 * 1e308 once made a sketch whose encoding our own decoder refused). */
Test(sketch, counts_that_would_overflow_are_refused)
{
    tschunk_sketch *s = log001(), *other = log001();
    cr_assert_eq(tschunk_sketch_add_weighted(s, 1.01, 1e308), 0);
    cr_assert_eq(tschunk_sketch_add_weighted(other, 2.5, 1e308), 0);
    static unsigned char before[4096], after[4096], stream[4096];
    size_t n = tschunk_sketch_encode(s, before, sizeof before, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add_weighted(s, 1.01, 1e308)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add_weighted(s, 0, 1e308)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add_weighted(s, 1, INFINITY)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_merge(s, other)), TSCHUNK_ERROR_UNTRACKABLE);
    size_t m = tschunk_sketch_encode(other, stream, sizeof stream, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_decode_merge(s, stream, m, NULL)), TSCHUNK_ERROR_UNTRACKABLE);
    cr_assert_eq(tschunk_sketch_encode(s, after, sizeof after, TSCHUNK_SKETCH_EXACT_STATS), n);
    cr_assert_arr_eq(after, before, n, "a refused add, merge or decode changed the sketch");
    /* What is refused at the limit is taken just below it, and round-trips. */
    cr_assert_eq(tschunk_sketch_add_weighted(s, 1.01, 7e307), 0);
    n = tschunk_sketch_encode(s, before, sizeof before, TSCHUNK_SKETCH_EXACT_STATS);
    tschunk_sketch *back;
    cr_assert_eq(tschunk_sketch_decode_new(&back, before, n, NULL, NULL), 0);
    cr_assert_eq(tschunk_sketch_encode(back, after, sizeof after, TSCHUNK_SKETCH_EXACT_STATS), n);
    cr_assert_arr_eq(after, before, n);
    /* A stream whose own COUNT features add up past DBL_MAX is corrupt. */
    unsigned char twice[64];
    size_t k = 0;
    for (int i = 0; i < 2; i++) { /* COUNT (0xa0) 1e308 as a varfloat (up to 9 bytes), as the encoder writes it */
        tschunk_sketch *one = log001();
        cr_assert_eq(tschunk_sketch_add_weighted(one, 1.01, 1e308), 0);
        size_t w = tschunk_sketch_encode(one, stream, sizeof stream, TSCHUNK_SKETCH_EXACT_STATS);
        cr_assert(w > 10 && stream[0] == 0xa0, "COUNT first, as sketches-java: %02x", stream[0]);
        size_t len = 1;
        while (len < 9 && (stream[len] & 0x80)) len++;
        memcpy(twice + k, stream, len + 1);
        k += len + 1;
        tschunk_sketch_free(one);
    }
    size_t at = 0;
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_decode_merge(other, twice, k, &at)), TSCHUNK_ERROR_CORRUPT);
    cr_assert_eq(at, k / 2, "the second COUNT, at %zu", at);
    tschunk_sketch_free(back);
    tschunk_sketch_free(other);
    tschunk_sketch_free(s);
}

/* Bins merged past DBL_MAX saturate there (a stream without COUNT is taken from its bins): the sketch still encodes
 * to a stream that decodes; it once held an infinite bin, which our decoder refuses. */
Test(sketch, bins_merged_past_dbl_max_saturate)
{
    tschunk_sketch *one = log001(), *s = log001(), *back;
    cr_assert_eq(tschunk_sketch_add_weighted(one, 1.5, 1e308), 0);
    static unsigned char stream[256], out[256];
    size_t n = tschunk_sketch_encode(one, stream, sizeof stream, 0); /* no COUNT */
    cr_assert(!tschunk_is_error(n));
    for (int i = 0; i < 3; i++) cr_assert_eq(tschunk_sketch_decode_merge(s, stream, n, NULL), 0);
    size_t m = tschunk_sketch_encode(s, out, sizeof out, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert(!tschunk_is_error(m));
    cr_assert_eq(tschunk_sketch_decode_new(&back, out, m, NULL, NULL), 0, "our own encoding must decode");
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(back, &st);
    cr_assert(st.count == DBL_MAX && st.positive_bins == 1, "count %g, %u bins", st.count, st.positive_bins);
    /* Collapsing folds bins together: the fold saturates as well. */
    tschunk_sketch_options few = {TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 16, 0, {0, 0, 0}, 0};
    tschunk_sketch *small, *far = log001();
    cr_assert_eq(tschunk_sketch_create(&small, &few), 0);
    for (int i = 0; i < 40; i++) {
        tschunk_sketch_clear(far);
        cr_assert_eq(tschunk_sketch_add_weighted(far, 1.5 * (i + 1), 1e308), 0);
        n = tschunk_sketch_encode(far, stream, sizeof stream, 0);
        cr_assert_eq(tschunk_sketch_decode_merge(small, stream, n, NULL), 0);
    }
    m = tschunk_sketch_encode(small, out, sizeof out, TSCHUNK_SKETCH_EXACT_STATS);
    tschunk_sketch *back2;
    cr_assert_eq(tschunk_sketch_decode_new(&back2, out, m, NULL, NULL), 0, "collapsed bins must stay finite");
    tschunk_sketch_free(back2);
    tschunk_sketch_free(small);
    tschunk_sketch_free(far);
    tschunk_sketch_free(back);
    tschunk_sketch_free(s);
    tschunk_sketch_free(one);
}

Test(sketch, bounded_bins_collapse_and_keep_accuracy_where_kept)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 64, 0, {0, 0, 0}, 0};
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    /* Values over 12 decades need ~1400 bins: only the top 64 are kept. */
    uint64_t rng = 3;
    double sorted_max = 0;
    for (int i = 0; i < 100000; i++) {
        double v = pow(10, wl_uniform(&rng) * 12 - 6);
        if (v > sorted_max) sorted_max = v;
        cr_assert_eq(tschunk_sketch_add(s, v), 0);
    }
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    cr_assert_leq(st.positive_bins, 64);
    cr_assert_eq(st.count, 100000);
    double q;
    cr_assert_eq(tschunk_sketch_quantile(s, 1, &q), 0);
    cr_assert_leq(fabs(q - sorted_max) / sorted_max, 0.01);
    cr_assert_eq(tschunk_sketch_quantile(s, 0.999, &q), 0);
    cr_assert_geq(q, 9.0e5 * 0.98); /* the top decade is still resolved */
    tschunk_sketch_free(s);
}

Test(sketch, merge_equals_sketch_of_the_union)
{
    tschunk_sketch *a = log001(), *b = log001(), *all = log001();
    uint64_t rng = 9;
    for (int i = 0; i < 20000; i++) {
        double v = (wl_uniform(&rng) - 0.3) * 1000;
        tschunk_sketch_add(i & 1 ? a : b, v);
        tschunk_sketch_add(all, v);
    }
    cr_assert_eq(tschunk_sketch_merge(a, b), 0);
    for (int i = 0; i < 9; i++) {
        double x, y;
        cr_assert_eq(tschunk_sketch_quantile(a, qs[i], &x), 0);
        cr_assert_eq(tschunk_sketch_quantile(all, qs[i], &y), 0);
        cr_assert_eq(wl_bits(x), wl_bits(y), "q=%g", qs[i]);
    }
    /* Through bytes: decode-merge of b's encoding into a copy of a. */
    tschunk_sketch *c = log001(), *d = log001();
    unsigned char buf[8192];
    size_t n = tschunk_sketch_encode(b, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert_eq(tschunk_sketch_decode_merge(c, buf, n, NULL), 0);
    n = tschunk_sketch_encode(all, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert_eq(tschunk_sketch_decode_merge(d, buf, n, NULL), 0);
    tschunk_sketch_stats sc, sd;
    tschunk_sketch_get_stats(c, &sc);
    tschunk_sketch_get_stats(d, &sd);
    cr_assert(sc.exact && sd.exact);
    tschunk_sketch *cubic;
    tschunk_sketch_options co = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    cr_assert_eq(tschunk_sketch_create(&cubic, &co), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_merge(a, cubic)), TSCHUNK_ERROR_NOT_MERGEABLE);
    tschunk_sketch_free(a); tschunk_sketch_free(b); tschunk_sketch_free(all);
    tschunk_sketch_free(c); tschunk_sketch_free(d); tschunk_sketch_free(cubic);
}

/* decode_merge keeps up to 256 bins from its checking pass and parses again beyond that: both ways
 * must leave the same sketch as merging the decoded sketch. */
Test(sketch, decode_merge_equals_merge_below_and_above_the_bin_log)
{
    const int sizes[] = {10, TSC_SKETCH_LOGGED_BINS - 1, TSC_SKETCH_LOGGED_BINS, TSC_SKETCH_LOGGED_BINS + 1, 3000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        tschunk_sketch *src = log001(), *base = log001(), *via_bytes = log001(), *decoded;
        uint64_t rng = 77 + k;
        /* Distinct bins: values spread over sizes[k] consecutive indexes, both signs. */
        for (int i = 0; i < sizes[k]; i++) {
            double v = pow(1.0201, i) * (1 + 0.001 * wl_uniform(&rng));
            tschunk_sketch_add(src, i % 3 ? v : -v);
            tschunk_sketch_add(base, v * 0.5);
            tschunk_sketch_add(via_bytes, v * 0.5);
        }
        static unsigned char buf[1 << 16];
        size_t n = tschunk_sketch_encode(src, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
        cr_assert(!tschunk_is_error(n));
        cr_assert_eq(tschunk_sketch_decode_merge(via_bytes, buf, n, NULL), 0);
        cr_assert_eq(tschunk_sketch_decode_new(&decoded, buf, n, NULL, NULL), 0);
        cr_assert_eq(tschunk_sketch_merge(base, decoded), 0);
        static unsigned char x[1 << 16], y[1 << 16];
        size_t nx = tschunk_sketch_encode(via_bytes, x, sizeof x, TSCHUNK_SKETCH_EXACT_STATS);
        size_t ny = tschunk_sketch_encode(base, y, sizeof y, TSCHUNK_SKETCH_EXACT_STATS);
        cr_assert_eq(nx, ny, "%d bins", sizes[k]);
        cr_assert(!memcmp(x, y, nx), "%d bins: decode_merge and merge differ", sizes[k]);
        tschunk_sketch_free(src); tschunk_sketch_free(base); tschunk_sketch_free(via_bytes); tschunk_sketch_free(decoded);
    }
}

/* Blocks of index deltas without counts (each bin read counts 1; sketches-go writes them), repeated indexes
 * included, below and above the bin log (above it the commit parses the stream again): the bins and the count
 * are the deltas' sums. */
Test(sketch, index_delta_blocks_count_one_a_bin)
{
    const size_t sizes[] = {10, TSC_SKETCH_LOGGED_BINS - 3, TSC_SKETCH_LOGGED_BINS + 500, 3000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        static unsigned char buf[16384];
        size_t n = sizes[k], at = 0;
        buf[at++] = 2 << 2 | 1; /* positive store, index deltas only */
        at += tsc_put_uvarint(buf + at, n);
        at += tsc_put_uvarint(buf + at, tsc_zigzag(100)); /* the first bin: index 100 */
        for (size_t i = 1; i < n; i++) buf[at++] = i % 5 ? 2 : 0; /* zigzag +1, or 0: the same bin again */
        buf[at++] = 2 << 2 | 3; /* negative store: three bins, -7, -7 and -5 */
        at += tsc_put_uvarint(buf + at, 3);
        buf[at++] = 13, buf[at++] = 0, buf[at++] = 4;
        tschunk_sketch *s; /* room for every bin: no collapse */
        tschunk_sketch_options o = {TSCHUNK_MAPPING_LOGARITHMIC, 0.01, 1u << 16, 0, {NULL, NULL, NULL}, 0};
        cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
        cr_assert_eq(tschunk_sketch_decode_merge(s, buf, at, NULL), 0, "%zu bins", n);
        static visited_bins pos, neg;
        pos.n = neg.n = 0;
        tschunk_sketch_bins(s, 0, collect_bin, &pos);
        tschunk_sketch_bins(s, 1, collect_bin, &neg);
        int32_t index = 100;
        size_t bin = 0;
        for (size_t i = 1; i <= n; i++) { /* the bin of i - 1 ends when bin i moves on (or at the end) */
            double count = 1;
            while (i < n && i % 5 == 0) count++, i++; /* a repeat adds to the bin */
            cr_assert_lt(bin, pos.n, "%zu bins: %zu visited", n, pos.n);
            cr_assert_eq(pos.index[bin], index, "%zu bins: bin %zu", n, bin);
            cr_assert_eq(pos.count[bin], count, "%zu bins: bin %zu at %d", n, bin, (int)index);
            bin++, index++;
        }
        cr_assert_eq(pos.n, bin, "%zu bins", n);
        cr_assert(neg.n == 2 && neg.index[0] == -7 && neg.count[0] == 2 && neg.index[1] == -5 && neg.count[1] == 1);
        tschunk_sketch_stats st;
        tschunk_sketch_get_stats(s, &st);
        cr_assert_eq(st.count, (double)(n + 3), "%zu bins", n);
        tschunk_sketch_free(s);
    }
}

static size_t allocations;

static void *counting_alloc(void *opaque, size_t size)
{
    (void)opaque;
    allocations++;
    return malloc(size);
}

static void counting_free(void *opaque, void *p)
{
    (void)opaque;
    allocations--;
    free(p);
}

static void *refusing_alloc(void *opaque, size_t size)
{
    (void)opaque, (void)size;
    return NULL;
}

Test(sketch, allocates_once_through_the_hooks)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.02, 512, 1, {counting_alloc, counting_free, NULL}, 0};
    tschunk_sketch *s;
    allocations = 0;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    cr_assert_eq(allocations, 1);
    for (int i = 0; i < 100000; i++) tschunk_sketch_add(s, (double)(i % 977) - 300.5);
    unsigned char buf[16384];
    size_t n = tschunk_sketch_encode(s, buf, sizeof buf, 0);
    cr_assert(!tschunk_is_error(n));
    cr_assert_eq(tschunk_sketch_decode_merge(s, buf, n, NULL), 0);
    cr_assert_eq(allocations, 1, "adding, encoding and decoding allocated");
    tschunk_sketch *decoded = s; /* not NULL: a refused decode must clear it */
    tschunk_sketch_options refuse = o;
    refuse.allocator.alloc = refusing_alloc;
    cr_assert_eq(tschunk_sketch_decode_new(&decoded, buf, n, &refuse, NULL), TSC_ERROR(ALLOCATION));
    cr_assert_null(decoded);
    tschunk_sketch *none = s;
    cr_assert_eq(tschunk_sketch_create(&none, &refuse), TSC_ERROR(ALLOCATION));
    cr_assert_null(none);
    tschunk_sketch_free(s);
    cr_assert_eq(allocations, 0);
}

/* Round `round`'s values for the add tests below: every third round positive only (the cubic mapping's fast
 * run), the others of both signs with zeros, NaNs and infinities (in wl_double's random bits) and huge magnitudes. */
static void varied_values(double *values, size_t n, int round, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = wl_rng(rng);
        double u = wl_uniform(rng);
        values[i] = round % 3 == 0 ? 1.0 + u * 50
                  : r % 11 == 0 ? wl_double(wl_rng(rng)) : r % 13 == 0 ? 0.0 : r % 17 == 0 ? -INFINITY
                  : (r & 1 ? -1.0 : 1.0) * u * u * 1e3;
    }
}

/* Both mappings, bounded stores or not, collapsing the lowest or the highest bins, by the round's bits. */
static tschunk_sketch_options varied_options(int round)
{
    tschunk_sketch_options o = {round & 1 ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC, 0.02,
                                round & 2 ? 64u : 0u, (uint32_t)(round >> 2 & 1), {0, 0, 0}, 0};
    return o;
}

/* The two sketches encode to the same bytes, exact statistics included. */
static void assert_same_sketch(const tschunk_sketch *want, const tschunk_sketch *got, int round)
{
    static unsigned char a[1 << 16], b[1 << 16];
    size_t na = tschunk_sketch_encode(want, a, sizeof a, TSCHUNK_SKETCH_EXACT_STATS);
    size_t nb = tschunk_sketch_encode(got, b, sizeof b, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert(!tschunk_is_error(na) && na == nb && !memcmp(a, b, na), "round %d: bytes differ", round);
}

/* tschunk_sketch_add_many is n calls of tschunk_sketch_add: same bytes (Kahan sum, bins, collapsed edges,
 * zero count), and it counts what it refuses; in both mappings, over runs longer and shorter than its
 * 128-value batches, with values of both signs, zeros, NaNs, infinities and huge magnitudes. */
Test(sketch, add_many_equals_adding_one_by_one)
{
    static double values[1000];
    uint64_t rng = 23;
    for (int round = 0; round < 40; round++) {
        size_t n = (size_t)(round * 25 % 1000) + 1;
        varied_values(values, n, round, &rng);
        tschunk_sketch_options o = varied_options(round);
        tschunk_sketch *one, *many;
        cr_assert_eq(tschunk_sketch_create(&one, &o), 0);
        cr_assert_eq(tschunk_sketch_create(&many, &o), 0);
        for (int pass = 0; pass < 2; pass++) { /* the second pass adds into a sketch that is not empty */
            size_t refused = 0;
            for (size_t i = 0; i < n; i++) refused += tschunk_is_error(tschunk_sketch_add(one, values[i]));
            cr_assert_eq(tschunk_sketch_add_many(many, values, n), refused, "round %d pass %d", round, pass);
        }
        assert_same_sketch(one, many, round);
        tschunk_sketch_free(one);
        tschunk_sketch_free(many);
    }
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_add_many(NULL, values, 1)), TSCHUNK_ERROR_BAD_PARAMETER);
}

/* A cleared sketch keeps its window and clean slots, and its empty stores take values there on the fast path (0.57.1:
 * no longer sent to the general path while empty): it must end as a new sketch given the same values does, whatever
 * the window the last values left, in both mappings, bounded or not, exact or bins-only. */
Test(sketch, a_cleared_sketch_takes_values_as_a_new_one)
{
    static double values[600];
    uint64_t rng = 31;
    for (int round = 0; round < 48; round++) {
        tschunk_sketch_options o = varied_options(round);
        o.bins_only = (uint32_t)(round >> 3 & 1);
        tschunk_sketch *reused;
        cr_assert_eq(tschunk_sketch_create(&reused, &o), 0);
        for (int cycle = 0; cycle < 4; cycle++) {
            size_t n = 1 + (size_t)(wl_rng(&rng) % 600);
            varied_values(values, n, round + cycle, &rng);
            double scale = ldexp(1, (int)(wl_rng(&rng) % 9) - 4); /* the bins move by up to 4 octaves a cycle */
            for (size_t i = 0; i < n; i++) values[i] *= scale;
            tschunk_sketch *fresh;
            cr_assert_eq(tschunk_sketch_create(&fresh, &o), 0);
            tschunk_sketch_clear(reused);
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(tschunk_sketch_add(reused, values[i]), tschunk_sketch_add(fresh, values[i]),
                             "round %d cycle %d value %zu", round, cycle, i);
            assert_same_sketch(fresh, reused, round * 4 + cycle);
            tschunk_sketch_free(fresh);
        }
        tschunk_sketch_free(reused);
    }
}

/* A sketch stage gives the sketch one tschunk_sketch_add a value gives (bytes, exact statistics), and counts in
 * `refused` what those adds refuse; the sketch sees nothing before a flush (a full stage flushes at the next
 * add); in both mappings, over counts around the stage's size, with the values of the test above. */
Test(sketch, stage_equals_adding_one_by_one)
{
    static double values[1000];
    uint64_t rng = 29;
    for (int round = 0; round < 40; round++) {
        size_t n = round < 6 ? (size_t[]){0, 1, 127, 128, 129, 256}[round] : (size_t)(round * 37 % 1000) + 1;
        varied_values(values, n, round, &rng);
        tschunk_sketch_options o = varied_options(round);
        tschunk_sketch *one, *staged;
        cr_assert_eq(tschunk_sketch_create(&one, &o), 0);
        cr_assert_eq(tschunk_sketch_create(&staged, &o), 0);
        tschunk_sketch_stage stage;
        tschunk_sketch_stage_init(&stage);
        size_t refused = 0;
        for (int pass = 0; pass < 2; pass++) { /* the second pass adds into a sketch that is not empty */
            for (size_t i = 0; i < n; i++) {
                refused += tschunk_is_error(tschunk_sketch_add(one, values[i]));
                cr_assert_eq(tschunk_sketch_stage_add(&stage, staged, values[i]), 0);
                tschunk_sketch_stats stats;
                tschunk_sketch_get_stats(staged, &stats);
                /* each pass starts with an empty stage; a full one is flushed by the next add */
                cr_assert_eq(stage.count, i % TSCHUNK_SKETCH_STAGE_VALUES + 1);
                if (pass == 0 && i < TSCHUNK_SKETCH_STAGE_VALUES)
                    cr_assert_eq(stats.count, 0.0, "round %d: seen before a flush", round);
            }
            cr_assert_eq(tschunk_sketch_stage_flush(&stage, staged), 0);
            cr_assert_eq(stage.count, 0);
            cr_assert_eq(stage.refused, refused, "round %d pass %d", round, pass);
        }
        assert_same_sketch(one, staged, round);
        tschunk_sketch_free(one);
        tschunk_sketch_free(staged);
    }
}

/* A flush that cannot run adds nothing and keeps the stage; the add that met it stages nothing. */
Test(sketch, stage_refusals_keep_the_stage)
{
    tschunk_sketch_options o = {TSCHUNK_MAPPING_CUBIC, 0.01, 0, 0, {0, 0, 0}, 0};
    tschunk_sketch *s;
    cr_assert_eq(tschunk_sketch_create(&s, &o), 0);
    tschunk_sketch_stage stage;
    tschunk_sketch_stage_init(&stage);
    for (int i = 0; i < TSCHUNK_SKETCH_STAGE_VALUES; i++) cr_assert_eq(tschunk_sketch_stage_add(&stage, s, i + 1.0), 0);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_stage_add(&stage, NULL, 7.0)), TSCHUNK_ERROR_BAD_PARAMETER);
    cr_assert_eq(stage.count, TSCHUNK_SKETCH_STAGE_VALUES);
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_stage_flush(NULL, s)), TSCHUNK_ERROR_BAD_PARAMETER);
    stage.count = TSCHUNK_SKETCH_STAGE_VALUES + 1;
    cr_assert_eq(tschunk_get_error_code(tschunk_sketch_stage_flush(&stage, s)), TSCHUNK_ERROR_BAD_PARAMETER);
    stage.count = TSCHUNK_SKETCH_STAGE_VALUES;
    tschunk_sketch_stats stats;
    tschunk_sketch_get_stats(s, &stats);
    cr_assert_eq(stats.count, 0.0);
    cr_assert_eq(tschunk_sketch_stage_add(&stage, s, 0.5), 0); /* flushes the 128, stages this one */
    tschunk_sketch_get_stats(s, &stats);
    cr_assert_eq(stats.count, (double)TSCHUNK_SKETCH_STAGE_VALUES);
    cr_assert_eq(stats.min, 1.0);
    cr_assert_eq(stage.count, 1);
    cr_assert_eq(stage.refused, 0);
    tschunk_sketch_free(s);
}

/* The plain encoding (no statistics) of s and, unless quantiles is NULL, its quantiles at qs, unclamped
 * (sketches-java's plain DDSketch). */
static size_t plain_bytes_and_quantiles(const tschunk_sketch *s, unsigned char *buf, size_t capacity, double *quantiles)
{
    size_t n = tschunk_sketch_encode(s, buf, capacity, 0);
    cr_assert(!tschunk_is_error(n));
    for (int i = 0; i < 9 && quantiles; i++)
        if (tsc_sketch_quantile_unclamped(s, qs[i], &quantiles[i])) quantiles[i] = -1.0; /* empty: STAGE */
    return n;
}

/* 0.57.0: a bins-only sketch is the plain DDSketch of the values whichever way they come in (one at a time, with
 * weights, in bulk, staged, merged, decoded into it), and the exact sketch's bins, count and zero count; its
 * statistics are derived (exact 0), its quantiles unclamped, and it stays bins-only when cleared. */
Test(sketch, bins_only_is_the_plain_sketch_of_every_add)
{
    static double values[1000];
    static unsigned char want[1 << 16], got[1 << 16], stream[1 << 16];
    uint64_t rng = 31;
    for (int round = 0; round < 40; round++) {
        size_t n = (size_t)(round * 29 % 1000) + 1;
        varied_values(values, n, round, &rng);
        tschunk_sketch_options o = varied_options(round), plain_o = o;
        plain_o.bins_only = 1;
        tschunk_sketch *exact, *plain[5];
        cr_assert_eq(tschunk_sketch_create(&exact, &o), 0);
        for (int k = 0; k < 5; k++) cr_assert_eq(tschunk_sketch_create(&plain[k], &plain_o), 0);
        tschunk_sketch_add(plain[0], 3.0); /* cleared below: it must stay bins-only */
        tschunk_sketch_clear(plain[0]);
        tschunk_sketch_stage stage;
        tschunk_sketch_stage_init(&stage);
        size_t refusals = 0;
        for (size_t i = 0; i < n; i++) {
            double weight = round & 8 ? 0.5 + (double)(i % 3) : 1.0;
            size_t refused = tschunk_sketch_add_weighted(exact, values[i], weight);
            refusals += tschunk_is_error(refused);
            cr_assert_eq(tschunk_sketch_add_weighted(plain[0], values[i], weight), refused, "round %d", round);
            size_t single = weight == 1.0 ? tschunk_sketch_add(plain[1], values[i])
                                          : tschunk_sketch_add_weighted(plain[1], values[i], weight);
            cr_assert_eq(single, refused, "round %d", round);
            if (weight == 1.0) cr_assert_eq(tschunk_sketch_stage_add(&stage, plain[3], values[i]), 0);
        }
        if (!(round & 8)) {
            cr_assert_eq(tschunk_sketch_add_many(plain[2], values, n), refusals, "round %d", round);
            cr_assert_eq(tschunk_sketch_stage_flush(&stage, plain[3]), 0);
            cr_assert_eq(stage.refused, refusals, "round %d", round);
        } else { /* weighted: the merge and the decode of the exact sketch stand in for the bulk paths */
            cr_assert_eq(tschunk_sketch_merge(plain[2], exact), 0);
            size_t len = tschunk_sketch_encode(exact, stream, sizeof stream, TSCHUNK_SKETCH_EXACT_STATS);
            cr_assert_eq(tschunk_sketch_decode_merge(plain[3], stream, len, NULL), 0, "round %d", round);
        }
        size_t len = tschunk_sketch_encode(exact, stream, sizeof stream, TSCHUNK_SKETCH_EXACT_STATS);
        cr_assert_eq(tschunk_sketch_decode_merge(plain[4], stream, len, NULL), 0, "round %d", round);
        double want_q[9];
        size_t nw = plain_bytes_and_quantiles(exact, want, sizeof want, want_q);
        tschunk_sketch_stats exact_stats;
        tschunk_sketch_get_stats(exact, &exact_stats);
        for (int k = 0; k < 5; k++) {
            size_t ng = plain_bytes_and_quantiles(plain[k], got, sizeof got, NULL);
            cr_assert(ng == nw && !memcmp(want, got, nw), "round %d, way %d: bytes differ", round, k);
            size_t ne = tschunk_sketch_encode(plain[k], got, sizeof got, TSCHUNK_SKETCH_EXACT_STATS);
            cr_assert(ne == nw && !memcmp(want, got, nw), "round %d, way %d: statistics written", round, k);
            for (int i = 0; i < 9; i++) {
                double q = -1.0;
                if (tschunk_sketch_quantile(plain[k], qs[i], &q)) q = -1.0;
                cr_assert(wl_bits(q) == wl_bits(want_q[i]), "round %d, way %d: q%g %.17g, want %.17g", round, k,
                          qs[i], q, want_q[i]);
            }
            tschunk_sketch_stats st;
            tschunk_sketch_get_stats(plain[k], &st);
            cr_assert(st.exact == 0 && st.count == exact_stats.count && st.zero_count == exact_stats.zero_count,
                      "round %d, way %d: count %g, want %g", round, k, st.count, exact_stats.count);
            tschunk_sketch_free(plain[k]);
        }
        tschunk_sketch_free(exact);
    }
}

/* A sketch whose statistics are derived (a decoded stream had no COUNT) has none to write: asked for exact
 * statistics, the encoder wrote COUNT with min +inf, max -inf and no sum before 0.57.0, a stream that decoded as
 * exact and answered the median -inf. Now it writes the plain form, which decodes as derived again. */
Test(sketch, derived_statistics_are_not_written_as_exact)
{
    tschunk_sketch *s = log001(), *decoded, *again;
    for (int i = 1; i <= 100; i++) tschunk_sketch_add(s, i);
    unsigned char plain[4096], asked[4096];
    size_t n = tschunk_sketch_encode(s, plain, sizeof plain, 0);
    cr_assert_eq(tschunk_sketch_decode_new(&decoded, plain, n, NULL, NULL), 0);
    size_t m = tschunk_sketch_encode(decoded, asked, sizeof asked, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert(m == n && !memcmp(plain, asked, n), "statistics written for a sketch that has none");
    cr_assert_eq(tschunk_sketch_decode_new(&again, asked, m, NULL, NULL), 0);
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(again, &st);
    double median, want;
    cr_assert_eq(tschunk_sketch_quantile(again, 0.5, &median), 0);
    cr_assert_eq(tschunk_sketch_quantile(s, 0.5, &want), 0);
    cr_assert(st.exact == 0 && st.count == 100 && st.min > 0.9 && st.max < 101, "min %g max %g", st.min, st.max);
    cr_assert(fabs(median - want) <= 0.02 * want, "median %g, want %g", median, want);
    tschunk_sketch_clear(decoded); /* exact again once cleared */
    tschunk_sketch_add(decoded, 5.0);
    tschunk_sketch_get_stats(decoded, &st);
    cr_assert(st.exact && st.min == 5.0 && st.max == 5.0 && st.sum == 5.0);
    tschunk_sketch_free(s);
    tschunk_sketch_free(decoded);
    tschunk_sketch_free(again);
}

/* The reference libraries' exact sum (sketches-go's stat.SummaryStatistics, sketches-java's
 * WithExactSummaryStatistics, the same code): Kahan's sum and compensation, a plain sum beside them, and a merge
 * that adds the other's sum and then its compensation. Written here from their source as the model. */
typedef struct {
    double sum, compensation, simple;
} ref_sum;

static void ref_add(ref_sum *r, double x)
{
    double term = x - r->compensation, next = r->sum + term;
    r->compensation = next - r->sum - term;
    r->sum = next;
    r->simple += x;
}

static void ref_merge(ref_sum *r, const ref_sum *o)
{
    double simple = r->simple + o->simple;
    ref_add(r, o->sum);
    ref_add(r, o->compensation);
    r->simple = simple;
}

static double ref_value(const ref_sum *r)
{
    double sum = r->sum + r->compensation;
    return isnan(sum) && isinf(r->simple) ? r->simple : sum;
}

/* The SUM block's double of s's encoding with exact statistics (0 when it has none: an empty sketch's encoding is
 * its mapping alone, so nothing is read past the encoding's n bytes, which held a previous call's). */
static double encoded_sum(const tschunk_sketch *s)
{
    unsigned char buf[1 << 15];
    size_t n = tschunk_sketch_encode(s, buf, sizeof buf, TSCHUNK_SKETCH_EXACT_STATS);
    cr_assert(!tschunk_is_error(n));
    size_t at = 1;
    while (at < n && buf[at] & 0x80) at++; /* COUNT's varfloat */
    at += 1 + 9 + 9;                       /* MIN and MAX: a flag and a double each */
    if (at + 9 > n || buf[at] != 0x84) return 0;
    double sum;
    uint64_t bits = 0;
    for (int k = 7; k >= 0; k--) bits = bits << 8 | buf[at + 1 + k];
    memcpy(&sum, &bits, 8);
    return sum;
}

static void same_sum(const tschunk_sketch *s, const ref_sum *r, const char *what)
{
    tschunk_sketch_stats st;
    tschunk_sketch_get_stats(s, &st);
    double want = ref_value(r);
    cr_assert(wl_bits(st.sum) == wl_bits(want), "%s: sum %.17g, the reference libraries' %.17g", what, st.sum, want);
    cr_assert(wl_bits(encoded_sum(s)) == wl_bits(want), "%s: encoded sum %.17g, theirs %.17g", what, encoded_sum(s),
              want);
}

/* 0.55.0: the exact sum is the reference libraries' to the bit: Kahan's sum plus its compensation (the sum alone was
 * given and encoded, one ulp apart where the compensation is half an ulp: -0.4202672617718341 - 1.7771205895727977),
 * a merge adds the other sketch's compensation too, and a sum past the double range is the plain sum's infinity,
 * where Kahan's compensation made it NaN (1e308 + 1.7e308 + 1e308). */
Test(sketch, exact_sum_is_the_reference_libraries)
{
    static const double tie[2] = {-0.4202672617718341, -1.7771205895727977}, huge[3] = {1e308, 1.7e308, 1e308};
    tschunk_sketch *s = log001(), *t = log001();
    ref_sum r = {0, 0, 0}, q = {0, 0, 0};
    for (int i = 0; i < 2; i++) tschunk_sketch_add(s, tie[i]), ref_add(&r, tie[i]);
    same_sum(s, &r, "the tie");
    cr_assert(wl_bits(ref_value(&r)) != wl_bits(r.sum), "the case must tell the two sums apart");
    for (int i = 0; i < 3; i++) tschunk_sketch_add(t, huge[i]), ref_add(&q, huge[i]);
    same_sum(t, &q, "past the double range");
    cr_assert(isinf(ref_value(&q)) && isnan(q.sum + q.compensation));
    tschunk_sketch_free(s);
    tschunk_sketch_free(t);
    /* A merge the compensation changes: 0.5970000000000001 as theirs, where the sums alone gave 0.597 and Kahan's
     * sum without the other's compensation 0.5969999999999999. */
    static const double left[3] = {-0.337, -0.03, 0.034}, right = 0.93;
    s = log001(), t = log001();
    r = (ref_sum){0, 0, 0}, q = (ref_sum){0, 0, 0};
    for (int i = 0; i < 3; i++) tschunk_sketch_add(s, left[i]), ref_add(&r, left[i]);
    tschunk_sketch_add(t, right), ref_add(&q, right);
    cr_assert_eq(tschunk_sketch_merge(s, t), 0);
    ref_merge(&r, &q);
    same_sum(s, &r, "the merge");
    cr_assert(ref_value(&r) == 0.5970000000000001);
    tschunk_sketch_free(s);
    tschunk_sketch_free(t);
    /* Random sketches built one value at a time and in bulk, merged pairwise: every sum as the model's. */
    uint64_t rng = 60;
    for (int round = 0; round < 400; round++) {
        tschunk_sketch *a = log001(), *b = log001();
        ref_sum ra = {0, 0, 0}, rb = {0, 0, 0};
        double values[300];
        size_t n = 1 + (size_t)(wl_uniform(&rng) * 300);
        for (size_t i = 0; i < n; i++) values[i] = (wl_uniform(&rng) - 0.5) * ldexp(1, (int)(wl_uniform(&rng) * 8));
        for (size_t i = 0; i < n; i++) (i & 1 ? ref_add(&rb, values[i]) : ref_add(&ra, values[i]));
        for (size_t i = 0; i < n; i += 2) tschunk_sketch_add(a, values[i]);
        double odd[150];
        size_t nodd = 0;
        for (size_t i = 1; i < n; i += 2) odd[nodd++] = values[i];
        cr_assert_eq(tschunk_sketch_add_many(b, odd, nodd), 0);
        same_sum(a, &ra, "one at a time");
        same_sum(b, &rb, "in bulk");
        cr_assert_eq(tschunk_sketch_merge(a, b), 0);
        ref_merge(&ra, &rb);
        same_sum(a, &ra, "merged");
        tschunk_sketch_free(a);
        tschunk_sketch_free(b);
    }
}
