/*
 * tschunk benchmarks: ns per push, ns per decoded sample (iterator and batch),
 * bits per sample / timestamp / value, for 120- and 1024-sample chunks, on
 * seeded synthetic workloads and on every dataset in ../shared/datasets.
 * Each figure is the median of REPS repetitions. Never asserts a time.
 *
 *   bench [--quick] [--reps N] [--datasets DIR] [--only NAME] [--chunk N] [--codec tschunk|prom|tsc2]
 *         [--phase append|inline|staged|many|iter|iter-inline|batch|chunks]   (one phase only, for callgrind)
 *         [--per-call N]   (chunks a decode_chunks call takes, 16 unless told, up to 512)
 *         [--short-chunks P]   (P% of the chunks cut short, at 1 to N - 1 samples: lists of mixed lengths)
 *
 * "many": the same appends through tschunk_append_many / tschunk_prom_append_many, a chunk's samples per call.
 * "inline" (the last column): the native appends one at a time through tschunk_append_inline
 * (TSCHUNK_STATIC_LINKING_ONLY; the bench links libtschunk.a), not measured for prom-xor.
 * "chunks": a series' chunks decoded 16 at a time (--per-call) by tschunk_decode_chunks /
 * tschunk_prom_decode_chunks.
 * "iter inline" (after it): the iterator's samples through tschunk_iter_next_inline /
 * tschunk_prom_iter_next_inline (0.42.1, static linking only too).
 */
#define _POSIX_C_SOURCE 200809L
#define TSCHUNK_STATIC_LINKING_ONLY /* tschunk_append_inline, the inline iterator steps */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tschunk.h"
#include "workloads.h"
#include "timing.h"

#define MAX_SERIES 64

enum { CODEC_NATIVE, CODEC_PROM, CODEC_TSC2, CODEC_COUNT };
static const char *const codec_names[CODEC_COUNT] = {"tschunk", "prom-xor", "tsc2"};

/* The native encoder's options for a bench codec (Gorilla or codec 2). */
static tschunk_encoder_options native_opts(int codec)
{
    tschunk_encoder_options o = {codec == CODEC_TSC2 ? TSCHUNK_CODEC_TSC2 : TSCHUNK_CODEC_GORILLA, 0, 0, 0};
    return o;
}

typedef struct {
    int reps;
    int quick;
    int codec;
    const char *datasets;
    const char *only;
    size_t chunk;
    const char *phase;
    size_t per_call;     /* chunks a decode_chunks call takes */
    unsigned short_pct; /* chunks cut short (at 1 .. chunk - 1 samples), in percent, for lists of mixed lengths */
} bench_opts;

/* A workload cut into chunks: [start, start+len) ranges and their encoded bytes. */
typedef struct {
    const wl_series *s;
    size_t per_chunk;
    size_t nchunks;
    size_t *start, *len, *offset, *size;
    unsigned char *bytes;
    size_t cap;
} chunked;

typedef struct {
    double push_ns, many_ns, iter_ns, batch_ns, chunks_ns, inline_ns, staged_ns, iter_inline_ns;
    double bits_sample, bits_ts, bits_value;
    size_t samples;
} result;

static volatile uint64_t sink;

/* Cut where timestamps go backwards (as the CLI does) or at per_chunk samples. */
static void chunk_plan(chunked *c, const wl_series *s, size_t per_chunk, unsigned short_pct)
{
    uint64_t rng = 12345;
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->per_chunk = per_chunk;
    size_t max_chunks = s->n + 1;
    c->start = malloc(max_chunks * sizeof(size_t));
    c->len = malloc(max_chunks * sizeof(size_t));
    c->offset = malloc(max_chunks * sizeof(size_t));
    c->size = malloc(max_chunks * sizeof(size_t));
    for (size_t i = 0; i < s->n;) {
        size_t n = 1, most = per_chunk;
        uint64_t r = wl_rng(&rng);
        if (per_chunk > 1 && r % 100 < short_pct) most = 1 + (r >> 8) % (per_chunk - 1);
        while (i + n < s->n && n < most && s->ts[i + n] >= s->ts[i + n - 1]) n++;
        c->start[c->nchunks] = i;
        c->len[c->nchunks++] = n;
        c->cap += TSCHUNK_BOUND(n) > TSCHUNK_PROM_BOUND(n) ? TSCHUNK_BOUND(n) : TSCHUNK_PROM_BOUND(n);
        i += n;
    }
    c->bytes = malloc(c->cap);
}

