/*
 * Same-process A/B of two libtschunk.so builds: the steadiest wall-time
 * comparison a noisy VM allows. Both libraries are loaded with dlopen; the
 * same 1,024-sample chunks (codec 2, default options) are encoded and decoded
 * by each in turn, and each keeps its fastest of PASSES passes per chunk, so
 * that a slow moment of the machine hits both alike.
 *
 *   ab_libs A.so B.so [DATASET.gz ...]     (no datasets: gauge-2dp, counter, const-jitter)
 *   ab_libs --sketch A.so B.so              (DDSketch encode and decode of 100,000-value sketches)
 *   ab_libs --prom A.so B.so [DATASET.gz ...]  (Prometheus XOR chunks of 120 samples, as Prometheus cuts them)
 *   ab_libs --gorilla A.so B.so [DATASET.gz ...]  (codec 1 chunks of 1,024 samples)
 *   ab_libs --chunk N ...                  (chunks of N <= 1,024 samples; --prom's default is 120)
 *   ab_libs --many [--prom | --gorilla] A.so B.so [...]  (B appends a chunk's samples in one
 *                                         tschunk_append_many call: with A = B, one by one against bulk;
 *                                         --many-both: A too, two builds' bulk paths compared)
 *
 * Pin it to one core (taskset -c 1) for the figures in the README.
 */
#include "workloads.h" /* first: it sets _POSIX_C_SOURCE for popen */

#include "dl_load.h"

#include "tschunk.h"
#include "timing.h"

#define CHUNK 1024
#define CHUNKS_PER_SERIES 8
#define PASSES 300
#define MAX_SERIES 64

typedef struct {
    size_t (*init)(tschunk_encoder *, void *, size_t, const tschunk_encoder_options *);
    size_t (*append)(tschunk_encoder *, int64_t, uint64_t);
    size_t (*finish)(tschunk_encoder *);
    size_t (*decode)(const void *, size_t, int64_t *, double *, size_t);
    /* Prometheus XOR codec, used instead of the above when prom_chunk is set. */
    size_t (*prom_init)(tschunk_prom_encoder *, void *, size_t, const tschunk_encoder_options *);
    size_t (*prom_append)(tschunk_prom_encoder *, int64_t, uint64_t);
    size_t (*prom_finish)(tschunk_prom_encoder *);
    size_t (*prom_decode)(const void *, size_t, int64_t *, double *, size_t);
    size_t (*append_many)(tschunk_encoder *, const int64_t *, const double *, size_t, size_t *);
    size_t (*prom_append_many)(tschunk_prom_encoder *, const int64_t *, const double *, size_t, size_t *);
    size_t chunk; /* samples per chunk */
    int prom;
    int many; /* append through append_many (0.8.0 on) */
    tschunk_encoder_options options;
} library;

static void *symbol(void *handle, const char *name) { return bench_symbol("ab_libs", handle, name); }

typedef struct {
    size_t (*create)(tschunk_sketch **, const tschunk_sketch_options *);
    size_t (*add)(tschunk_sketch *, double);
    size_t (*encode)(const tschunk_sketch *, void *, size_t, unsigned);
    size_t (*decode_new)(tschunk_sketch **, const void *, size_t, const tschunk_sketch_options *, size_t *);
    size_t (*decode_merge)(tschunk_sketch *, const void *, size_t, size_t *);
    void (*clear)(tschunk_sketch *);
    void (*release)(tschunk_sketch *);
    library codec;
    size_t (*set_summary)(tschunk_encoder *, tschunk_sketch *);
} sketch_library;

static void *open_library(const char *path) { return bench_open_library("ab_libs", path); }

static sketch_library load_sketch(const char *path)
{
    void *handle = open_library(path);
    sketch_library lib;
    *(void **)&lib.create = symbol(handle, "tschunk_sketch_create");
    *(void **)&lib.add = symbol(handle, "tschunk_sketch_add");
    *(void **)&lib.encode = symbol(handle, "tschunk_sketch_encode");
    *(void **)&lib.decode_new = symbol(handle, "tschunk_sketch_decode_new");
    *(void **)&lib.decode_merge = symbol(handle, "tschunk_sketch_decode_merge");
    *(void **)&lib.clear = symbol(handle, "tschunk_sketch_clear");
    *(void **)&lib.release = symbol(handle, "tschunk_sketch_free");
    *(void **)&lib.set_summary = symbol(handle, "tschunk_encoder_set_summary");
    return lib;
}

static library load(const char *path)
{
    void *handle = open_library(path);
    library lib;
    *(void **)&lib.init = symbol(handle, "tschunk_encoder_init");
    *(void **)&lib.append = symbol(handle, "tschunk_append_bits");
    *(void **)&lib.finish = symbol(handle, "tschunk_encoder_finish");
    *(void **)&lib.decode = symbol(handle, "tschunk_decode");
    *(void **)&lib.prom_init = symbol(handle, "tschunk_prom_encoder_init");
    *(void **)&lib.prom_append = symbol(handle, "tschunk_prom_append_bits");
    *(void **)&lib.prom_finish = symbol(handle, "tschunk_prom_encoder_finish");
    *(void **)&lib.prom_decode = symbol(handle, "tschunk_prom_decode");
    lib.chunk = CHUNK;
    lib.prom = 0;
    lib.many = 0;
    memset(&lib.options, 0, sizeof lib.options);
    return lib;
}

static unsigned char chunk[TSCHUNK_BOUND(CHUNK)];
static int64_t ts_out[CHUNK];
static double values_out[CHUNK];

static size_t encode_prom(const library *lib, const wl_series *s, size_t from)
{
    tschunk_prom_encoder enc;
    lib->prom_init(&enc, chunk, sizeof chunk, NULL);
    if (lib->many)
        lib->prom_append_many(&enc, s->ts + from, (const double *)(const void *)(s->bits + from), lib->chunk, NULL);
    else
        for (size_t i = from; i < from + lib->chunk; i++) lib->prom_append(&enc, s->ts[i], s->bits[i]);
    return lib->prom_finish(&enc);
}

/* Fastest append and decode of one chunk (samples from..from+lib->chunk), in ns for the whole chunk. */
static void time_chunk(const library *lib, const wl_series *s, size_t from, double *best_append, double *best_decode)
{
    tschunk_encoder enc;
    double start = now_ns();
    size_t size;
    if (lib->prom) {
        size = encode_prom(lib, s, from);
    } else {
        lib->init(&enc, chunk, sizeof chunk, &lib->options);
        if (lib->many)
            lib->append_many(&enc, s->ts + from, (const double *)(const void *)(s->bits + from), lib->chunk, NULL);
        else
            for (size_t i = from; i < from + lib->chunk; i++) lib->append(&enc, s->ts[i], s->bits[i]);
        size = lib->finish(&enc);
    }
    double t = now_ns() - start;
    if (t < *best_append) *best_append = t;
    start = now_ns();
    if (lib->prom) lib->prom_decode(chunk, size, ts_out, values_out, lib->chunk);
    else lib->decode(chunk, size, ts_out, values_out, lib->chunk);
    t = now_ns() - start;
    if (t < *best_decode) *best_decode = t;
}

/* sketches-java's jmh POISSON data (as bench/sketch_bench.c) or lognormal(0, 2). */
static double sketch_value(uint64_t *rng, int lognormal)
{
    double u = wl_uniform(rng) + 1e-300;
    if (!lognormal) return fabs(round(-log(u) / 0.1));
    return exp(2 * sqrt(-2 * log(u)) * cos(6.283185307179586 * wl_uniform(rng)));
}

enum { SK_ENCODE, SK_DECODE_NEW, SK_DECODE_CLEARED, SK_MERGE_INTO_FULL, SK_OPS };