static void chunked_free(chunked *c)
{
    free(c->start);
    free(c->len);
    free(c->offset);
    free(c->size);
    free(c->bytes);
}

static size_t bound_of(int codec, size_t n) { return codec != CODEC_PROM ? TSCHUNK_BOUND(n) : TSCHUNK_PROM_BOUND(n); }

enum { ONE_BY_ONE, MANY, INLINE, STAGED };

/* One series' chunks, as a TSDB head cuts them: the native encoder restarts for each (tschunk_encoder_restart).
 * STAGED pushes through a tschunk_stage and flushes it where the chunk is cut. */
static size_t encode_all(chunked *c, int codec, int how)
{
    size_t off = 0, total = 0;
    tschunk_encoder enc;
    tschunk_stage stage; /* on the stack, as a caller's would be */
    tschunk_stage_init(&stage);
    for (size_t k = 0; k < c->nchunks; k++) {
        size_t bound = bound_of(codec, c->len[k]);
        const int64_t *ts = c->s->ts + c->start[k];
        const uint64_t *bits = c->s->bits + c->start[k];
        c->offset[k] = off;
        if (codec != CODEC_PROM) {
            tschunk_encoder_options opts = native_opts(codec);
            if (k == 0) tschunk_encoder_init(&enc, c->bytes + off, bound, &opts);
            else tschunk_encoder_restart(&enc, c->bytes + off, bound);
            const double *values = (const double *)(const void *)bits;
            if (how == MANY) tschunk_append_many(&enc, ts, values, c->len[k], NULL);
            else if (how == INLINE)
                for (size_t i = 0; i < c->len[k]; i++) tschunk_append_inline(&enc, ts[i], values[i]);
            else if (how == STAGED) {
                for (size_t i = 0; i < c->len[k]; i++) tschunk_stage_push(&stage, &enc, ts[i], values[i]);
                tschunk_stage_flush(&stage, &enc);
            } else
                for (size_t i = 0; i < c->len[k]; i++) tschunk_append_bits(&enc, ts[i], bits[i]);
            c->size[k] = tschunk_encoder_finish(&enc);
        } else {
            tschunk_prom_encoder prom;
            tschunk_prom_encoder_init(&prom, c->bytes + off, bound, NULL);
            const double *values = (const double *)(const void *)bits;
            if (how == MANY) tschunk_prom_append_many(&prom, ts, values, c->len[k], NULL);
            else if (how == STAGED) {
                for (size_t i = 0; i < c->len[k]; i++) tschunk_prom_stage_push(&stage, &prom, ts[i], values[i]);
                tschunk_prom_stage_flush(&stage, &prom);
            } else
                for (size_t i = 0; i < c->len[k]; i++) tschunk_prom_append_bits(&prom, ts[i], bits[i]);
            c->size[k] = tschunk_prom_encoder_finish(&prom);
        }
        total += c->size[k];
        off += bound;
    }
    return total;
}

static void decode_iter(const chunked *c, int codec)
{
    uint64_t acc = 0;
    int64_t ts;
    uint64_t bits;
    for (size_t k = 0; k < c->nchunks; k++) {
        if (codec != CODEC_PROM) {
            tschunk_iter it;
            tschunk_iter_init(&it, c->bytes + c->offset[k], c->size[k]);
            while (tschunk_iter_next_bits(&it, &ts, &bits) == 1) acc += bits ^ (uint64_t)ts;
        } else {
            tschunk_prom_iter it;
            tschunk_prom_iter_init(&it, c->bytes + c->offset[k], c->size[k]);
            while (tschunk_prom_iter_next_bits(&it, &ts, &bits) == 1) acc += bits ^ (uint64_t)ts;
        }
    }
    sink = acc;
}