/* One library's fastest time of each operation on its own copy of the sketch, in ns. */
static void time_sketch(const sketch_library *lib, tschunk_sketch *s, tschunk_sketch *target, tschunk_sketch *full,
                        double best[SK_OPS])
{
    static unsigned char buf[1 << 16];
    double t0 = now_ns();
    size_t n = lib->encode(s, buf, sizeof buf, 0);
    double t1 = now_ns();
    tschunk_sketch *fresh = NULL;
    lib->decode_new(&fresh, buf, n, NULL, NULL);
    double t2 = now_ns();
    lib->clear(target);
    lib->decode_merge(target, buf, n, NULL);
    double t3 = now_ns();
    lib->decode_merge(full, buf, n, NULL); /* a range query's accumulator */
    double t4 = now_ns();
    lib->release(fresh);
    double t[SK_OPS] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
    for (int k = 0; k < SK_OPS; k++)
        if (t[k] < best[k]) best[k] = t[k];
}

/* Fastest encode of a 120-sample chunk (codec 2) with the summary off and on, in ns per sample. */
static void time_push(const sketch_library *lib, const wl_series *s, size_t from, tschunk_sketch *summary,
                      double best[2])
{
    for (int on = 0; on < 2; on++) {
        tschunk_encoder enc;
        double start = now_ns();
        lib->codec.init(&enc, chunk, sizeof chunk, NULL);
        if (on) lib->set_summary(&enc, summary);
        for (size_t i = from; i < from + 120; i++) lib->codec.append(&enc, s->ts[i], s->bits[i]);
        lib->codec.finish(&enc);
        double t = (now_ns() - start) / 120;
        if (t < best[on]) best[on] = t;
    }
}

/* The summaries' sketch options here: cubic mapping, relative accuracy 0.01. */
static tschunk_sketch_options cubic_options(void)
{
    tschunk_sketch_options o;
    memset(&o, 0, sizeof o);
    o.mapping = TSCHUNK_MAPPING_CUBIC;
    o.relative_accuracy = 0.01;
    return o;
}

static void summary_push_ab(const sketch_library libs[2])
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 120 * 64, 11);
    tschunk_sketch_options o = cubic_options();
    double total[2][2] = {{0}};
    tschunk_sketch *summary[2];
    for (int l = 0; l < 2; l++) libs[l].create(&summary[l], &o);
    for (size_t c = 0; c < 64; c++) {
        double best[2][2] = {{1e18, 1e18}, {1e18, 1e18}};
        for (int pass = 0; pass < PASSES; pass++)
            for (int l = 0; l < 2; l++) time_push(&libs[l], &s, c * 120, summary[l], best[l]);
        for (int l = 0; l < 2; l++) total[l][0] += best[l][0] / 64, total[l][1] += best[l][1] / 64;
    }
    for (int l = 0; l < 2; l++) libs[l].release(summary[l]);
    printf("| gauge-2dp, 120-sample chunks | push, summary off / on (ns per sample) | %.2f / %.2f (%+.2f) | %.2f / %.2f (%+.2f) |\n",
           total[0][0], total[0][1], total[0][1] - total[0][0], total[1][0], total[1][1], total[1][1] - total[1][0]);
    wl_free(&s);
}

/*
 * A range query's inner step: 64 chunk summaries' sketches (gauge-2dp, cubic 0.01, chunks of 120 and of 1,024
 * samples, as lib A writes them) decode-merged into one sketch, in ns per summary.
 */
static void summaries_merge_ab(const sketch_library *libs)
{
    wl_series s;
    wl_synthetic(&s, WL_GAUGE_2DP, 64 * 1024, 11);
    tschunk_sketch_options o = cubic_options();
    static unsigned char blobs[64][4096];
    size_t sizes[64];
    static const int chunk_samples[2] = {120, 1024};
    for (int size = 0; size < 2; size++) {
        int per = chunk_samples[size];
        tschunk_sketch *one, *acc[2];
        libs[0].create(&one, &o);
        size_t bytes = 0;
        for (int c = 0; c < 64; c++) {
            libs[0].clear(one);
            for (int i = 0; i < per; i++) libs[0].add(one, wl_double(s.bits[c * per + i]));
            sizes[c] = libs[0].encode(one, blobs[c], sizeof blobs[c], 0);
            bytes += sizes[c];
        }
        double best[2] = {1e18, 1e18};
        for (int l = 0; l < 2; l++) libs[l].create(&acc[l], &o);
        for (int pass = 0; pass < PASSES; pass++)
            for (int l = 0; l < 2; l++) {
                double t0 = now_ns();
                libs[l].clear(acc[l]);
                for (int c = 0; c < 64; c++) libs[l].decode_merge(acc[l], blobs[c], sizes[c], NULL);
                double t = (now_ns() - t0) / 64;
                if (t < best[l]) best[l] = t;
            }
        printf("| gauge-2dp, %d-sample chunks' summaries (%zu B each) | decode-merge into one sketch (ns each) "
               "| %.1f | %.1f |\n", per, bytes / 64, best[0], best[1]);
        libs[0].release(one);
        for (int l = 0; l < 2; l++) libs[l].release(acc[l]);
    }
    wl_free(&s);
}