/* decode_iter through the inline steps (the values as doubles, read back as bits: the same sum). */
static void decode_iter_inline(const chunked *c, int codec)
{
    uint64_t acc = 0, bits;
    int64_t ts;
    double value;
    for (size_t k = 0; k < c->nchunks; k++) {
        if (codec != CODEC_PROM) {
            tschunk_iter it;
            tschunk_iter_init(&it, c->bytes + c->offset[k], c->size[k]);
            while (tschunk_iter_next_inline(&it, &ts, &value) == 1) {
                memcpy(&bits, &value, sizeof bits);
                acc += bits ^ (uint64_t)ts;
            }
        } else {
            tschunk_prom_iter it;
            tschunk_prom_iter_init(&it, c->bytes + c->offset[k], c->size[k]);
            while (tschunk_prom_iter_next_inline(&it, &ts, &value) == 1) {
                memcpy(&bits, &value, sizeof bits);
                acc += bits ^ (uint64_t)ts;
            }
        }
    }
    sink = acc;
}

static void decode_batch(const chunked *c, int codec, int64_t *ts, double *vals)
{
    uint64_t acc = 0;
    for (size_t k = 0; k < c->nchunks; k++) {
        size_t n = codec != CODEC_PROM
                       ? tschunk_decode(c->bytes + c->offset[k], c->size[k], ts, vals, TSCHUNK_MAX_SAMPLES)
                       : tschunk_prom_decode(c->bytes + c->offset[k], c->size[k], ts, vals, TSCHUNK_MAX_SAMPLES);
        acc += (uint64_t)ts[n - 1];
    }
    sink = acc;
}

/*
 * A series' chunks by tschunk_decode_chunks / tschunk_prom_decode_chunks
 * (codec-1 and Prometheus chunks in AVX-512 lanes, else two side by side),
 * per_call a call (fewer when their samples would not fit) into one reused
 * buffer, as decode_batch reuses its buffer chunk after chunk.
 */
#define MOST_PER_CALL 512
static void decode_chunks(const chunked *c, int codec, int64_t *ts, double *vals, size_t per_call)
{
    uint64_t acc = 0;
    if (per_call > TSCHUNK_MAX_SAMPLES / c->per_chunk) per_call = TSCHUNK_MAX_SAMPLES / c->per_chunk;
    for (size_t k = 0; k < c->nchunks; k += per_call) {
        const void *ptrs[MOST_PER_CALL];
        size_t m = c->nchunks - k < per_call ? c->nchunks - k : per_call;
        for (size_t j = 0; j < m; j++) ptrs[j] = c->bytes + c->offset[k + j];
        size_t n = codec == CODEC_PROM ? tschunk_prom_decode_chunks(ptrs, c->size + k, m, ts, vals, TSCHUNK_MAX_SAMPLES)
                                       : tschunk_decode_chunks(ptrs, c->size + k, m, ts, vals, TSCHUNK_MAX_SAMPLES);
        if (tschunk_is_error(n) || n == 0) abort();
        acc += (uint64_t)ts[n - 1];
    }
    sink = acc;
}