static int sketch_ab(const char *a, const char *b)
{
    sketch_library libs[2] = {load_sketch(a), load_sketch(b)};
    libs[0].codec = load(a);
    libs[1].codec = load(b);
    static const char *op_names[SK_OPS] = {"encode", "decode (new sketch)", "decode-merge (cleared)",
                                           "decode-merge (into a full sketch)"};
    printf("| sketch | operation | A us | B us |\n|---|---|---:|---:|\n");
    for (int kind = 0; kind < 4; kind++) {
        tschunk_sketch_options o;
        memset(&o, 0, sizeof o);
        o.mapping = kind & 1 ? TSCHUNK_MAPPING_CUBIC : TSCHUNK_MAPPING_LOGARITHMIC;
        o.relative_accuracy = 0.01;
        tschunk_sketch *s[2], *target[2], *full[2];
        double best[2][SK_OPS];
        for (int l = 0; l < 2; l++) {
            libs[l].create(&s[l], &o);
            libs[l].create(&target[l], &o);
            libs[l].create(&full[l], &o);
            uint64_t rng = 5388928120325255124ULL;
            for (int i = 0; i < 100000; i++) libs[l].add(s[l], sketch_value(&rng, kind >> 1));
            for (int i = 0; i < 100000; i++) libs[l].add(full[l], sketch_value(&rng, kind >> 1));
            for (int k = 0; k < SK_OPS; k++) best[l][k] = 1e18;
        }
        for (int pass = 0; pass < PASSES * 10; pass++)
            for (int l = 0; l < 2; l++) time_sketch(&libs[l], s[l], target[l], full[l], best[l]);
        for (int k = 0; k < SK_OPS; k++)
            printf("| %s, %s | %s | %.3f | %.3f |\n", kind >> 1 ? "lognormal(0, 2)" : "POISSON",
                   kind & 1 ? "cubic" : "logarithmic", op_names[k], best[0][k] / 1000, best[1][k] / 1000);
        for (int l = 0; l < 2; l++) {
            libs[l].release(s[l]);
            libs[l].release(target[l]);
            libs[l].release(full[l]);
        }
    }
    summary_push_ab(libs);
    summaries_merge_ab(libs);
    printf("\nmicroseconds: each library's fastest of %d passes, 100,000-value sketches (alpha 0.01); the push row:\n"
           "ns per sample, each library's fastest of %d passes per chunk, averaged over 64 chunks; the merge rows:\n"
           "ns per summary, each library's fastest of %d passes over 64 summaries.\n", PASSES * 10, PASSES, PASSES);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--sketch")) return sketch_ab(argv[2], argv[3]);
    int prom = 0, gorilla = 0, many = 0;
    size_t chunk_samples = 0; /* --chunk's, else 120 for --prom and CHUNK for the others */
    for (; argc > 1 && argv[1][0] == '-' && argv[1][1] == '-'; argc--, argv++) {
        if (!strcmp(argv[1], "--prom")) prom = 1;
        else if (!strcmp(argv[1], "--chunk") && argc > 2) {
            chunk_samples = (size_t)strtoul(argv[2], NULL, 10);
            argc--, argv++;
            if (chunk_samples < 2 || chunk_samples > CHUNK) argc = 0;
        }
        else if (!strcmp(argv[1], "--gorilla")) gorilla = 1;
        else if (!strcmp(argv[1], "--many")) many = 1;
        else if (!strcmp(argv[1], "--many-both")) many = 2;
        else argc = 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: ab_libs [--many] [--prom | --gorilla] [--chunk N] A.so B.so [DATASET.gz ...] | "
                        "ab_libs --sketch A.so B.so\n");
        return 2;
    }
    if (!chunk_samples) chunk_samples = prom ? 120 : CHUNK;
    library libs[2] = {load(argv[1]), load(argv[2])};
    for (int l = many == 2 ? 0 : 1; many && l < 2; l++) {
        void *handle = open_library(argv[1 + l]);
        *(void **)&libs[l].append_many = symbol(handle, "tschunk_append_many");
        *(void **)&libs[l].prom_append_many = symbol(handle, "tschunk_prom_append_many");
        libs[l].many = 1;
    }
    for (int l = 0; l < 2; l++) {
        libs[l].prom = prom;
        libs[l].chunk = chunk_samples;
        libs[l].options.codec = gorilla ? TSCHUNK_CODEC_GORILLA : 0;
    }
    static wl_series series[MAX_SERIES];
    size_t count = 0;
    for (int a = 3; a < argc && count < MAX_SERIES; a++) count += wl_load_dataset(argv[a], series + count, MAX_SERIES - count);
    if (argc == 3) {
        int kinds[] = {WL_GAUGE_2DP, WL_COUNTER, WL_CONST_JITTER};
        for (size_t k = 0; k < 3; k++) wl_synthetic(&series[count++], kinds[k], CHUNK * CHUNKS_PER_SERIES, 7);
    }
    double total[2][2] = {{0}};
    size_t samples = 0;
    printf("| series | append A | append B | decode A | decode B |\n|---|---:|---:|---:|---:|\n");
    for (size_t s = 0; s < count; s++) {
        size_t per_series = CHUNKS_PER_SERIES * (CHUNK / chunk_samples);
        size_t chunks = series[s].n / chunk_samples < per_series ? series[s].n / chunk_samples : per_series;
        double sum[2][2] = {{0}};
        for (size_t c = 0; c < chunks; c++) {
            double best[2][2] = {{1e18, 1e18}, {1e18, 1e18}};
            for (int pass = 0; pass < PASSES; pass++)
                for (int l = 0; l < 2; l++) time_chunk(&libs[l], &series[s], c * chunk_samples, &best[l][0], &best[l][1]);
            for (int l = 0; l < 2; l++) sum[l][0] += best[l][0], sum[l][1] += best[l][1];
        }
        if (!chunks) continue;
        double n = (double)(chunks * chunk_samples);
        printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", series[s].name, sum[0][0] / n, sum[1][0] / n, sum[0][1] / n,
               sum[1][1] / n);
        for (int l = 0; l < 2; l++) total[l][0] += sum[l][0], total[l][1] += sum[l][1];
        samples += chunks * chunk_samples;
    }
    printf("| all | %.2f | %.2f | %.2f | %.2f |\n\nns per sample: each library's fastest of %d passes per chunk.\n",
           total[0][0] / (double)samples, total[1][0] / (double)samples, total[0][1] / (double)samples,
           total[1][1] / (double)samples, PASSES);
    for (size_t s = 0; s < count; s++) wl_free(&series[s]);
    return 0;
}