static void sizes(const chunked *c, int codec, result *r)
{
    uint64_t bytes = 0, ts_bytes = 0, value_bytes = 0;
    for (size_t k = 0; k < c->nchunks && codec == CODEC_PROM; k++) bytes += c->size[k];
    for (size_t k = 0; k < c->nchunks && codec != CODEC_PROM; k++) {
        tschunk_chunk_info info;
        tschunk_chunk_info_get(c->bytes + c->offset[k], c->size[k], &info);
        bytes += c->size[k];
        ts_bytes += info.ts_header_bytes + info.ts_bytes;
        /* Codec 1 keeps the first value in its header, codec 2 in its first group. */
        value_bytes += (codec == CODEC_NATIVE ? 8 : 0) + info.value_bytes;
    }
    double n = (double)c->s->n;
    r->bits_sample = (double)bytes * 8 / n;
    r->bits_ts = (double)ts_bytes * 8 / n;
    r->bits_value = (double)value_bytes * 8 / n;
}

static int phase_on(const bench_opts *o, const char *p) { return !o->phase || !strcmp(o->phase, p); }

static result run(const wl_series *s, size_t per_chunk, const bench_opts *o)
{
    chunked c;
    chunk_plan(&c, s, per_chunk, o->short_pct);
    result r = {0};
    r.samples = s->n;
    int64_t *ts = malloc(TSCHUNK_MAX_SAMPLES * sizeof *ts);
    double *vals = malloc(TSCHUNK_MAX_SAMPLES * sizeof *vals);
    double *t = malloc((size_t)o->reps * sizeof *t);
    encode_all(&c, o->codec, ONE_BY_ONE); /* warm-up, and the bytes the decoders read */
    static const char *const append_phases[] = {"append", "many", "inline", "staged"};
    double *append_ns[] = {&r.push_ns, &r.many_ns, &r.inline_ns, &r.staged_ns};
    for (int how = ONE_BY_ONE; how <= STAGED; how++) {
        if (!phase_on(o, append_phases[how]) || (how == INLINE && o->codec == CODEC_PROM)) continue;
        for (int i = 0; i < o->reps; i++) {
            double t0 = now_ns();
            encode_all(&c, o->codec, how);
            t[i] = (now_ns() - t0) / (double)s->n;
        }
        *append_ns[how] = median(t, o->reps);
    }
    for (int inl = 0; inl < 2; inl++) {
        if (!phase_on(o, inl ? "iter-inline" : "iter")) continue;
        for (int i = 0; i < o->reps; i++) {
            double t0 = now_ns();
            if (inl) decode_iter_inline(&c, o->codec);
            else decode_iter(&c, o->codec);
            t[i] = (now_ns() - t0) / (double)s->n;
        }
        *(inl ? &r.iter_inline_ns : &r.iter_ns) = median(t, o->reps);
    }
    if (phase_on(o, "batch")) {
        for (int i = 0; i < o->reps; i++) {
            double t0 = now_ns();
            decode_batch(&c, o->codec, ts, vals);
            t[i] = (now_ns() - t0) / (double)s->n;
        }
        r.batch_ns = median(t, o->reps);
    }
    if (phase_on(o, "chunks")) {
        for (int i = 0; i < o->reps; i++) {
            double t0 = now_ns();
            decode_chunks(&c, o->codec, ts, vals, o->per_call);
            t[i] = (now_ns() - t0) / (double)s->n;
        }
        r.chunks_ns = median(t, o->reps);
    }
    sizes(&c, o->codec, &r);
    free(t);
    free(ts);
    free(vals);
    chunked_free(&c);
    return r;
}

/* Prometheus 3.14 XOR, ../shared/specs/prometheus-xor.md: bytes/sample, append ns, decode ns. */
typedef struct {
    const char *name;
    double bytes120, append120, decode120, bytes1024;
} prom_ref;

static const prom_ref prom_refs[] = {
    {"const-regular", 0.400, 9.7, 5.1, 0.268},  {"const-jitter", 2.160, 13.2, 11.4, 2.053},
    {"counter", 4.031, 52.8, 18.5, 4.139},      {"gauge-2dp", 8.478, 60.4, 20.4, 8.626},
    {"random", 9.323, 42.6, 20.9, 9.625},       {"real: value-only (23 files)", 5.80, 44.3, 13.8, 0},
    {"real: timestamped (15 files)", 6.11, 41.4, 14.4, 0},
};

static const prom_ref *prom_for(const char *name)
{
    for (size_t i = 0; i < sizeof prom_refs / sizeof prom_refs[0]; i++)
        if (!strcmp(prom_refs[i].name, name)) return &prom_refs[i];
    return NULL;
}

static void print_header(void)
{
    printf("| workload | codec | chunk | samples | push ns | many ns | iter ns/sample | batch ns/sample | "
           "chunks ns/sample | bits/sample | bits/ts | bits/value | bytes/sample | Prom XOR bytes/sample | vs Prom | "
           "inline ns | staged ns | iter inline ns/sample |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

static const bench_opts *current;

static void print_row(const char *name, size_t chunk, const result *r)
{
    const prom_ref *p = prom_for(name);
    double prom = p ? (chunk == 120 ? p->bytes120 : p->bytes1024) : 0;
    double bps = r->bits_sample / 8;
    printf("| %s | %s | %zu | %zu | %.2f | %.2f | %.2f | %.2f |", name, codec_names[current->codec], chunk,
           r->samples, r->push_ns, r->many_ns, r->iter_ns, r->batch_ns);
    printf(" %.2f | %.2f |", r->chunks_ns, r->bits_sample);
    if (current->codec != CODEC_PROM) printf(" %.2f | %.2f | %.3f |", r->bits_ts, r->bits_value, bps);
    else printf(" - | - | %.3f |", bps);
    if (prom > 0) printf(" %.3f | %+.1f%% |", prom, (bps / prom - 1) * 100);
    else printf(" | |");
    if (current->codec != CODEC_PROM) printf(" %.2f |", r->inline_ns);
    else printf(" - |");
    printf(" %.2f | %.2f |\n", r->staged_ns, r->iter_inline_ns);
    fflush(stdout);
}

/* Sample-weighted mean of several results. */
static void accumulate(result *sum, const result *r)
{
    double n = (double)r->samples;
    sum->push_ns += r->push_ns * n;
    sum->many_ns += r->many_ns * n;
    sum->inline_ns += r->inline_ns * n;
    sum->staged_ns += r->staged_ns * n;
    sum->iter_inline_ns += r->iter_inline_ns * n;
    sum->iter_ns += r->iter_ns * n;
    sum->batch_ns += r->batch_ns * n;
    sum->chunks_ns += r->chunks_ns * n;
    sum->bits_sample += r->bits_sample * n;
    sum->bits_ts += r->bits_ts * n;
    sum->bits_value += r->bits_value * n;
    sum->samples += r->samples;
}

static result mean_of(const result *sum)
{
    result m = *sum;
    double n = sum->samples ? (double)sum->samples : 1;
    m.push_ns /= n; m.many_ns /= n; m.inline_ns /= n; m.staged_ns /= n; m.iter_inline_ns /= n;
    m.iter_ns /= n; m.batch_ns /= n; m.chunks_ns /= n;
    m.bits_sample /= n; m.bits_ts /= n; m.bits_value /= n;
    return m;
}

static int wanted(const bench_opts *o, const char *name) { return !o->only || strstr(name, o->only); }

static void bench_synthetic(const bench_opts *o, const size_t *chunks, int nchunks)
{
    size_t n = o->quick ? 12288 : 122880;
    for (int kind = 0; kind < WL_SYNTHETIC_COUNT; kind++) {
        if (!wanted(o, wl_synthetic_name(kind))) continue;
        wl_series s;
        wl_synthetic(&s, kind, n, 42 + (uint64_t)kind);
        for (int c = 0; c < nchunks; c++) {
            result r = run(&s, chunks[c], o);
            print_row(s.name, chunks[c], &r);
        }
        wl_free(&s);
    }
}

static void bench_datasets(const bench_opts *o, const size_t *chunks, int nchunks)
{
    static char paths[MAX_SERIES][512];
    size_t nfiles = wl_list_datasets(o->datasets, paths, MAX_SERIES);
    if (nfiles == 0) {
        printf("\n(no datasets at %s: dataset rows skipped)\n", o->datasets);
        return;
    }
    printf("\nDatasets from %s (%zu files; value-only files get regular timestamps):\n\n", o->datasets, nfiles);
    print_header();
    for (int c = 0; c < nchunks; c++) {
        result value_only = {0}, stamped = {0};
        size_t nvo = 0, nst = 0;
        for (size_t f = 0; f < nfiles; f++) {
            wl_series s[8];
            size_t k = wl_load_dataset(paths[f], s, 8);
            int timestamped = strstr(paths[f], "/nab/") || strstr(paths[f], "/ett/") || strstr(paths[f], "/brew/");
            result file_sum = {0};
            for (size_t j = 0; j < k; j++) {
                if (wanted(o, s[j].name) && s[j].n > 1) {
                    result r = run(&s[j], chunks[c], o);
                    accumulate(&file_sum, &r);
                }
                wl_free(&s[j]);
            }
            if (!file_sum.samples) continue;
            result m = mean_of(&file_sum);
            const char *base = strrchr(paths[f], '/');
            char name[128];
            snprintf(name, sizeof name, "%.100s", base ? base + 1 : paths[f]);
            char *dot = strchr(name, '.');
            if (dot) *dot = 0;
            print_row(name, chunks[c], &m);
            accumulate(timestamped ? &stamped : &value_only, &m);
            *(timestamped ? &nst : &nvo) += 1;
        }
        /* Group rows: mean over files (each file weighs the same, as in the Prometheus figures). */
        result g;
        char label[64];
        if (nvo) {
            g = value_only;
            snprintf(label, sizeof label, "real: value-only (%zu files)", nvo);
            result m = mean_of(&g);
            print_row(label, chunks[c], &m);
        }
        if (nst) {
            snprintf(label, sizeof label, "real: timestamped (%zu files)", nst);
            result m = mean_of(&stamped);
            print_row(label, chunks[c], &m);
        }
    }
}

int main(int argc, char **argv)
{
    bench_opts o = {7, 0, CODEC_NATIVE, "../shared/datasets", NULL, 0, NULL, 16, 0};
    int only_codec = 0;
    current = &o;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) { o.quick = 1; o.reps = 5; }
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) o.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--datasets") && i + 1 < argc) o.datasets = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) o.only = argv[++i];
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc) o.chunk = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--phase") && i + 1 < argc) o.phase = argv[++i];
        else if (!strcmp(argv[i], "--per-call") && i + 1 < argc) o.per_call = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--short-chunks") && i + 1 < argc) o.short_pct = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--codec") && i + 1 < argc) {
            const char *c = argv[++i];
            o.codec = !strcmp(c, "prom") || !strcmp(c, "prom-xor") ? CODEC_PROM
                      : !strcmp(c, "tsc2")                     ? CODEC_TSC2
                                                               : CODEC_NATIVE;
            only_codec = 1;
        }
        else { fprintf(stderr, "bench: unknown argument %s\n", argv[i]); return 2; }
    }
    if (o.reps < 1) o.reps = 1;
    if (o.per_call < 1 || o.per_call > MOST_PER_CALL) o.per_call = 16;
    size_t chunks[2] = {120, 1024};
    int nchunks = 2;
    if (o.chunk) { chunks[0] = o.chunk; nchunks = 1; }
    printf("tschunk %s bench: median of %d repetitions%s\n\n", tschunk_version_string(), o.reps,
           o.quick ? " (quick)" : "");
    print_header();
    int first = only_codec ? o.codec : CODEC_NATIVE, last = only_codec ? o.codec : CODEC_TSC2;
    for (o.codec = first; o.codec <= last; o.codec++) bench_synthetic(&o, chunks, nchunks);
    if (!o.quick)
        for (o.codec = first; o.codec <= last; o.codec++) bench_datasets(&o, chunks, nchunks);
    return 0;
}
